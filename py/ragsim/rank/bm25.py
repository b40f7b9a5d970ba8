"""BM25 scoring: one small function per formula, named after the paper's symbols (after bm25s/scoring.py).

`lucene` is the default (SPEC section 3). The other variants follow the definitions in the
`bm25s` package, so every variant matches it score for score on the same terms:
Robertson et al. (1994) `robertson`; Trotman et al. (2014) `atire`; Lv & Zhai (2011) `bm25l`
and `bm25+`; Lucene's own `lucene`.
"""

from itertools import repeat
from operator import add, mul, truediv

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.rank.ln import ln


# --- idf(t) from N (chunks) and df (chunks holding t) ---------------------------------------

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


def check_lengths(variant: str, b: float, lengths) -> None:
    """BM25L and BM25+ score every chunk, and with b = 1 divide by the chunk's length: refuse an empty chunk."""
    if b == 1 and variant in SHIFTED and 0 in lengths:
        chunk = lengths.index(0) + 1
        raise RequestError("retrieval.b", f"With b = 1, {variant} divides by each chunk's length and chunk {chunk} "
                           "has no terms; lower b below 1 or choose another variant.")


def lucene_norms(lengths, k1: float, b: float, l_avg: float) -> list[float]:
    """`k1 * (1 - b + b * dl / avgdl)` for each length: the very subexpression of lucene's weight, at
    C speed and in Python's own order ((1 - b) + (b * dl) / avgdl, times k1), so a weight computed
    from it has the bits of `weight_lucene`."""
    return list(map(mul, repeat(k1), map(add, repeat(1 - b), map(truediv, map(mul, repeat(b), lengths), repeat(l_avg)))))
