"""Dense retrieval for the streamed question set: the chunks' embedding runs on the
workers, a batch at a time, and no vector outlives its batch.

The passes are `eval_stream`'s with the cosine in BM25's place (SPEC section 10: the query's and
each chunk's unit vectors' dot product, in float64, as `embed_onnx.Embedder.similarities` takes it):

- `referenced_pass`: each referenced document's chunks holding each span whole (`eval_stream`'s
  own), the best of them by cosine for its question (score descending, position ascending);
- `rank_pass`: every batch's chunks (as the count pass split and kept them) embedded together; per
  question the batch's best k chunks (-cosine, position, document, start, end) and, per span's best
  chunk, how many chunks of the batch rank above it (its rank when it is not in the top k). `eval_run` merges them as it merges
  BM25's, so each question's top k and needed_k are one request's over the same chunks.

Each worker process loads the model once (`embedder`), with `threads` onnxruntime threads (the
machine's cores shared among the workers). Functions here run on the workers: module-level.
"""

import functools
import heapq

from ragsim.host.jobs import eval_stream
from ragsim.host.corpus import spill
from ragsim.host.jobs.audit_stream import documents_of


def shared_fields(questions, workers: int, cores: int) -> dict:
    """What the dense passes need besides `eval_run`'s shared fields: the queries, the threads."""
    return {"queries": [q.query for q in questions], "threads": max(1, cores // max(1, workers))}


@functools.cache
def embedder(threads: int | None):
    """This process's model (loaded once per process and thread count): the user's own endpoint
    when the command set one (its environment reaches the workers), else all-MiniLM-L6-v2."""
    from ragsim.host.clients import embed_endpoint
    from ragsim.host.clients.embed_onnx import Embedder

    return embed_endpoint.default() if embed_endpoint.configured() else Embedder(threads=threads)


_QUERIES: dict = {}  # this process's query vectors, by (threads, queries)


def query_vectors(queries, threads: int | None):
    """This process's vectors of `queries` (float64, a row each; None for none), made once per
    process and kept until other queries are asked (the question set's, the audit's names)."""
    key = (threads, tuple(queries))
    if key not in _QUERIES:
        model = embedder(threads)
        _QUERIES.clear()
        _QUERIES[key] = model.embed(list(key[1])).astype(model.np.float64) if key[1] else None
        model.cache.clear()  # kept here, not also in the model's text cache
    return _QUERIES[key]


def cosines(shared, texts: list[str]):
    """Per question, the cosines of `texts` (a numpy row each); the texts' vectors let go after."""
    model = embedder(shared.get("threads"))
    queries = query_vectors(shared["queries"], shared.get("threads"))
    if not texts or queries is None:
        return [model.np.zeros(len(texts)) for _ in shared["queries"]]
    vectors = model.embed(texts).astype(model.np.float64)
    model.cache.clear()  # each chunk is embedded once a pass: a cache would only hold memory
    # Row by row (a product summed along each row), so a chunk's cosine is the same bits whatever
    # batch it is in: the referenced pass's threshold and the rank pass's count must agree exactly.
    return [(vectors * q).sum(axis=1) for q in queries]


def referenced_pass(shared: dict, item: tuple) -> dict:
    """`eval_stream.referenced_pass`, each span's best holding chunk chosen by cosine instead."""
    found, text, starts, ends = eval_stream.referenced(shared, item)
    base = item[3]
    held = sorted({p - base for positions, _ in found["whole"].values() for p in positions})
    rows = cosines(shared, [text[starts[i]:ends[i]] for i in held])
    column = {i: j for j, i in enumerate(held)}
    for (qi, si), (positions, _) in found["whole"].items():
        best = min(((float(rows[qi][column[p - base]]), p) for p in positions), key=lambda x: (-x[0], x[1]),
                   default=None)
        found["whole"][(qi, si)] = (positions, best)
    return found


def rank_pass(shared: dict, item: tuple) -> dict:
    """The batch's chunks embedded together; per question its best k, per span the chunks above it.
    The chunks are those the count pass split and kept (`eval_stream.prepare_pass`), cut from the
    documents read again: no document is split twice (nor a semantic chunker's windows embedded again)."""
    batch, base, d, kept = item
    ready = spill.kept_or_made(kept, eval_stream.prepare, shared, batch)
    texts_of = [doc["text"] for _, docs, _ in documents_of(shared, batch) for doc in docs]
    starts, ends, doc_of = ready["starts"], ready["ends"], ready["doc_of"]
    chunks = [(base + i, d + doc_of[i], s, e) for i, (s, e) in enumerate(zip(starts, ends))]
    texts = [texts_of[doc_of[i]][s:e] for i, (s, e) in enumerate(zip(starts, ends))]
    del texts_of
    rows = cosines(shared, texts)
    del texts
    best, above, np = {}, {}, embedder(shared.get("threads")).np
    positions = np.arange(base, base + len(chunks))
    for qi, row in enumerate(rows):
        if not chunks:
            break
        scores = row.tolist()
        best[qi] = heapq.nsmallest(shared["k"], ((-x, p, dd, s, e) for x, (p, dd, s, e) in zip(scores, chunks)))
        for key, (s, p) in shared["thresholds"].get(qi, {}).items():
            above[key] = int((row > s).sum() + ((row == s) & (positions < p)).sum())
    return {"documents": ready["documents"], "best": best, "positive": {}, "above": above, "before": {}, "first": []}
