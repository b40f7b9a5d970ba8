"""Your own index (SPEC section 11): the chunks a real pipeline stored, placed in their
documents, checked, and ranked exactly as a splitter's chunks are.

    inspect({"chunks": [{id, text, doc, metadata, start, end}, ...]   (a store's records; or
             "file": {"name", "text"},                                 a chunk file's text instead)
             "documents": [{id, title, text}],   (the sources, optional: else rebuilt from the chunks)
             "phrases": [str], "span": {doc, start, end}, "questions": [...] (SPEC 8) or
             "question_file": {"name", "text"}, "query": str, "retrieval": {...}, "tokenizer": str,
             "chunking": {...} (a splitter to compare with, optional: `compared` in the answer)})
    -> {"documents", "chunks", "splitter", "phrases", "stats", "unplaced", "verdict", "questions",
        "question_stats", "facts", "compared"}            (`store` is the host's; `{"error": ...}` for bad input)

A stored chunk's `doc` names its source by id, title, file name or stem (`question_io.find_corpus`),
a PDF page as PyPDFLoader's `page` metadata says (`path#page=N`). The verdict, the question set and
the fact audit go through the one engine (`api.simulate`, `audit.audit`) with chunking "stored": the
placed chunks' extents; unplaced chunks are left out of them and counted. Pure: the page's worker
calls `inspect_json`.
"""

from ragsim.errors import RequestError
from ragsim.judge import fact_chunks, facts as fact_rules, overlap_advice, stored_checks
from ragsim.judge.identify import identify
from ragsim.judge.identify_index import IndexReading
from ragsim.judge.stored import Stored, align, read_chunks, to_splits
from ragsim.wire import audit as corpus_audit
from ragsim.wire import chunk_files
from ragsim.wire.api import simulate
from ragsim.wire.inspect_compare import compare
from ragsim.wire.jsonio import json_call
from ragsim.wire.place_by_text import by_text
from ragsim.wire.question_io import find_corpus, format_of, read_set, to_request
from ragsim.text.index import DocIndex

MAX_PHRASES = 100


def inspect(request) -> dict:
    """The inspect request -> SPEC section 11's object (without `store`), or `{"error": ...}`."""
    try:
        return _inspect(request)
    except RequestError as e:
        return e.as_response()


def inspect_json(request_json: str) -> str:
    """`inspect`, string to string, for the page's worker."""
    return json_call(inspect, request_json)


def _inspect(request) -> dict:
    if not isinstance(request, dict):
        raise RequestError("request", "The request must be a JSON object.")
    records = read_records(request)
    sources = read_sources(request.get("documents"))
    pages = [page_of(r) for r in records]
    stored = by_text([_matched(c, sources, page) for c, page in zip(read_chunks(records), pages)], sources, Stored)
    al = align(stored, {d["id"]: d["text"] for d in sources})
    phrases = _phrases(request.get("phrases"))
    tokenizer = request.get("tokenizer")
    out = stored_checks.report(al, phrases, tokenizer)
    exported_placements(records, out["chunks"])
    for entry in out["phrases"]:
        entry["source"] = "phrase"
    out["unplaced"] = [c.id for c in al.chunks if c.start is None]
    out["splitter"] = splitters(al, request.get("tokenizers"))
    out["splitter_index"] = index_reading(out["splitter"], al, node_metadata(records, stored))
    if request.get("chunking") is not None:  # a splitter named by the caller: does it make these chunks?
        out["compared"] = compare(request["chunking"], al)
    documents = _documents(al, sources)
    rebuilt = {d["id"]: d["text"] for d in documents}
    for d in out["documents"]:  # the page adopts a rebuilt document: it needs its text
        if d["rebuilt"]:
            d["text"] = rebuilt.get(d["id"], "")
    questions = _questions(request, documents)
    _judged(request, al, documents, questions, out)
    advise(out["phrases"], out["splitter"], al)
    out["facts"] = facts(request, al, documents)
    return out


ADVISED = 200  # cut phrases advised at most in one report (each may split its document up to 140 times)


