"""Where a split becomes rankable: every document's chunks as columns over the corpus, and each
asked term's frequency in every chunk, for the drag (`judge.pipeline`), the panels, the question sets
and the map (`rank.queries`) alike. A split from any source (a splitter, or extents handed in)
goes through `rankable` unchanged.

Chunks are numbered globally in document order; position `p` (0-based) is chunk `p + 1`.
"""

from dataclasses import dataclass, field
from itertools import compress, islice, repeat
from operator import add, le

from ragsim import limits, split as splitters


@dataclass
class Corpus:
    """Every document's chunks as columns, and what the query's terms occur in."""

    doc_of: list[int]
    starts: list[int]
    ends: list[int]
    units: list[int]
    lengths: list[int]  # each chunk's `dl`, in terms
    occurrences: dict  # term -> (chunk positions, term frequencies), or (None, tf of every chunk)
    first_chunk: list[int]  # per document: the position of its first chunk
    documents: list[dict]  # per document: {id, units, chunks}
    unit: str | None
    units_in_documents: int
    ordered: bool = False  # every document's chunk starts and ends never go backwards (known, not checked)
    parts: list = field(default_factory=list)  # per document: (index, layout, first position, chunks, spread)
    found: dict = field(default_factory=dict)  # term -> `occurrence(term)`, kept

    def occurrence(self, t: str) -> tuple:
        """How often term `t` occurs in each chunk: `(positions, tfs)` for the chunks holding it, or
        `(None, tfs)` over every chunk when it is common enough that one pass over all costs less."""
        got = self.found.get(t)
        if got is None:
            got = self.found[t] = gather(t, self.parts, len(self.starts))
        return got

    def holding(self, t: str) -> tuple[list[int], list[int]]:
        """The chunks holding term `t` and how often, zeros left out (in no particular order)."""
        positions, tfs = self.occurrence(t)
        if positions is None:
            return list(compress(range(len(tfs)), tfs)), list(compress(tfs, tfs))
        return positions, tfs

    def doc_columns(self, d: int) -> tuple[list[int], list[int]]:
        """Document `d`'s chunk starts and ends."""
        lo = self.first_chunk[d]
        hi = lo + self.documents[d]["chunks"]
        if lo == 0 and hi == len(self.starts):
            return self.starts, self.ends
        return self.starts[lo:hi], self.ends[lo:hi]


def rankable(indexes: list, ids: list, session, chunking: dict, given: list | None = None) -> Corpus:
    """Split every document (through the session's cache: a split and its layout are made once per
    document and chunking) and gather the chunks as columns over the whole corpus, in document order.
    `given`: a `Split` per document made elsewhere (chunks read back from an index), laid out as a
    splitter's are. Term frequencies are gathered when asked (`Corpus.occurrence`), once per term."""
    c = Corpus(doc_of=[], starts=[], ends=[], units=[], lengths=[], occurrences={},
               first_chunk=[], documents=[], unit=None, units_in_documents=0)
    # splits that walk forward by construction (fixed windows, SPEC section 2): known, not checked
    c.ordered = given is None and splitters.registry.monotone(chunking)
    for di, (index, doc_id) in enumerate(zip(indexes, ids)):
        if given is not None:
            split = given[di]
            layout = index.layout(split.starts, split.ends, split.word_ranges)
        else:
            limits.check_chunks(len(c.starts) + splitters.estimate(index, chunking))  # before the work
            split, layout = session.split(index, chunking)
        limits.check_chunks(len(c.starts) + len(split))  # the strategies that cannot be counted before
        base = len(c.starts)
        c.first_chunk.append(base)
        c.unit = split.unit
        c.units_in_documents += split.units_in_document
        c.documents.append({"id": doc_id, "units": split.units_in_document, "chunks": len(split)})
        if len(indexes) == 1:  # one document: its split's columns are the corpus's (read, never changed)
            c.doc_of, c.starts, c.ends, c.units, c.lengths = [0] * len(split), split.starts, split.ends, split.units, layout.lengths
        else:
            c.doc_of.extend(repeat(di, len(split)))
            c.starts.extend(split.starts)
            c.ends.extend(split.ends)
            c.units.extend(split.units)
            c.lengths.extend(layout.lengths)
        c.parts.append((index, layout, base, len(split), spread(layout)))
    return c


# A term whose occurrences fall in more than 1 / DENSE_SHARE of the chunks is counted in every chunk
# (a few passes over all of them at C speed) rather than chunk by chunk (several passes over its hits).
DENSE_SHARE = 3


def gather(t: str, parts: list, n: int) -> tuple:
    """How often term `t` occurs in each chunk of the corpus: `(positions, tfs)` for the chunks holding
    it, or `(None, tfs)` over every chunk when it is common enough that one pass over all costs less."""
    # each occurrence of t lies in about `stored / in documents` chunks (more with overlap)
    hits = sum(len(index.postings.get(t, ())) * spread for index, _, _, _, spread in parts)
    if hits * DENSE_SHARE > n:
        tfs = []
        for index, layout, _, chunks, _ in parts:
            if t in index.postings or t in layout.edge_index:
                tfs.extend(index.term_frequencies(t, layout))
            else:
                tfs.extend(repeat(0, chunks))
        return None, tfs
    positions, tfs = [], []
    for index, layout, base, _, _ in parts:
        if t in index.postings or t in layout.edge_index:
            found, counts = index.sparse_frequencies(t, layout, ordered=False)
            positions.extend(map(add, found, repeat(base)) if base else found)
            tfs.extend(counts)
    return positions, tfs


def spread(layout) -> float:
    """In how many chunks of a layout a word lies, on average."""
    if layout.window is not None:
        size, step, _ = layout.window
        return size / step
    words = (layout.inner_to[-1] - layout.inner_from[0]) if layout.lengths else 0
    return sum(layout.lengths) / words if words > 0 else 1.0


def nondecreasing(column: list, lo: int = 0, hi: int | None = None) -> bool:
    """Whether `column[lo:hi]` never goes down (chunk starts or ends walking forward)."""
    hi = len(column) if hi is None else hi
    if hi - lo < 2:
        return True
    return all(map(le, islice(column, lo, hi - 1), islice(column, lo + 1, hi)))
