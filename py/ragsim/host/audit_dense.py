"""The streamed corpus audit with dense retrieval (issue 26): `audit --method dense` over a knowledge
base of any size, the chunks embedded on the workers a batch at a time, no vector kept past its batch.

One request's dense audit (`wire.audit`, SPEC section 10) asks each fact's name, its text, as a query
of its own and ranks every chunk of the corpus at each overlap by the cosine of their unit vectors; a
fact is found when its best answering chunk (cosine descending, position ascending) ranks within k.
Streamed, the passes are `audit_stream`'s with the queries being the names' texts (pass 1); pass 3 is
`judge_pass` here: each overlap's chunks of the batch embedded together, their cosines with every
name (a block of names at a time, so memory is bounded whatever the number of names), and per name the
batch's best k chunks (-cosine, position in the corpus), merged across batches by `audit_run` as BM25's
are; each answered fact's best answering chunk is read from the same cosines, so its membership in its
name's top k is decided on the same bits. A cosine is the float64 product of the two unit vectors, as
one request's is, within 1e-16 (a matrix product, where one request multiplies a vector).

Functions here run on the workers: module-level. The model loads once per worker process
(`eval_dense.embedder`), with the machine's cores shared among the workers.
"""

from ragsim.host import audit_stream, eval_dense
from ragsim.split.session import Session
from ragsim.wire.request import read_retrieval_options

CELLS = 1 << 22  # cosines held at once (chunks x names of one block): 32 MB of float64

_NAMES: dict = {}  # this process's name vectors (float64), by (threads, names)


def _name_vectors(shared):
    key = (shared.get("threads"), tuple(shared["keys"]))
    if key not in _NAMES:
        model = eval_dense.embedder(shared.get("threads"))
        _NAMES.clear()
        _NAMES[key] = model.embed(list(key[1])).astype(model.np.float64)
        model.cache.clear()
    return _NAMES[key]


def _chunk_texts(shared, batch, live) -> dict:
    """Per overlap audited, the batch's chunk texts in the order pass 2 laid them end to end (document by
    document, each one's chunks in order): the positions its `BatchSplit` gave them."""
    analyzer = read_retrieval_options(shared["retrieval"])["analyzer"]
    texts = {o: [] for o in live}
    for _, docs, _ in audit_stream.documents_of(shared, batch):
        for d in docs:
            session = Session()
            index = session.index(d["text"], analyzer)
            for o, corpus, error in audit_stream.splits_of(dict(shared, overlaps=live), index, session):
                if error is None:
                    starts, ends = corpus.doc_columns(0)
                    texts[o].extend(d["text"][s:e] for s, e in zip(starts, ends))
    return texts


def judge_pass(shared: dict, item: tuple) -> dict:
    """`audit_stream.judge_pass` by cosine: per document its facts' answering chunks and best answering
    chunk at each overlap, per overlap and name the batch's best k chunks (-cosine, position)."""
    batch, bases, kept = item
    ready = audit_stream.kept_or_made(shared, batch, kept)
    live = [int(o) for o in shared["collections"]]
    audit_stream.number_across(ready, bases, live)
    texts = _chunk_texts(shared, batch, live)
    best = {o: _rank_batch(shared, texts[o], bases[o], ready["pending"], o) for o in live}
    return {"files": ready["files"], "best": best}


def _rank_batch(shared, texts, base, pending, o) -> dict:
    """Every name's best k chunks of the batch at overlap `o`, and each pending fact's best answering chunk."""
    if not texts or not shared["keys"]:
        return {}
    model = eval_dense.embedder(shared.get("threads"))
    np, k = model.np, shared["k"]
    names = _name_vectors(shared)
    vectors = model.embed(texts).astype(np.float64)
    model.cache.clear()  # each chunk is embedded once: a cache would only hold memory
    n = len(texts)
    facts_of: dict = {}  # name -> [(record, answering chunks in the batch)]
    for record, at, chunks in pending:
        if at == o:
            facts_of.setdefault(record["key"], []).append((record, chunks))
    best = {}
    width = max(1, CELLS // n)
    for first in range(0, len(names), width):
        block = vectors @ names[first:first + width].T  # n x names: each column one name's cosines
        if n > k:  # the k-th highest cosine of each name; ties at it are all kept, then cut by position
            floor = np.partition(block, n - k, axis=0)[n - k]
            cols, rows = np.nonzero((block >= floor).T)
        else:
            cols, rows = np.divmod(np.arange(n * block.shape[1]), n)
        held: dict = {}
        for j, i in zip(cols.tolist(), rows.tolist()):
            held.setdefault(j, []).append((-float(block[i, j]), i + base))
        for j, top in held.items():
            best[first + j] = sorted(top)[:k]
        for j in range(block.shape[1]):
            for record, chunks in facts_of.get(first + j, ()):
                s, p = min(((float(block[c, j]), c) for c in chunks), key=lambda x: (-x[0], x[1]))
                record["at"][str(o)]["best"] = [s, p + base]
    return best
