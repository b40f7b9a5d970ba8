"""Ranking by BM25: every chunk's score, the top k and ranks, and MaxScore pruning (one place for
each, used by the drag and the question sets alike), with the tie rule of SPEC section 3: score
descending, ties by position (document order, chunk index)."""

from bisect import bisect_left, bisect_right
from collections import Counter, deque
from heapq import nlargest
from itertools import compress, groupby, islice, repeat
from operator import add, le, mul, not_, setitem, truediv

from ragsim.rank.bm25 import SHIFTED, check_lengths, check_parameters, formulas, lucene_norms, weight_lucene


class Weights(dict):
    """One term's weights by `tf + K * dl`, each computed on first use by the variant's own formula
    (so with the very bits a per-chunk computation gives); a split has few distinct (tf, dl) pairs.
    A chunk without the term adds nothing unless the variant scores absent terms (SHIFTED): 0.0 is
    added instead, which changes no bit (a score is never -0.0)."""

    def __init__(self, weight, idf: float, K: int, shifted: bool, l_avg: float, k1: float, b: float, delta: float):
        super().__init__()
        self.weight, self.idf, self.K, self.shifted = weight, idf, K, shifted
        self.l_avg, self.k1, self.b, self.delta = l_avg, k1, b, delta

    def __missing__(self, key: int) -> float:
        l_d, tf = divmod(key, self.K)
        w = self[key] = self.weight(self.idf, tf, l_d, self.l_avg, self.k1, self.b, self.delta) if tf or self.shifted else 0.0
        return w


class LuceneWeights(Weights):
    """`Weights` of the default variant, its expression inlined: weight_lucene's, to the last bit."""

    def __missing__(self, key: int) -> float:
        l_d, tf = divmod(key, self.K)
        if not tf:
            self[key] = 0.0
            return 0.0
        k1, b = self.k1, self.b
        w = self[key] = self.idf * tf / (tf + k1 * (1 - b + b * l_d / self.l_avg))
        return w


def _prepare(query_terms, lengths, occurrences, variant, k1, b, delta):
    """What `score_all` and `Pruned` share: `(weight, total, l_avg, K, present, tables, shifted)`, or
    None when no chunk has a term. `present[t] = (chunks, tfs, df)` for each distinct query term that
    occurs; `tables[t]` its weights by `tf + K * dl` (`Weights`)."""
    idf_f, weight = formulas(variant)
    check_parameters(variant, k1, b, delta)
    N = len(lengths)
    if N == 0:
        return None
    total = sum(lengths)
    l_avg = total / N
    if l_avg == 0:
        return None
    shifted = variant in SHIFTED
    present = {}
    for t in dict.fromkeys(query_terms):
        chunks, tfs = occurrences.get(t, ((), ()))
        df = len(chunks) if chunks is not None else N - tfs.count(0)
        if df:  # a term absent from every chunk adds nothing (bm25s drops it too)
            present[t] = (chunks, tfs, df)
    if shifted and present:
        check_lengths(variant, b, lengths)
    K = total + 1  # tf <= dl <= total < K: `tf + K * dl` names the pair (no pass for the largest dl)
    kind = LuceneWeights if weight is weight_lucene else Weights
    tables = {t: kind(weight, idf_f(df, N), K, shifted, l_avg, k1, b, delta) for t, (_, _, df) in present.items()}
    return weight, total, l_avg, K, present, tables, shifted


