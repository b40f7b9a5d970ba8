"""Fixed-size sliding windows over words or characters (SPEC section 2)."""

from .errors import RequestError
from .extents import Extent, Split
from .fields import get_choice, get_int

UNITS = ("words", "chars")


def window_bounds(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Unit ranges `[a, b)` of the windows: window i covers `[i*step, min(i*step + size, n))`,
    produced while the previous window ended before `n`."""
    step = size - overlap
    out = []
    a = 0
    while a < n:
        b = min(a + size, n)
        out.append((a, b))
        if b >= n:
            break
        a += step
    return out


def read_params(chunking: dict) -> tuple[str, int, int]:
    """Validate `unit`, `size` and `overlap` of a window-like strategy."""
    unit = get_choice(chunking, "unit", "chunking.unit", UNITS, default="words")
    size = get_int(chunking, "size", "chunking.size", minimum=1)
    overlap = get_int(chunking, "overlap", "chunking.overlap", default=0, minimum=0)
    if overlap >= size:
        raise RequestError(
            "chunking.overlap",
            f"Overlap must be smaller than the chunk size (got {overlap} and {size}).",
        )
    return unit, size, overlap


def split(doc, chunking: dict) -> Split:
    """Windows over `doc` (a DocIndex): extents in code points, units counted in the window's unit."""
    unit, size, overlap = read_params(chunking)
    if unit == "words":
        starts, ends = doc.word_starts, doc.word_ends
        n = len(starts)
        extents = tuple(Extent(starts[a], ends[b - 1], b - a) for a, b in window_bounds(n, size, overlap))
    else:
        n = len(doc.text)
        extents = tuple(Extent(a, b, b - a) for a, b in window_bounds(n, size, overlap))
    return Split(extents, unit, n)
