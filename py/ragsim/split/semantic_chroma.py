"""`chroma-cluster` and `chroma-kamradt`: Chroma's two semantic chunkers from its chunking report.

As brandonstarxel/chunking_evaluation defines them (commit d451fc4, `chunking_evaluation/chunking/`;
not on PyPI; the conformance test runs a transcription of that source):

- Both first cut the text into pieces with their `RecursiveTokenChunker(chunk_size=min_chunk_size,
  chunk_overlap=0)`: LangChain's recursive splitter (separators "\\n\\n", "\\n", ".", "?", "!", " ", "",
  each kept at the start of the next piece), every length a cl100k_base token count with special
  tokens read as plain text (`openai_token_count`), pieces stripped and blank ones dropped.
- `ClusterSemanticChunker(max_chunk_size=size, min_chunk_size)` embeds each piece, takes the raw dot
  products of the embeddings (no normalising), subtracts the mean of the off-diagonal ones, zeroes
  the diagonal, and cuts the pieces into runs of at most `size // min_chunk_size` by a dynamic
  program that maximises the sum of each run's block of that matrix. A run is never worth less than
  nothing: where no run ending at piece i scores above 0, its start stays at 0 (the library's
  `segmentation` is initialised with zeros), so one cluster can then reach back to the first piece.
- `KamradtModifiedChunker(avg_chunk_size=size, min_chunk_size)` embeds windows of 3 pieces either
  side (" ".join), normalises them, and searches a threshold in [0, 1] by bisection (to 1e-6) so
  that at most `total_tokens // size` distances lie strictly above it; it cuts after each of those.

Chunks are their pieces joined with " " (so not always a slice: the extent runs from the first
piece's start to the last one's end); `units` is the chunk's token count.
"""

import math
import re
from typing import NamedTuple

from ragsim.text.extents import Extent
from ragsim.fields import get_int
from ragsim.split import semantic_numpy as npm
from ragsim.split.semantic_chunks import Chunks
from ragsim.split.semantic_langchain import Strategy, check_count, curve
from ragsim.split import langchain_common as lc
from ragsim.split.langchain_token import merge_counted
from ragsim.text.tokens import check_name, get

SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")
_COMPILED = {s: re.compile(re.escape(s)) for s in SEPARATORS if s}
KAMRADT_BUFFER = 3  # split_text: self.combine_sentences(sentences, 3)


def _read(chunking: dict) -> tuple[int, int, str]:
    size = get_int(chunking, "size", "chunking.size", default=400, minimum=1)
    min_size = get_int(chunking, "min_chunk_size", "chunking.min_chunk_size", default=50, minimum=1)
    tokenizer = check_name(chunking.get("tokenizer", "cl100k_base"), "chunking.tokenizer")
    return size, min_size, tokenizer


def token_counter(tokenizer: str):
    """`openai_token_count`: `len(encoding.encode(s, disallowed_special=()))`, special-token text
    counted as the ordinary text it is."""
    enc = get(tokenizer, "chunking.tokenizer")

    def count(s: str) -> int:
        if "<|" not in s:
            return enc.count(s)
        from ragsim.text.tokens.encoding import clean_surrogates

        ids: list = []
        enc._encode_ordinary(clean_surrogates(s)[0], ids)  # tiktoken's encode_ordinary
        return len(ids)

    return count


def pieces(text: str, size: int, count) -> list[tuple[int, int]]:
    """`RecursiveTokenChunker(chunk_size=size, chunk_overlap=0).split_text(text)` as extents."""
    counts: dict = {}
    out: list = []

    def length(a: int, b: int) -> int:
        got = counts.get((a, b))
        if got is None:
            got = counts[(a, b)] = count(text[a:b])
        return got

    def split_text(a: int, b: int, n_seps: int) -> None:
        seps = SEPARATORS[len(SEPARATORS) - n_seps:]
        part = text[a:b]
        i = next((i for i, s in enumerate(seps) if not s or _COMPILED[s].search(part)), len(seps) - 1)
        separator = seps[i]
        parts = lc.split_with_regex(part, a, _COMPILED.get(separator), True)
        n_rest = len(seps) - i - 1 if separator else 0
        lens = [length(pa, pb) for pa, pb in parts]
        good = 0
        for j, (pa, pb) in enumerate(parts):
            if lens[j] < size:
                continue
            if j > good:
                merge_counted(text, parts, lens, good, j, "", 0, size, 0, True, None, out)
            good = j + 1
            if not n_rest:
                out.append(Extent(pa, pb, lens[j]))  # as it stands: over size, unstripped
            else:
                split_text(pa, pb, n_rest)
        if len(parts) > good:
            merge_counted(text, parts, lens, good, len(parts), "", 0, size, 0, True, None, out)

    split_text(0, len(text), len(SEPARATORS))
    check_count(len(out))
    return [(e[0], e[1]) for e in out]