def score_all(query_terms, lengths, occurrences, variant="lucene", k1=1.2, b=0.75, delta=0.5) -> list[float]:
    """Scores of N chunks for a query.

    `lengths[d]` is chunk d's term count; `occurrences[t]` is, for each distinct query term, the
    pair `(chunks, tfs)`: the positions of the chunks holding it (distinct, in any order) and how
    often, or `(None, tfs)` with `tfs[d]` for every chunk d, zeros included.
    Every chunk's score sums its query terms in query order, once per occurrence.

    A weight depends on the chunk only through (tf, dl), so each term's weights come from a table
    (`Weights`) looked up at C speed, and a term found in most chunks is added to every score in
    one pass (adding 0.0 where it is absent), a rarer one only to the chunks holding it.
    """
    N = len(lengths)
    scores = [0.0] * N
    prepared = _prepare(query_terms, lengths, occurrences, variant, k1, b, delta)
    if prepared is None:
        return scores  # no chunk, or none with a term: no query term occurs anywhere
    weight, total, l_avg, K, present, tables, shifted = prepared
    for t, (chunks, tfs, df) in present.items():
        if chunks is not None and shifted:  # every chunk earns the absent term's weight: all of them
            dense = [0] * N
            deque(map(setitem, repeat(dense), chunks, tfs), maxlen=0)
            present[t] = (None, dense, df)
    norm = None
    sample = min(N, 4096)  # the first chunks' lengths tell which way is cheaper (either gives the same bits)
    if weight is weight_lucene and len(set(islice(lengths, sample))) * 8 > sample and k1 > 0 and (b < 1 or 0 not in lengths):
        # Many distinct lengths (windows of characters): a table would miss about once per chunk, so
        # the expression is computed at C speed instead, its parts in Python's own order:
        # idf * tf / (tf + k1 * ((1 - b) + (b * l_d) / l_avg)), never dividing by zero here.
        norm = lucene_norms(lengths, k1, b, l_avg)
    dlK = list(map(mul, lengths, repeat(K))) if norm is None else None
    repeated = {t for t, n in Counter(query_terms).items() if n > 1}
    columns = {}  # a repeated common term's weights
    untouched = True  # every score still 0.0, and 0.0 + x is x
    for t in query_terms:
        if t not in tables:
            continue
        chunks, tfs, _ = present[t]
        look = tables[t].__getitem__
        if norm is not None:
            idf = repeat(tables[t].idf)
            if chunks is None:  # tf = 0 gives 0.0 / norm = 0.0
                weights = map(truediv, map(mul, idf, tfs), map(add, tfs, norm))
            else:
                weights = map(truediv, map(mul, idf, tfs), map(add, tfs, map(norm.__getitem__, chunks)))
        if chunks is None:
            if norm is None:
                weights = map(look, map(add, tfs, dlK))
            if t in repeated:  # looked up once, added at each occurrence
                weights = columns[t] if t in columns else columns.setdefault(t, list(weights))
            scores = list(weights) if untouched else list(map(add, scores, weights))
        else:  # scores[d] += x for each chunk d holding t, at C speed (operator.setitem: a bound
            # __setitem__ would build an argument tuple per call)
            if norm is None:
                weights = map(look, map(add, tfs, map(dlK.__getitem__, chunks)))
            deque(map(setitem, repeat(scores), chunks, map(add, map(scores.__getitem__, chunks), weights)), maxlen=0)
        untouched = False
    return scores


# Computed scores may exceed the formula's bound by rounding: a few units in the last place.
_ROOM = 1e-9


