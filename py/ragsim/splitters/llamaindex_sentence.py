r"""`llamaindex-sentence`: LlamaIndex's `SentenceSplitter` (llama-index-core 0.14.25), chunk for chunk, with extents.

The default node parser of LlamaIndex. Sizes are tokens (tiktoken cl100k_base, as LlamaIndex's
`get_tokenizer()`), every piece counted on its own. `_split` cuts a text that does not fit, trying in
turn, and keeping the first cut that yields more than one piece:

1. the paragraph separator ("\n\n\n"), kept at the start of the following piece;
2. Punkt sentences (`ragsim.punkt`, nltk's untrained tokenizer), each running to the next one's start;
   pieces of these first two kinds are "sentences";
3. the secondary regular expression (`re.findall`, by default runs up to , . ; 。？！ and the mark);
4. the separator (" "), kept at the start of the following piece;
5. single characters;

and recurses into each piece that is still over the size. `_merge` packs pieces while they fit;
closing a chunk, it carries over the previous chunk's longest run of trailing pieces whose tokens
sum to at most `overlap` (0.14: the overlap is measured against `overlap`, and when the carried
pieces leave no room for the next piece they are dropped from the front). Each chunk is stripped,
and a blank one dropped. `units` is the chunk's token count as LlamaIndex sums it over its pieces.

One case cannot be an extent: a `secondary_chunking_regex` whose matches do not cover the text
(LlamaIndex's `findall` drops what lies between them), so the chunk joins pieces that are not
neighbours. The extent then spans from the first piece to the last, the text between them included.
The default expression covers every character.
"""

import re

from ..errors import RequestError
from ..extents import Split
from .. import punkt
from . import _llamaindex as li

SENTENCE_CHUNK_OVERLAP = 200
CHUNKING_REGEX = "[^,.;。？！]+[,.;。？！]?|[,.;。？！]"
DEFAULT_PARAGRAPH_SEP = "\n\n\n"


def split(doc, chunking: dict) -> Split:
    size, overlap = li.read_size_overlap(chunking, SENTENCE_CHUNK_OVERLAP)
    separator = li.read_separator(chunking, "separator", " ")
    paragraph_separator = li.read_separator(chunking, "paragraph_separator", DEFAULT_PARAGRAPH_SEP)
    regex = read_regex(chunking)
    metadata = li.read_metadata(chunking)
    name, count = li.counter(chunking)
    pieces = li.pieces_for(doc, name, count)
    chunk_size = li.effective_size(size, metadata, count, reserve=0)
    try:
        extents = split_pieces(pieces, chunk_size, overlap, separator, paragraph_separator, regex)
    except li.SingleTokenTooLarge as e:
        raise li.too_large_error(doc.text, e, chunk_size) from None
    return Split(extents, "tokens", pieces.count(0, len(doc.text)))


def read_regex(chunking: dict) -> re.Pattern | None:
    """`secondary_chunking_regex`: a pattern, or null / "" to go straight to the separator."""
    value = chunking.get("secondary_chunking_regex", CHUNKING_REGEX)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RequestError("chunking.secondary_chunking_regex",
                           f"chunking.secondary_chunking_regex must be text or null (got {type(value).__name__}).")
    try:
        pattern = re.compile(value)
    except re.error as e:
        raise RequestError("chunking.secondary_chunking_regex",
                           f"The pattern {value!r} is not a valid regular expression ({e}).") from None
    if pattern.groups:
        # findall would return the groups' text, not the pieces LlamaIndex means to keep.
        raise RequestError("chunking.secondary_chunking_regex",
                           f"The pattern {value!r} has a capturing group; write (?:...) instead.")
    return pattern


