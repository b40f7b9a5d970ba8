"""Dense and hybrid retrieval (SPEC section 10): ranking, fusion and truncation, given similarities.

The core never runs the model. A host (CPython's `embed_onnx`, the page's worker with
transformers.js) embeds the query and the chunks and hands over one cosine similarity per chunk;
this module ranks by them, fuses the BM25 and dense rankings, and says which chunks the model reads
only in part (where it stops comes from `wordpiece`, the model's own tokenizer in pure Python).
"""

from . import bm25, wordpiece

METHODS = ("bm25", "dense", "hybrid")
RRF_C = 60  # as LangChain's EnsembleRetriever and Elasticsearch's RRF
WEIGHTS = (0.5, 0.5)  # (BM25, dense)


def rank(similarities: list[float]) -> list[int]:
    """Chunk positions by similarity descending, ties by position (document order, chunk index)."""
    return bm25.rank(similarities)  # the same rule as BM25's; it handles negative scores


def ranks_of(order: list[int]) -> list[int]:
    """Per position, its 1-based rank in `order`."""
    ranks = [0] * len(order)
    for r, p in enumerate(order, 1):
        ranks[p] = r
    return ranks


def rrf(bm25_ranks: list[int], dense_ranks: list[int], c: float = RRF_C, weights=WEIGHTS) -> list[float]:
    """Reciprocal rank fusion over all chunks: w_bm25 / (c + rank_bm25) + w_dense / (c + rank_dense)."""
    w_bm25, w_dense = weights
    return [w_bm25 / (c + rb) + w_dense / (c + rd) for rb, rd in zip(bm25_ranks, dense_ranks)]


def scores_and_order(method: str, bm25_scores: list[float], similarities: list[float] | None,
                     c: float = RRF_C, weights=WEIGHTS) -> tuple[list[float], list[int]]:
    """The scores a method ranks by and the positions best first (ties by position)."""
    if method == "bm25":
        return bm25_scores, bm25.rank(bm25_scores)
    if method == "dense":
        return similarities, rank(similarities)
    fused = rrf(ranks_of(bm25.rank(bm25_scores)), ranks_of(rank(similarities)), c, weights)
    return fused, rank(fused)


def read_ends(texts, vocab: wordpiece.Vocab | None = None) -> list[int | None]:
    """Per chunk text: where the model stops reading it (code points into the text), or None when
    it reads all of it. A chunk with an end is `truncated`: its tail is invisible to dense retrieval."""
    return [wordpiece.read_end(t, vocab) for t in texts]
