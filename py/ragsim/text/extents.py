"""The unit every splitter produces: a half-open extent of one document, with its size in units."""

from typing import NamedTuple


class Extent(NamedTuple):
    """Chunk `[start, end)` in code points of its document; `units` in the splitter's own unit.

    Invariant: the chunk's text is `text[start:end]`, computed while splitting, never recovered
    afterwards with `str.find`.
    """

    start: int
    end: int
    units: int


class Split:
    """What a strategy returns for one document: its chunks as columns, the unit name, the document's size.

    `Split(extents, unit, n)` takes any sequence of `(start, end, units)`; fixed windows build the
    columns directly (`Split.columns`) and also pass the word range `[a, b)` of every chunk, which
    lets the index skip looking the words up.
    """

    __slots__ = ("starts", "ends", "units", "unit", "units_in_document", "word_ranges")

    def __init__(self, extents, unit: str, units_in_document: int):
        self.starts = [e[0] for e in extents]
        self.ends = [e[1] for e in extents]
        self.units = [e[2] for e in extents]
        self.unit = unit  # "words", "chars", ... as shown to people
        self.units_in_document = units_in_document
        self.word_ranges = None

    @classmethod
    def columns(cls, starts, ends, units, unit, units_in_document, word_ranges=None) -> "Split":
        self = cls.__new__(cls)
        self.starts, self.ends, self.units = starts, ends, units
        self.unit, self.units_in_document, self.word_ranges = unit, units_in_document, word_ranges
        return self

    @property
    def extents(self) -> tuple[Extent, ...]:
        return tuple(map(Extent, self.starts, self.ends, self.units))

    def __len__(self) -> int:
        return len(self.starts)
