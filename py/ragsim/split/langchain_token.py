"""LangChain's token splitters (langchain-text-splitters 1.x), chunk for chunk, with extents.

- `langchain-token`: `TokenTextSplitter(encoding_name=tokenizer, chunk_size=size,
  chunk_overlap=overlap)`. It encodes the text once and decodes windows of `size` tokens that
  step by `size - overlap` (`split_text_on_tokens`): SPEC section 2's windows over tokens. Each
  chunk's extent runs from the start of the character holding its first byte to the end of the
  character holding its last byte, so where a window boundary falls inside a character (an emoji or
  a CJK character split across tokens) our chunk holds the whole character while LangChain's
  decoded text has U+FFFD in its place (docs/splitters.md, "Tokens").
- `langchain-recursive` with `length: "tokens"`: `RecursiveCharacterTextSplitter.from_tiktoken_encoder`.
  The recursion and the merge are `langchain_recursive.py`'s; only the length function changes
  from `len` to the number of tokens of each piece, counted on its own, as LangChain counts it.
  A chunk's `units` is LangChain's own running total for it (its pieces' token counts plus the
  separators'), the number LangChain compares with `size`.

LangChain's own defaults are encoding "gpt2" and special tokens refused (an error); SPEC section 9
offers cl100k_base (default) and o200k_base and encodes special tokens as tiktoken's
`allowed_special="all"` does.
"""

import re

from ragsim.errors import RequestError
from ragsim.text.extents import Extent, Split
from ragsim.text.tokens import get
from ragsim.text.tokens import read_tokenizer
from ragsim.split.windows import token_windows
from ragsim.split import langchain_common as lc
from ragsim.split import langchain_recursive
from ragsim.split.langchain_recursive import read_separators
from ragsim.fields import shown

LENGTHS = ("chars", "tokens")


def split(doc, chunking: dict) -> Split:
    """`langchain-token`: LangChain's `TokenTextSplitter`."""
    size, overlap, _ = lc.read_common(chunking)
    if overlap >= size:  # split_text_on_tokens: "tokens_per_chunk must be greater than chunk_overlap"
        raise RequestError(
            "chunking.overlap",
            f"LangChain's TokenTextSplitter needs an overlap smaller than the chunk size (got {overlap} "
            f"and {size} tokens); lower the overlap.",
        )
    return token_windows(doc, size, overlap, read_tokenizer(chunking))


def read_length(chunking: dict) -> str:
    value = chunking.get("length", "chars")
    if value not in LENGTHS:
        raise RequestError("chunking.length", f"chunking.length must be \"chars\" or \"tokens\" (got {shown(value)}).")
    return value


def split_recursive_by_length(doc, chunking: dict) -> Split:
    """`langchain-recursive`: by characters, or by tokens with `length: "tokens"` (from_tiktoken_encoder)."""
    if chunking.get("length", "chars") != "chars" and read_length(chunking) == "tokens":
        return split_recursive(doc, chunking)
    return langchain_recursive.split(doc, chunking)


def split_recursive(doc, chunking: dict) -> Split:
    """`langchain-recursive` with `length: "tokens"` (`from_tiktoken_encoder`)."""
    size, overlap, strip = lc.read_common(chunking)
    separators, is_regex = read_separators(chunking)
    keep = lc.read_keep_separator(chunking, default=True)
    name = read_tokenizer(chunking)
    enc = get(name, "chunking.tokenizer")
    text = doc.text
    compiled = {
        s: lc.compile_separator(s if is_regex else re.escape(s), "chunking.separators") for s in separators if s
    }
    # Token counts of pieces and how spans split depend on the text alone: kept for the next move.
    counts = doc.memo.setdefault(("token-counts", name), {})
    memo = doc.memo.setdefault(("langchain-recursive", separators, is_regex, keep), {})

    def count(a: int, b: int) -> int:
        got = counts.get((a, b))
        if got is None:
            got = counts[(a, b)] = len(enc.encode(text[a:b]))
        return got

    def pieces_of(a: int, b: int, n_seps: int):
        """(separator, number of remaining separators, pieces, gaps) of `_split_text(text[a:b], seps)`."""
        key = ("tokens", a, b, n_seps)
        got = memo.get(key)
        if got is None:
            seps = separators[len(separators) - n_seps:]
            piece = text[a:b]
            i = next((i for i, s in enumerate(seps) if not s or compiled[s].search(piece)), len(seps) - 1)
            separator = seps[i]
            pieces = lc.split_with_regex(piece, a, compiled.get(separator) if separator else None, keep)
            rest = len(seps) - i - 1 if separator else 0
            got = memo[key] = (separator, rest, pieces, lc.inexact_gaps(text, pieces, "" if keep else separator))
        return got

    out: list = []

    def split_text(a: int, b: int, n_seps: int) -> None:
        separator, n_rest, pieces, gaps = pieces_of(a, b, n_seps)
        sep = "" if keep else separator
        lens = [count(pa, pb) for pa, pb in pieces]
        sep_len = count_text(enc, sep)
        good = 0
        for i, (pa, pb) in enumerate(pieces):
            if lens[i] < size:
                continue
            if i > good:
                merge_counted(text, pieces, lens, good, i, sep, sep_len, size, overlap, strip, gaps, out)
            good = i + 1
            if not n_rest:
                out.append(Extent(pa, pb, lens[i]))  # as is: over size, unstripped
            else:
                split_text(pa, pb, n_rest)
        if len(pieces) > good:
            merge_counted(text, pieces, lens, good, len(pieces), sep, sep_len, size, overlap, strip, gaps, out)

    split_text(0, len(text), len(separators))
    return Split(tuple(out), "tokens", count(0, len(text)))


def count_text(enc, s: str) -> int:
    return len(enc.encode(s)) if s else 0


def merge_counted(text: str, pieces, lens, lo: int, stop: int, sep: str, sep_len: int, size: int,
                  overlap: int, strip: bool, gaps, out: list) -> None:
    """`TextSplitter._merge_splits(pieces[lo:stop], sep)` with the lengths `lens` (token counts).

    `_langchain.merge` is the same loop for `len`; this one takes any lengths, so no length can be
    derived from the offsets. `current_doc` is `pieces[first:hi]`."""
    first = lo
    total = 0
    for hi in range(lo, stop):
        len_ = lens[hi]
        if hi > first and total + len_ + sep_len > size:
            _emit(text, pieces, first, hi, sep, strip, gaps, out, total)
            while total > overlap or (total + len_ + (sep_len if hi > first else 0) > size and total > 0):
                total -= lens[first] + (sep_len if hi - first > 1 else 0)
                first += 1
        total += len_ + (sep_len if hi > first else 0)
    if first < stop:
        _emit(text, pieces, first, stop, sep, strip, gaps, out, total)


def _emit(text, pieces, lo, hi, sep, strip, gaps, out, total) -> None:
    """`_join_docs`: the extent as `_langchain._emit` finds it, with LangChain's token total as units."""
    n = len(out)
    lc._emit(text, pieces, lo, hi, sep, strip, gaps, out)
    if len(out) > n:
        start, end, _ = out[-1]
        out[-1] = Extent(start, end, total)
