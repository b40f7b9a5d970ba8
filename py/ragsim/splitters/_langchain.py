"""LangChain's splitting machinery (langchain-text-splitters 1.x `character.py` and `base.py`), on offsets.

Every piece is a `(start, end)` pair into the document instead of a string, so each chunk's extent
comes out of the split itself. The control flow is LangChain's, line for line where it matters:

- `split_with_regex` is `_split_text_with_regex`: `re.split` on the separator, the separator kept at
  the start or the end of the following/preceding piece when asked, empty pieces dropped.
- `merge` is `TextSplitter._merge_splits` with `length_function=len`: pieces are packed while they
  fit; on overflow the chunk is emitted and whole pieces are popped from its front until what is
  left is no longer than the overlap (so the overlap is silently zero when every piece is longer
  than it), and a single piece longer than the size becomes an oversized chunk.
- `_join_docs` strips each joined chunk when `strip_whitespace` is on and drops empty ones; the
  extent is that of the stripped text.

One quirk cannot be an extent: where LangChain re-joins two neighbouring pieces with a separator
that is not the text that stood between them (empty pieces dropped between repeated separators,
e.g. three blank lines at separator "\\n\\n" without keep_separator; or a regular expression
re-inserted as its own pattern text), its chunk is not a piece of the document. The extent then
spans the same pieces with the document's own text between them, and `units` is still the
length of LangChain's chunk. docs/splitters.md and the conformance tests record this.
"""

import re

from ..errors import RequestError
from ..extents import Extent
from ..fields import get_bool, get_int

# LangChain's defaults (TextSplitter.__init__).
DEFAULT_SIZE = 4000
DEFAULT_OVERLAP = 200

# Zero-width lookaround separators are never re-inserted by CharacterTextSplitter.
LOOKAROUND_PREFIXES = ("(?=", "(?<!", "(?<=", "(?!")


def read_common(chunking: dict) -> tuple[int, int, bool]:
    """`size`, `overlap` and `strip_whitespace`, checked as LangChain checks them (overlap may equal size)."""
    size = get_int(chunking, "size", "chunking.size", default=DEFAULT_SIZE, minimum=1)
    overlap = get_int(chunking, "overlap", "chunking.overlap", default=DEFAULT_OVERLAP, minimum=0)
    if overlap > size:
        raise RequestError(
            "chunking.overlap",
            f"LangChain refuses an overlap larger than the chunk size (got {overlap} and {size}); lower the overlap.",
        )
    strip = get_bool(chunking, "strip_whitespace", "chunking.strip_whitespace", default=True)
    return size, overlap, strip


def read_keep_separator(chunking: dict, default):
    """`keep_separator`: false, true (= "start"), "start" or "end"."""
    value = chunking.get("keep_separator", default)
    if not (isinstance(value, bool) or value in ("start", "end")):
        raise RequestError(
            "chunking.keep_separator",
            f"chunking.keep_separator must be false, true, \"start\" or \"end\" (got {value!r}).",
        )
    return value


def compile_separator(pattern: str, field: str) -> re.Pattern:
    """A separator as a regular expression; refuses bad syntax and capturing groups.

    LangChain wraps the separator in one group and pairs `re.split`'s output two by two, so a
    pattern with groups of its own would scramble its pieces; use `(?:...)` instead.
    """
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        raise RequestError(field, f"The separator {pattern!r} is not a valid regular expression ({e}).") from None
    if compiled.groups:
        raise RequestError(field, f"The separator {pattern!r} has a capturing group; write (?:...) instead.")
    return compiled


def split_with_regex(text: str, base: int, pattern: re.Pattern | None, keep) -> list[tuple[int, int]]:
    """`_split_text_with_regex` over `text` (a slice starting at document offset `base`).

    `pattern` None means the empty separator: one piece per character.
    """
    n = len(text)
    if pattern is None:
        return [(base + i, base + i + 1) for i in range(n)]
    # re.split and re.finditer find the same matches (empty ones included, Python >= 3.7).
    bounds = [(m.start(), m.end()) for m in pattern.finditer(text)]
    pieces = []
    if not keep:
        prev = 0
        for s, e in bounds:
            pieces.append((prev, s))
            prev = e
        pieces.append((prev, n))
    elif keep == "end":
        # [piece + following separator, ...] then the last piece
        prev = 0
        for s, e in bounds:
            pieces.append((prev, e))
            prev = e
        pieces.append((prev, n))
    else:
        # the first piece, then [separator + following piece, ...]
        prev = 0
        for s, e in bounds:
            pieces.append((prev, s))
            prev = s
        pieces.append((prev, n))
    return [(base + a, base + b) for a, b in pieces if b > a]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _emit(text: str, pieces, lo: int, hi: int, sep: str, strip: bool, out: list) -> None:
    """`_join_docs(current_doc, separator)`: pieces[lo:hi] joined, stripped, dropped when empty."""
    start, end = pieces[lo][0], pieces[hi - 1][1]
    exact = True
    if hi - lo > 1:
        ls = len(sep)
        for i in range(lo + 1, hi):
            gap_start, gap_end = pieces[i - 1][1], pieces[i][0]
            if gap_end - gap_start != ls or (ls and not text.startswith(sep, gap_start)):
                exact = False
                break
    if exact:
        if strip:
            start, end = _strip(text, start, end)
        if end > start:
            out.append(Extent(start, end, end - start))
        return
    # LangChain's chunk is not a slice of the document: measure its own text for `units`.
    joined = sep.join(text[a:b] for a, b in pieces[lo:hi])
    if strip:
        joined = joined.strip()
        start, end = _strip(text, start, end)
    if joined:
        out.append(Extent(start, end, len(joined)))


def merge(text: str, pieces: list[tuple[int, int]], sep: str, size: int, overlap: int, strip: bool, out: list) -> None:
    """`_merge_splits(pieces, sep)` with len() as the length function; appends extents to `out`."""
    sep_len = len(sep)
    lo = 0  # current_doc is pieces[lo:hi]
    total = 0
    for hi, (a, b) in enumerate(pieces):
        len_ = b - a
        if total + len_ + (sep_len if hi > lo else 0) > size:
            if hi > lo:
                _emit(text, pieces, lo, hi, sep, strip, out)
                # Pop whole pieces from the front until the rest fits in the overlap and leaves room.
                while total > overlap or (total + len_ + (sep_len if hi > lo else 0) > size and total > 0):
                    total -= (pieces[lo][1] - pieces[lo][0]) + (sep_len if hi - lo > 1 else 0)
                    lo += 1
        total += len_ + (sep_len if hi > lo else 0)
    if lo < len(pieces):
        _emit(text, pieces, lo, len(pieces), sep, strip, out)
