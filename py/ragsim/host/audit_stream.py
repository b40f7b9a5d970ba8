"""The corpus audit over a knowledge base of any size (issue 26): the work each batch of files does,
one document in memory at a time, in three passes that together give `wire.audit.audit`'s numbers
over the same documents, bit for bit.

1. `facts_pass`: each document read and indexed, its facts detected; their names are the queries.
2. `count_pass`: at each overlap, each document split; its chunks, their lengths and units, and in
   how many chunks each query term occurs: BM25's collection statistics (`rank.collection`).
3. `judge_pass`: split again; each fact's answering chunks (numbered across the corpus from the
   batch's first chunk), and per query the batch's best chunks (score descending, position
   ascending: SPEC section 3's tie rule), from which `audit_run` takes every query's top k: each
   overlap's chunks of the batch one split, its terms' weights under the collection's statistics
   (`rank.weights.Terms`), each query ranked over it by `rank.ranking.MaxScore`.

Functions here run on the workers (a process pool or Dask): module-level, taking `(shared, batch)`.
"""

from ragsim.host import sources
from ragsim.judge import facts as fact_rules
from ragsim.rank.collection import document_frequencies
from ragsim.rank.corpus import rankable
from ragsim.rank.ranking import MaxScore
from ragsim.rank.weights import Terms
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
                occurrence = occurrences(index, corpus)
                row.setdefault("doc_chunks", []).append(len(corpus.starts))
                row["chunks"] += len(corpus.starts)
                row["units"] += sum(corpus.units)
                row["total"] += sum(corpus.lengths)
                row["unit"] = corpus.unit
                for t, n in document_frequencies(present, occurrence, len(corpus.starts)).items():
                    row["df"][t] = row["df"].get(t, 0) + n
    return per


def occurrences(index, corpus):
    """`corpus.occurrence` for a one-document corpus, from each term's postings alone (bisected into
    the chunks' word ranges): the same chunks and counts in ascending order, with no pass over every
    word of a long document per term (`rank.corpus.gather` takes that way for a common term, fit for
    a page that keeps the counts between drags, not for a corpus read once)."""
    (_, layout, _, _, _), = corpus.parts
    found: dict = {}
    edges = layout.edge_index

    def occurrence(t):
        got = found.get(t)
        if got is None:
            held = t in index.postings or t in edges
            got = found[t] = index.sparse_frequencies(t, layout) if held else ([], [])
        return got
    return occurrence


def _present(index, corpus, wanted) -> list:
    """The wanted terms this document's chunks hold (its words' terms and the clipped words' ones)."""
    vocabulary = set(index.postings)
    for _, layout, _, _, _ in corpus.parts:
        vocabulary.update(layout.edge_index)
    return sorted(vocabulary & wanted) if len(vocabulary) > len(wanted) else sorted(t for t in wanted if t in vocabulary)


class BatchSplit:
    """One overlap's chunks of a batch laid end to end, as one split: each chunk's length and, for the
    query terms, the chunks holding each and how often (positions from the batch's first chunk), the
    documents' own corpora let go as it goes. `terms(...)`: its `rank.weights.Terms` under the
    collection's statistics."""

    def __init__(self):
        self.lengths: list[int] = []
        self.found: dict = {}  # term -> (positions, tfs)

    def add(self, index, corpus, wanted) -> int:
        """Append a document's chunks; returns the batch position of its first."""
        base = len(self.lengths)
        self.lengths.extend(corpus.lengths)
        occurrence = occurrences(index, corpus)
        for t in _present(index, corpus, wanted):
            positions, tfs = occurrence(t)
            mine = self.found.setdefault(t, ([], []))
            mine[0].extend(p + base for p in positions)
            mine[1].extend(tfs)
        return base

    def occurrence(self, t):
        return self.found.get(t, ([], []))

    def terms(self, collection, retrieval) -> Terms:
        return Terms(self.lengths, self.occurrence, retrieval["variant"], retrieval["k1"], retrieval["b"],
                     retrieval["delta"], stats=collection)


def judge_pass(shared: dict, item: tuple) -> dict:
    """Per document: its facts' answering chunks and best-scoring answering chunk at each overlap;
    per overlap and query: the batch's best `k` positive chunks (-score, position in the corpus),
    each query ranked over the whole batch at once (`ranking.MaxScore`)."""
    batch, bases = item
    retrieval = read_retrieval_options(shared["retrieval"])
    stats = {o: tuple(c) for o, c in shared["collections"].items()}
    splits = {o: BatchSplit() for o in stats}
    wanted = shared["by_term"].keys()
    files, pending = [], []  # pending: (record, overlap, answering chunks in the batch)
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
                local = splits[o].add(index, corpus, wanted)
                doc["chunks"][str(o)] = len(corpus.starts)
                pending.extend(_judge_facts(doc, index, found, corpus, o, local, bases[o], shared["chunking"]))
            entry["docs"].append(doc)
        files.append(entry)
    best = {o: _rank_batch(splits[o], stats[o], retrieval, shared, bases[o], pending, o) for o in stats}
    return {"files": files, "best": best}


def _rank_batch(split, collection, retrieval, shared, base, pending, o) -> dict:
    """Each query holding a term of the batch: its best k positive chunks over the batch; and each
    pending fact's best answering chunk at overlap `o` by its name's scores."""
    terms = split.terms(collection, retrieval)
    keys, by_term, k = shared["keys"], shared["by_term"], shared["k"]
    ranked: dict = {}

    def ranking(i):
        if i not in ranked:
            ranked[i] = MaxScore(terms, list(keys[i]))
        return ranked[i]

    best = {}
    for i in sorted({i for t in split.found for i in by_term[t]}):
        ms = ranking(i)
        top = [(-s, p + base) for p in ms.top(k) if (s := ms.score_of(p)) > 0]
        if top:
            best[i] = top
    for record, at, chunks in pending:
        if at != o:
            continue
        ms = ranking(record["key"])
        s, p = min(((ms.score_of(c), c) for c in chunks), key=lambda x: (-x[0], x[1]))
        record["at"][str(o)]["best"] = [s, p + base]
    return best


def _fact_record(d, f, key_id) -> dict:
    return {"doc": d["id"], "name": list(f.name), "value": list(f.value), "name_text": d["text"][f.name[0]:f.name[1]],
            "value_text": d["text"][f.value[0]:f.value[1]], "stretch": list(f.stretch), "key": key_id, "at": {}}


def _judge_facts(doc, index, found, corpus, o, local, base, chunking):
    """Each fact at overlap `o`: the chunks answering it (numbered from 1 across the corpus, the
    document's first at batch position `local`); yields `(record, o, answering chunks in the batch)`
    for those answered, whose best chunk `_rank_batch` finds."""
    starts, ends = corpus.doc_columns(0)
    for f, record in zip(found, doc["facts"]):
        a, z = f.stretch
        chunks = [c + local for c in answering_chunks(starts, ends, a, z)]
        size = stretch_units(index, corpus.unit, a, z, chunking)
        if size is not None:
            doc["gap"] = max(doc["gap"] or 0, size)
        record["at"][str(o)] = {"answering": [c + base + 1 for c in chunks],
                                "within": not chunks and size is not None and size <= o}
        if chunks:
            yield record, o, chunks