def advise(entries: list[dict], splitter_rows: list[dict], al) -> None:
    """Each cut phrase's `advice`: the overlap that keeps it whole, found by running the splitter named
    for its document at other overlaps (`judge.overlap_advice`), or, where none was named, the
    phrase's length, said to hold for fixed windows only; `overlap_advice` the figures."""
    named = {s["doc"]: s for s in splitter_rows
             if s.get("strategy") and s.get("chunks") and 2 * (s.get("reproduced") or 0) >= s["chunks"]}
    texts, advisors, advised = al.texts(), {}, 0
    for e in entries:
        if e["verdict"] != "absent":
            continue
        s, length = named.get(e["doc"]), e["end"] - e["start"]
        if s is None or advised >= ADVISED:
            e["advice"] = overlap_advice.sentence(None, length)
            continue
        if e["doc"] not in advisors:
            advisors[e["doc"]] = overlap_advice.Advisor(texts[e["doc"]], {"strategy": s["strategy"], **s["fields"]})
        e["overlap_advice"] = advice = advisors[e["doc"]].keeping(e["start"], e["end"])
        e["advice"] = overlap_advice.sentence(advice, length, s["fields"].get("overlap"))
        if advice is not None:  # SPEC 11: in the named splitter's unit, null when no overlap below the size keeps it
            e["overlap_needed"] = advice["overlap"]
        advised += 1


def exported_placements(records: list, chunks: list[dict]) -> None:
    """A chunk read back from ragsim's export sits at the offsets it was exported with: it keeps the
    placement it was found by then (its extent is the same), so an export reads back as the same report."""
    for record, chunk in zip(records, chunks):
        said = record.get("placement") if isinstance(record, dict) else None
        if chunk["placement"] == "offsets" and said in ("exact", "whitespace") and \
                (record.get("start"), record.get("end")) == (chunk["start"], chunk["end"]):
            chunk["placement"] = said


def export_records(request: dict) -> list[dict]:
    """The aligned chunks as ragsim's export writes them, one record each, in store order:
    `{id, doc, start, end, placement, text, metadata}` (the form the page and `inspect` read back)."""
    records = read_records(request)
    sources = read_sources(request.get("documents"))
    stored = by_text([_matched(c, sources, page_of(r)) for c, r in zip(read_chunks(records), records)], sources, Stored)
    al = align(stored, {d["id"]: d["text"] for d in sources})
    report = stored_checks.chunks_report(al)
    exported_placements(records, report)
    return [{"id": c["id"], "doc": c["doc"], "start": c["start"], "end": c["end"], "placement": c["placement"],
             "text": r["text"], "metadata": r.get("metadata") or {},
             **({"metadata_str": r["metadata_str"]} if isinstance(r.get("metadata_str"), str) else {})}
            for c, r in zip(report, records)]


def read_records(request: dict) -> list:
    """The stored records: `chunks` as given, or `file` (a chunk file's name and text) parsed."""
    given, file = request.get("chunks"), request.get("file")
    if (given is None) == (file is None):
        raise RequestError("chunks", "Give the stored chunks as chunks (a list of records) or as file "
                                     "({name, text} of a .jsonl, .json, .csv or docstore.json), one of them.")
    if file is not None:
        if not isinstance(file, dict) or not isinstance(file.get("name"), str):
            raise RequestError("file", "file must be {name, text}: the chunk file's name and its text.")
        _, given = chunk_files.parse(file["name"], file.get("text"), text_field=file.get("text_field"),
                                     doc_field=file.get("doc_field"))
    if not given:
        raise RequestError("chunks", "The store holds no chunks: there is nothing to inspect.")
    return given


def read_sources(raw) -> list[dict]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestError("documents", "Give documents as a list of {id, title, text} objects.")
    out, seen = [], set()
    for i, d in enumerate(raw):
        if not isinstance(d, dict) or not isinstance(d.get("id"), str) or not isinstance(d.get("text"), str):
            raise RequestError(f"documents[{i}]", f"documents[{i}] must be an object with id, title and text.")
        if d["id"] in seen:
            raise RequestError(f"documents[{i}].id", f"Document ids must be unique; {d['id']!r} appears twice.")
        seen.add(d["id"])
        out.append({"id": d["id"], "title": d.get("title") if isinstance(d.get("title"), str) else "",
                    "text": d["text"]})
    return out


def page_of(record) -> int | None:
    """PyPDFLoader's 0-based `page` of a chunk's metadata, when it has one."""
    meta = record.get("metadata") if isinstance(record, dict) else None
    page = meta.get("page") if isinstance(meta, dict) else None
    return page if isinstance(page, int) and not isinstance(page, bool) and page >= 0 else None


