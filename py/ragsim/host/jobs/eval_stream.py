"""A question set over a knowledge base of any size: the work each batch does, one
document in memory at a time, so that `eval_run` gives every question the verdict and metrics one
request over the same documents gives (`judge.questions.evaluate`).

1. `documents_pass`: each file's documents (ids and titles, for the references to name).
2. `prepare_pass`: each document indexed and split once at the one setting: BM25's collection
   statistics for the questions' terms, and what pass 4 ranks, kept (`host.corpus.spill`): the batch's
   chunks laid end to end (`audit_stream.BatchSplit`), their extents and documents.
3. `referenced_pass`: each referenced document split; per span of a reference the chunks holding it
   whole and the best of them for its question, per reference the chunks touching it (Chroma's Ω).
4. `rank_pass`: what pass 2 kept (made again where it cannot be read here); per question the
   batch's best k chunks with their extents, and how many chunks rank above each span's best chunk
   (its rank when it is not in the top k), counted by `rank.ranking.MaxScore` among the chunks
   that could reach it.

Functions here run on the workers: module-level, taking `(shared, item)`.
"""

import os
from bisect import bisect_left, bisect_right
from itertools import repeat
from operator import add

from ragsim.host.jobs import audit_stream as passes
from ragsim.host.corpus import sources, spill
from ragsim.host.jobs.audit_stream import documents_of, occurrences
from ragsim.rank.corpus import nondecreasing, rankable
from ragsim.rank.ranking import MaxScore
from ragsim.rank.weights import Terms
from ragsim.split import registry
from ragsim.split.session import Session
from ragsim.wire.request import read_retrieval_options


def documents_pass(shared: dict, batch: list) -> list[dict]:
    return [{"seq": s.seq, "bytes": s.size, "skipped": reason,
             "docs": [{"id": d["id"], "title": d["title"], "chars": len(d["text"])} for d in docs]}
            for s, docs, reason in documents_of(shared, batch)]


def _corpus(shared, text, analyzer, semantic=None):
    session = Session()
    for key, prepared in (semantic or {}).items():  # a semantic chunker's preparation, kept by the count pass
        session.semantic.kept[key] = prepared
    index = session.index(text, analyzer)
    return index, rankable([index], [0], session, shared["chunking"])


def _terms(shared, corpus, retrieval) -> Terms:
    """The document's terms' weights under the collection's statistics (`rank.weights.Terms`)."""
    return Terms(corpus.lengths, occurrences(corpus.parts[0][0], corpus), retrieval["variant"], retrieval["k1"], retrieval["b"],
                 retrieval["delta"], shared=True, stats=tuple(shared["collection"]))


def _sums(terms, query, chunks) -> list[float]:
    """The scores of `chunks` for `query`: its terms' weights added in query order, as
    `ranking.score_all` adds them (0.0 for a term a chunk lacks changes no bit)."""
    acc = [0.0] * len(chunks)
    for t in query:
        if terms.entry(t) is not None:
            acc = list(map(add, acc, terms.at(t, chunks)))
    return acc


def _semantic_name(seq: int, within: int) -> str:
    return f"semantic-{seq}-{within}.pickle"


def referenced_pass(shared: dict, item: tuple) -> dict:
    """One referenced document: `whole[(q, span)]` = (positions holding it whole, best (score, position)
    or None), `touching[(d, a, b)]` = the extents of the chunks touching `[a, b)`. A semantic
    chunker's preparation (its sentences' distances) comes from the count pass where it was kept
    here, so the document is not embedded twice."""
    return referenced(shared, item)[0]


def referenced(shared: dict, item: tuple) -> tuple[dict, str, list, list]:
    """`referenced_pass`'s answer, with the document's text and its chunks' starts and ends (which
    `eval_dense` embeds)."""
    source, within, d, base = item
    retrieval = read_retrieval_options(shared["retrieval"])
    text = sources.read(source, shared.get("pdf_mode", "page"))[within]["text"]
    semantic = None
    if shared.get("spill") and getattr(registry.of(shared["chunking"]), "embeds", False):
        semantic = spill.load(os.path.join(shared["spill"], _semantic_name(source.seq, within)))
    index, corpus = _corpus(shared, text, retrieval["analyzer"], semantic)
    starts, ends = corpus.doc_columns(0)
    terms = _terms(shared, corpus, retrieval)
    whole, touching = {}, {}
    for qi, q in enumerate(shared["questions"]):
        spans = [(si, s, t) for si, (dd, s, t) in enumerate(q["spans"]) if dd == d]
        if not spans:
            continue
        for si, s, t in spans:
            held = [i for i, (a, z) in enumerate(zip(starts, ends)) if a <= s and t <= z]
            scores = _sums(terms, shared["terms"][qi], held)
            best = min(zip(scores, (base + i for i in held)), key=lambda x: (-x[0], x[1]), default=None)
            whole[(qi, si)] = ([base + i for i in held], best)
        for dd, a, b in q["refs"]:
            if dd == d:
                if nondecreasing(starts) and nondecreasing(ends):  # as `queries.Setting.touching` finds them
                    lo, hi = bisect_left(ends, a), bisect_right(starts, b)
                    touching[(d, a, b)] = list(zip(starts[lo:hi], ends[lo:hi]))
                else:
                    touching[(d, a, b)] = [(x, y) for x, y in zip(starts, ends) if x <= b and a <= y]
    return {"whole": whole, "touching": touching}, text, starts, ends


