"""BM25 scoring: one small function per formula, named after the paper's symbols (after bm25s/scoring.py).

`lucene` is the default (SPEC section 3). The other variants follow the definitions in the
`bm25s` package, so every variant matches it score for score on the same terms:
Robertson et al. (1994) `robertson`; Trotman et al. (2014) `atire`; Lv & Zhai (2011) `bm25l`
and `bm25+`; Lucene's own `lucene`.
"""

import math
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from decimal import Context, Decimal
from functools import lru_cache
from heapq import nlargest
from itertools import compress, groupby, islice, repeat
from operator import add, le, mul, not_, setitem, truediv

from .errors import RequestError
from .fields import shown


# --- idf(t) from N (chunks) and df (chunks holding t) ---------------------------------------

_LN = Context(prec=40)
_LN_QUICK = Context(prec=18)
# ln, mostly in integers: values times 2**96. _LN_TABLE[k] = round(ln(1 + k/64) * 2**96), _LN2 the same
# for ln 2 (tests/unit/test_bm25.py computes them again with Decimal).
_LN_BITS = 96
_LN2 = 54916777467707473351141471131
_LN_TABLE = (
    0, 1228368210522924201079951002, 2437981973683031897270060274,
    3629405365390424900751675639, 4803177389638314950708738232, 5959813442690547869496342033,
    7099806671920577301408496109, 8223629238268822127320902301, 9331733490407339481906020322,
    10424553057919640782367814786, 11502503870107404337692598789, 12565985106414521138793325042,
    13615380083903437530024121359, 14651057086721382096590756565, 15673370142048036580898171506,
    16682659746615643989453320816, 17679253547532294036705525223, 18663466980814678963812040645,
    19635603870744017016491661424, 20595956992894621323100061795, 21544808603445689681226716613,
    22482430937170608987414263455, 23409086676302025342222363157, 24325029392293021184781923793,
    25230503962333098831887785678, 26125746962330640988637594432, 27010987037939633518611545545,
    27886445255086386780218867797, 28752335431340614804114067437, 29608864449373488046243552980,
    30456232553652238021229151298, 31294633631435731566729646582, 32124255479057406416523745727,
    32945280054410402713787421886, 33757883716484039880547412904, 34562237452740438313793806001,
    35358507095064588073411050446, 36146853524970087459579965361, 36927432868695721367232483958,
    37700396682784668998110657781, 38465892130698103515515896910, 39224062150977983717932241836,
    39975045617439678339513773049, 40718977491843470263076373643, 41455988969464745898429766049,
    42186207617955589183370483806, 42909757509865392868593310901, 43626759349164810754216344515,
    44337330592095756615844442017, 45041585562650074997838854425, 45739635562960843946547867086,
    46431588978872908840819592660, 47117551380943088119399649198, 47797625621105442997421917233,
    48471911925222979207299269049, 49140507981734071566553180249, 49803509026589700453229270950,
    50461007924666197663775571356, 51113095247827557626490273082, 51759859349801423433015407151,
    52401386438023554980861278384, 53037760642596882110116575669, 53669064082503096097750462340,
    54295376929197098762767105685,
)
# What the integer sum may be off by, in units of 2**-96 (the table's and ln 2's roundings, times the
# exponent, and each truncation of the series: a few hundred at most), with room to spare.
_LN_SLACK = 1 << 16


@lru_cache(maxsize=65536)
def ln(x: float) -> float:
    """The natural logarithm, correctly rounded, so a score has the same bits on every platform.

    `math.log` comes from the C library, and glibc (CPython here) and musl (Pyodide) may differ
    in the last bit. Here x = u * 2**(e-1) with u in [1, 2) and u = (1 + k/64)(1 + r), r < 1/64:
    ln x = (e-1) ln 2 + ln(1 + k/64) + 2 atanh(r / (2 + r)), summed in integers (times 2**96) from
    a table and seven terms of the series. The sum lies within `_LN_SLACK` units of the true value;
    when both ends of that interval round to the same double (int / int rounds correctly), that
    double is the true value's. Otherwise (a value within about 1e-24 of a rounding boundary, or
    x = 1, or not a positive finite number) `_ln_decimal` decides.
    """
    if 0 < x < math.inf:
        m, e = math.frexp(x)  # x = m * 2**e, 0.5 <= m < 1
        f = int(m * 9007199254740992.0)  # m * 2**53, exact: 2**52 <= f < 2**53
        k = (f >> 46) - 64  # 0..63: u = f / 2**52 lies in [1 + k/64, 1 + (k+1)/64)
        num = (f << 6) - ((64 + k) << 52)  # r = num / den
        den = (64 + k) << 52
        z = (num << _LN_BITS) // ((den << 1) + num)  # z = r / (2 + r) < 1/129
        z2 = (z * z) >> _LN_BITS
        term = acc = z
        j = 3
        while term:  # z + z**3/3 + z**5/5 + ...: seven terms reach zero
            term = (term * z2) >> _LN_BITS
            acc += term // j
            j += 2
        y = (e - 1) * _LN2 + _LN_TABLE[k] + 2 * acc
        low = (y - _LN_SLACK) / (1 << _LN_BITS)
        if low == (y + _LN_SLACK) / (1 << _LN_BITS):
            return low
    return _ln_decimal(x)


