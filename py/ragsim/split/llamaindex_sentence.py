r"""`llamaindex-sentence`: LlamaIndex's `SentenceSplitter` (llama-index-core 0.14.25), chunk for chunk, with extents.

The default node parser of LlamaIndex. Sizes are tokens (tiktoken cl100k_base, as LlamaIndex's
`get_tokenizer()`), every piece counted on its own. `_split` cuts a text that does not fit, trying in
turn, and keeping the first cut that yields more than one piece:

1. the paragraph separator ("\n\n\n"), kept at the start of the following piece;
2. Punkt sentences (`ragsim.punkt`, nltk's untrained tokenizer), each running to the next one's start
   (LlamaIndex marks pieces of these two kinds as sentences; in 0.14.25 the mark changes nothing);
3. the secondary regular expression (`re.findall`, by default runs up to , . ; 。？！ and the mark);
4. the separator (" "), kept at the start of the following piece;
5. single characters;

and recurses into each piece that is still over the size (a piece that will not cut further stays
over it, and `_merge` refuses it). `_merge` packs pieces while they fit; closing a chunk, it carries
over the previous chunk's longest run of trailing pieces whose tokens sum to at most `overlap`, and
(new in 0.14) drops carried pieces from the front while they leave no room for the next piece, where
0.13 let that chunk run over the size. Each chunk is stripped, and a blank one dropped. `units` is
the chunk's token count as LlamaIndex sums it over its pieces.

One case cannot be an extent: a `secondary_chunking_regex` whose matches do not cover the text
(LlamaIndex's `findall` drops what lies between them), so the chunk joins pieces that are not
neighbours. The extent then spans from the first piece to the last, the text between them included.
The default expression covers every character.
"""

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate

from ragsim.errors import RequestError
from ragsim.text.extents import Split
from ragsim.text import punkt, safe_regex
from ragsim.split import llamaindex_common as li

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
    except li.TooDeep as e:
        field = "chunking.secondary_chunking_regex" if regex is not None else "chunking.size"
        raise RequestError(field, f"LlamaIndex's SentenceSplitter recurses without end here: {field} cuts the piece at "
                           f"{e.args[0]:,}-{e.args[1]:,} again and again (LlamaIndex stops at Python's recursion limit); "
                           "use a pattern whose matches are never empty, or raise chunking.size.") from None
    return Split(extents, "tokens", pieces.count(0, len(doc.text)))


def read_regex(chunking: dict) -> re.Pattern | None:
    """`secondary_chunking_regex`: a pattern, or null / "" to go straight to the separator."""
    value = chunking.get("secondary_chunking_regex", CHUNKING_REGEX)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RequestError("chunking.secondary_chunking_regex",
                           f"chunking.secondary_chunking_regex must be text or null (got {type(value).__name__}).")
    # an untrusted pattern (findall would return a group's text, not the pieces)
    return safe_regex.compile_pattern(value, "chunking.secondary_chunking_regex")


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
    splits = pieces.flatten(size, key, lambda a, b: _cut(text, a, b, separator, paragraph_separator, regex))
    return merge(text, *splits, size, overlap)


def _cut(text: str, a: int, b: int, separator: str, paragraph_separator: str, regex) -> list[tuple[int, int]]:
    """`_get_splits_by_fns(text[a:b])`: the first cut that yields more than one piece, else characters."""
    parts = li.by_separator(text, a, b, paragraph_separator)
    if len(parts) > 1:
        return parts
    starts = [a + s for s, _ in punkt.span_tokenize(text[a:b])]
    if len(starts) > 1:
        return list(zip(starts, starts[1:] + [b]))
    if regex is not None:
        parts = li.by_regex(text, a, b, regex)
        if len(parts) > 1:
            return parts
    parts = li.by_separator(text, a, b, separator)
    if len(parts) > 1:
        return parts
    return li.by_char(a, b)


def merge(text: str, starts: list[int], ends: list[int], counts: list[int], size: int,
          overlap: int) -> list[tuple[int, int, int]]:
    """`SentenceSplitter._merge` then `_postprocess_chunks`, over pieces [i] = (starts, ends, counts).

    The chunk is always a run of pieces [lo, i), so LlamaIndex's loops (add while the piece fits;
    carry back while the overlap fits; drop from the front until the piece fits) are each one
    bisection over the running token sums `P`. Whether a piece is a sentence does not matter in
    0.14.25: a piece that fits, or opens a chunk, is always added.
    """
    n = len(counts)
    if max(counts) > size:
        # LlamaIndex raises at the first such piece it reaches; every piece is reached.
        i = next(i for i, c in enumerate(counts) if c > size)
        raise li.SingleTokenTooLarge(starts[i], ends[i], counts[i])
    P = [0, *accumulate(counts)]
    out: list[tuple[int, int, int]] = []

    def emit(lo: int, hi: int) -> None:
        # "".join of the pieces, stripped, blank chunks dropped; units are LlamaIndex's running sum.
        a, b = li.stripped(text, starts[lo], ends[hi - 1])
        if b > a:
            out.append((a, b, P[hi] - P[lo]))

    lo = i = 0
    while i < n:
        # A new chunk: its first piece always goes in, after dropping as much of the carried
        # overlap from the front as it takes to make room for it.
        lo = bisect_left(P, P[i + 1] - size, lo, i)
        # Then pieces while they fit: the first that does not closes the chunk.
        i = bisect_right(P, P[lo] + size, i + 2, n + 1) - 1
        if i >= n:
            break
        emit(lo, i)
        # The overlap: the longest run of trailing pieces whose tokens sum to at most `overlap`.
        lo = bisect_left(P, P[i] - overlap, lo, i)
    emit(lo, n)
    return out
