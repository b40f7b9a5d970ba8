"""Ranking by BM25: every chunk's score, the top k and ranks, and MaxScore pruning (one place for
each, used by the drag and the question sets alike), with the tie rule of SPEC section 3: score
descending, ties by position (document order, chunk index)."""

from bisect import bisect_left, bisect_right
from collections import Counter, deque
from heapq import nlargest
from itertools import accumulate, compress, filterfalse, groupby, islice, repeat
from operator import add, ge, gt, le, mul, neg, not_, setitem, truediv

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
    """What `score_all` needs: `(weight, total, l_avg, K, present, tables, shifted)`, or
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


def every_score(terms, query_terms: list[str]) -> list[float]:
    """Every chunk's score over a split (`rank.weights.Terms`), by `score_all`."""
    occurrences = {t: terms.occurrence(t) for t in dict.fromkeys(query_terms)}
    return score_all(query_terms, terms.lengths, occurrences, terms.variant, terms.k1, terms.b, terms.delta)


# Bounds are sums in another order than the scores: any two values further apart than this
# (relative) compare the same way whichever order they were summed in.
TOLERANCE = 1e-9
# A query's candidates are narrowed term by term down to about this many before exact scoring.
REFINE = 8


class MaxScore:
    """One query's exact top k and ranks over a split (its terms' weights: `rank.weights.Terms`),
    scoring only the chunks that can reach them (MaxScore, Turtle & Flood 1995): the terms taken
    from the largest weight down, the chunks holding them gathered, and the rest skipped once the
    k-th best beats the most the remaining terms could add. A chunk's score is summed in query order, one addition per query term
    occurrence, as `score_all` sums it (adding 0.0 for a term it lacks changes no bit), so with its
    bits; the bounds are sums in another order, so every comparison with one allows TOLERANCE. Ties
    go by position, as in `rank`. BM25L and BM25+ score every chunk: there every score is computed."""

    def __init__(self, terms, query_terms: list[str]):
        self.terms, self.query_terms = terms, query_terms
        self.full = None  # every score: BM25L and BM25+ give every chunk one; or a low rank was asked
        self._top: dict = {}
        if terms.shifted:
            self.full = every_score(terms, query_terms)
            return
        present = [t for t in dict.fromkeys(query_terms) if terms.entry(t) is not None]
        self.seq = [t for t in query_terms if t in present]  # the terms that count, in query order
        self.times = Counter(self.seq)
        self.bound = {t: terms.bound(t) * self.times[t] for t in present}  # the most each can add
        # MaxScore's order: terms by the most they can add, so the cheapest to skip come first
        self.order = sorted(present, key=self.bound.__getitem__)
        # bounds[i]: the most a chunk holding only the terms order[:i] could score
        self.bounds = [0.0, *accumulate(map(self.bound.__getitem__, self.order))]
        self.scored: dict[int, float] = {}
        self.gathered: tuple[dict[int, float], int] = ({}, len(self.order))  # see _gather

    def _score(self, chunks) -> None:
        """Exact sums in query order of chunks not yet scored."""
        new = list(dict.fromkeys(filterfalse(self.scored.__contains__, chunks)))
        if not self.seq:
            self.scored.update(zip(new, repeat(0.0)))
        elif new:
            got = {t: self.terms.at(t, new) for t in self.times}
            acc = got[self.seq[0]]
            for t in self.seq[1:]:
                acc = list(map(add, acc, got[t]))
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
            w = self.terms.weights(t)
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
            if k and self.bound[t] > theta:  # (the k-th weight is at most the largest)
                theta = max(theta, self.terms.kth_weight(t, k) * times)
        self.gathered = (partial, left)
        if k and len(partial) >= k:
            theta = max(theta, nlargest(k, partial.values())[-1])
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
            got = self.terms.at(t, chunks)
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
            return top(self.full, k)
        n, theta = self.terms.n, 0.0
        if not self.terms.shared and self.order and len(seed := self.terms.weights(self.order[-1])) >= k:
            # a floor for the k-th best: the k-th best exact score among the chunks of the term that
            # can add the most (a shared table's exact largest weights rise theta fast enough)
            self._score(seed)
            theta = nlargest(k, map(self.scored.__getitem__, seed))[-1]
        self._score(self._candidates(theta, k))
        scored = self.scored
        best = sorted(zip(scored.values(), map(neg, scored)), reverse=True)[:k]  # score desc, position asc
        found = [-c for s, c in best if s > 0]
        if len(found) < k:  # the rest score 0 and follow in position order
            taken = set(found)
            zeros = (c for c in range(n) if c not in taken)
            found += [next(zeros) for _ in range(min(k, n) - len(found))]
        return found

    def score_of(self, p: int) -> float:
        if self.full is not None:
            return self.full[p]
        self._score([p])
        return self.scored[p]

    def _common_below(self, theta: float) -> bool:
        """Whether reaching down to `theta` gathers a term given as every chunk's tf (a common one):
        then one pass over every chunk (`score_all`) costs less than its weights' table (unless the
        table is shared by many queries, as in a question set)."""
        left = self.gathered[1]
        while left and not self.bounds[left] < theta * (1 - TOLERANCE):
            left -= 1
            if self.terms.entry(self.order[left])[0] is None:
                return True
        return False

    def best_rank(self, chunks: list[int]) -> int:
        """The best 1-based rank among some chunks in the full ranking."""
        if self.full is not None:
            c = min(chunks, key=lambda c: (-self.full[c], c))
            return rank_of(self.full, c)
        self._score(chunks)
        scored = self.scored
        s, c = max((scored[c], -c) for c in chunks)
        c = -c
        if not self.terms.shared and self._common_below(s):  # most chunks could tie or beat it: score them all
            self.full = every_score(self.terms, self.query_terms)
            return rank_of(self.full, c)
        return 1 + self.ahead(s, c)

    def ahead(self, s: float, p: int) -> int:
        """How many chunks the full ranking puts before a chunk scoring `s` at position `p` (0 to N):
        those scoring above `s`, and those scoring `s` before `p` (ties by position), counted among
        the chunks that could tie or beat `s` alone (the terms' bounds prune the rest)."""
        if self.full is not None:
            full = self.full
            return sum(map(gt, full, repeat(s))) + full[:p].count(s)
        scored = self.scored
        self._score(self._candidates(s))  # every chunk that could tie or beat it
        values = list(scored.values())
        ahead = sum(map(gt, values, repeat(s)))
        if s in values:  # equal scores: the earlier chunks come first
            ahead += sum(1 for d, x in scored.items() if x == s and d < p)
        if s == 0:  # unscored chunks (all scoring 0) before p tie with it and come first
            ahead += p - sum(1 for d in scored if d < p)
        return ahead


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