def _ln_decimal(x: float) -> float:
    """The same, with Decimal's ln, correctly rounded at any precision (round half even). At 18
    digits: the true value lies within half a unit of the 18th digit of that result, so when the
    result one unit below and one unit above round to the same double, that double is the true
    value's. Otherwise 40 digits decide: rounding that to a double gives the correctly rounded
    result (a second rounding could only differ for a value within 1e-40 of a midpoint)."""
    d = Decimal(x)
    r = _LN_QUICK.ln(d)
    if r:
        unit = Decimal((0, (1,), r.adjusted() - 17))
        below = float(_LN.subtract(r, unit))  # exact: 19 digits at most
        if below == float(_LN.add(r, unit)):
            return below
    return float(_LN.ln(d))


def idf_robertson(df: int, N: int) -> float:
    # bm25s clips the inner ratio at 1 so no term scores below zero (allow_negative=False).
    inner = (N - df + 0.5) / (df + 0.5)
    return ln(max(inner, 1.0))


def idf_lucene(df: int, N: int) -> float:
    return ln(1 + (N - df + 0.5) / (df + 0.5))


def idf_atire(df: int, N: int) -> float:
    return ln(N / df)


def idf_bm25l(df: int, N: int) -> float:
    return ln((N + 1) / (df + 0.5))


def idf_bm25plus(df: int, N: int) -> float:
    return ln((N + 1) / df)


# --- tfc(t, d): the saturated term frequency; l_d the chunk's term count, l_avg the mean -----

def tfc_robertson(tf: int, l_d: int, l_avg: float, k1: float, b: float, delta: float) -> float:
    return tf / (tf + k1 * (1 - b + b * l_d / l_avg))


def tfc_atire(tf: int, l_d: int, l_avg: float, k1: float, b: float, delta: float) -> float:
    return (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * l_d / l_avg))


def tfc_bm25l(tf: int, l_d: int, l_avg: float, k1: float, b: float, delta: float) -> float:
    c = tf / (1 - b + b * l_d / l_avg)
    return ((k1 + 1) * (c + delta)) / (k1 + c + delta)


def tfc_bm25plus(tf: int, l_d: int, l_avg: float, k1: float, b: float, delta: float) -> float:
    num = (k1 + 1) * tf
    den = k1 * (1 - b + b * l_d / l_avg) + tf
    return (num / den) + delta


def weight_lucene(idf: float, tf: int, l_d: int, l_avg: float, k1: float, b: float, delta: float) -> float:
    """SPEC section 3, to the last bit: `idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`."""
    return idf * tf / (tf + k1 * (1 - b + b * l_d / l_avg))


def weight_bm25s(tfc):
    """bm25s's order: `idf * tfc(...)`."""

    def weight(idf, tf, l_d, l_avg, k1, b, delta):
        return idf * tfc(tf, l_d, l_avg, k1, b, delta)

    weight.__name__ = f"weight_{tfc.__name__[4:]}"
    return weight


# Variant name -> (idf, weight of one query-term occurrence). Lucene's tfc is Robertson's without
# the constant (k1 + 1); the others multiply idf by their tfc as bm25s does.
VARIANTS = {
    "lucene": (idf_lucene, weight_lucene),
    "robertson": (idf_robertson, weight_bm25s(tfc_robertson)),
    "atire": (idf_atire, weight_bm25s(tfc_atire)),
    "bm25l": (idf_bm25l, weight_bm25s(tfc_bm25l)),
    "bm25+": (idf_bm25plus, weight_bm25s(tfc_bm25plus)),
}

