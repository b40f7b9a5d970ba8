"""Tokens of an indexed document, computed once and kept on it, and fixed windows over them.

A slider move never re-tokenizes: `document_tokens` keeps `(ids, starts, ends)` in `doc.memo`
(the DocIndex lives in the caller's Session), so a move only cuts new windows out of the lists.
"""

from bisect import bisect_left, bisect_right

from ..errors import RequestError
from ..extents import Extent, Split
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


class SentenceTokens:
    """Token counts for the `sentences` strategy with `unit: "tokens"`: a run of sentences counts
    the document's tokens that touch it (a token that straddles a sentence boundary, like " The",
    counts on both sides). `windows` cuts a sentence over `size` into fixed token windows, each
    clipped to the sentence."""

    def __init__(self, doc, name: str, sents):
        _, self.starts, self.ends = document_tokens(doc, name)
        self.sents = sents
        self.total = len(self.starts)

    def units(self, i: int, j: int) -> int:
        """Tokens touching sentences i .. j-1 (token starts and ends are both non-decreasing)."""
        return bisect_left(self.starts, self.sents[j - 1][1]) - bisect_right(self.ends, self.sents[i][0])

    def windows(self, sent: tuple[int, int], size: int, overlap: int) -> list[Extent]:
        from ..windows import window_bounds

        s, e = sent
        t0, t1 = bisect_right(self.ends, s), bisect_left(self.starts, e)
        starts, ends = self.starts, self.ends
        return [Extent(max(s, starts[t0 + a]), min(e, ends[t0 + b - 1]), b - a)
                for a, b in window_bounds(t1 - t0, size, overlap)]
