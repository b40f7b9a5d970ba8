"""numpy's float arithmetic for the semantic chunkers, step for step, in pure Python.

The semantic chunkers decide their cuts with numpy (`np.percentile`, `np.mean`, `np.std`,
`np.gradient`, `np.sum`, `np.linalg.norm`). Each function here performs the same floating-point
operations in the same order as numpy 2.x does, so given the same distances it returns the same
bits; the unit tests hold each one equal to numpy on hand cases and random ones.

Dot products are the exception: numpy hands them to BLAS (OpenBLAS, with FMA and a kernel chosen by
the processor), whose order of summation is not numpy's and not fixed. `dot` is `math.fsum` of the
products, the correctly rounded value, which differs from BLAS's by an ulp or two at most; a cut
moves only where a distance lies that close to the threshold (docs/semantic.md).
"""

import math
from functools import reduce
from operator import add, ne

_BLOCK = 128  # numpy's PW_BLOCKSIZE


def pairwise_sum(values, lo: int = 0, n: int | None = None) -> float:
    """`np.add.reduce` over a contiguous float64 array: numpy's `pairwise_sum`.

    Under 8 values a plain loop; up to 128 eight running sums (lane j takes every 8th value from
    j) combined as a tree, then the remainder one by one; above that, two halves (the first a
    multiple of 8) summed apart. Each running sum is a left fold (`reduce(add)`, one addition after
    another, as numpy's loop); Python's own `sum` is compensated from 3.12 on, so it is not used."""
    if n is None:
        n = len(values) - lo
    if n < 8:
        return reduce(add, values[lo:lo + n], 0.0)
    if n <= _BLOCK:
        stop = lo + n - n % 8
        r0, r1, r2, r3, r4, r5, r6, r7 = (reduce(add, values[lo + j:stop:8]) for j in range(8))
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        return reduce(add, values[stop:lo + n], res)
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_sum(values, lo, n2) + pairwise_sum(values, lo + n2, n - n2)


def mean(values) -> float:
    """`np.mean(values)`; NaN for no values, as numpy (which also warns)."""
    if not values:
        return math.nan
    return pairwise_sum(values) / len(values)


def std(values) -> float:
    """`np.std(values)` (ddof 0): the root of the mean squared deviation from the mean."""
    if not values:
        return math.nan
    m = pairwise_sum(values) / len(values)
    return math.sqrt(pairwise_sum([(x - m) * (x - m) for x in values]) / len(values))


def percentile(values, q: float, ordered=None) -> float:
    """`np.percentile(values, q)` with numpy's default method "linear" (Hyndman and Fan's 7th).

    The virtual index is `(n - 1) * (q / 100)`; the result interpolates the two order statistics
    around it as numpy's `_lerp` does (from the upper one when the weight is at least one half).
    Any NaN among the values makes the result NaN. Raises ValueError for q outside [0, 100] and for
    no values, as numpy does. `ordered`: `sorted(values)`, given by a caller that keeps it (and has
    seen no NaN among them)."""
    if not 0 <= q <= 100:
        raise ValueError("Percentiles must be in the range [0, 100]")
    n = len(values)
    if n == 0:
        raise ValueError("percentile of no values")
    if ordered is None:
        if any(map(ne, values, values)):  # x != x: a NaN
            return math.nan
        ordered = sorted(values)
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:
        return float(ordered[-1])
    below = math.floor(virtual)
    a, b = float(ordered[below]), float(ordered[below + 1])
    t = virtual - below
    diff = b - a
    if t >= 0.5:
        return b - diff * (1 - t)
    return a + diff * t


def gradient(values) -> list[float]:
    """`np.gradient(values, range(len(values)))`: numpy finds the coordinates evenly spaced (by 1.0),
    so central differences `(f[i+1] - f[i-1]) / 2` inside and one-sided ones at both ends."""
    n = len(values)
    if n < 2:
        raise ValueError("np.gradient needs at least 2 values")
    out = [0.0] * n
    out[0] = (values[1] - values[0]) / 1.0
    for i in range(1, n - 1):
        out[i] = (values[i + 1] - values[i - 1]) / 2.0
    out[-1] = (values[-1] - values[-2]) / 1.0
    return out


def dot(a, b) -> float:
    """The dot product, correctly rounded (numpy's is BLAS's; see the module docstring)."""
    return math.fsum(map(float.__mul__, a, b))


def row_norm(a) -> float:
    """`np.linalg.norm(X, axis=1)` for one row: the root of numpy's pairwise sum of the squares."""
    return math.sqrt(pairwise_sum([x * x for x in a]))


def vector_norm(a) -> float:
    """`np.linalg.norm(x)` of a 1-D vector: numpy takes `sqrt(x.dot(x))` (a BLAS dot)."""
    return math.sqrt(dot(a, a))
