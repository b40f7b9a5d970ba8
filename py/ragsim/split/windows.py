"""Fixed-size sliding windows over words or characters (SPEC section 2)."""

from ragsim.errors import RequestError
from ragsim.text.extents import Split
from ragsim.fields import get_choice, get_int
from ragsim.text.index import WordRanges
from ragsim.text.tokens import document_tokens, read_tokenizer

UNITS = ("words", "chars", "tokens")  # tokens: chunking.tokenizer's (ragsim.tokens)


def window_bounds(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Unit ranges `[a, b)` of the windows: window i covers `[i*step, min(i*step + size, n))`,
    produced while the previous window ended before `n`."""
    return list(zip(*window_columns(n, size, overlap))) if n else []


def window_columns(n: int, size: int, overlap: int) -> tuple[list[int], list[int]]:
    """The same windows as two lists, first units and end units (built without a Python loop)."""
    if n == 0:
        return [], []
    step = size - overlap
    # The last window is the first whose end reaches n: a*step + size >= n.
    last = max(0, -(-(n - size) // step))
    firsts = list(range(0, last * step + 1, step))
    ends = list(range(size, (last - 1) * step + size + 1, step))
    ends.append(n)
    return firsts, ends


def count(doc, chunking: dict, size: int, overlap: int) -> int:
    """How many windows `split` makes over words or characters, by arithmetic (0 over tokens: their
    count is known only once the text is encoded)."""
    unit = chunking.get("unit", "words")
    if unit not in ("words", "chars"):
        return 0
    n = doc.n_words if unit == "words" else len(doc.text)
    step = size - overlap
    return 1 + max(0, -(-(n - size) // step)) if n else 0


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
    if unit == "tokens":
        return token_windows(doc, size, overlap, read_tokenizer(chunking))
    n = doc.n_words if unit == "words" else len(doc.text)
    firsts, stops = window_columns(n, size, overlap)
    if not firsts:
        return Split.columns([], [], [], unit, n, word_ranges=WordRanges([], []) if unit == "words" else None)
    # every window holds `size` units but the last; extents read with slices (no per-chunk work)
    units = [size] * (len(firsts) - 1)
    units.append(stops[-1] - firsts[-1])
    if unit == "words":
        step = size - overlap
        starts = doc.word_starts[0 : firsts[-1] + 1 : step]
        ends = doc.word_ends[size - 1 : stops[-2] if len(stops) > 1 else 0 : step]
        ends.append(doc.word_ends[n - 1])
        return Split.columns(starts, ends, units, unit, n, word_ranges=WordRanges(firsts, stops, step, size))
    return Split.columns(firsts, stops, units, unit, n)


def read_size_overlap(chunking: dict, default_size=None, default_overlap=0) -> tuple[int, int]:
    """`size` >= 1 and `overlap` < `size`, in tokens."""
    size = get_int(chunking, "size", "chunking.size", minimum=1,
                   **({} if default_size is None else {"default": default_size}))
    overlap = get_int(chunking, "overlap", "chunking.overlap", default=default_overlap, minimum=0)
    if overlap >= size:
        raise RequestError(
            "chunking.overlap",
            f"The overlap must be smaller than the chunk size in tokens (got {overlap} and {size}); lower it.",
        )
    return size, overlap


def token_windows(doc, size: int, overlap: int, name: str) -> Split:
    """SPEC section 2's windows over tokens. A chunk runs from the start of the character holding
    its first token's first byte to the end of the character holding its last token's last byte."""
    _, starts, ends = document_tokens(doc, name)
    n = len(starts)
    firsts, stops = window_columns(n, size, overlap)
    return Split.columns(
        list(map(starts.__getitem__, firsts)),
        [ends[b - 1] for b in stops],
        [b - a for a, b in zip(firsts, stops)],
        "tokens",
        n,
    )
