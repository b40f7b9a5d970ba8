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
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from ragsim import limits
from ragsim.text import safe_regex
from ragsim.errors import RequestError
from ragsim.text.extents import Extent
from ragsim.fields import get_bool, get_int, shown

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
            f"chunking.keep_separator must be false, true, \"start\" or \"end\" (got {shown(value)}).",
        )
    return value


def compile_separator(pattern: str, field: str, regex: bool = True) -> re.Pattern:
    """A separator as a regular expression; refuses bad syntax and capturing groups, and (for a
    pattern a person wrote, `regex`) one too long or that can backtrack catastrophically (safe_regex).

    LangChain wraps the separator in one group and pairs `re.split`'s output two by two, so a
    pattern with groups of its own would scramble its pieces; use `(?:...)` instead.
    """
    if regex:
        return safe_regex.compile_pattern(pattern, field, "separator")
    try:  # a plain separator, escaped by LangChain: it compiles (re.escape) unless it is too long
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError, MemoryError) as e:
        raise RequestError(field, f"The separator {shown(pattern)} cannot be searched for ({type(e).__name__}); "
                           "shorten it.") from None
    if compiled.groups:
        raise RequestError(field, f"The separator {shown(pattern)} has a capturing group; write (?:...) instead.")
    return compiled


def split_with_regex(text: str, base: int, pattern: re.Pattern | None, keep) -> list[tuple[int, int]]:
    """`_split_text_with_regex` over `text` (a slice starting at document offset `base`).

    `pattern` None means the empty separator: one piece per character.
    """
    n = len(text)
    if pattern is None:
        return Characters(base, n)
    # re.split and re.finditer find the same matches (empty ones included, Python >= 3.7).
    # A piece runs between two cuts: after each match (dropped separator), at its end ("end") or
    # at its start (the separator starts the next piece).
    if not keep:
        bounds = [(m.start(), m.end()) for m in pattern.finditer(text)]
        starts = [0] + [e for _, e in bounds]
        ends = [s for s, _ in bounds] + [n]
    else:
        cut = [m.end() if keep == "end" else m.start() for m in pattern.finditer(text)]
        starts = [0] + cut
        ends = cut + [n]
    return [(base + a, base + b) for a, b in zip(starts, ends) if b > a]


