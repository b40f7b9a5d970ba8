"""The unit every splitter produces: a half-open extent of one document, with its size in units."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Extent:
    """Chunk `[start, end)` in code points of its document; `units` in the splitter's own unit.

    Invariant: the chunk's text is `text[start:end]`, computed while splitting, never recovered
    afterwards with `str.find`.
    """

    start: int
    end: int
    units: int


@dataclass(frozen=True, slots=True)
class Split:
    """What a strategy returns for one document: its chunks, the unit name and the document's size in it."""

    extents: tuple[Extent, ...]
    unit: str  # "words", "chars", "tokens", ... as shown to people
    units_in_document: int