def _matched(c: Stored, sources: list[dict], page=None) -> Stored:
    """The chunk with its `doc` renamed to the source it names (unchanged when it names none)."""
    if not sources:
        return c
    return Stored(c.id, c.text, source_of(c.doc, sources, page), c.start, c.end)


def source_of(doc: str, sources: list[dict], page=None) -> str:
    """The id of the source a stored chunk's `doc` names (PDF pages: `doc#page=N`, 1-based), else `doc`."""
    if page is not None:
        for d in sources:
            if d["id"] == f"{doc}#page={page + 1}":
                return d["id"]
    try:
        return sources[find_corpus(sources, doc, "documents")]["id"]
    except RequestError:
        return doc


def _phrases(raw) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_PHRASES:
        raise RequestError("phrases", f"Give phrases as a list of at most {MAX_PHRASES} texts.")
    return raw


def splitters(al, tokenizers=None) -> list[dict]:
    """Per document with chunks, which mirrored splitter made them (`identify`), its sentence in `line`."""
    out = []
    for d in al.documents:
        rows = al.of(d.id)
        if not rows:
            continue
        extents = [None if c.start is None else (c.start, c.end) for c in rows]
        out.append(identify(d.text, extents, [c.text for c in rows], doc=d.id, tokenizers=tokenizers))
    return out


def node_metadata(records: list, stored: list) -> dict:
    """Each document's LlamaIndex metadata string (`metadata_str`, its first chunk's), where known."""
    out = {}
    for r, c in zip(records, stored):
        if isinstance(r, dict) and isinstance(r.get("metadata_str"), str):
            out.setdefault(c.doc, r["metadata_str"])
    return out


def index_reading(rows: list[dict], al, metadata: dict) -> dict | None:
    """One reading of the index (`judge.identify_index`) from the documents' rows."""
    reading = IndexReading(rows, metadata)
    if reading.needs_texts:
        for d in al.documents:
            reading.add(d.id, d.text, [(c.start, c.end) for c in al.placed(d.id)])
    return reading.result()


def _documents(al, sources: list[dict]) -> list[dict]:
    """The documents the engine ranks over: the sources (titles kept), else the rebuilt texts."""
    titles = {d["id"]: d["title"] for d in sources}
    return [{"id": d.id, "title": titles.get(d.id, d.id), "text": d.text} for d in al.documents if d.text]


def _questions(request: dict, documents: list[dict]):
    """The question set: `questions` (SPEC 8) or `question_file` (our JSON or Chroma's CSV) read
    against the aligned documents; None when there is none."""
    raw, file = request.get("questions"), request.get("question_file")
    if file is None:
        return raw
    if not isinstance(file, dict) or not isinstance(file.get("text"), str):
        raise RequestError("question_file", "question_file must be {name, text}: a question set's file.")
    name = str(file.get("name") or "")
    try:
        found, _ = read_set(file["text"], documents, format_of(name), "strict", file.get("every_occurrence") is True)
    except RequestError as e:
        raise RequestError("questions", f"{name}: {e.message}" if name else e.message) from None
    return to_request(found, documents)


def stored_chunking(al) -> dict:
    """The request's chunking for the placed chunks: `{"strategy": "stored", "chunks": {doc: extents}}`."""
    splits = to_splits(al)
    return {"strategy": "stored", "chunks": {d: [[s, e] for s, e in zip(v.split.starts, v.split.ends)]
                                              for d, v in splits.items() if v.split.starts}}


def ids_by_number(al, documents: list[dict]) -> list[str]:
    """The store ids of the engine's chunk numbers (1-based, document order within each document)."""
    splits = to_splits(al)
    return [i for d in documents for i in splits[d["id"]].ids]


