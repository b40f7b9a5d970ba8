"""BM25 scoring: one small function per formula, named after the paper's symbols (after bm25s/scoring.py).

`lucene` is the default (SPEC section 3). The other variants follow the definitions in the
`bm25s` package, so every variant matches it score for score on the same terms:
Robertson et al. (1994) `robertson`; Trotman et al. (2014) `atire`; Lv & Zhai (2011) `bm25l`
and `bm25+`; Lucene's own `lucene`.
"""

from decimal import Context, Decimal
from functools import lru_cache
from heapq import nlargest
from itertools import compress, islice, repeat
from operator import eq, lt

from .errors import RequestError
from .fields import shown


# --- idf(t) from N (chunks) and df (chunks holding t) ---------------------------------------

_LN = Context(prec=40)


@lru_cache(maxsize=65536)
def ln(x: float) -> float:
    """The natural logarithm, correctly rounded, so a score has the same bits on every platform.

    `math.log` comes from the C library, and glibc (CPython here) and musl (Pyodide) may differ
    in the last bit. Decimal's ln is correctly rounded at 40 digits; rounding that to a double
    gives the correctly rounded result (a second rounding could only differ for a value within
    1e-40 of a midpoint). Idf takes a handful of logarithms per query, so the cost is nil.
    """
    return float(_LN.ln(Decimal(x)))


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


def score_all(query_terms, lengths, occurrences, variant="lucene", k1=1.2, b=0.75, delta=0.5) -> list[float]:
    """Scores of N chunks for a query.

    `lengths[d]` is chunk d's term count; `occurrences[t]` is, for each distinct query term, the
    pair `(chunks, tfs)`: the positions of the chunks holding it (ascending) and how often.
    Every chunk's score sums its query terms in query order, once per occurrence.
    """
    idf_f, weight = formulas(variant)
    check_parameters(variant, k1, b, delta)
    N = len(lengths)
    scores = [0.0] * N
    if N == 0:
        return scores
    l_avg = sum(lengths) / N
    if l_avg == 0:
        return scores  # no chunk has a term, so no query term occurs anywhere
    shifted = variant in SHIFTED
    if shifted and any(occurrences.get(t, ((),))[0] for t in query_terms):
        _check_lengths(variant, b, lengths)
    contributions = {}
    for t in dict.fromkeys(query_terms):
        chunks, tfs = occurrences.get(t, ((), ()))
        if not chunks:
            continue  # a term absent from every chunk adds nothing (bm25s drops it too)
        idf = idf_f(len(chunks), N)
        if shifted:
            w = [weight(idf, 0, l_d, l_avg, k1, b, delta) for l_d in lengths]
            for d, tf in zip(chunks, tfs):
                w[d] = weight(idf, tf, lengths[d], l_avg, k1, b, delta)
            contributions[t] = (range(N), w)
        elif weight is weight_lucene:
            # The default, inlined: the very expression of weight_lucene over the chunks that hold t.
            l_ds = map(lengths.__getitem__, chunks)
            contributions[t] = (chunks, [idf * tf / (tf + k1 * (1 - b + b * l_d / l_avg)) for tf, l_d in zip(tfs, l_ds)])
        else:
            contributions[t] = (chunks, [weight(idf, tf, lengths[d], l_avg, k1, b, delta) for d, tf in zip(chunks, tfs)])
    for t in query_terms:
        if t in contributions:
            chunks, w = contributions[t]
            for d, x in zip(chunks, w):
                scores[d] += x
    return scores


def rank(scores: list[float]) -> list[int]:
    """Chunk positions by score descending, ties by position (document order, chunk index).

    Scores are never negative in any variant, so the chunks scoring 0 simply follow in order;
    a stable sort with `reverse=True` keeps tied chunks in position order.
    """
    scored = list(compress(range(len(scores)), scores))
    if any(scores[d] < 0 for d in scored):
        return sorted(range(len(scores)), key=lambda d: (-scores[d], d))
    scored.sort(key=scores.__getitem__, reverse=True)
    return scored + [d for d, s in enumerate(scores) if not s]


def top(scores: list[float], k: int) -> list[int]:
    """The first `k` of `rank(scores)`, without ranking the rest.

    `heapq.nlargest(k, ..., key=...)` is documented equal to `sorted(..., key=..., reverse=True)[:k]`,
    a stable sort, so tied chunks stay in position order exactly as in `rank`.
    """
    if k <= 0:
        return []
    return nlargest(k, range(len(scores)), key=scores.__getitem__)


def rank_of(scores: list[float], p: int) -> int:
    """Position `p`'s 1-based place in `rank(scores)`: one plus the chunks scoring above it, plus the
    chunks before it scoring the same (ties by position), both counted at C speed."""
    s = scores[p]
    above = len(list(compress(scores, map(lt, repeat(s), scores))))
    return 1 + above + len(list(compress(scores, map(eq, repeat(s), islice(scores, p)))))
