"""The splitters `identify` searches, each with its other fields fixed, the unit its size is
counted in (and how a stretch of the text is measured in it), the settings people most often leave
or pick (tried first), and the sizes and overlaps worth trying given the chunks' lengths."""

from bisect import bisect_left, bisect_right
from typing import NamedTuple

from ragsim import split as splitters
from ragsim.text import tokens
from ragsim.text.index import DocIndex
from ragsim.text.tokens import document_tokens

TOKENIZERS = ("cl100k_base", "o200k_base")

# The settings people leave as they are (the libraries' defaults) or pick from tutorials, tried first.
LC_SIZES = (4000, 1000, 2000, 1500, 800, 500, 512, 256, 300, 200, 100)
LC_OVERLAPS = (200, 100, 50, 0, 20, 150)
TOKEN_SIZES = (512, 256, 1024, 1000, 500, 128, 100, 4000)
TOKEN_OVERLAPS = (0, 50, 20, 100, 200, 64, 32)
LI_SIZES = (1024, 512, 256, 128)
LI_OVERLAPS = (200, 20, 50, 0, 100)
WINDOW_SIZES = (200, 100, 500, 1000, 50)
WINDOW_OVERLAPS = (0, 20, 50, 10)


class Family(NamedTuple):
    """One splitter with its other fields fixed: searched over `size` and `overlap` in `unit`."""

    strategy: str
    fixed: dict
    unit: object  # "chars", "words", ("tokens" or "pieces", encoding) or ("haystack", delimiter)
    exact: bool  # every chunk but the last holds exactly `size` units (windows): a narrow search
    sizes: tuple = ()
    overlaps: tuple = ()


def families(text: str, tokenizers: tuple) -> list[Family]:
    """The splitters searched, the commonest first (the first that reproduces every chunk wins)."""
    out = [Family("langchain-recursive", {}, "chars", False, LC_SIZES, LC_OVERLAPS)]
    if "cl100k_base" in tokenizers:
        out.append(Family("llamaindex-sentence", {}, ("tokens", "cl100k_base"), False, LI_SIZES, LI_OVERLAPS))
    for sep in ("\n\n", "\n", " "):
        out.append(Family("langchain-character", {"separator": sep}, "chars", False, LC_SIZES, LC_OVERLAPS))
    out.append(Family("window", {"unit": "chars"}, "chars", True, WINDOW_SIZES, WINDOW_OVERLAPS))
    out.append(Family("window", {"unit": "words"}, "words", True, WINDOW_SIZES, WINDOW_OVERLAPS))
    for split_by in ("word", "passage", "line", "period", "page"):
        delimiter = splitters.haystack.SPLIT_BY[split_by][0]
        if split_by in ("word", "passage") or delimiter in text:
            out.append(Family("haystack", {"split_by": split_by}, ("haystack", delimiter), True, (200,), (0,)))
    out.append(Family("sentences", {"unit": "words"}, "words", False, WINDOW_SIZES, WINDOW_OVERLAPS))
    out.append(Family("sentences", {"unit": "chars"}, "chars", False, LC_SIZES, LC_OVERLAPS))
    for name in tokenizers:
        unit = ("tokens", name)
        out.append(Family("langchain-recursive", {"length": "tokens", "tokenizer": name}, unit, False,
                          TOKEN_SIZES, TOKEN_OVERLAPS))
        out.append(Family("langchain-token", {"tokenizer": name}, unit, True, TOKEN_SIZES, TOKEN_OVERLAPS))
        out.append(Family("window", {"unit": "tokens", "tokenizer": name}, unit, True, TOKEN_SIZES, TOKEN_OVERLAPS))
    if "cl100k_base" in tokenizers:
        # TokenTextSplitter counts the tokens of the words one by one: that is its measure
        out.append(Family("llamaindex-token", {}, ("pieces", "cl100k_base"), False, LI_SIZES, (20, 0, 50, 200)))
        unit = ("tokens", "cl100k_base")
        out.append(Family("sentences", {"unit": "tokens"}, unit, False, TOKEN_SIZES, TOKEN_OVERLAPS))
    return out