# Variants whose tfc is not zero at tf = 0: every chunk earns idf * tfc(0) for a query term it lacks
# (bm25s adds these as "non-occurrence" scores), as long as the term occurs somewhere (df > 0).
SHIFTED = {"bm25l", "bm25+"}


def formulas(variant: str):
    """The (idf, weight) pair of a variant; the error lists the valid names."""
    try:
        return VARIANTS[variant]
    except (KeyError, TypeError):
        listed = ", ".join(repr(v) for v in VARIANTS)
        raise RequestError("retrieval.variant", f"retrieval.variant must be one of {listed} (got {shown(variant)}).") from None


def check_parameters(variant: str, k1: float, b: float, delta: float) -> None:
    """Refuse parameters whose tfc divides zero by zero for a chunk that lacks a query term (tf = 0)."""
    if variant == "bm25+" and k1 == 0:
        raise RequestError("retrieval.k1", "BM25+ with k1 = 0 divides zero by zero for every chunk without a "
                           "query term; set k1 above 0.")
    if variant == "bm25l" and k1 == 0 and delta == 0:
        raise RequestError("retrieval.delta", "BM25L with k1 = 0 and delta = 0 divides zero by zero for every "
                           "chunk without a query term; set k1 or delta above 0.")


def _check_lengths(variant: str, b: float, lengths) -> None:
    """BM25L and BM25+ score every chunk, and with b = 1 divide by the chunk's length: refuse an empty chunk."""
    if b == 1 and variant in SHIFTED and 0 in lengths:
        chunk = lengths.index(0) + 1
        raise RequestError("retrieval.b", f"With b = 1, {variant} divides by each chunk's length and chunk {chunk} "
                           "has no terms; lower b below 1 or choose another variant.")


class _Weights(dict):
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


class _LuceneWeights(_Weights):
    """`_Weights` of the default variant, its expression inlined: weight_lucene's, to the last bit."""

    def __missing__(self, key: int) -> float:
        l_d, tf = divmod(key, self.K)
        if not tf:
            self[key] = 0.0
            return 0.0
        k1, b = self.k1, self.b
        w = self[key] = self.idf * tf / (tf + k1 * (1 - b + b * l_d / self.l_avg))
        return w


def lucene_norms(lengths, k1: float, b: float, l_avg: float) -> list[float]:
    """`k1 * (1 - b + b * dl / avgdl)` for each length: the very subexpression of lucene's weight, at
    C speed and in Python's own order ((1 - b) + (b * dl) / avgdl, times k1), so a weight computed
    from it has the bits of `weight_lucene`."""
    return list(map(mul, repeat(k1), map(add, repeat(1 - b), map(truediv, map(mul, repeat(b), lengths), repeat(l_avg)))))


def _prepare(query_terms, lengths, occurrences, variant, k1, b, delta):
    """What `score_all` and `Pruned` share: `(weight, total, l_avg, K, present, tables, shifted)`, or
    None when no chunk has a term. `present[t] = (chunks, tfs, df)` for each distinct query term that
    occurs; `tables[t]` its weights by `tf + K * dl` (`_Weights`)."""
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
        _check_lengths(variant, b, lengths)
    K = total + 1  # tf <= dl <= total < K: `tf + K * dl` names the pair (no pass for the largest dl)
    kind = _LuceneWeights if weight is weight_lucene else _Weights
    tables = {t: kind(weight, idf_f(df, N), K, shifted, l_avg, k1, b, delta) for t, (_, _, df) in present.items()}
    return weight, total, l_avg, K, present, tables, shifted


def score_all(query_terms, lengths, occurrences, variant="lucene", k1=1.2, b=0.75, delta=0.5) -> list[float]:
    """Scores of N chunks for a query.

    `lengths[d]` is chunk d's term count; `occurrences[t]` is, for each distinct query term, the
    pair `(chunks, tfs)`: the positions of the chunks holding it (distinct, in any order) and how
    often, or `(None, tfs)` with `tfs[d]` for every chunk d, zeros included.
    Every chunk's score sums its query terms in query order, once per occurrence.

    A weight depends on the chunk only through (tf, dl), so each term's weights come from a table
    (`_Weights`) looked up at C speed, and a term found in most chunks is added to every score in
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
