"""A question set over a knowledge base of any size (issue 26): the work each batch does, one
document in memory at a time, so that `eval_run` gives every question the verdict and metrics one
request over the same documents gives (`judge.questions.evaluate`).

1. `documents_pass`: each file's documents (ids and titles, for the references to name).
2. `audit_stream.count_pass` at the one setting: BM25's collection statistics for the questions' terms.
3. `referenced_pass`: each referenced document split; per span of a reference the chunks holding it
   whole and the best of them for its question, per reference the chunks touching it (Chroma's Ω).
4. `rank_pass`: every document; per question the batch's best k chunks with their extents, and how
   many chunks rank above each span's best chunk (its rank when it is not in the top k).

Functions here run on the workers: module-level, taking `(shared, item)`.
"""

import heapq
from bisect import bisect_left, bisect_right
from operator import add

from ragsim.host import sources
from ragsim.host.audit_stream import documents_of, occurrences
from ragsim.rank.corpus import nondecreasing, rankable
from ragsim.rank.weights import Terms
from ragsim.split.session import Session
from ragsim.wire.request import read_retrieval_options


def documents_pass(shared: dict, batch: list) -> list[dict]:
    return [{"seq": s.seq, "bytes": s.size, "skipped": reason,
             "docs": [{"id": d["id"], "title": d["title"], "chars": len(d["text"])} for d in docs]}
            for s, docs, reason in documents_of(shared, batch)]


def _corpus(shared, text, analyzer):
    session = Session()
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


def _scores(shared, terms, qi, base) -> dict:
    """Question `qi`'s positive scores over this document's chunks, by position in the corpus."""
    query = shared["terms"][qi]
    chunks = sorted({p for t in query if terms.entry(t) is not None for p in terms.weights(t)})
    return {p + base: x for p, x in zip(chunks, _sums(terms, query, chunks)) if x > 0}


def referenced_pass(shared: dict, item: tuple) -> dict:
    """One referenced document: `whole[(q, span)]` = (positions holding it whole, best (score, position)
    or None), `touching[(d, a, b)]` = the extents of the chunks touching `[a, b)`."""
    source, within, d, base = item
    retrieval = read_retrieval_options(shared["retrieval"])
    text = sources.read(source, shared.get("pdf_mode", "page"))[within]["text"]
    index, corpus = _corpus(shared, text, retrieval["analyzer"])
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
    return {"whole": whole, "touching": touching}


def rank_pass(shared: dict, item: tuple) -> dict:
    """The batch's best k chunks per question (-score, position, document, start, end), its first
    2k chunks (position, document, start, end: the zero-scoring ones a short ranking ends with), per
    question its positive chunks, and per span's best chunk the chunks ranking above it here."""
    batch, base, doc_base = item
    retrieval = read_retrieval_options(shared["retrieval"])
    k, thresholds = shared["k"], shared["thresholds"]
    best, positive, above, before, first, docs_out = {}, {}, {}, {}, [], []
    d = doc_base
    for _, docs, _ in documents_of(shared, batch):
        for doc in docs:
            index, corpus = _corpus(shared, doc["text"], retrieval["analyzer"])
            starts, ends = corpus.doc_columns(0)
            terms = _terms(shared, corpus, retrieval)
            for i in range(min(len(starts), 2 * k - len(first))):
                first.append((base + i, d, starts[i], ends[i]))
            vocabulary = set(index.postings).union(*(layout.edge_index for _, layout, _, _, _ in corpus.parts))
            for qi in sorted({qi for t in vocabulary & shared["by_term"].keys() for qi in shared["by_term"][t]}):
                scores = _scores(shared, terms, qi, base)
                if not scores:
                    continue
                positive[qi] = positive.get(qi, 0) + len(scores)
                top = heapq.nsmallest(k, ((-x, p, d, starts[p - base], ends[p - base]) for p, x in scores.items()))
                best[qi] = heapq.nsmallest(k, best.get(qi, []) + top)
                for key, (s, p) in thresholds.get(qi, {}).items():
                    above[key] = above.get(key, 0) + sum(1 for c, x in scores.items() if x > s or (x == s and c < p))
                    if s == 0:
                        before[key] = before.get(key, 0) + sum(1 for c in scores if c < p)
            docs_out.append({"id": doc["id"], "title": doc["title"], "chars": len(doc["text"]), "chunks": len(starts)})
            base += len(starts)
            d += 1
    return {"documents": docs_out, "best": best, "positive": positive, "above": above, "before": before, "first": first}
