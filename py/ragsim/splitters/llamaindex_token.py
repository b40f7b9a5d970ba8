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

from ..errors import RequestError
from ..extents import Split
from . import _llamaindex as li

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
    cuts = pieces.cuts.setdefault(("token", *separators), {})

    def cut(a: int, b: int) -> list[tuple[int, int]]:
        got = cuts.get((a, b))
        if got is None:
            for sep in separators:
                got = li.by_separator(text, a, b, sep)
                if len(got) > 1:
                    break
            else:
                got = li.by_char(a, b)
            cuts[(a, b)] = got
        return got

    splits: list[tuple[int, int, int]] = []

    def _split(a: int, b: int) -> None:
        n = pieces.count(a, b)
        if n <= size:
            splits.append((a, b, n))
            return
        parts = cut(a, b)
        for pa, pb in parts:
            n = pieces.count(pa, pb)
            if n <= size or len(parts) == 1:
                splits.append((pa, pb, n))  # kept oversized when it will not cut further
            else:
                _split(pa, pb)

    _split(0, len(text))
    return merge(text, splits, size, overlap)


def merge(text: str, splits, size: int, overlap: int) -> list[tuple[int, int, int]]:
    """`TokenTextSplitter._merge` on (start, end, tokens) pieces, each chunk stripped, blank ones dropped."""
    out: list[tuple[int, int, int]] = []
    cur: list[tuple[int, int, int]] = []
    cur_len = 0
    first = 0  # cur[first:] is the current chunk (popping from the front without moving the list)

    def emit() -> None:
        if first < len(cur):
            a, b = li.stripped(text, cur[first][0], cur[-1][1])
            if b > a:
                out.append((a, b, cur_len))

    for s in splits:
        n = s[2]
        if cur_len + n > size:
            emit()
            while first < len(cur) and (cur_len > overlap or cur_len + n > size):
                cur_len -= cur[first][2]
                first += 1
        cur.append(s)
        cur_len += n
    emit()
    return out
