"""Semantic chunkers (SPEC section 12): cut where neighbouring sentence windows' embeddings differ.

The core never runs a model. For a document and its chunking fields it names the texts to embed
(`texts_to_embed`); the host embeds each once and hands the vectors back (`cut`, or `prepare` once
and `recut` for every later threshold, percentile or minimum size: those re-cut from kept distances).

    texts = semantic.texts_to_embed(text, chunking)      # the windows, as the library builds them
    chunks, curve = semantic.cut(text, chunking, vectors)
    # chunks: [(start, end, units, chunk_text)], curve: {"distances", "positions", "threshold", "cuts"}

Strategies (`chunking["strategy"]`), each the library's own algorithm given the same vectors:

- `langchain-semantic`: langchain-experimental 0.4.2's `SemanticChunker` (`semantic_langchain`).
- `llamaindex-semantic`: llama-index-core 0.14.25's `SemanticSplitterNodeParser` (`semantic_langchain`).
- `chroma-cluster`, `chroma-kamradt`: `ClusterSemanticChunker` and `KamradtModifiedChunker` of
  brandonstarxel/chunking_evaluation (`semantic_chroma`).

A chunk's `start, end` are the extent of the sentences (pieces) it holds, first one's start to last
one's end; its text is the library's, which is not always that slice (LangChain and Chroma re-join
with " "); `units` is the library's own length (characters; tokens for Chroma). In the curve,
`distances[i]` (1 - cosine) lies between windows i and i + 1, at `positions[i]` (the offset of
sentence i + 1); `threshold` is the line the library compares with (None where it compares
nothing), and `cuts` are the offsets where chunks after the first start. For LangChain's `gradient`
rule the compared curve is the distances' gradient, reported as `gradient`.
"""

from ragsim.errors import RequestError
from ragsim.split import semantic_chroma, semantic_langchain
from ragsim.split.semantic_chunks import Chunks

STRATEGIES = {
    "langchain-semantic": semantic_langchain.LANGCHAIN,
    "llamaindex-semantic": semantic_langchain.LLAMAINDEX,
    "chroma-cluster": semantic_chroma.CLUSTER,
    "chroma-kamradt": semantic_chroma.KAMRADT,
}


def _strategy(chunking: dict):
    name = chunking.get("strategy")
    try:
        return STRATEGIES[name]
    except (KeyError, TypeError):
        listed = ", ".join(STRATEGIES)
        raise RequestError("chunking.strategy", f"chunking.strategy must be one of {listed} (got {name!r}).") from None


def texts_to_embed(text: str, chunking: dict) -> list[str]:
    """The strings the library embeds for this text and setting, in order (possibly none)."""
    strategy = _strategy(chunking)
    return strategy.texts(text, strategy.units(text, chunking), chunking)


def prepare(text: str, chunking: dict, vectors):
    """What a session keeps per text and embedding setting: the units (sentences or pieces) and
    the similarities of their windows. Only the fields that change the texts to embed matter."""
    strategy = _strategy(chunking)
    units = strategy.units(text, chunking)
    expected = len(strategy.texts(text, units, chunking))
    return strategy.measure(text, units, check_vectors(vectors, expected), chunking)


def recut(text: str, chunking: dict, kept) -> tuple[list[tuple[int, int, int, str]], dict]:
    """The chunks and the curve from kept similarities (`prepare`): no embedding, no cosine."""
    chunks, curve = recut_chunks(text, chunking, kept)
    return chunks.tuples(), curve


def recut_chunks(text: str, chunking: dict, kept) -> tuple[Chunks, dict]:
    """`recut` with the chunks as columns (`semantic_chunks.Chunks`), each text made when read: a
    move that reads a few chunks' texts joins only those."""
    return _strategy(chunking).cut(text, kept, chunking)


def cut(text: str, chunking: dict, vectors) -> tuple[list[tuple[int, int, int, str]], dict]:
    """The library's chunks of `text` given the vectors of `texts_to_embed(text, chunking)`."""
    return recut(text, chunking, prepare(text, chunking, vectors))


def check_vectors(vectors, expected: int) -> list[list[float]]:
    """The vectors as lists of floats, one per text to embed, all of one dimension."""
    got = len(vectors) if hasattr(vectors, "__len__") and not isinstance(vectors, (str, dict)) else None
    if got != expected:
        raise RequestError("vectors", f"Give one vector per text to embed: {expected} (got {got if got is not None else type(vectors).__name__}).")
    out = []
    for v in vectors:
        try:
            row = [float(x) for x in v]
        except (TypeError, ValueError):
            raise RequestError("vectors", "Each vector must be a list of numbers.") from None
        if out and len(row) != len(out[0]):
            raise RequestError("vectors", f"All vectors must have one dimension (got {len(out[0])} and {len(row)}).")
        out.append(row)
    return out
