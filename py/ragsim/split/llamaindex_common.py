"""What LlamaIndex's splitters share (llama-index-core 0.14.25), on offsets instead of strings.

- `Pieces`: a document with the token count of every piece asked for, each counted on its own as
  LlamaIndex counts it (`len(tokenizer(piece))`; tokens are not additive across a cut) and kept, so
  the next slider move counts nothing twice. The pieces a splitter cuts a text into depend on the
  text alone, never on the chunk size, so they are kept too.
- The cutting functions of `node_parser/text/utils.py`: `split_by_sep` keeps the separator at the
  start of every piece but the first (so pieces tile the text), `split_by_char`, and
  `split_by_regex` (`re.findall`: a regular expression that does not match everywhere drops text).
- `effective_size`: the metadata string's tokens taken off the chunk size, as
  `split_text_metadata_aware` does, refused when nothing is left.
- `stripped`: a chunk's extent once `str.strip` has run on it.
"""

import re

from ragsim.errors import RequestError
from ragsim.fields import get_int, get_str
from ragsim.text.tokens import get
from ragsim.text.tokens import read_tokenizer

DEFAULT_CHUNK_SIZE = 1024  # llama_index.core.constants


class SingleTokenTooLarge(Exception):
    """`_merge`'s "Single token exceeded chunk size": one character holds more tokens than a chunk."""

    def __init__(self, start: int, end: int, tokens: int):
        super().__init__(start, end, tokens)
        self.start, self.end, self.tokens = start, end, tokens


class TooDeep(Exception):
    """`_split` would recurse more than MAX_DEPTH levels, or without end: a cut that yields the piece
    itself beside empty ones (`secondary_chunking_regex` ".?" over a character above the size, where
    LlamaIndex recurses until Python's recursion limit stops it)."""


# Levels of cutting a piece again that `flatten` follows (LlamaIndex's own cuts need a handful; only a
# pattern that peels one character a level goes deeper), kept well inside any Python's recursion limit.
MAX_DEPTH = 100


class Pieces:
    """A text, its token counter, and the cuts already made with each piece's count.

    The pieces a splitter cuts a text into depend on the text alone, never on the chunk size, so a
    slider move re-uses every cut and count made before and counts only pieces it cuts anew.
    """

    __slots__ = ("text", "_count", "counts", "cuts")

    def __init__(self, text: str, count):
        self.text = text
        self._count = count
        self.counts: dict[tuple[int, int], int] = {}
        self.cuts: dict = {}

    def count(self, a: int, b: int) -> int:
        """Tokens of `text[a:b]` counted on its own."""
        key = (a, b)
        n = self.counts.get(key)
        if n is None:
            n = self.counts[key] = self._count(self.text[a:b])
        return n

    def flatten(self, size: int, key, cut) -> tuple[list[int], list[int], list[int]]:
        """`_split(text, size)` of both splitters: pieces no longer than `size` as (starts, ends, counts).

        A text that fits is one piece; otherwise `cut(a, b)` (the splitter's first cut that yields
        more than one piece) and each piece still over the size cut again, except a piece that is
        the only one its cut yields, which stays over the size (as LlamaIndex keeps it).
        """
        cache = self.cuts.setdefault(key, {})
        text, count = self.text, self._count
        starts: list[int] = []
        ends: list[int] = []
        counts: list[int] = []

        def children(a: int, b: int):
            got = cache.get((a, b))
            if got is None:
                parts = cut(a, b)
                cs = [count(text[x:y]) for x, y in parts]
                got = cache[(a, b)] = ([x for x, _ in parts], [y for _, y in parts], cs, max(cs, default=0))
            return got

        def walk(a: int, b: int, n: int, depth: int = 0) -> None:
            if n <= size:
                starts.append(a)
                ends.append(b)
                counts.append(n)
                return
            s, e, c, top = children(a, b)
            if depth >= MAX_DEPTH or (len(s) > 1 and (a, b) in zip(s, e)):
                raise TooDeep(a, b)
            if top <= size or len(s) == 1:
                starts.extend(s)
                ends.extend(e)
                counts.extend(c)
                return
            done = 0
            for i in [i for i, n in enumerate(c) if n > size]:
                # the pieces that fit, in one run, then the one over the size, cut again
                starts.extend(s[done:i])
                ends.extend(e[done:i])
                counts.extend(c[done:i])
                walk(s[i], e[i], c[i], depth + 1)
                done = i + 1
            starts.extend(s[done:])
            ends.extend(e[done:])
            counts.extend(c[done:])

        walk(0, len(text), self.count(0, len(text)))
        return starts, ends, counts


