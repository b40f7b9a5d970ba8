"""Tokens of an indexed document, computed once and kept on it, and fixed windows over them.

A slider move never re-tokenizes: `document_tokens` keeps `(ids, starts, ends)` in `doc.memo`
(the DocIndex lives in the caller's Session), so a move only cuts new windows out of the lists.
"""

from ..errors import RequestError
from ..extents import Split
from ..fields import get_int
from . import DEFAULT, check_name, get


def read_tokenizer(chunking: dict, field: str = "chunking.tokenizer") -> str:
    """`chunking.tokenizer`: "cl100k_base" (default) or "o200k_base"."""
    return check_name(chunking.get("tokenizer", DEFAULT), field)


def document_tokens(doc, name: str, field: str = "chunking.tokenizer") -> tuple[list, list, list]:
    """(ids, starts, ends) of `doc.text` under encoding `name`, in code points; cached on `doc`."""
    key = ("tokens", name)
    got = doc.memo.get(key)
    if got is None:
        got = doc.memo[key] = get(name, field).encode_with_offsets(doc.text)
    return got


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


def windows(doc, size: int, overlap: int, name: str) -> Split:
    """SPEC section 2's windows over tokens. A chunk runs from the start of the character holding
    its first token's first byte to the end of the character holding its last token's last byte."""
    from ..windows import window_columns  # windows.py imports this module for unit "tokens"

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


def split_windows(doc, chunking: dict) -> Split:
    """`window` with `unit: "tokens"`."""
    size, overlap = read_size_overlap(chunking)
    return windows(doc, size, overlap, read_tokenizer(chunking))
