"""The corpus audit over a knowledge base of any size (issue 26): the work each batch of files does,
one document in memory at a time, in three passes that together give `wire.audit.audit`'s numbers
over the same documents, bit for bit.

1. `facts_pass`: each document read and indexed, its facts detected; their names are the queries.
2. `count_pass`: at each overlap, each document split; its chunks, their lengths and units, and in
   how many chunks each query term occurs: BM25's collection statistics (`rank.collection`).
3. `judge_pass`: split again; each fact's answering chunks (numbered across the corpus from the
   batch's first chunk), and per query the batch's best chunks (score descending, position
   ascending: SPEC section 3's tie rule), from which `audit_run` takes every query's top k.

Functions here run on the workers (a process pool or Dask): module-level, taking `(shared, batch)`.
"""

import heapq

from ragsim.host import sources
from ragsim.judge import facts as fact_rules
from ragsim.rank.collection import Collection, Scorer, document_frequencies
from ragsim.rank.corpus import rankable
from ragsim.split.session import Session
from ragsim.errors import RequestError
from ragsim.wire.audit import answering_chunks, facts_of, stretch_units
from ragsim.wire.request import query_terms_for, read_retrieval_options


def documents_of(shared, batch):
    """Each file of the batch with its documents (none, and the reason, for a file skipped)."""
    for source in batch:
        docs, reason = sources.read_or_skip(source, shared.get("pdf_mode", "page"))
        yield source, docs, reason


def facts_pass(shared: dict, batch: list) -> list[dict]:
    """Per file: its documents (id, title, characters) and each fact's query, as a tuple of terms."""
    analyzer = read_retrieval_options(shared["retrieval"])["analyzer"]
    out = []
    for source, docs, reason in documents_of(shared, batch):
        entry = {"seq": source.seq, "bytes": source.size, "skipped": reason, "docs": []}
        for d in docs:  # the facts come from the text alone (`facts_of` keeps them on an index): none built here
            keys = [tuple(query_terms_for(d["text"][f.name[0]:f.name[1]], analyzer)) for f in fact_rules.detect(d["text"])]
            entry["docs"].append({"id": d["id"], "title": d["title"], "chars": len(d["text"]), "keys": keys})
        out.append(entry)
    return out


def _splits(shared, index, session):
    """Per overlap still audited: the document's one-document corpus, or the splitter's refusal."""
    for o in shared["overlaps"]:
        try:
            yield o, rankable([index], [0], session, dict(shared["chunking"], overlap=o)), None
        except RequestError as e:
            yield o, None, e.message


def count_pass(shared: dict, batch: list) -> dict:
    """The batch's statistics per overlap: chunks, units stored, their lengths together and each
    query term's document frequency (over chunks), and the first refusal of an overlap."""
    analyzer = read_retrieval_options(shared["retrieval"])["analyzer"]
    terms = shared["terms"]
    per = {o: {"chunks": 0, "units": 0, "total": 0, "df": {}, "error": None, "unit": None} for o in shared["overlaps"]}
    for _, docs, _ in documents_of(shared, batch):
        for d in docs:
            session = Session()
            index = session.index(d["text"], analyzer)
            for o, corpus, error in _splits(shared, index, session):
                row = per[o]
                if error is not None:
                    row["error"] = row["error"] or error
                    continue
                present = _present(index, corpus, terms)
                row.setdefault("doc_chunks", []).append(len(corpus.starts))
                row["chunks"] += len(corpus.starts)
                row["units"] += sum(corpus.units)
                row["total"] += sum(corpus.lengths)
                row["unit"] = corpus.unit
                for t, n in document_frequencies(present, corpus.occurrence, len(corpus.starts)).items():
                    row["df"][t] = row["df"].get(t, 0) + n
    return per


def _present(index, corpus, wanted) -> list:
    """The wanted terms this document's chunks hold (its words' terms and the clipped words' ones)."""
    vocabulary = set(index.postings)
    for _, layout, _, _, _ in corpus.parts:
        vocabulary.update(layout.edge_index)
    return sorted(vocabulary & wanted) if len(vocabulary) > len(wanted) else sorted(t for t in wanted if t in vocabulary)


