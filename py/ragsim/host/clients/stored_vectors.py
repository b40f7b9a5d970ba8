"""Ranking over the vectors already in the user's index: `inspect --questions` with a dense (or
hybrid) ranking on a store that keeps its vectors ranks each question over the stored vectors of the
placed chunks: Chroma (a persist directory or a server), Qdrant, LanceDB, LangChain's FAISS folder
(by faiss's own reader, `store_faiss`), Milvus Lite (`store_milvus`), pgvector (`store_pgvector`),
LlamaIndex's persist folder and the saved in-memory stores of LangChain and Haystack
(`stored_vector_files`). Only the queries are embedded, by the user's endpoint (--embed-endpoint) or,
without one, by the built-in all-MiniLM-L6-v2 where the stored vectors have its 384 dimensions
(Chroma's default embedding function; any other 384-dimension model should be given as an endpoint).
Stored vectors of another dimension without an endpoint, or a store whose vectors ragsim does not read
(the files of chunks and the exports): the chunks' texts are embedded by the built-in model as
before, and the report says why. With an endpoint, a dimension that differs from the stored vectors'
is one sentence naming both.

The core stays pure: during the one request the core's dense host of last resort (`rank.dense`)
is this module's `StoredVectors`, which answers `similarities(query, texts, keys)` from the stored
vector of the chunk at each key (document id, start, end)."""

from __future__ import annotations

import contextlib

from ragsim.errors import RequestError
from ragsim.host.clients import store_faiss, store_milvus, store_pgvector, stored_vector_files, stores
from ragsim.host.clients.embed_onnx import MODEL_ID
from ragsim.host.clients.store_records import preferred_vector, vector_row
from ragsim.host.clients.store_safety import Address, client_module, guarded, heard, read_only, with_deadline
from ragsim.host.clients.stores import PAGE

# stores whose vectors are read here, and the reader of each: (path, collection) -> {chunk id: vector}
# or a list in the order the chunks are read (None where a chunk has none)
KEEPS = ("chroma", "chroma-http", "qdrant", "lancedb", "faiss", "milvus", "pgvector", "llamaindex",
         "langchain-inmemory", "haystack-inmemory")
BUILT_IN_DIMENSION = 384  # all-MiniLM-L6-v2's


def read(kind: str, path, name: str | None, chunks: list[dict]) -> list:
    """The stored vector of each chunk, in store order (None where the store gave none)."""
    found = READERS[kind](path, name)
    if isinstance(found, list):  # in the order the chunks were read
        return found[:len(chunks)] + [None] * (len(chunks) - len(found))
    return [found.get(c["id"]) for c in chunks]


def _chroma(path, name: str) -> dict:
    chromadb = client_module("chromadb", "chromadb")
    if isinstance(path, Address):  # a Chroma server, read in place as its chunks are
        return _chroma_vectors(with_deadline(chromadb.HttpClient(**heard(path).parts)).get_collection(name))
    with read_only(path) as copy:
        return _chroma_vectors(chromadb.PersistentClient(path=str(copy)).get_collection(name))


def _chroma_vectors(col) -> dict:
    out = {}
    for offset in range(0, col.count(), PAGE):
        page = col.get(limit=PAGE, offset=offset, include=["embeddings"])
        embeddings = page.get("embeddings")
        if embeddings is None:
            return {}
        out.update((cid, vector_row(v)) for cid, v in zip(page["ids"], embeddings) if v is not None)
    return out


def _qdrant(path, name: str) -> dict:
    qdrant_client = client_module("qdrant_client", "qdrant-client")
    out = {}
    with read_only(path) as copy:
        client = qdrant_client.QdrantClient(path=str(copy))
        try:
            offset = None
            while True:
                points, offset = client.scroll(name, limit=PAGE, offset=offset, with_payload=False, with_vectors=True)
                for p in points:
                    v = p.vector
                    if isinstance(v, dict):  # named vectors: the one there is, else none ragsim can choose
                        v = next(iter(v.values())) if len(v) == 1 else None
                    if isinstance(v, list) and v:  # a dense vector (a sparse one is an object)
                        out[str(p.id)] = vector_row(v)
                if offset is None or not points:
                    return out
        finally:
            client.close()


def _lancedb(path, name: str) -> list:
    import pyarrow as pa

    lancedb = client_module("lancedb", "lancedb")
    table = lancedb.connect(str(path)).open_table(name)
    column = preferred_vector([f.name for f in table.schema if pa.types.is_fixed_size_list(f.type)
                               or (pa.types.is_list(f.type) and pa.types.is_floating(f.type.value_type))])
    if column is None:  # none, or several and none named `vector`: not one ragsim can choose
        return []
    total, out = table.count_rows(), []
    for offset in range(0, total, PAGE):
        for row in table.search().select([column]).offset(offset).limit(PAGE).to_list():
            v = row.get(column)
            out.append(None if v is None else vector_row(v))
    return out


def _said(kind: str, reader):
    """`reader`, any failure of its client library said in one sentence naming the store (as its chunks'
    reader says one: `store_safety.guarded`)."""
    def read_vectors(path, name):
        def one(path):
            yield reader(path, name)

        return next(guarded(kind, stores.NAMES[kind], one)(path))

    return read_vectors


READERS = {**{kind: _said(kind, reader) for kind, reader in (
               ("chroma", _chroma), ("chroma-http", _chroma), ("qdrant", _qdrant), ("lancedb", _lancedb),
               ("faiss", store_faiss.stored_vectors), ("milvus", store_milvus.stored_vectors),
               ("pgvector", store_pgvector.stored_vectors))},
           "llamaindex": stored_vector_files.llamaindex, "langchain-inmemory": stored_vector_files.in_memory,
           "haystack-inmemory": stored_vector_files.in_memory}