class Pruned:
    """The top k and a few chunks' ranks, scoring only the chunks that can reach the top (MaxScore,
    Turtle & Flood 1995), with the bits of `score_all`.

    Each formula grows with tf and shrinks with dl, so a term adds at most its weight at its largest
    tf and the smallest dl (`_ROOM` more for rounding). The chunks of the term with the largest such
    bound are scored first; their k-th best score, theta, is a floor for the k-th best overall. The
    terms whose bounds (once per query occurrence) add up to less than theta cannot lift a chunk
    holding none of the others into the top k: the chunks holding one of the others (the candidates)
    are scored exactly, in query order as `score_all` does, and the rest never. `bound` is the most
    a chunk that is not a candidate can score: a chunk scoring above it has its rank counted among
    the candidates. `Pruned.build` gives None where this cannot apply (BM25L and BM25+ score every
    chunk; too few candidates above the bound), and `rank_of` None for a chunk at or below the bound:
    callers then score every chunk.
    """

    __slots__ = ("top", "bound", "candidates", "scores", "_exact")

    @classmethod
    def build(cls, query_terms, lengths, occurrences, variant, k1, b, delta, k: int) -> "Pruned | None":
        if variant in SHIFTED or k <= 0:
            return None
        prepared = _prepare(query_terms, lengths, occurrences, variant, k1, b, delta)
        if prepared is None:
            return None
        weight, _, l_avg, K, present, tables, _ = prepared
        if not present:
            return None
        dl_min = min(lengths)
        # lucene's expression divides by k1 * (1 - b + b * dl / avgdl), never 0 under this test
        lucene = (k1, b, l_avg) if weight is weight_lucene and k1 > 0 and (b < 1 or dl_min > 0) else None
        times = Counter(t for t in query_terms if t in present)
        # A term in every chunk's list bounded by idf itself where lucene's tf / (tf + norm) < 1
        # (no pass for its largest tf); any other by its weight at its largest tf and smallest dl.
        bounds = {t: (tables[t].idf if lucene and chunks is None else
                      weight(tables[t].idf, max(tfs), dl_min, l_avg, k1, b, delta)) * times[t] * (1 + _ROOM)
                  for t, (chunks, tfs, _) in present.items()}
        self = cls.__new__(cls)
        self._exact = (query_terms, lengths, present, tables, K, lucene)
        # theta: the k-th best score among the chunks of the term that can add the most
        first = max(bounds, key=lambda t: (bounds[t], -present[t][2]))
        seed = present[first][0]
        if seed is None or len(seed) < k:
            return None
        seed = sorted(seed)
        theta = top_value(self._score(seed), k)
        # the cheapest terms to leave out first: the smallest bounds
        left_out, bound = [], 0.0
        for t in sorted(bounds, key=bounds.__getitem__):
            if t == first or not (bound + bounds[t]) * (1 + _ROOM) < theta:
                break
            left_out.append(t)
            bound += bounds[t]
        kept = [present[t][0] for t in present if t not in left_out]
        if any(chunks is None for chunks in kept):
            return None  # a term in every chunk's list must be scored everywhere: the full pass is as cheap
        candidates = sorted(set().union(*kept)) if len(kept) > 1 else seed
        self.bound = bound * (1 + _ROOM)
        self.candidates = candidates
        self.scores = self._score(candidates, {t for t in present if t not in left_out})
        best = top(self.scores, k)
        if len(best) < k or not self.scores[best[-1]] > self.bound:
            return None
        self.top = [candidates[i] for i in best]
        return self

    def _score(self, chunks: list[int], inside=()) -> list[float]:
        """Exact scores of some chunks, summed in query order as `score_all` sums them, so with its
        bits: a common term is added to every chunk (0.0 where it is absent changes no bit), a rarer
        one only to the chunks holding it. `inside`: terms whose chunks are all among `chunks`."""
        query_terms, lengths, present, tables, K, lucene = self._exact
        m = len(chunks)
        dls = list(map(lengths.__getitem__, chunks))
        if lucene:  # the expression itself (as score_all computes it for windows of characters)
            k1, b, l_avg = lucene
            norm = lucene_norms(dls, k1, b, l_avg)
        else:
            dlK = list(map(mul, dls, repeat(K)))
        where = None  # chunk -> its index in `chunks`, for the rarer terms
        acc = [0.0] * m
        found = {}
        for t in query_terms:
            if t not in tables:
                continue
            got = found.get(t)
            if got is None:
                positions, tfs, _ = present[t]
                if positions is None:  # a common term: its tf in every chunk
                    at, tf = None, list(map(tfs.__getitem__, chunks))
                else:  # a rarer one: the chunks among these that hold it
                    if where is None:
                        where = dict(zip(chunks, range(m)))
                    if t in inside:  # every chunk holding it is among these
                        at, tf = list(map(where.__getitem__, positions)), tfs
                    else:
                        held = list(map(where.__contains__, positions))
                        at = list(map(where.__getitem__, compress(positions, held)))
                        tf = list(compress(tfs, held))
                if lucene:
                    ns = norm if at is None else map(norm.__getitem__, at)
                    w = list(map(truediv, map(mul, repeat(tables[t].idf), tf), map(add, tf, ns)))
                else:
                    ks = dlK if at is None else map(dlK.__getitem__, at)
                    w = list(map(tables[t].__getitem__, map(add, tf, ks)))
                got = found[t] = (at, w)
            at, w = got
            if at is None:
                acc = list(map(add, acc, w))
            else:  # acc[i] += w for the chunks holding t (operator.setitem at C speed)
                deque(map(setitem, repeat(acc), at, map(add, map(acc.__getitem__, at), w)), maxlen=0)
        return acc

    def score_of(self, p: int) -> float:
        i = bisect_left(self.candidates, p)
        if i < len(self.candidates) and self.candidates[i] == p:
            return self.scores[i]
        return self._score([p])[0]

    def rank_of(self, p: int) -> int | None:
        """Position `p`'s 1-based rank in the full ranking, or None when `p` scores at or below the
        bound (chunks that were not scored might tie or beat it)."""
        s = self.score_of(p)
        if not s > self.bound:
            return None
        scores = self.scores
        above = len(list(filter(s.__lt__, scores)))
        if scores.count(s) > 1:  # equal scores: the earlier chunks first (every one of them a candidate)
            above += scores[: bisect_left(self.candidates, p)].count(s)
        return 1 + above


