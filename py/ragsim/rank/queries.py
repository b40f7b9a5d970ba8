"""Many queries over one split of a corpus (a question set, each cell of the settings map): the
documents' words built once for every setting (`Words`), and per setting the split laid out as
the drag's columns (`rank.corpus.rankable`) with each term's BM25 weights computed once and shared
by every query (`ranking.Terms`); each query is ranked by `ranking.MaxScore`, the drag's own
ranking. Exact: the results equal `ranking.rank(ranking.score_all(...))`
(tests/property/test_question_properties.py).
"""

import gc
from array import array
from bisect import bisect_left, bisect_right
from contextlib import contextmanager
from itertools import accumulate, repeat
from operator import add

from ragsim.rank import ranking, weights
from ragsim.rank.corpus import nondecreasing, rankable


class Words:
    """The documents' indexes, built once for every setting of a question set or a map, and each
    term's postings with the documents laid end to end (document d's words after those of 0 .. d-1)."""

    def __init__(self, indexes):
        self.indexes = indexes
        self.base = list(accumulate((index.n_words for index in indexes[:-1]), initial=0)) if indexes else []
        self._postings: dict[str, list[int]] = {}
        self._prefix: dict[str, array] = {}

    def postings(self, t: str) -> list[int]:
        """The word space positions holding term `t`, once per occurrence, ascending."""
        p = self._postings.get(t)
        if p is None:
            p = []
            for index, base in zip(self.indexes, self.base):
                ws = index.postings.get(t)
                if ws:
                    p.extend(map(add, ws, repeat(base)) if base else ws)
            self._postings[t] = p
        return p

    def prefix(self, t: str) -> array:
        """Occurrences of term `t` in words 0 .. w - 1 of the word space, for every w (kept for the
        common terms that ask: 4 bytes a word)."""
        pre = self._prefix.get(t)
        if pre is None:
            counts = [0] * (sum(index.n_words for index in self.indexes) + 1)
            for w in self.postings(t):
                counts[w + 1] += 1
            pre = self._prefix[t] = array("i", accumulate(counts))
        return pre


class Setting:
    """Every document split at one chunking (`rank.corpus.rankable`), and the BM25 weights of each
    term asked for, computed once and shared by every query."""

    def __init__(self, words: Words, chunking: dict, session, retrieval: dict, given: list | None = None):
        self.words = words
        self.retrieval = retrieval
        ids = list(range(len(words.indexes)))
        self.corpus = c = rankable(words.indexes, ids, session, chunking, given, words)
        self.doc_of, self.starts, self.ends, self.units, self.lengths = c.doc_of, c.starts, c.ends, c.units, c.lengths
        self.first = c.first_chunk
        self.unit, self.units_in_documents = c.unit, c.units_in_documents
        self.doc_starts, self.doc_ends = [], []
        for d in range(len(words.indexes)):
            starts, ends = c.doc_columns(d)
            self.doc_starts.append(starts)
            self.doc_ends.append(ends)
        self.doc_monotone = [c.ordered or (nondecreasing(s) and nondecreasing(e))
                             for s, e in zip(self.doc_starts, self.doc_ends)]
        self.n = len(self.starts)
        r = retrieval
        self.terms = weights.Terms(c.lengths, c.occurrence, r["variant"], r["k1"], r["b"], r["delta"],
                                     shared=True)
        self.queries: dict = {}

    def release(self) -> None:
        """Forget the queries (each refers back to this Setting's terms), so the Setting is freed as
        soon as it is dropped, without the cyclic garbage collector."""
        self.queries.clear()

    def query(self, query_terms: list[str]) -> ranking.MaxScore:
        """The query's ranking here, one per distinct query (the question set's own evaluation and a map
        cell at the same setting share it)."""
        key = tuple(query_terms)
        q = self.queries.get(key)
        if q is None:
            q = self.queries[key] = ranking.MaxScore(self.terms, query_terms)
        return q

    # --- where a span lies ---------------------------------------------------------------------

    def whole_range(self, d: int, s: int, t: int) -> list[int]:
        """Positions of document d's chunks holding `[s, t)` whole."""
        starts, ends, base = self.doc_starts[d], self.doc_ends[d], self.first[d]
        if self.doc_monotone[d]:
            return list(range(base + bisect_left(ends, t), base + bisect_right(starts, s)))
        return [base + i for i, (a, z) in enumerate(zip(starts, ends)) if a <= s and t <= z]

    def touching(self, d: int, a: int, b: int) -> list[tuple[int, int]]:
        """Extents of document d's chunks that touch `[a, b)` in Chroma's closed sense."""
        starts, ends = self.doc_starts[d], self.doc_ends[d]
        if self.doc_monotone[d]:
            lo, hi = bisect_left(ends, a), bisect_right(starts, b)
            return list(zip(starts[lo:hi], ends[lo:hi]))
        return [(s, e) for s, e in zip(starts, ends) if s <= b and a <= e]


@contextmanager
def collection_paused():
    """Python's cyclic garbage collector paused (and restored after): ranking many questions makes
    many short-lived dicts and lists, each batch of which would set off a collection pass over every
    object alive (the index among them), 5-20% of a map's time. Nothing made here stays in a cycle
    once its Setting is `released`, so memory is freed as usual meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
