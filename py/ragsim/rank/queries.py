"""Many queries over one split of a corpus (a question set, each cell of the settings map): exact
top-k and exact ranks, each query scoring only the chunks that can reach its top k.

The split and each term's frequencies come from `rank.corpus` (the drag's own columns). Each term's
BM25 weights are computed once per split and shared by all queries; a query is ranked in the manner
of MaxScore (Turtle & Flood 1995): its terms taken from the largest weight down, the chunks holding
them gathered, and the rest skipped once the k-th best beats the most the remaining terms could add.

Exactness: a chunk's score is summed in query order, one addition per query term occurrence, as
`ranking.score_all` sums it (adding 0.0 for a term the chunk lacks changes no bit), so the scores
have its bits; the bounds on skipped chunks are sums in another order, so every comparison with one
allows TOLERANCE. Ties go by position (`ranking.rank`'s rule). The results equal
`ranking.rank(ranking.score_all(...))` exactly (tests/property/test_question_properties.py).
"""

import gc
import heapq
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from contextlib import contextmanager
from itertools import accumulate, compress, filterfalse, repeat
from operator import add, ge, gt, mul, neg, truediv

from ragsim.rank import bm25, ranking
from ragsim.rank.corpus import nondecreasing, rankable

# Bounds are sums in another order than the scores: any two values further apart than this
# (relative) compare the same way whichever order they were summed in.
TOLERANCE = 1e-9
# A query's candidates are narrowed term by term down to about this many before exact scoring.
REFINE = 8


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
        self.n = n = len(self.starts)
        self.l_avg = sum(self.lengths) / n if n else 0.0
        r = retrieval
        self.idf, self.weight = bm25.formulas(r["variant"])
        self.shifted = r["variant"] in bm25.SHIFTED
        # k1 * (1 - b + b * dl / avgdl) per chunk: the very subexpression of ranking.score_all's lucene
        # weight, so each weight below has the same bits as there
        self.norm = bm25.lucene_norms(self.lengths, r["k1"], r["b"], self.l_avg) if self.l_avg else []
        self.tables: dict = {}  # term -> (positions, tfs, weight by position, largest weight), or None
        self.kth: dict = {}
        self.queries: dict = {}

    def table(self, t: str):
        """`(positions, tfs, weight by position, largest weight)` of term `t`; None if no chunk holds
        it. The weights have the bits of `ranking.score_all`."""
        if t in self.tables:
            return self.tables[t]
        positions, tfs = self.corpus.holding(t)
        entry = None
        if positions and self.l_avg:
            idf = self.idf(len(positions), self.n)
            if self.weight is bm25.weight_lucene:
                w = list(map(truediv, map(mul, repeat(idf), tfs), map(add, tfs, map(self.norm.__getitem__, positions))))
            else:
                r, lengths = self.retrieval, self.lengths
                w = [self.weight(idf, tf, lengths[d], self.l_avg, r["k1"], r["b"], r["delta"])
                     for d, tf in zip(positions, tfs)]
            entry = (positions, tfs, dict(zip(positions, w)), max(w))
        self.tables[t] = entry
        return entry

    def kth_weight(self, t: str, k: int) -> float:
        """The k-th largest weight of term t (0 when fewer chunks hold it): a chunk's score is at
        least its weight for each term it holds, so the k-th best score is at least this."""
        key = (t, k)
        if key not in self.kth:
            w = self.table(t)[2]
            self.kth[key] = heapq.nlargest(k, w.values())[-1] if len(w) >= k else 0.0
        return self.kth[key]

    def scores(self, query_terms: list[str]) -> list[float]:
        """Every chunk's score, by `ranking.score_all` itself."""
        occ = {t: self.corpus.occurrence(t) for t in dict.fromkeys(query_terms)}
        r = self.retrieval
        return ranking.score_all(query_terms, self.lengths, occ, r["variant"], r["k1"], r["b"], r["delta"])

    def release(self) -> None:
        """Forget the queries (each refers back to this Setting), so the Setting is freed as soon as
        it is dropped, without the cyclic garbage collector."""
        self.queries.clear()

    def query(self, query_terms: list[str]) -> "Query":
        """The query's ranking here, one per distinct query (the question set's own evaluation and a map
        cell at the same setting share it)."""
        key = tuple(query_terms)
        q = self.queries.get(key)
        if q is None:
            q = self.queries[key] = Query(self, query_terms)
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


