"""The corpus audit over a knowledge base of any size: the work each batch of files does,
one document in memory at a time, in three passes that together give `wire.audit.audit`'s numbers
over the same documents, bit for bit; each document is indexed, split and judged once.

1. `facts_pass`: each document read and its facts detected; their names are the queries. The facts
   are kept for pass 2 (`host.corpus.spill`).
2. `prepare_pass`: each document indexed once and split at each overlap: BM25's collection
   statistics (its chunks, their lengths and units, and in how many chunks each query term occurs:
   `rank.collection`), and what pass 3 ranks, kept (`host.corpus.spill`): per overlap the batch's chunks
   laid end to end (each one's length and, for the query terms, the chunks holding each and how
   often: `BatchSplit`), and each fact's answering chunks numbered from the batch's first chunk.
   Per MB of text that is about 8,000 chunk lengths over the six default overlaps, the query terms'
   postings in them, and the facts' records: about 1.2 MB pickled, 0.4 MB on disk compressed
   (the synthetic corpus of `benchmarks/bench_scale.py`), removed as pass 3 reads it; nothing in memory.
3. `judge_pass`: what pass 2 kept (made again from the files where it cannot be read here): each
   fact's answering chunks numbered across the corpus, and per query the batch's best chunks (score
   descending, position ascending: SPEC section 3's tie rule), from which `audit_run` takes every
   query's top k: each overlap's batch split, its terms' weights under the collection's statistics
   (`rank.weights.Terms`), each query ranked over it by `rank.ranking.MaxScore`.

Functions here run on the workers (a process pool or Dask): module-level, taking `(shared, batch)`.
"""

from ragsim.host.corpus import sources, spill
from ragsim.judge import facts as fact_rules
from ragsim.rank.collection import document_frequencies
from ragsim.rank.corpus import rankable
from ragsim.rank.ranking import MaxScore
from ragsim.rank.weights import Terms
from ragsim.split.session import Session
from ragsim.errors import RequestError
from ragsim.judge.fact_chunks import answering_chunks, stretch_units
from ragsim.wire.request import query_terms_for, read_retrieval_options


def documents_of(shared, batch):
    """Each file of the batch with its documents (none, and the reason, for a file skipped)."""
    for source in batch:
        docs, reason = sources.read_or_skip(source, shared.get("pdf_mode", "page"))
        yield source, docs, reason


def _detect(text, analyzer, shared) -> tuple[list, list]:
    """A text's facts and each one's query: its name's terms, as a tuple (BM25), its name's text
    (dense, which embeds the text itself: `host.jobs.audit_dense`), or with a reranker (BM25) both,
    (terms, text): the reranker reads the text, as one request's audit asks it."""
    found = fact_rules.detect(text)
    names = [text[f.name[0]:f.name[1]] for f in found]
    if shared.get("dense"):
        return found, names
    terms = [tuple(query_terms_for(name, analyzer)) for name in names]
    return found, (list(zip(terms, names)) if shared.get("rerank") else terms)


def terms_of(key) -> tuple:
    """A BM25 query's terms: the key itself, or its first half with a reranker ((terms, name))."""
    return key[0] if len(key) == 2 and isinstance(key[0], tuple) else key


def facts_pass(shared: dict, batch: list) -> dict:
    """Per file: its documents (id, title, characters) and each fact's query, as a tuple of terms;
    `kept`: where the facts wait for `prepare_pass` (or None)."""
    analyzer = read_retrieval_options(shared["retrieval"])["analyzer"]
    out, kept = [], {}
    for source, docs, reason in documents_of(shared, batch):
        entry = {"seq": source.seq, "bytes": source.size, "skipped": reason, "docs": []}
        for j, d in enumerate(docs):
            found, keys = kept[(source.seq, j)] = _detect(d["text"], analyzer, shared)
            entry["docs"].append({"id": d["id"], "title": d["title"], "chars": len(d["text"]), "keys": keys})
        out.append(entry)
    return {"files": out, "kept": spill.keep(shared, spill.kept_name(batch, "facts"), kept)}