def _judged(request: dict, al, documents: list[dict], questions, out: dict) -> None:
    """The marked answer's verdict and the question set's verdicts and metrics over the stored chunks."""
    span = request.get("span")
    out["verdict"], out["questions"], out["question_stats"] = None, None, None
    if span is not None:
        entries = stored_checks.phrase_check(al, span, "span")
        out["phrases"] += [{**e, "source": "span"} for e in entries]
    if questions is not None:
        if not isinstance(questions, list):
            raise RequestError("questions", "Give questions as a list of {id, query, references} (SPEC section 8).")
        for q in questions:
            for r in (q.get("references") or []) if isinstance(q, dict) else []:
                if isinstance(r, dict) and isinstance(r.get("doc"), str) and r["doc"] in al.texts():
                    entry = stored_checks.phrase_check(al, r, "questions")[0]
                    out["phrases"].append({**entry, "source": f"question {q.get('id')}"})
    if span is None and questions is None or not documents:
        return
    sim = {"documents": documents, "query": request.get("query") or "", "chunking": stored_chunking(al),
           "retrieval": request.get("retrieval") or {}}
    for key in ("span", "tokenizer", "price_per_million"):
        if request.get(key) is not None:
            sim[key] = request[key]
    if questions is not None:
        sim["questions"] = questions
    got = simulate(sim)
    if "error" in got:
        raise RequestError(got["error"]["field"], got["error"]["message"])
    ids = ids_by_number(al, documents)
    if span is not None:
        out["verdict"] = got["verdict"]
    if questions is not None:
        queries = {q.get("id"): q.get("query") for q in questions if isinstance(q, dict)}
        for q in got["questions"]:
            q["query"] = queries.get(q["id"])
            q["retrieved_ids"] = [ids[n - 1] for n in q["retrieved"]]
        out["questions"], out["question_stats"] = got["questions"], got["question_stats"]


def facts(request: dict, al, documents: list[dict], rank: bool = True) -> dict:
    """The fact audit over the stored chunks: each detected name-value fact, and those no placed
    chunk holds whole (destroyed by this index), by name and value. Without `rank` nothing is
    ranked and each fact's `found_top_k` is False: the streamed inspect ranks every name over the
    whole index itself (`host.inspect_facts`), where one document's ranking would be thrown away."""
    if not documents:
        return {"count": 0, "destroyed": [], "found_top_k": 0, "facts": []}
    chunking = stored_chunking(al)
    if rank:
        retrieval = request.get("retrieval")
        k = retrieval.get("k", 3) if isinstance(retrieval, dict) else 3  # a retrieval of another kind: audit names it
        got = corpus_audit.audit({"documents": documents, "chunking": chunking, "retrieval": request.get("retrieval") or {},
                                  "overlaps": [0], "precision_k": k if isinstance(k, int) and not isinstance(k, bool) and k > 0
                                  else 3})
        if "error" in got:
            raise RequestError(got["error"]["field"], got["error"]["message"])
        row = got["rows"][0]
        if row.get("error"):
            raise RequestError("chunks", row["error"])
        judged = [(f, bool(f["destroyed_at"]), bool(f["found_at"])) for f in got["facts"]]
        found_top_k, precision_k = row["found_top_k"], got["precision_k"]
    else:
        judged = [({"doc": d["id"], **fact_rules.described(d["text"], f)}, not whole, False) for d in documents
                  for f, whole in fact_chunks.answered(DocIndex.build(d["text"]), chunking["chunks"].get(d["id"], []))]
        found_top_k, precision_k = 0, None
    listed = [{"doc": f["doc"], "name": f["name_text"], "value": f["value_text"], "stretch": f["stretch"],
               "name_at": f["name"], "value_at": f["value"], "sentence": f["sentence"], "quote": f["quote"],
               "quote_text": f["quote_text"], "destroyed": destroyed, "found_top_k": top} for f, destroyed, top in judged]
    return {"count": len(listed), "destroyed": [f for f in listed if f["destroyed"]],
            "found_top_k": found_top_k, "precision_k": precision_k, "facts": listed}


def ranking_verdicts(result: dict, rankings: dict[str, list[str]]) -> dict[str, str]:
    """Section 8's verdict of each question for another ranking (store ids, best first, the top k):
    `intact` when every reference is held whole by a retrieved chunk, `cut` when some reference is
    held whole by none, `ranked_out` otherwise. The references' holders come from `phrases`."""
    holders: dict[str, list[list[str]]] = {}
    for e in result["phrases"]:
        if e["source"].startswith("question "):
            holders.setdefault(e["source"][len("question "):], []).append(e["chunks"])
    out = {}
    for qid, ids in rankings.items():
        refs = holders.get(qid, [])
        if not refs or any(not h for h in refs):
            out[qid] = "cut"
        else:
            out[qid] = "intact" if all(set(h) & set(ids) for h in refs) else "ranked_out"
    return out