def by_separator(text: str, a: int, b: int, sep: str) -> list[tuple[int, int]]:
    """`split_text_keep_separator(text[a:b], sep)`: cut before every `sep`, empty pieces dropped."""
    cuts = [a]
    i = text.find(sep, a, b)
    while i != -1:
        # str.split's matches never overlap: the next search starts after this separator.
        if i > cuts[-1]:
            cuts.append(i)
        i = text.find(sep, i + len(sep), b)
    cuts.append(b)
    return [(x, y) for x, y in zip(cuts, cuts[1:]) if y > x]


def by_char(a: int, b: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(a, b)]


def by_regex(text: str, a: int, b: int, pattern: re.Pattern) -> list[tuple[int, int]]:
    """`re.findall(regex, text[a:b])` as extents (empty matches included, as findall returns them)."""
    return [(a + m.start(), a + m.end()) for m in pattern.finditer(text[a:b])]


def stripped(text: str, a: int, b: int) -> tuple[int, int]:
    """The extent of `text[a:b].strip()`."""
    chunk = text[a:b]
    body = chunk.lstrip()
    a += len(chunk) - len(body)
    return a, a + len(body.rstrip())


def read_size_overlap(chunking: dict, default_overlap: int) -> tuple[int, int]:
    """`size` (> 0) and `overlap` (>= 0, at most the size), checked as LlamaIndex checks them."""
    size = get_int(chunking, "size", "chunking.size", default=DEFAULT_CHUNK_SIZE, minimum=1)
    overlap = get_int(chunking, "overlap", "chunking.overlap", default=default_overlap, minimum=0)
    if overlap > size:
        raise RequestError(
            "chunking.overlap",
            f"LlamaIndex refuses an overlap larger than the chunk size (got {overlap} and {size}); lower the overlap.",
        )
    return size, overlap


def read_separator(chunking: dict, key: str, default: str) -> str:
    value = get_str(chunking, key, f"chunking.{key}", default=default)
    if not value:
        # LlamaIndex splits with str.split, which refuses an empty separator.
        raise RequestError(f"chunking.{key}", f"chunking.{key} must not be empty; LlamaIndex cannot split on an empty string.")
    return value


def read_metadata(chunking: dict) -> str:
    return get_str(chunking, "metadata", "chunking.metadata", default="")


def effective_size(size: int, metadata: str, count, reserve: int) -> int:
    """The chunk size left once the metadata string's tokens (plus `reserve` for formatting) are taken off.

    No metadata means `split_text`: the whole size.
    """
    if not metadata:
        return size
    used = count(metadata) + reserve
    if size - used <= 0:
        raise RequestError(
            "chunking.metadata",
            f"LlamaIndex refuses metadata this long: it takes {used} tokens of the {size}-token chunk size; "
            "shorten chunking.metadata or raise chunking.size.",
        )
    return size - used


def counter(chunking: dict):
    """The token counter LlamaIndex uses by default: tiktoken's cl100k_base with special tokens
    allowed (`get_tokenizer()`); `chunking.tokenizer` may name o200k_base. Returns (name, count)."""
    name = read_tokenizer(chunking)
    return name, get(name, "chunking.tokenizer").count


def pieces_for(doc, name: str, count) -> Pieces:
    """The document's `Pieces` for one tokenizer, kept on the index for the next move."""
    key = ("llamaindex-pieces", name)
    got = doc.memo.get(key)
    if got is None:
        got = doc.memo[key] = Pieces(doc.text, count)
    return got


def too_large_error(text: str, err: SingleTokenTooLarge, size: int) -> RequestError:
    return RequestError(
        "chunking.size",
        f"LlamaIndex refuses this text: the character {text[err.start:err.end]!r} alone takes {err.tokens} "
        f"tokens, more than a chunk of {size}; raise chunking.size.",
    )