def splits_of(shared, index, session):
    """Per overlap still audited: the document's one-document corpus, or the splitter's refusal."""
    for o in shared["overlaps"]:
        try:
            yield o, rankable([index], [0], session, dict(shared["chunking"], overlap=o)), None
        except RequestError as e:
            yield o, None, e.message


def rows(overlaps) -> dict:
    return {o: {"chunks": 0, "units": 0, "total": 0, "df": {}, "error": None, "unit": None} for o in overlaps}


def tally(row, corpus, present, occurrence) -> None:
    """A document's chunks, units, lengths and query terms' document frequencies added to its overlap's row."""
    row.setdefault("doc_chunks", []).append(len(corpus.starts))
    row["chunks"] += len(corpus.starts)
    row["units"] += sum(corpus.units)
    row["total"] += sum(corpus.lengths)
    row["unit"] = corpus.unit
    for t, n in document_frequencies(present, occurrence, len(corpus.starts)).items():
        row["df"][t] = row["df"].get(t, 0) + n


def prepare_pass(shared: dict, item: tuple) -> dict:
    """Pass 2 over a batch `(files, where pass 1 kept their facts)`: `per`, its statistics per overlap
    (chunks, units stored, their lengths together, each query term's document frequency over chunks, the first refusal of an overlap), and `kept`, where what `judge_pass` ranks waits (or None)."""
    batch, facts_at = item
    return spill.prepared(shared, batch, "judge", prepare(shared, batch, spill.load(facts_at)))


def prepare(shared, batch, kept=None) -> tuple[dict, dict]:
    """Each document indexed and split once: the statistics per overlap, and per overlap its
    `BatchSplit`, the documents' records (their facts' answering chunks numbered from the batch's
    first chunk) and the facts answered, whose best chunk `judge_pass` finds."""
    analyzer = read_retrieval_options(shared["retrieval"])["analyzer"]
    wanted, per = shared["terms"], rows(shared["overlaps"])
    splits = {o: BatchSplit() for o in shared["overlaps"]}
    files, pending = [], []  # pending: (record, overlap, answering chunks in the batch)
    for source, docs, reason in documents_of(shared, batch):
        entry = {"seq": source.seq, "skipped": reason, "docs": []}
        for j, d in enumerate(docs):
            session = Session()
            index = session.index(d["text"], analyzer)
            found, keys = (kept[(source.seq, j)] if kept and (source.seq, j) in kept
                           else _detect(d["text"], analyzer, shared))
            doc = {"id": d["id"], "title": d["title"], "chars": len(d["text"]), "chunks": {}, "gap": None,
                   "facts": [_fact_record(d, f, shared["key_id"][key]) for f, key in zip(found, keys)]}
            for o, corpus, error in splits_of(shared, index, session):
                if error is not None:
                    per[o]["error"] = per[o]["error"] or error
                    continue
                present, occurrence = present_terms(index, corpus, wanted), occurrences(index, corpus)
                tally(per[o], corpus, present, occurrence)
                local = splits[o].add(corpus, present, occurrence, (source.seq, j) if shared.get("rerank") else None)
                doc["chunks"][str(o)] = len(corpus.starts)
                pending.extend(_judge_facts(doc, index, found, corpus, o, local, shared["chunking"]))
            entry["docs"].append(doc)
        files.append(entry)
    return per, {"files": files, "splits": splits, "pending": pending}


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


