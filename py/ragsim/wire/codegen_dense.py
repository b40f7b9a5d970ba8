""""Equivalent code" for dense and hybrid retrieval (SPEC section 10): sentence-transformers'
all-MiniLM-L6-v2 for the similarities, ragsim's tie rule and reciprocal rank fusion written out, and,
as comments, the nearest library calls (Chroma's default embedding function, LangChain's
EnsembleRetriever) with what they do differently. `codegen` appends these lines to the splitter's.
"""

from urllib.parse import urlsplit

from ragsim.rank.dense import read_options
from ragsim.fields import get_int

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
OLLAMA_PORT = 11434  # Ollama's default: its own client then, at the server's root


def model_lines(embedding: dict | None, query: str) -> list[str]:
    """Lines that leave the chunks' unit vectors in `vectors` and the query's in `query_vector`:
    all-MiniLM-L6-v2 through sentence-transformers, or the user's own model (`retrieval.embedding`)
    through LangChain's client for its server, with LlamaIndex's as a comment."""
    if embedding is None:
        return [
            "from sentence_transformers import SentenceTransformer",
            "",
            "# The model reads 256 word pieces of a chunk; a longer chunk's tail is not seen.",
            f"model = SentenceTransformer({MODEL!r})",
            "vectors = model.encode(chunks, normalize_embeddings=True)",
            f"query_vector = model.encode({query!r}, normalize_embeddings=True)",
        ]
    url, name = embedding["endpoint"].rstrip("/"), embedding["model"]
    parts = urlsplit(url)
    if parts.port == OLLAMA_PORT:
        root = f"{parts.scheme}://{parts.netloc}"
        client = [
            "from langchain_ollama import OllamaEmbeddings",
            "",
            "# pip install langchain-ollama",
            f"# Your model, served by Ollama (LlamaIndex: OllamaEmbedding(model_name={name!r}, base_url={root!r})).",
            f"embeddings = OllamaEmbeddings(model={name!r}, base_url={root!r})",
        ]
    else:
        client = [
            "from langchain_openai import OpenAIEmbeddings",
            "",
            "# pip install langchain-openai",
            "# Your model at its OpenAI-compatible endpoint (LlamaIndex: OpenAILikeEmbedding(model_name=",
            f"# {name!r}, api_base={url!r})). check_embedding_ctx_length=False sends the texts",
            "# themselves rather than tiktoken ids, which only OpenAI's own models read.",
            f"embeddings = OpenAIEmbeddings(base_url={url!r}, model={name!r},",
            '                              api_key="unused",  # a local server needs none; a hosted one, your key',
            "                              check_embedding_ctx_length=False)",
        ]
    return ["import numpy as np"] + client + [
        "vectors = np.array(embeddings.embed_documents(chunks))",
        "vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)  # unit length, as ragsim keeps them",
        f"query_vector = np.array(embeddings.embed_query({query!r}))",
        "query_vector /= np.linalg.norm(query_vector)",
    ]


def dense_lines(retrieval: dict, query: str) -> list[str]:
    """Lines that leave the chunks' cosine similarities with the query in `similarities` and,
    for `method: dense`, the top k in `top`."""
    options = read_options(retrieval)
    k = get_int(retrieval, "k", "retrieval.k", minimum=1)
    lines = ["", *model_lines(options.embedding, query),
             "similarities = [float(v @ query_vector) for v in vectors]  # cosine: the vectors are unit length"]
    if options.method == "dense" and options.embedding is not None:
        return lines + [f"top = sorted(range(len(chunks)), key=lambda i: (-similarities[i], i))[:{k}]"]
    if options.method == "dense":
        lines += [
            f"top = sorted(range(len(chunks)), key=lambda i: (-similarities[i], i))[:{k}]",
            "",
            "# Chroma's default embedding function is this model; a collection made with",
            '# metadata={"hnsw:space": "cosine"} returns the same chunks (by approximate search):',
            "#   collection.add(ids=[str(i) for i in range(len(chunks))], documents=chunks)",
            f"#   collection.query(query_texts=[{query!r}], n_results={k})",
        ]
        return lines
    w_bm25, w_dense = options.weights
    return lines + [
        "",
        "",
        "def ranks(values):",
        "    # 1-based ranks, best first, ties by chunk order",
        "    order = sorted(range(len(values)), key=lambda i: (-values[i], i))",
        "    out = [0] * len(values)",
        "    for rank, i in enumerate(order, 1):",
        "        out[i] = rank",
        "    return out",
        "",
        "",
        "# Reciprocal rank fusion over all chunks: w_bm25 / (c + rank_bm25) + w_dense / (c + rank_dense)",
        f"fused = [{w_bm25!r} / ({options.c!r} + a) + {w_dense!r} / ({options.c!r} + b)",
        "         for a, b in zip(ranks(list(scores)), ranks(similarities))]",
        f"top = sorted(range(len(chunks)), key=lambda i: (-fused[i], i))[:{k}]",
        "",
        "# LangChain's EnsembleRetriever fuses the same way, but only over each retriever's own top k",
        "# (and its BM25Retriever is rank_bm25's Okapi BM25), so its list can differ lower down:",
        "#   EnsembleRetriever(retrievers=[bm25_retriever, vector_store.as_retriever()],",
        f"#                     weights=[{w_bm25!r}, {w_dense!r}], c={options.c:g})",
    ]
