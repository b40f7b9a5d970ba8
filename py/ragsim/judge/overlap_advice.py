"""Which overlap keeps a span whole, found by running the splitter that made the chunks at other
overlaps, in the splitter's own unit (tokens for a token splitter), never at or above its size.

A phrase's length is the answer only for fixed windows; a splitter that cuts at separators or
sentences overlaps whole pieces, so a larger overlap can leave a span cut that a smaller one kept
(LangChain's recursive splitter: whole at 250 and 300, cut at 133, 200, 400 and 500). So the
overlaps are tried, each a split of the one document:

- every overlap from 0 upwards, until the first that keeps the span whole, at most `TRIES` splits;
- past `TRIES` overlaps (a size in the thousands) a ladder of `TRIES` overlaps spread evenly below
  the size, then every overlap between the last ladder step that cut and the first that kept;
- then `ABOVE` overlaps above the first that keeps it, spread evenly below the size, to say where the
  span is cut again (not monotone).

`keeping(text, chunking, a, b)` gives `{"overlap", "unit", "size", "cut_above"}`: `overlap` the
least found (None when none below the size keeps it), `cut_above` larger overlaps found to cut it
again (those tried; an empty list does not promise that none does). A splitter without an overlap
(the semantic chunkers) gives None. Checked against LangChain's own splitter in
`tests/conformance/test_overlap_advice.py`.
"""

from ragsim.split import registry, split
from ragsim.text.index import DocIndex

_UNITS = {"chars": "characters"}
TRIES = 120  # overlaps tried at most below the first that keeps the span (splits, shared by a document's spans)
ABOVE = 20  # larger overlaps tried to see whether the span is cut again


def _ladder(size: int, tries: int) -> list[int]:
    """The overlaps 0..size-1, or `tries` of them spread evenly when there are more."""
    if size <= tries:
        return list(range(size))
    return sorted({round(i * (size - 1) / (tries - 1)) for i in range(tries)})


class Advisor:
    """One document under one splitter: each overlap's chunks split once and kept, so the spans of a
    document share the splits (`keeping`)."""

    def __init__(self, text: str, chunking: dict):
        sp = registry.of(chunking)
        self.usable = not (sp is None or sp.embeds or sp.field("overlap") is None
                           or not isinstance(chunking.get("size"), int) or chunking["size"] < 1)
        self.chunking, self.doc, self.splits, self.unit = chunking, DocIndex.build(text), {}, None

    def _extents(self, overlap: int):
        if overlap not in self.splits:
            got = split(self.doc, {**self.chunking, "overlap": overlap})
            self.unit = got.unit
            self.splits[overlap] = list(zip(got.starts, got.ends))
        return self.splits[overlap]

    def whole(self, overlap: int, a: int, b: int) -> bool:
        return any(s <= a and b <= e for s, e in self._extents(overlap))

    def keeping(self, a: int, b: int) -> dict | None:
        """The least overlap that keeps `[a, b)` whole, as the module says; None for a splitter
        without a size and an overlap."""
        if not self.usable:
            return None
        size = self.chunking["size"]
        ladder = _ladder(size, TRIES)
        first, before = None, 0
        for o in ladder:
            if self.whole(o, a, b):
                first = o
                break
            before = o
        if first is not None and first - before > 1:  # the ladder stepped over overlaps: the least between
            first = next((o for o in range(before + 1, first) if self.whole(o, a, b)), first)
        cut_above = [o for o in _ladder(size, ABOVE) if first is not None and o > first and not self.whole(o, a, b)]
        self._extents(0)  # the unit's name, even when no split ran
        return {"overlap": first, "unit": _UNITS.get(self.unit, self.unit), "size": size, "cut_above": cut_above}


    def least_size(self, a: int, b: int, overlap: int, most: int) -> int | None:
        """The least size above the chunking's, up to `most`, at which `[a, b)` is whole with the
        given overlap: every size for the next `TRIES`, then a ladder of `TRIES` sizes up to `most`,
        refined below the first that keeps it."""
        size = self.chunking["size"]
        near = range(size + 1, min(most, size + TRIES) + 1)
        found = next((n for n in near if self._whole_at(n, overlap, a, b)), None)
        if found is not None or most <= size + TRIES:
            return found
        before = size + TRIES
        for n in dict.fromkeys(before + 1 + round(i * (most - before - 1) / (TRIES - 1)) for i in range(TRIES)):
            if self._whole_at(n, overlap, a, b):
                return next((m for m in range(before + 1, n) if self._whole_at(m, overlap, a, b)), n)
            before = n
        return None

    def _whole_at(self, size: int, overlap: int, a: int, b: int) -> bool:
        got = split(self.doc, {**self.chunking, "size": size, "overlap": min(overlap, size - 1)})
        return any(s <= a and b <= e for s, e in zip(got.starts, got.ends))


def fix(text: str, chunking: dict, a: int, b: int, most: int) -> dict | None:
    """What keeps a cut span whole under this splitter: the least overlap at its size, else the least
    size (up to `most`) at its overlap; with the sentence the page shows. None for a splitter
    without a size and an overlap."""
    advisor = Advisor(text, chunking)
    advice = advisor.keeping(a, b)
    if advice is None:
        return None
    unit, size = advice["unit"], advice["size"]
    if advice["overlap"] is not None:
        said = f"At size {size:,} {unit}, " + sentence(advice, b - a, chunking.get("overlap"))
        return {**advice, "least_size": None, "sentence": said[0] + said[1:] + "."}
    overlap = chunking.get("overlap", 0)
    bigger = advisor.least_size(a, b, overlap, most)
    said = f"No overlap below the size of {size:,} {unit} keeps it whole with this splitter; " + (
        f"a size of {bigger:,} {unit} does, at overlap {min(overlap, bigger - 1):,}." if bigger is not None
        else f"nor does any size up to {most:,} {unit}: sentence-aware splitting may.")
    return {**advice, "least_size": bigger, "sentence": said}


def keeping(text: str, chunking: dict, a: int, b: int) -> dict | None:
    """`Advisor(text, chunking).keeping(a, b)`: one span's advice."""
    return Advisor(text, chunking).keeping(a, b)


def sentence(advice: dict | None, length: int, current: int | None = None) -> str:
    """The advice in words: "an overlap of 61 words keeps it whole with this splitter (the index's 50
    cuts it; so do some larger ones: 95)", "no overlap below the size of 200 tokens keeps it whole:
    a larger size would, or sentence-aware splitting"; for an unknown splitter, the phrase's `length`
    in characters, said to hold for fixed windows only."""
    if advice is None:
        return (f"an overlap of {length:,} characters would keep it whole in fixed windows; the splitter is not "
                "known, so with another splitter it may take more or less")
    unit = advice["unit"]
    if advice["overlap"] is None:
        return (f"no overlap below the size of {advice['size']:,} {unit} keeps it whole with this splitter: a larger "
                "size would, or sentence-aware splitting")
    said = f"an overlap of {advice['overlap']:,} {unit} keeps it whole with this splitter"
    notes = []
    if current is not None and current > advice["overlap"]:
        notes.append(f"the index's {current:,} cuts it")
    if advice["cut_above"]:
        shown = ", ".join(f"{o:,}" for o in advice["cut_above"][:3])
        notes.append(f"so do some larger ones: {shown}" + (" and more" if len(advice["cut_above"]) > 3 else ""))
    return said + (f" ({'; '.join(notes)})" if notes else "")