def units(text: str, chunking: dict) -> list[tuple[int, int]]:
    _, min_size, tokenizer = _read(chunking)
    return pieces(text, min_size, token_counter(tokenizer))


def _chunks(text: str, spans, groups, count) -> Chunks:
    """Each (first, last) run of pieces as the library's chunk: ' '.join of its pieces (made now:
    its token count is the chunk's length)."""
    out = []
    for first, last in groups:
        joined = " ".join(text[a:b] for a, b in spans[first:last + 1])
        out.append((spans[first][0], spans[last][1], count(joined), joined))
    return Chunks.of(out)


# -- ClusterSemanticChunker ---------------------------------------------------------------------

class ClusterKept(NamedTuple):
    spans: list
    vectors: list
    mean: float  # mean of the off-diagonal dot products
    near: dict  # d -> [dot(v[a], v[a + d]) for each a]: the band the dynamic program reads


def cluster_texts(text: str, spans, chunking: dict) -> list[str]:
    return [text[a:b] for a, b in spans]


def cluster_measure(text: str, spans, vectors, chunking: dict) -> ClusterKept:
    """The band of the similarity matrix and the mean of its off-diagonal entries.

    The mean is `(|sum v|^2 - sum |v|^2) / 2` over the number of pairs, correctly rounded sums:
    the library's `np.mean(matrix[np.triu_indices(n, k=1)])` without the n^2 dot products."""
    n = len(vectors)
    if n < 2:
        mean = math.nan
    else:
        total = [math.fsum(column) for column in zip(*vectors)]
        pairs = (npm.dot(total, total) - math.fsum(npm.dot(v, v) for v in vectors)) / 2
        mean = pairs / (n * (n - 1) // 2)
    kept = ClusterKept(spans, vectors, mean, {})
    size, min_size, _ = _read(chunking)
    _band(kept, size // min_size)
    return kept


def _band(kept: ClusterKept, width: int) -> None:
    """Fill `kept.near` for the offsets 1 .. width - 1 (kept for later moves of the size), and 1
    always (the curve's neighbours)."""
    v = kept.vectors
    for d in range(1, max(width, 2)):
        if d not in kept.near:
            kept.near[d] = [npm.dot(v[a], v[a + d]) for a in range(len(v) - d)]


def segment(rows: list, width: int, max_cluster: int) -> list[tuple[int, int]]:
    """`_optimal_segmentation` over the normalised matrix, given as band rows: `rows[r][c - r + width]`
    is entry (r, c) for |c - r| <= width.

    A run's reward is `np.sum` of its square block, which numpy sums pairwise over the block's
    entries in row order (a buffered copy): `pairwise_sum` of the same list gives the same bits."""
    n = len(rows)
    dp = [0.0] * n
    segmentation = [0] * n
    for i in range(n):
        for size in range(1, max_cluster + 1):
            s = i - size + 1
            if s < 0:
                break
            block = []
            for r in range(s, i + 1):
                block += rows[r][s - r + width:i - r + width + 1]
            reward = npm.pairwise_sum(block)
            if i - size >= 0:
                reward += dp[i - size]
            if reward > dp[i]:
                dp[i] = reward
                segmentation[i] = s
    clusters = []
    i = n - 1
    while i >= 0:
        start = segmentation[i]
        clusters.append((start, i))
        i = start - 1
    clusters.reverse()
    return clusters


def band_rows(near: dict, n: int, mean: float, width: int) -> list:
    """Row r of `matrix - mean` with a zero diagonal, for the columns r - width .. r + width that
    exist (the rest 0.0, never read): `rows[r][c - r + width]`."""
    rows = []
    for r in range(n):
        row = [0.0] * (2 * width + 1)
        for d in range(1, width + 1):
            if r + d < n:
                row[width + d] = near[d][r] - mean
            if r - d >= 0:
                row[width - d] = near[d][r - d] - mean
        rows.append(row)
    return rows


def cluster_cut(text: str, kept: ClusterKept, chunking: dict):
    size, min_size, tokenizer = _read(chunking)
    max_cluster = size // min_size
    spans, n, mean = kept.spans, len(kept.spans), kept.mean
    if n == 0:
        return Chunks.of([]), curve(spans, [], None, [])
    _band(kept, max_cluster)
    width = max(0, min(max_cluster, n) - 1)  # a run of m pieces reads offsets up to m - 1
    groups = segment(band_rows(kept.near, n, mean, width), width, max_cluster)
    chunks = _chunks(text, spans, groups, token_counter(tokenizer))
    distances = [1 - s for s in kept.near.get(1, [])]
    return chunks, curve(spans, distances, 1 - mean, chunks.starts)


CLUSTER = Strategy(units, cluster_texts, cluster_measure, cluster_cut)


# -- KamradtModifiedChunker ---------------------------------------------------------------------

def kamradt_texts(text: str, spans, chunking: dict) -> list[str]:
    """`combine_sentences(sentences, 3)`: pieces i - 3 .. i + 3 joined with " "."""
    parts = [text[a:b] for a, b in spans]
    b = KAMRADT_BUFFER
    return [" ".join(parts[max(0, i - b): i + b + 1]) for i in range(len(parts))]


def _unit(v: list) -> list:
    """`embedding_matrix / norms` for one row (a zero row becomes NaN, as numpy's 0 / 0)."""
    norm = npm.row_norm(v)
    return [x / norm for x in v] if norm else [math.nan] * len(v)


class KamradtKept(NamedTuple):
    spans: list
    distances: list
    total_tokens: int  # the pieces' token counts summed, as split_text sums them


def kamradt_measure(text: str, spans, vectors, chunking: dict) -> KamradtKept:
    unit = [_unit(v) for v in vectors]
    distances = [1 - npm.dot(unit[i], unit[i + 1]) for i in range(len(unit) - 1)]
    # A piece does not depend on `size`, so neither does this sum; `tokenizer` is a prepare field.
    count = token_counter(_read(chunking)[2])
    return KamradtKept(spans, distances, sum(count(text[a:b]) for a, b in spans))


def kamradt_threshold(distances, number_of_cuts: int) -> float:
    """The library's bisection: the last midpoint once the bracket is within 1e-6."""
    lower, upper = 0.0, 1.0
    threshold = 0.5
    while upper - lower > 1e-6:
        threshold = (upper + lower) / 2.0
        if sum(1 for x in distances if x > threshold) > number_of_cuts:
            lower = threshold
        else:
            upper = threshold
    return threshold


def kamradt_cut(text: str, kept: KamradtKept, chunking: dict):
    size, _, tokenizer = _read(chunking)
    spans, distances, total_tokens = kept
    if not spans:  # the library fails on a text without pieces; there is nothing to chunk
        return Chunks.of([]), curve(spans, [], None, [])
    threshold = kamradt_threshold(distances, total_tokens // size)
    groups, start = [], 0
    for index in (i for i, x in enumerate(distances) if x > threshold):
        groups.append((start, index))
        start = index + 1
    if start < len(spans):
        groups.append((start, len(spans) - 1))
    chunks = _chunks(text, spans, groups, token_counter(tokenizer))
    return chunks, curve(spans, distances, threshold, chunks.starts)


KAMRADT = Strategy(units, kamradt_texts, kamradt_measure, kamradt_cut)


def read_fields(chunking: dict) -> tuple[int, int, str]:
    """`(size, min_chunk_size, tokenizer)` of either Chroma chunker (checked)."""
    return _read(chunking)