class Query:
    """One query's ranking over a Setting, scored only as far as the questions asked of it need."""

    def __init__(self, setting: Setting, query_terms: list[str]):
        self.setting = setting
        self.full = None  # every chunk's score, for the variants that give every chunk one
        self._top: dict = {}
        if setting.shifted:
            self.full = setting.scores(query_terms)
            return
        tables = [setting.table(t) for t in query_terms]
        entries = {t: e for t, e in zip(query_terms, tables) if e is not None}
        self.entries = entries
        self.seq = [entries[t][2] for t in query_terms if t in entries]  # weight tables in query order
        self.times = Counter(t for t in query_terms if t in entries)
        # MaxScore's order: terms by their largest weight, so the cheapest to skip come first
        self.order = sorted(entries, key=lambda t: entries[t][3])
        # bounds[i]: the most a chunk holding only the terms order[:i] could score
        self.bounds = [0.0, *accumulate(entries[t][3] * self.times[t] for t in self.order)]
        self.scored: dict[int, float] = {}
        self.gathered: tuple[dict[int, float], int] = ({}, len(self.order))  # see _candidates

    def _score(self, chunks) -> None:
        """Exact sums in query order of chunks not yet scored."""
        new = list(filterfalse(self.scored.__contains__, chunks))
        if not self.seq:
            self.scored.update(zip(new, repeat(0.0)))
        elif new:
            acc = list(map(self.seq[0].get, new, repeat(0.0)))
            for w in self.seq[1:]:
                acc = list(map(add, acc, map(w.get, new, repeat(0.0))))
            self.scored.update(zip(new, acc))

    def _gather(self, theta: float, k: int) -> tuple[dict, int, float]:
        """MaxScore's first phase: the terms taken from the largest weight down, each chunk holding one
        gathering its weights, until the terms left could not lift a chunk holding none of the taken
        ones to theta. With `k`, theta rises as it goes to the k-th best gathered sum. The gathering
        goes on from where an earlier call left it (a rank asked after the top k: a lower theta)."""
        partial, left = self.gathered  # terms order[:left] not taken
        while left and not self.bounds[left] < theta * (1 - TOLERANCE):
            left -= 1
            t = self.order[left]
            w = self.entries[t][2]
            times = self.times[t]  # a repeated query term counts once per occurrence
            if times > 1:
                w = dict(zip(w, map(mul, w.values(), repeat(times))))
            if not partial:
                partial = dict(w)
            else:  # partial += w, at C speed: the chunks in both get their sums after the update
                both = list(partial.keys() & w.keys())
                sums = list(map(add, map(partial.__getitem__, both), map(w.__getitem__, both)))
                partial.update(w)
                partial.update(zip(both, sums))
            if k and self.entries[t][3] * times > theta:  # (the k-th weight is at most the largest)
                theta = max(theta, self.setting.kth_weight(t, k) * times)
        self.gathered = (partial, left)
        if k and len(partial) >= k:
            theta = max(theta, heapq.nlargest(k, partial.values())[-1])
        return partial, left, theta

    def _candidates(self, theta: float, k: int = 0) -> list[int]:
        """Chunks that could score at least `theta`: those gathered whose sums plus the most the terms
        left could add reach it; the terms left are then looked up for these chunks alone, dropping
        those that fall short, until few are left for exact scoring."""
        partial, left, theta = self._gather(theta, k)
        reach = theta * (1 - TOLERANCE) - self.bounds[left] * (1 + TOLERANCE)
        chunks = list(compress(partial, map(ge, partial.values(), repeat(reach))))
        sums = list(map(partial.__getitem__, chunks))
        while left and len(chunks) > REFINE:
            left -= 1
            t = self.order[left]
            got = map(self.entries[t][2].get, chunks, repeat(0.0))
            times = self.times[t]
            sums = list(map(add, sums, map(mul, got, repeat(times)) if times > 1 else got))
            reach = theta * (1 - TOLERANCE) - self.bounds[left] * (1 + TOLERANCE)
            keep = list(map(ge, sums, repeat(reach)))
            chunks = list(compress(chunks, keep))
            sums = list(compress(sums, keep))
        return chunks

    def top(self, k: int) -> list[int]:
        """The first `min(k, N)` positions of the full ranking (score descending, ties by position)."""
        if k not in self._top:
            self._top[k] = self._top_of(k)
        return list(self._top[k])

    def _top_of(self, k: int) -> list[int]:
        if self.full is not None:
            return ranking.top(self.full, k)
        n = self.setting.n
        self._score(self._candidates(0.0, k))
        scored = self.scored
        best = sorted(zip(scored.values(), map(neg, scored)), reverse=True)[:k]  # score desc, position asc
        top = [-c for s, c in best if s > 0]
        if len(top) < k:  # the rest score 0 and follow in position order
            taken = set(top)
            zeros = (c for c in range(n) if c not in taken)
            top += [next(zeros) for _ in range(min(k, n) - len(top))]
        return top

    def best_rank(self, chunks: list[int]) -> int:
        """The best 1-based rank among some chunks in the full ranking."""
        if self.full is not None:
            c = min(chunks, key=lambda c: (-self.full[c], c))
            return ranking.rank_of(self.full, c)
        self._score(chunks)
        scored = self.scored
        s, c = max((scored[c], -c) for c in chunks)
        c = -c
        self._score(self._candidates(s))  # every chunk that could tie or beat it
        values = list(scored.values())
        ahead = sum(map(gt, values, repeat(s)))
        if values.count(s) > 1:  # equal scores: the earlier chunks come first
            ahead += sum(1 for d, x in scored.items() if x == s and d < c)
        if s == 0:  # unscored chunks (all scoring 0) before c tie with it and come first
            ahead += c - sum(1 for d in scored if d < c)
        return 1 + ahead
