"""The streamed corpus audit with dense retrieval: `audit --method dense` over a knowledge
base of any size, the chunks embedded on the workers a batch at a time, no vector kept past its batch.

One request's dense audit (`wire.audit`, SPEC section 10) asks each fact's name, its text, as a query
of its own and ranks every chunk of the corpus at each overlap by the cosine of their unit vectors; a
fact is found when its best answering chunk (cosine descending, position ascending) ranks within k.
Streamed, the passes are `audit_stream`'s with the queries being the names' texts (pass 1); pass 3 is
`judge_pass` here: each overlap's chunks of the batch embedded together, their cosines with every
name (a block of names at a time, so memory is bounded whatever the number of names), and per name the
batch's best k chunks (-cosine, position in the corpus), merged across batches by `audit_run` as BM25's
are. A cosine is one request's, bit for bit: the float64 products of the two unit vectors summed
along the row (`embed_onnx.Embedder.similarities`); a matrix product of the block finds each name's
candidates, and their exact cosines (and each answered fact's answering chunks') decide.

Functions here run on the workers: module-level. The model loads once per worker process
(`eval_dense.embedder`), with the machine's cores shared among the workers.
"""

from ragsim.host.jobs import audit_stream, eval_dense
from ragsim.host.corpus import spill
from ragsim.split.session import Session
from ragsim.wire.request import read_retrieval_options

CELLS = 1 << 22  # cosines held at once (chunks x names of one block): 32 MB of float64
SLACK = 1e-12  # how far below a name's k-th cosine by the matrix product a candidate may fall


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
    ready = spill.kept_or_made(kept, audit_stream.prepare, shared, batch)
    live = [int(o) for o in shared["collections"]]
    audit_stream.number_across(ready, bases, live)
    texts = _chunk_texts(shared, batch, live)
    best = {o: _rank_batch(shared, texts[o], bases[o], ready["pending"], o) for o in live}
    return audit_stream.with_extents({"files": ready["files"], "best": best}, shared, ready["splits"], bases)


def _rank_batch(shared, texts, base, pending, o) -> dict:
    """Every name's best k chunks of the batch at overlap `o`, and each pending fact's best answering chunk."""
    if not texts or not shared["keys"]:
        return {}
    model = eval_dense.embedder(shared.get("threads"))
    vectors = model.embed(texts).astype(model.np.float64)
    model.cache.clear()  # each chunk is embedded once: a cache would only hold memory
    asked = [(record["key"], chunks, record) for record, at, chunks in pending if at == o]
    names = eval_dense.query_vectors(shared["keys"], shared.get("threads"))
    best, answers = top_by_cosine(model.np, vectors, names, shared["k"], base, asked)
    for record, (s, p) in answers:
        record["at"][str(o)]["best"] = [s, p]
    return best


def top_by_cosine(np, vectors, names, k: int, base: int, asked: list) -> tuple[dict, list]:
    """Per name (a row of `names`, unit vectors in float64; None for no names) its best k chunks among `vectors` (-cosine,
    position + base), best first, ties by position; and for each `(name, chunks, tag)` of `asked` the
    best of those chunks for that name: `[(tag, (cosine, position + base))]`. Also `inspect_facts`'s."""
    n = len(vectors)
    if not n or names is None or not len(names):
        return {}, []

    def exact(rows, cols):
        """The cosines of chunks `rows` with names `cols`, pair by pair, as one request sums them:
        each product along its own row (`embed_onnx.Embedder.similarities`), the same bits wherever
        the chunk stands."""
        return (vectors[rows] * names[cols]).sum(axis=1).tolist()

    by_name: dict = {}
    for name, chunks, tag in asked:
        by_name.setdefault(name, []).append((chunks, tag))
    best, answers = {}, []
    width = max(1, CELLS // n)
    for first in range(0, len(names), width):
        # A matrix product finds each name's candidates fast (within 1e-15 of the exact cosine); the
        # candidates' exact cosines decide their order.
        block = vectors @ names[first:first + width].T  # n x names: each column one name's cosines
        floor = np.partition(block, n - k, axis=0)[n - k] - SLACK if n > k else np.full(block.shape[1], -np.inf)
        cols, rows = np.nonzero((block >= floor).T)
        held: dict = {}
        for j, i, x in zip(cols.tolist(), rows.tolist(), exact(rows, cols + first)):
            held.setdefault(j, []).append((-x, i + base))
        for j, top in held.items():
            best[first + j] = sorted(top)[:k]
        for j in range(block.shape[1]):
            for chunks, tag in by_name.get(first + j, ()):
                s, p = min(zip(exact(chunks, [first + j] * len(chunks)), chunks), key=lambda x: (-x[0], x[1]))
                answers.append((tag, (s, p + base)))
    return best, answers