def measure_in(index: DocIndex, unit):
    """The length of an extent `(a, b)` of `index`'s text in `unit`, counting the units wholly inside it."""
    if unit == "chars":
        return lambda a, b: b - a
    if unit == "words":
        ws, we = index.word_starts, index.word_ends
        return lambda a, b: bisect_right(we, b) - bisect_left(ws, a)
    kind, arg = unit
    if kind == "pieces":  # tokens of the words, each counted with the space before it
        count, text, seen = tokens.get(arg).count, index.text, {}

        def words(a: int, b: int) -> int:
            total = 0
            for piece in text[a:b].replace(" ", "\0 ").split("\0"):
                n = seen.get(piece)
                if n is None:
                    n = seen[piece] = count(piece) if piece else 0
                total += n
            return total

        return words
    if kind == "tokens":
        _, ts, te = document_tokens(index, arg)
        return lambda a, b: bisect_right(te, b) - bisect_left(ts, a)
    bounds = [0]  # haystack: unit i is text[bounds[i]:bounds[i + 1]], the delimiter on the unit before
    at = index.text.find(arg)
    while at != -1:
        bounds.append(at + len(arg))
        at = index.text.find(arg, at + len(arg))
    bounds.append(len(index.text))
    n = len(bounds) - 1
    return lambda a, b: bisect_left(bounds, b, 0, n) - bisect_right(bounds, a, 1, n + 1) + 1


def _rounds(lo: int, hi: int) -> list[int]:
    """The round numbers in [lo, hi]: multiples of 50 and powers of two from 8."""
    return [x for x in range(max(lo, 1), hi + 1) if x % 50 == 0 or (x & (x - 1) == 0 and x >= 8)]


def _ordered(first, lo: int, hi: int) -> list[int]:
    """`first` (the defaults), then round numbers in [lo, hi], then every number in [lo, hi]."""
    seen, out = set(), []
    for x in [*first, *_rounds(lo, hi), *range(lo, hi + 1)]:
        if x >= 0 and x not in seen:
            seen.add(x)
            out.append(x)
    return out


def size_candidates(family: Family, longest: tuple[int, int]) -> list[int]:
    """Sizes at least the longest chunk (less a little: units counted at the edges may differ)."""
    lo, hi = longest
    span = 4 if family.exact else max(16, hi // 8)
    lo = max(1, lo - 3)
    return [s for s in _ordered([d for d in family.sizes if d >= lo], lo, hi + span) if s >= 1]


def overlap_window(family: Family, seen: tuple[int, int]) -> tuple[int, int]:
    """The overlaps near the longest one seen between neighbours (a packer carries at most `overlap`,
    and often less: a piece that would pass it is dropped whole)."""
    lo, hi = seen
    return max(0, lo - 3), hi + (3 if family.exact else max(16, hi // 4))


def overlap_candidates(family: Family, seen: tuple[int, int]) -> list[int]:
    """The defaults, then the overlaps of `overlap_window`; each size takes those it allows."""
    return _ordered(family.overlaps, *overlap_window(family, seen))


def next_overlap(family: Family, window: tuple[int, int], above: int, below: int, tried: set) -> int | None:
    """The next overlap to try with one size, strictly between `above` and `below` (what the chunks
    have shown so far) and not tried yet: the defaults in order and the window's round numbers (what
    people pick, and of settings that cut the same, the one to name), then the middle of those left in
    `window` (a bisection where the chunks steer, a walk out from the middle where they do not),
    then, once the chunks have steered past an end of the window, the middle of those left beyond it."""
    lo, hi = window
    for overlap in (*family.overlaps, *_rounds(lo, hi)):
        if above < overlap < below and overlap not in tried:
            return overlap
    if above >= hi or below <= lo:  # steered out of the window: all that is left lies beyond it
        lo, hi = 0, below - 1
    left = [o for o in range(max(lo, above + 1), min(hi, below - 1) + 1) if o not in tried]
    return left[len(left) // 2] if left else None