class StoredVectors:
    """The core's dense host over stored vectors: `similarities(query, texts, keys)` is the cosine of
    the query's vector (`embedder`) with the stored vector of the chunk at each key."""

    truncates = False  # the index's model read what it read; ragsim does not know its limit

    def __init__(self, np, matrix, rows: dict, embedder, model: str):
        self.np, self.matrix, self.rows, self.embedder, self.model = np, matrix, rows, embedder, model
        self.dimension = matrix.shape[1]

    def similarities(self, query: str, texts: list[str], keys) -> list[float]:
        if not keys:
            return []
        q = self.embedder.embed([query])[0].astype(self.np.float32)
        if q.shape[0] != self.dimension:
            raise RequestError("retrieval.embedding", f"The index's stored vectors have {self.dimension} dimensions "
                               f"and {self.model} gives {q.shape[0]}: give the model the index was built with "
                               "(--embed-model), or leave out --embed-endpoint.")
        missing = [k for k in keys if k not in self.rows]
        if missing:
            raise RequestError("retrieval.embedding", f"The chunk at {missing[0][0]} {missing[0][1]}-{missing[0][2]} "
                               "has no vector stored in the index; rank without the stored vectors (--method bm25).")
        vectors = self.matrix[[self.rows[k] for k in keys]]
        # each row summed on its own (in float64), as the embedders do: a chunk's cosine is the same bits
        # wherever it stands, so two chunks of one vector tie exactly
        return [float(s) for s in (vectors * q).sum(axis=1, dtype=self.np.float64)]


def prepare(store: dict, placed: list[dict], vectors: list, endpoint_model: str | None):
    """(StoredVectors, the report's `ranked_over`) for the chunks `placed` (export records, in store
    order) and their stored `vectors`; (None, a note) where the stored vectors cannot serve."""
    import numpy as np

    from ragsim import host

    kept = [(r, v) for r, v in zip(placed, vectors) if v is not None and r["start"] is not None]
    if not kept:
        return None, {"note": "the index keeps no vectors ragsim could read for its placed chunks; the chunks' "
                              "texts were embedded instead"}
    dims = {v.shape[0] for _, v in kept}
    if len(dims) != 1:
        raise RequestError("store", f"The index's stored vectors have varying dimensions ({sorted(dims)[:4]}); one "
                                    "model gives one dimension.")
    dimension = dims.pop()
    if endpoint_model is None and dimension != BUILT_IN_DIMENSION:
        return None, {"note": f"the stored vectors have {dimension} dimensions, not the built-in {MODEL_ID}'s "
                              f"{BUILT_IN_DIMENSION}, so the chunks' texts were embedded by it instead; give the "
                              "index's own model with --embed-endpoint URL --embed-model NAME to rank over them"}
    matrix = np.stack([v for _, v in kept])
    if not np.isfinite(matrix).all():
        raise RequestError("store", "The index holds a stored vector with NaN or infinity; it cannot be ranked over.")
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1, keepdims=True)
    matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)  # unit rows: a product is the cosine
    rows = {}
    for i, (r, _) in enumerate(kept):
        rows.setdefault((r["doc"], r["start"], r["end"]), i)
    model = endpoint_model or MODEL_ID
    return StoredVectors(np, matrix, rows, host.embedder(), model), \
        {"vectors": len(kept), "dimension": dimension, "queries_by": model, "store": store["store"]["kind"]}


@contextlib.contextmanager
def ranking_with(hosted):
    """The core's dense host of last resort is `hosted` for the duration (the one request)."""
    from ragsim.rank import dense

    saved = list(dense.HOSTS)
    dense.register_host(lambda *embedding: hosted)  # whatever model a request names: the index's vectors
    try:
        yield
    finally:
        dense.HOSTS[:] = saved


def inspected(args, store: dict, request: dict) -> dict:
    """`inspect` of the request, its questions ranked over the stored vectors where they serve (a
    question set, a dense or hybrid ranking, a store of KEEPS), with `ranked_over` saying how."""
    from ragsim.host.clients import embed_endpoint
    from ragsim.wire import inspect as inspection

    kind = store["store"]["kind"]
    if not args.questions or args.method == "bm25":
        return inspection.inspect(request)
    try:
        if kind not in KEEPS:
            raise stored_vector_files.Unread(f"ragsim reads no stored vectors from a {kind} store")
        vectors = read(kind, stores.parse_spec(args.store)[1], store["store"]["collection"], store["chunks"])
    except stored_vector_files.Unread as e:
        hosted, over = None, {"note": f"{e}; the chunks' texts were embedded instead"}
    else:
        configured = embed_endpoint.configured()
        hosted, over = prepare(store, inspection.export_records(request), vectors,
                               configured[1] if configured else None)
    with ranking_with(hosted) if hosted is not None else contextlib.nullcontext():
        result = inspection.inspect(request)
    if "error" not in result:
        result["ranked_over"] = over
    return result


def said(result: dict) -> str | None:
    """The report's line on the stored vectors, or None where they were not looked at."""
    over = result.get("ranked_over")
    if not over:
        return None
    if "note" in over:
        return f"not ranked over the index's vectors: {over['note']}"
    return (f"ranked over the {over['vectors']:,} vectors stored in the index ({over['dimension']} dimensions), "
            f"queries embedded by {over['queries_by']}")