def present_terms(index, corpus, wanted) -> list:
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
        self.extents: list = []  # with a reranker: each chunk's (file seq, document in file, start, end)

    def add(self, corpus, present, occurrence, at=None) -> int:
        """Append a document's chunks and its present query terms' occurrences (and, given `at`, the
        document's (file seq, place in its file), each chunk's extent); returns the batch position of
        its first chunk."""
        base = len(self.lengths)
        self.lengths.extend(corpus.lengths)
        if at is not None:
            self.extents.extend((*at, s, e) for s, e in zip(*corpus.doc_columns(0)))
        for t in present:
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
    each query ranked over the whole batch at once (`ranking.MaxScore`). `item`: the batch, its
    first chunk's position in the corpus per overlap, and where pass 2 kept its work (or None)."""
    batch, bases, kept = item
    ready = spill.kept_or_made(kept, prepare, shared, batch)
    retrieval = read_retrieval_options(shared["retrieval"])
    stats = {o: tuple(c) for o, c in shared["collections"].items()}
    number_across(ready, bases, stats)
    splits, pending = ready["splits"], ready["pending"]
    best = {o: _rank_batch(splits[o], stats[o], retrieval, shared, bases[o], pending, o) for o in stats}
    return with_extents({"files": ready["files"], "best": best}, shared, splits, bases)


def with_extents(result, shared, splits, bases) -> dict:
    """With a reranker, which reads the chunks' texts: each best chunk's extent after its position, and
    per overlap the batch's first 2k chunks (`first`: a query with fewer than k positive chunks is
    followed by the corpus's first ones, as one request ranks them)."""
    if not shared.get("rerank"):
        return result
    k = shared["k"]
    for o, per in result["best"].items():
        ext, base = splits[o].extents, bases[o]
        for key, top in per.items():
            per[key] = [(s, p, *ext[p - base]) for s, p in top]
    result["first"] = {o: [(p + bases[o], *splits[o].extents[p]) for p in range(min(2 * k, len(splits[o].extents)))]
                       for o in result["best"]}
    return result


def number_across(ready, bases, overlaps) -> None:
    """What pass 2 kept, for the overlaps a request audits (`overlaps`, the others dropped): each
    fact's answering chunks numbered across the corpus (`bases`: the batch's first chunk per overlap)."""
    live = {str(o) for o in overlaps}
    for entry in ready["files"]:
        for doc in entry["docs"]:
            doc["chunks"] = {o: n for o, n in doc["chunks"].items() if o in live}
            if not doc["chunks"]:
                doc["gap"] = None
            for record in doc["facts"]:
                record["at"] = {o: at for o, at in record["at"].items() if o in live}
                for o, at in record["at"].items():
                    at["answering"] = [c + bases[int(o)] for c in at["answering"]]


def _rank_batch(split, collection, retrieval, shared, base, pending, o) -> dict:
    """Each query holding a term of the batch: its best k positive chunks over the batch; and each
    pending fact's best answering chunk at overlap `o` by its name's scores."""
    terms = split.terms(collection, retrieval)
    keys, by_term, k = shared["keys"], shared["by_term"], shared["k"]
    ranked: dict = {}

    def ranking(i):
        if i not in ranked:
            ranked[i] = MaxScore(terms, list(terms_of(keys[i])))
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
    return {"doc": d["id"], **fact_rules.described(d["text"], f), "key": key_id, "at": {}}


def _judge_facts(doc, index, found, corpus, o, local, chunking):
    """Each fact at overlap `o`: the chunks answering it (numbered from 1 in the batch, the
    document's first at batch position `local`; `judge_pass` numbers them across the corpus); yields `(record, o, answering chunks in the batch)`
    for those answered, whose best chunk `_rank_batch` finds."""
    starts, ends = corpus.doc_columns(0)
    for f, record in zip(found, doc["facts"]):
        a, z = f.stretch
        chunks = [c + local for c in answering_chunks(starts, ends, a, z)]
        size = stretch_units(index, corpus.unit, a, z, chunking)
        if size is not None:
            doc["gap"] = max(doc["gap"] or 0, size)
        record["at"][str(o)] = {"answering": [c + 1 for c in chunks],
                                "within": not chunks and size is not None and size <= o}
        if chunks:
            yield record, o, chunks
