r"""`llamaindex-token`: LlamaIndex's `TokenTextSplitter` (llama-index-core 0.14.25), chunk for chunk, with extents.

Sizes are tokens (tiktoken cl100k_base by default), every piece counted on its own. `_split` cuts a
text that does not fit by the first of the separator (" "), the backup separators (["\n"]) and
single characters that yields more than one piece, each separator kept at the start of the piece
after it, and recurses into pieces still over the size. `_merge` packs pieces while they fit; on
overflow it emits the chunk (stripped, dropped when blank) and pops pieces from its front while
what is left is over `overlap` tokens or leaves no room for the next piece. The pieces tile the
text, so every chunk is a slice of it. `units` is the chunk's token count as LlamaIndex sums it.

With a metadata string, LlamaIndex takes its tokens plus 2 (for the formatting) off the size.
"""

from bisect import bisect_left, bisect_right
from itertools import accumulate

from ragsim.errors import RequestError
from ragsim.text.extents import Split
from ragsim.split import llamaindex_common as li

DEFAULT_CHUNK_OVERLAP = 20  # llama_index.core.constants
METADATA_FORMAT_LEN = 2  # DEFAULT_METADATA_FORMAT_LEN: tokens reserved for the metadata's formatting


def split(doc, chunking: dict) -> Split:
    size, overlap = li.read_size_overlap(chunking, DEFAULT_CHUNK_OVERLAP)
    separator = li.read_separator(chunking, "separator", " ")
    backups = read_backups(chunking)
    metadata = li.read_metadata(chunking)
    name, count = li.counter(chunking)
    pieces = li.pieces_for(doc, name, count)
    chunk_size = li.effective_size(size, metadata, count, reserve=METADATA_FORMAT_LEN)
    extents = split_pieces(pieces, chunk_size, overlap, [separator, *backups])
    return Split(extents, "tokens", pieces.count(0, len(doc.text)))


def read_backups(chunking: dict) -> list[str]:
    """`backup_separators`: a list of non-empty strings (LlamaIndex's str.split refuses an empty one)."""
    backups = chunking.get("backup_separators", ["\n"])
    if backups is None:
        return []
    if not isinstance(backups, list) or not all(isinstance(s, str) and s for s in backups):
        raise RequestError("chunking.backup_separators",
                           'Give chunking.backup_separators as a list of non-empty strings, e.g. ["\\n"].')
    return backups


def split_text(text: str, count, size: int = li.DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_CHUNK_OVERLAP,
               separator: str = " ", backup_separators=("\n",)) -> list[tuple[int, int, int]]:
    """`TokenTextSplitter(...).split_text(text)` as (start, end, tokens) with a given token counter."""
    return split_pieces(li.Pieces(text, count), size, overlap, [separator, *backup_separators])


def split_pieces(pieces: li.Pieces, size: int, overlap: int, separators: list[str]) -> list[tuple[int, int, int]]:
    text = pieces.text
    if not text:
        return [(0, 0, 0)]  # LlamaIndex returns [""] for an empty text

    def cut(a: int, b: int) -> list[tuple[int, int]]:
        for sep in separators:
            parts = li.by_separator(text, a, b, sep)
            if len(parts) > 1:
                return parts
        return li.by_char(a, b)

    return merge(text, *pieces.flatten(size, ("token", *separators), cut), size, overlap)


def merge(text: str, starts: list[int], ends: list[int], counts: list[int], size: int,
          overlap: int) -> list[tuple[int, int, int]]:
    """`TokenTextSplitter._merge` over pieces [i] = (starts, ends, counts), chunks stripped, blank ones dropped.

    The chunk is always a run of pieces [lo, i): the piece that overflows it and the pieces popped
    from its front are each found by bisection over the running token sums `P`.
    """
    n = len(counts)
    P = [0, *accumulate(counts)]
    out: list[tuple[int, int, int]] = []

    def emit(lo: int, hi: int) -> None:
        if lo < hi:
            a, b = li.stripped(text, starts[lo], ends[hi - 1])
            if b > a:
                out.append((a, b, P[hi] - P[lo]))

    lo = i = 0
    while i < n:
        # The first piece j >= i that does not fit beside the chunk [lo, j) ends it.
        j = bisect_right(P, P[lo] + size, i + 1, n + 1) - 1
        if j >= n:
            break
        emit(lo, j)
        # Pop from the front while what is left is over the overlap or leaves no room for piece j.
        lo = bisect_left(P, max(P[j] - overlap, P[j + 1] - size), lo, j)
        i = j + 1
    emit(lo, n)
    return out