def judge_pass(shared: dict, item: tuple) -> dict:
    """Per document: its facts' answering chunks and best-scoring answering chunk at each overlap;
    per overlap and query: the batch's best `k` chunks and how many chunks score above 0."""
    batch, bases = item
    retrieval = read_retrieval_options(shared["retrieval"])
    keys, by_term, k = shared["keys"], shared["by_term"], shared["k"]
    stats = {o: Collection(*c) for o, c in shared["collections"].items()}
    next_chunk = dict(bases)
    best = {o: {} for o in stats}  # overlap -> key -> the batch's best (-score, position), at most k
    positive = {o: {} for o in stats}  # overlap -> key -> chunks scoring above 0 in the batch so far
    files = []
    for source, docs, reason in documents_of(shared, batch):
        entry = {"seq": source.seq, "skipped": reason, "docs": []}
        for d in docs:
            session = Session()
            index = session.index(d["text"], retrieval["analyzer"])
            found = facts_of(index)
            names = (tuple(query_terms_for(d["text"][f.name[0]:f.name[1]], retrieval["analyzer"])) for f in found)
            doc = {"id": d["id"], "title": d["title"], "chars": len(d["text"]), "chunks": {}, "gap": None,
                   "facts": [_fact_record(d, f, shared["key_id"][key]) for f, key in zip(found, names)]}
            for o, corpus, error in _splits(shared, index, session):
                if error is not None or o not in stats:
                    continue
                base = next_chunk[o]
                next_chunk[o] += len(corpus.starts)
                doc["chunks"][str(o)] = len(corpus.starts)
                scores = _score_keys(index, corpus, by_term, keys, stats[o], retrieval, base, k, best[o], positive[o])
                _judge_facts(doc, index, found, corpus, o, base, scores, positive[o], shared["chunking"])
            entry["docs"].append(doc)
        files.append(entry)
    return {"files": files, "best": best, "positive": positive}


def _fact_record(d, f, key_id) -> dict:
    return {"doc": d["id"], "name": list(f.name), "value": list(f.value), "name_text": d["text"][f.name[0]:f.name[1]],
            "value_text": d["text"][f.value[0]:f.value[1]], "stretch": list(f.stretch), "key": key_id, "at": {}}


def _score_keys(index, corpus, by_term, keys, collection, retrieval, base, k, best, positive) -> dict:
    """Each query holding a term of this document, scored over its chunks: `{key: {position: score}}`
    (positions in the corpus); the batch's best k and positive counts updated."""
    out = {}
    ids = sorted({i for t in _present(index, corpus, by_term.keys()) for i in by_term[t]})
    scorer = Scorer(corpus.lengths, corpus.occurrence, collection, retrieval["variant"], retrieval["k1"],
                    retrieval["b"], retrieval["delta"])
    for i in ids:
        scored = scorer.scores(keys[i])
        scored = {p + base: s for p, s in scored.items() if s > 0}
        out[i] = scored
        if not scored:
            continue
        positive[i] = positive.get(i, 0) + len(scored)
        top = heapq.nsmallest(k, ((-s, p) for p, s in scored.items()))
        best[i] = heapq.nsmallest(k, best.get(i, []) + top)
    return out


def _judge_facts(doc, index, found, corpus, o, base, scores, positive, chunking) -> None:
    """Each fact at overlap `o`: the chunks answering it (numbered from 1 across the corpus), and the
    best of them by its name's scores; for a best scoring 0, the positive chunks before it."""
    starts, ends = corpus.doc_columns(0)
    for f, record in zip(found, doc["facts"]):
        a, z = f.stretch
        chunks = [c + base for c in answering_chunks(starts, ends, a, z)]
        size = stretch_units(index, corpus.unit, a, z, chunking)
        if size is not None:
            doc["gap"] = max(doc["gap"] or 0, size)
        entry = {"answering": [c + 1 for c in chunks], "within": not chunks and size is not None and size <= o}
        if chunks:
            mine = scores.get(record["key"], {})
            p = min(chunks, key=lambda c: (-mine.get(c, 0.0), c))
            entry["best"] = [mine.get(p, 0.0), p]
            if not mine.get(p):  # the rank of a chunk scoring 0 counts the positive ones before it
                before_here = sum(1 for q in mine if q < p)
                entry["zero_before"] = positive.get(record["key"], 0) - len(mine) + before_here
        record["at"][str(o)] = entry