def rank(scores: list[float]) -> list[int]:
    """Chunk positions by score descending, ties by position (document order, chunk index).

    Scores are never negative in any variant, so the chunks scoring 0 simply follow in order;
    a stable sort with `reverse=True` keeps tied chunks in position order.
    """
    positions = range(len(scores))
    if scores and min(scores) < 0:
        return sorted(positions, key=lambda d: (-scores[d], d))
    scored = list(compress(positions, scores))
    scored.sort(key=scores.__getitem__, reverse=True)
    scored.extend(compress(positions, map(not_, scores)))
    return scored


def top_value(scores: list[float], k: int) -> float:
    """The k-th best score (0.0 when there are fewer than k)."""
    best = nlargest(k, scores)
    return best[-1] if len(best) == k else 0.0


def top(scores: list[float], k: int, ascending: list[float] | None = None) -> list[int]:
    """The first `k` of `rank(scores)`, without ranking the rest.

    The k best scores come from `heapq.nlargest` on the scores alone (or from `ascending`, the
    scores sorted, when a caller has it), floats compared directly, no key; then each is found in
    the column: tied chunks in position order, as in `rank`.
    """
    n = len(scores)
    if k <= 0 or n == 0:
        return []
    best = ascending[: -k - 1 : -1] if ascending is not None else nlargest(k, scores)
    groups = [(v, len(list(g))) for v, g in groupby(best)]
    if len(groups) > 8:  # many distinct values: one pass for all of them
        least = best[-1]
        found = list(compress(range(n), map(le, repeat(least), scores)))
        found.sort(key=scores.__getitem__, reverse=True)
        return found[:k]
    out = []
    for v, count in groups:
        at = -1
        for _ in range(count):
            at = scores.index(v, at + 1)
            out.append(at)
    return out


def rank_of(scores: list[float], p: int, ascending: list[float] | None = None) -> int:
    """Position `p`'s 1-based place in `rank(scores)`: one plus the chunks scoring above it, plus the
    chunks before it scoring the same (ties by position); counted in `ascending`, the scores sorted,
    when given (many ranks asked), else by a pass over the scores (a few asked: no sort)."""
    s = scores[p]
    if ascending is None:
        above = len(list(filter(s.__lt__, scores)))
        tied = scores.count(s) > 1
    else:
        above = len(ascending) - bisect_right(ascending, s)
        tied = bisect_right(ascending, s) - bisect_left(ascending, s) > 1
    return 1 + above + (scores[:p].count(s) if tied else 0)