def split_text(text: str, count, size: int = li.DEFAULT_CHUNK_SIZE, overlap: int = SENTENCE_CHUNK_OVERLAP,
               separator: str = " ", paragraph_separator: str = DEFAULT_PARAGRAPH_SEP,
               regex: re.Pattern | None = re.compile(CHUNKING_REGEX)) -> list[tuple[int, int, int]]:
    """`SentenceSplitter(...).split_text(text)` as (start, end, tokens) with a given token counter."""
    return split_pieces(li.Pieces(text, count), size, overlap, separator, paragraph_separator, regex)


def split_pieces(pieces: li.Pieces, size: int, overlap: int, separator: str, paragraph_separator: str,
                 regex: re.Pattern | None) -> list[tuple[int, int, int]]:
    text = pieces.text
    if not text:
        return [(0, 0, 0)]  # LlamaIndex returns [""] for an empty text
    key = ("sentence", separator, paragraph_separator, regex.pattern if regex is not None else None)
    cuts = pieces.cuts.setdefault(key, {})

    def cut(a: int, b: int):
        """`_get_splits_by_fns(text[a:b])`: (pieces, is_sentence), depending on the text alone."""
        got = cuts.get((a, b))
        if got is None:
            got = cuts[(a, b)] = _cut(text, a, b, separator, paragraph_separator, regex)
        return got

    splits: list[tuple[int, int, int]] = []  # (start, end, tokens)

    def _split(a: int, b: int) -> None:
        n = pieces.count(a, b)
        if n <= size:
            splits.append((a, b, n))
            return
        parts, _ = cut(a, b)
        for pa, pb in parts:
            n = pieces.count(pa, pb)
            if n <= size or len(parts) == 1:
                # A single piece that will not cut further stays oversized; _merge refuses it.
                splits.append((pa, pb, n))
            else:
                _split(pa, pb)

    _split(0, len(text))
    return merge(text, splits, size, overlap)


def _cut(text: str, a: int, b: int, separator: str, paragraph_separator: str, regex):
    parts = li.by_separator(text, a, b, paragraph_separator)
    if len(parts) > 1:
        return parts, True
    starts = [a + s for s, _ in punkt.span_tokenize(text[a:b])]
    if len(starts) > 1:
        return list(zip(starts, starts[1:] + [b])), True
    if regex is not None:
        parts = li.by_regex(text, a, b, regex)
        if len(parts) > 1:
            return parts, False
    parts = li.by_separator(text, a, b, separator)
    if len(parts) > 1:
        return parts, False
    return li.by_char(a, b), False


def merge(text: str, splits: list[tuple[int, int, int]], size: int, overlap: int) -> list[tuple[int, int, int]]:
    """`SentenceSplitter._merge` then `_postprocess_chunks`, on (start, end, tokens) pieces.

    (Whether a piece is a sentence does not matter in 0.14.25: a piece that fits, or opens a chunk,
    is always added.)
    """
    out: list[tuple[int, int, int]] = []
    cur: list[tuple[int, int, int]] = []
    cur_len = 0
    new_chunk = True

    def emit() -> None:
        # "".join of the pieces, stripped, blank chunks dropped.
        a, b = li.stripped(text, cur[0][0], cur[-1][1])
        if b > a:
            out.append((a, b, cur_len))

    i = 0
    while i < len(splits):
        s = splits[i]
        if s[2] > size:
            raise li.SingleTokenTooLarge(*s)
        if cur_len + s[2] > size and not new_chunk:
            emit()
            last = cur
            cur, cur_len, new_chunk = [], 0, True
            # The overlap: the previous chunk's trailing pieces while they sum to at most `overlap`.
            k = len(last) - 1
            while k >= 0 and cur_len + last[k][2] <= overlap:
                cur_len += last[k][2]
                k -= 1
            cur = last[k + 1:]
            continue
        if new_chunk and cur_len + s[2] > size:
            # The carried overlap leaves no room: drop it from the front until the piece fits.
            while cur and cur_len + s[2] > size:
                cur_len -= cur.pop(0)[2]
        cur.append(s)
        cur_len += s[2]
        new_chunk = False
        i += 1
    if not new_chunk:
        emit()
    return out
