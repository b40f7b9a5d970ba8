"""Where a split becomes rankable: every document's chunks as columns over the corpus, and each
asked term's frequency in every chunk, for the drag (`judge.pipeline`), the panels, the question sets
and the map (`rank.queries`) alike. A split from any source (a splitter, or extents handed in)
goes through `rankable` unchanged.

Chunks are numbered globally in document order; position `p` (0-based) is chunk `p + 1`.
"""

from dataclasses import dataclass, field
from bisect import bisect_right
from collections import Counter, deque
from itertools import chain, compress, islice, repeat
from operator import add, le, setitem, sub

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
    joined: object = None  # `Joined` over many documents (made on first use), or False
    space: object = None  # the documents' words end to end, kept by a caller ranking many splits (`queries.Words`)
    semantic: list = field(default_factory=list)  # per document: a semantic split's curve (SPEC section 12), or None
    # per document: its chunks' texts as the library gives them (a sequence, each text made when
    # read: LangChain's re-joined), or None where they are slices; None when no document has them
    texts: list | None = None

    def text_of(self, p: int, docs: list) -> str:
        """Chunk `p`'s text as its library gives it (a slice of its document, or re-joined)."""
        d = self.doc_of[p]
        texts = self.texts[d] if self.texts is not None else None
        if texts is not None:
            return texts[p - self.first_chunk[d]]
        return docs[d]["text"][self.starts[p]:self.ends[p]]

    def occurrence(self, t: str) -> tuple:
        """How often term `t` occurs in each chunk: `(positions, tfs)` for the chunks holding it, or
        `(None, tfs)` over every chunk when it is common enough that one pass over all costs less."""
        got = self.found.get(t)
        if got is None:
            if len(self.parts) > JOIN_DOCUMENTS:
                if self.joined is None:
                    self.joined = Joined(self.parts, self.space) if all(part[1].monotone for part in self.parts) else False
                if self.joined:
                    got = self.found[t] = self.joined.gather(t, len(self.starts))
                    return got
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


def rankable(indexes: list, ids: list, session, chunking: dict, given: list | None = None, space=None) -> Corpus:
    """Split every document (through the session's cache: a split and its layout are made once per
    document and chunking) and gather the chunks as columns over the whole corpus, in document order.
    `given`: a `Split` per document made elsewhere (chunks read back from an index), laid out as a
    splitter's are. Term frequencies are gathered when asked (`Corpus.occurrence`), once per term.
    `space`: the documents' words laid end to end (each term's postings and prefix counts), kept by a
    caller that ranks many splits of the same documents (`queries.Words`)."""
    c = Corpus(doc_of=[], starts=[], ends=[], units=[], lengths=[], occurrences={},
               first_chunk=[], documents=[], unit=None, units_in_documents=0, space=space)
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
        _semantic(c, split, di)
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


def _semantic(c: Corpus, split, di: int) -> None:
    """A semantic split's curve in the document's entry, and its re-joined chunk texts."""
    curve = getattr(split, "semantic", None)
    c.semantic.append(curve)
    if curve is None:
        if c.texts is not None:
            c.texts.append(None)
        return
    c.documents[di]["semantic"] = curve
    if c.texts is None:
        c.texts = [None] * di
    c.texts.append(split.texts)


# Over more documents than this, their words are laid end to end in one word space (`Joined`), so a
# term's chunks over the whole corpus come from one pass over its postings, not one per document.
JOIN_DOCUMENTS = 8


class Joined:
    """The documents' words end to end: each chunk's whole words as a range of that word space, the
    clipped words' terms by chunk, and each term's postings there (for splits that walk forward)."""

    def __init__(self, parts: list, space=None):
        self.parts = parts
        self.space = space  # the documents' postings and prefix counts laid end to end, kept by a caller
        self.inner_from, self.inner_to, self.edges, self.word_base = [], [], {}, []
        w = 0
        for index, layout, base, _, _ in parts:
            self.word_base.append(w)
            self.inner_from.extend(map(add, layout.inner_from, repeat(w)) if w else layout.inner_from)
            self.inner_to.extend(map(add, layout.inner_to, repeat(w)) if w else layout.inner_to)
            for t, counts in layout.edge_index.items():
                self.edges.setdefault(t, []).extend(chain.from_iterable(repeat(c + base, m) for c, m in counts.items()))
            w += index.n_words
        self.n_words = w

    def postings(self, t: str) -> list[int]:
        if self.space is not None:
            return self.space.postings(t)
        out = []
        for (index, _, _, _, _), w in zip(self.parts, self.word_base):
            ws = index.postings.get(t)
            if ws:
                out.extend(map(add, ws, repeat(w)) if w else ws)
        return out

    def gather(self, t: str, n: int) -> tuple:
        """`gather` over the joined word space: word p lies in the chunks [first with inner_to > p,
        first with inner_from > p); a word clipped at a chunk's edge counts once per occurrence."""
        postings = self.postings(t)
        if self.space is not None and len(postings) > 2 * n and self.n_words < 64 * len(postings):
            # a common term: counted in every chunk from its prefix counts over the word space (kept
            # by the caller for every split), chunk c holding words [inner_from[c], inner_to[c])
            pre = self.space.prefix(t)
            tf = list(map(sub, map(pre.__getitem__, self.inner_to), map(pre.__getitem__, self.inner_from)))
            for c in self.edges.get(t, ()):
                tf[c] += 1
            return None, tf
        found = Counter(chain.from_iterable(map(range, map(bisect_right, repeat(self.inner_to), postings),
                                                map(bisect_right, repeat(self.inner_from), postings))))
        found.update(self.edges.get(t, ()))
        return list(found), list(found.values())


# A term whose occurrences fall in more than 1 / DENSE_SHARE of the chunks is counted in every chunk
# (a few passes over all of them at C speed) rather than chunk by chunk (several passes over its hits).
DENSE_SHARE = 3


def gather(t: str, parts: list, n: int) -> tuple:
    """How often term `t` occurs in each chunk of the corpus: `(positions, tfs)` for the chunks holding
    it, or `(None, tfs)` over every chunk when it is common enough that one pass over all costs less.

    Document by document: where the term is common (its occurrences reach more than 1 / DENSE_SHARE
    of the document's chunks) and its prefix counts are at hand or cheap (a word in 64 or more), it
    is counted in every chunk of that document at C speed; elsewhere from its occurrences."""
    held = [part for part in parts if t in part[0].postings or t in part[1].edge_index]
    # each occurrence of t lies in about `stored / in documents` chunks (more with overlap)
    hits = sum(len(index.postings.get(t, ())) * spr for index, _, _, _, spr in held)
    full = [0] * n if hits * DENSE_SHARE > n else None
    positions, tfs = [], []
    for index, layout, base, chunks, spr in held:
        p = len(index.postings.get(t, ()))
        if p * spr * DENSE_SHARE > chunks and (index.has_prefix(t) or p * 64 > index.n_words or len(parts) == 1):
            doc_tfs = index.term_frequencies(t, layout)
            if full is not None:
                full[base:base + chunks] = doc_tfs
            else:
                positions.extend(compress(range(base, base + chunks), doc_tfs))
                tfs.extend(compress(doc_tfs, doc_tfs))
            continue
        found, counts = index.sparse_frequencies(t, layout, ordered=False)
        if base:
            found = list(map(add, found, repeat(base)))
        if full is not None:
            deque(map(setitem, repeat(full), found, counts), maxlen=0)  # full[c] = count, at C speed
        else:
            positions.extend(found)
            tfs.extend(counts)
    return (None, full) if full is not None else (positions, tfs)


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