class Characters(Sequence):
    """The pieces of the empty separator, `(base + i, base + i + 1)` for each character, made on demand:
    a long unbroken run would otherwise be millions of pairs (about 110 bytes each) held at once."""

    __slots__ = ("base", "n")

    def __init__(self, base: int, n: int):
        self.base, self.n = base, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [(self.base + j, self.base + j + 1) for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.base + i, self.base + i + 1

    def __iter__(self):
        return zip(range(self.base, self.base + self.n), range(self.base + 1, self.base + self.n + 1))


class Steps(Sequence):
    """`piece_sums` of `Characters` pieces, by arithmetic: `i * step` for i in 0 .. n - 1."""

    __slots__ = ("n", "step")

    def __init__(self, n: int, step: int):
        self.n, self.step = n, step

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * self.step


def inexact_gaps(text: str, pieces: list[tuple[int, int]], sep: str) -> list[int] | None:
    """Prefix counts of the gaps that are not exactly `sep`: `g[i]` counts such gaps among those
    before pieces 1 .. i, so pieces `[lo, hi)` join into a slice of the text iff `g[hi - 1] == g[lo]`.
    None when `sep` is empty (pieces are then contiguous slices)."""
    if not sep:
        return None
    ls = len(sep)
    g = [0]
    bad = 0
    for (_, prev_end), (start, _) in zip(pieces, pieces[1:]):
        if start - prev_end != ls or not text.startswith(sep, prev_end):
            bad += 1
        g.append(bad)
    return g


def _emit(text: str, pieces, lo: int, hi: int, sep: str, strip: bool, gaps, out: list, cum=None) -> None:
    """`_join_docs(pieces[lo:hi], sep)`: the chunk stripped when asked, dropped when empty.

    Where LangChain's chunk is not a slice of the document (see the module docstring), the extent
    spans its pieces and `units` is the length of LangChain's own text.
    """
    start, end = pieces[lo][0], pieces[hi - 1][1]
    if strip:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
    if gaps is None or gaps[hi - 1] == gaps[lo]:
        if end > start:
            out.append(Extent(start, end, end - start))
        return
    length = _joined_length(text, pieces, lo, hi, sep, strip, cum)
    if strip and end <= start:  # only the re-inserted separator is left: keep the pieces' whole span
        start, end = pieces[lo][0], pieces[hi - 1][1]
    if length:
        out.append(Extent(start, end, length))


def _joined_length(text: str, pieces, lo: int, hi: int, sep: str, strip: bool, cum=None) -> int:
    """`len(sep.join(pieces[lo:hi]))`, stripped when asked, mostly without building the string:
    pieces never start or end with the separator, so when neither the first nor the last piece is
    blank, stripping takes the first piece's leading and the last piece's trailing whitespace."""
    if cum is not None:
        total = cum[hi] - cum[lo] - len(sep)
    else:
        total = sum(b - a for a, b in pieces[lo:hi]) + len(sep) * (hi - lo - 1)
    if not strip:
        return total
    (a0, b0), (a1, b1) = pieces[lo], pieces[hi - 1]
    lead = _LEADING_SPACE.match(text, a0, b0).end() - a0
    last = text[a1:b1]
    if lead == b0 - a0 or not last.strip():  # a blank piece at an end: build it, as LangChain does
        return len(sep.join(text[a:b] for a, b in pieces[lo:hi]).strip())
    return total - lead - (len(last) - len(last.rstrip()))


_LEADING_SPACE = re.compile(r"\s*")


def piece_sums(pieces: list[tuple[int, int]], sep: str) -> list[int]:
    """`cum[i]`: the length of pieces `0 .. i-1` each followed by one separator (for `merge`)."""
    sep_len = len(sep)
    return [0, *accumulate(b - a + sep_len for a, b in pieces)]


def merge(text: str, pieces: list[tuple[int, int]], lo: int, stop: int, sep: str, size: int, overlap: int,
          strip: bool, out: list, gaps: list[int] | None, cum: list[int] | None = None) -> None:
    """`_merge_splits(pieces[lo:stop], sep)` with len() as the length function; appends extents to `out`.

    `gaps` is `inexact_gaps(text, pieces, sep)`. `_join_docs` is inlined: each chunk is stripped
    when asked and dropped when empty. `cum` (optional, `piece_sums(pieces, sep)`) lets a run of
    pieces that all fit be skipped with one bisection instead of one step per piece.
    """
    sep_len = len(sep)
    first = lo  # current_doc is pieces[first:hi]
    total = 0
    hi = lo
    while hi < stop:
        a, b = pieces[hi]
        len_ = b - a
        if hi > first:
            if total + len_ + sep_len <= size:  # the common case: the piece fits
                if cum is None:
                    total += len_ + sep_len
                    hi += 1
                    continue
                # every piece up to (not including) `h` fits: total + cum[h] - cum[hi] <= size
                h = min(stop, bisect_right(cum, size - total + cum[hi]) - 1)
                total += cum[h] - cum[hi]
                hi = h
                continue
        elif len_ <= size:  # LangChain: `total` is 0 here, nothing to emit or pop
            total = len_
            hi += 1
            continue
        if total + len_ + (sep_len if hi > first else 0) > size:
            if hi > first:
                _emit(text, pieces, first, hi, sep, strip, gaps, out, cum)
                if len(out) > limits.MAX_CHUNKS:  # stop a runaway split early (size 1000, overlap 999)
                    limits.check_chunks(len(out))
                # Pop whole pieces from the front until the rest fits in the overlap and leaves room.
                if cum is not None:
                    # the rest of pieces f .. hi-1 is cum[hi] - cum[f] - sep_len long; the loop below
                    # stops at the first f where it is <= overlap and leaves room for this piece
                    first = bisect_left(cum, max(cum[hi] - sep_len - overlap, cum[hi] + len_ - size), first, hi)
                    total = cum[hi] - cum[first] - sep_len if first < hi else 0
                while total > overlap or (total + len_ + (sep_len if hi > first else 0) > size and total > 0):
                    total -= (pieces[first][1] - pieces[first][0]) + (sep_len if hi - first > 1 else 0)
                    first += 1
        total += len_ + (sep_len if hi > first else 0)
        hi += 1
    if first < stop:
        _emit(text, pieces, first, stop, sep, strip, gaps, out, cum)