def prepare_pass(shared: dict, batch: list) -> dict:
    """Pass 2: `per`, the batch's statistics at the one setting (`audit_stream.prepare_pass`'s, with
    each document's chunks), and `kept`, where what `rank_pass` ranks waits (or None)."""
    return spill.prepared(shared, batch, "rank", prepare(shared, batch))


def prepare(shared, batch) -> tuple[dict, dict]:
    """Each document indexed and split once: the statistics, and the batch's split with each chunk's
    start, end and document (numbered from the batch's first)."""
    analyzer = read_retrieval_options(shared["retrieval"])["analyzer"]
    [o] = shared["overlaps"]
    per = passes.rows([o])
    split, starts, ends, doc_of, docs_out = passes.BatchSplit(), [], [], [], []
    for source, docs, _ in documents_of(shared, batch):
        for j, doc in enumerate(docs):
            session = Session()
            index = session.index(doc["text"], analyzer)
            chunks = 0
            for _, corpus, error in passes.splits_of(shared, index, session):
                if error is not None:
                    per[o]["error"] = per[o]["error"] or error
                    continue
                present, occurrence = passes.present_terms(index, corpus, shared["wanted"]), occurrences(index, corpus)
                passes.tally(per[o], corpus, present, occurrence)
                split.add(corpus, present, occurrence)
                first, last = corpus.doc_columns(0)
                starts.extend(first)
                ends.extend(last)
                doc_of.extend(repeat(len(docs_out), len(first)))
                chunks = len(first)
            docs_out.append({"id": doc["id"], "title": doc["title"], "chars": len(doc["text"]), "chunks": chunks})
            if session.semantic.kept and (source.seq, j) in shared.get("referenced", ()):
                spill.keep(shared, _semantic_name(source.seq, j), dict(session.semantic.kept))
    return per, {"split": split, "starts": starts, "ends": ends, "doc_of": doc_of, "documents": docs_out}


def rank_pass(shared: dict, item: tuple) -> dict:
    """The batch's best k chunks per question (-score, position, document, start, end), its first
    2k chunks (position, document, start, end: the zero-scoring ones a short ranking ends with), and
    per span's best chunk (score s, position p) the chunks ranking above it here: for s > 0 those
    scoring above s or s before p; for s = 0 the question's positive chunks, and those before p."""
    batch, base, doc_base, kept = item
    ready = spill.kept_or_made(kept, prepare, shared, batch)
    retrieval = read_retrieval_options(shared["retrieval"])
    k, thresholds, split = shared["k"], shared["thresholds"], ready["split"]
    starts, ends, doc_of = ready["starts"], ready["ends"], ready["doc_of"]
    n = len(starts)
    terms = Terms(split.lengths, split.occurrence, retrieval["variant"], retrieval["k1"], retrieval["b"],
                  retrieval["delta"], shared=True, stats=tuple(shared["collection"]))
    first = [(base + i, doc_base + doc_of[i], starts[i], ends[i]) for i in range(min(n, 2 * k))]
    best, positive, above, before = {}, {}, {}, {}
    for qi in sorted({qi for t in split.found for qi in shared["by_term"][t]}):
        ms = MaxScore(terms, shared["terms"][qi])
        top = [(-x, p + base, doc_base + doc_of[p], starts[p], ends[p]) for p in ms.top(k) if (x := ms.score_of(p)) > 0]
        if not top:
            continue
        best[qi] = top
        for key, (s, p) in thresholds.get(qi, {}).items():
            local = min(max(p - base, 0), n)
            if s > 0:
                above[key] = ms.ahead(s, local)
                continue
            scoring = ms.ahead(0.0, 0)  # the positive chunks
            positive[qi] = scoring
            before[key] = local - (ms.ahead(0.0, local) - scoring)  # positive ones before p
    return {"documents": ready["documents"], "best": best,
            "positive": positive, "above": above, "before": before, "first": first}
