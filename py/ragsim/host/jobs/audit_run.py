"""Runs the streamed corpus audit on an engine (`host.corpus.pool`) and writes it as JSON Lines:
a line per document as its batch is judged, then a line per fact, then the summary line.

The passes are `host.jobs.audit_stream`'s; this side merges their batches in order: the documents and
each fact's query (pass 1), the collection's statistics per overlap (pass 2), and per query its top
k over the whole corpus (pass 3), from which each fact is found in the top k or not, as one request
over the same documents finds it. The document lines are the run's record: `--resume` reads the
ones written (the checkpoint beside the output says how far pass 3 came) and goes on from there.
"""

import hashlib
import heapq
import json
from dataclasses import dataclass, field

from ragsim.host.jobs import audit_dense, audit_rerank, audit_stream
from ragsim.host.corpus import pool as engines, sources, spill
from ragsim.wire.audit import corpus_sentence

LISTED = 50  # destroyed facts the summary keeps for the text output; the fact lines hold every one
BATCH_BYTES = 1 << 20  # about a megabyte of files a batch: small enough to balance, large enough to amortise


class Interrupted(Exception):
    """Ctrl-C: the output holds what was finished; the message says how to go on."""


@dataclass
class Plan:
    """What an audit run reads and how: the settings a request would carry, and the files."""

    chunking: dict
    overlaps: list
    retrieval: dict
    k: int
    files: list  # sources.Source, in order
    pdf_mode: str = "page"
    batch_bytes: int = BATCH_BYTES
    skipped: list = field(default_factory=list)  # (path, reason)

    @property
    def dense(self) -> bool:
        """Dense retrieval: the names' texts are the queries, ranked by cosine (`host.jobs.audit_dense`)."""
        return self.retrieval.get("method", "bm25") == "dense"

    @property
    def rerank(self) -> bool:
        """A reranker over each query's first chunks (`host.jobs.audit_rerank`)."""
        return self.retrieval.get("rerank") is not None

    def fingerprint(self, contents: bool = True) -> str:
        """What a resumed run must match: the settings and each file's path, size and (with `contents`,
        whenever the output is kept) the hash of its bytes, so an edit that keeps a file's size is seen."""
        files = [(s.path, s.size, content_hash(s.path) if contents else None) for s in self.files]
        described = json.dumps([self.chunking, self.overlaps, self.retrieval, self.k, self.pdf_mode, self.batch_bytes,
                                files], sort_keys=True)
        return hashlib.sha256(described.encode("utf-8", "backslashreplace")).hexdigest()


def content_hash(path: str) -> str | None:
    """The sha256 of a file's bytes (None for one that cannot be read now: it is skipped as such)."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def run_pass(engine, fn, shared, items, progress, phase, sizes):
    progress.start(phase)
    for i, result in engine.map(fn, shared, items):
        progress.advance(len(sizes[i]), sum(s.size for s in sizes[i]))
        yield i, result


def run(plan: Plan, engine, out, progress, resume: bool = False, on_fact=None) -> dict:
    """The audit of `plan` on `engine`, its lines written to `out` (a `jsonl_out.Output`); returns the
    summary. `on_fact(record)` sees each fact's full record as its line is written."""
    batches = _batches(plan)
    with spill.directory("ragsim-audit-") as kept:
        keys = _read_facts(plan, engine, batches, progress, kept)
        counted = _count(plan, engine, batches, keys, progress, kept)
        state = out.resume_state(plan.fingerprint(not out.temporary)) if resume else None
        if state is not None and state.get("complete"):
            return state["summary"]
        state = state or out.start(plan.fingerprint(not out.temporary))
        _judge(plan, engine, batches, keys, counted, state, out, progress)
    return _finish(plan, counted, state, out, on_fact, keys["keys"], progress)


def _batches(plan: Plan) -> list:
    return sources.batches(plan.files, plan.batch_bytes)


def skip_failed(plan, batch, failed) -> None:
    plan.skipped.extend((s.path, f"{failed.reason}") for s in batch)


def _read_facts(plan, engine, batches, progress, kept) -> dict:
    """Pass 1: every fact's query, numbered in order of first appearance, and where each batch's
    facts were kept; the batches that failed removed."""
    key_id, keys, failed, facts_at = {}, [], [], []
    shared = {"retrieval": plan.retrieval, "pdf_mode": plan.pdf_mode, "spill": kept, "dense": plan.dense,
              "rerank": plan.rerank}
    for i, result in run_pass(engine, audit_stream.facts_pass, shared, batches, progress, "read", batches):
        if isinstance(result, engines.Failed):
            skip_failed(plan, batches[i], result)
            failed.append(i)
            continue
        facts_at.append(result["kept"])
        for entry in result["files"]:
            if entry["skipped"]:
                plan.skipped.append((plan.files[entry["seq"]].path, entry["skipped"]))
            for d in entry["docs"]:
                for key in d["keys"]:
                    if key not in key_id:
                        key_id[key] = len(keys)
                        keys.append(key)
    for i in reversed(failed):
        del batches[i]
    by_term: dict = {}  # BM25's: the queries holding each term (dense queries are texts, ranked whole)
    for i, key in enumerate([] if plan.dense else keys):
        for t in dict.fromkeys(audit_stream.terms_of(key)):
            by_term.setdefault(t, []).append(i)
    return {"key_id": key_id, "keys": keys, "by_term": by_term, "kept": facts_at}


def _count(plan, engine, batches, keys, progress, kept) -> dict:
    """Pass 2: per overlap the collection (chunks, total length, document frequencies), each batch's
    first chunk and where its work for pass 3 was kept, the unit, and the first refusal of an overlap."""
    shared = {"retrieval": plan.retrieval, "chunking": plan.chunking, "overlaps": plan.overlaps,
              "terms": frozenset(keys["by_term"]), "key_id": keys["key_id"], "pdf_mode": plan.pdf_mode, "spill": kept,
              "dense": plan.dense, "rerank": plan.rerank}
    totals = {o: {"chunks": 0, "units": 0, "total": 0, "df": {}, "error": None, "unit": None} for o in plan.overlaps}
    bases, failed, ready = [], [], []
    items = list(zip(batches, keys["kept"]))
    for i, result in run_pass(engine, audit_stream.prepare_pass, shared, items, progress, "count", batches):
        if isinstance(result, engines.Failed):
            skip_failed(plan, batches[i], result)
            failed.append(i)
            continue
        bases.append({o: totals[o]["chunks"] for o in plan.overlaps})
        ready.append(result["kept"])
        for o, row in result["per"].items():
            t = totals[o]
            t["error"] = t["error"] or row["error"]
            t["unit"] = row["unit"] or t["unit"]
            for name in ("chunks", "units", "total"):
                t[name] += row[name]
            for term, n in row["df"].items():
                t["df"][term] = t["df"].get(term, 0) + n
    for i in reversed(failed):
        del batches[i]
    return {"totals": totals, "bases": bases, "kept": ready,
            "live": [o for o in plan.overlaps if totals[o]["error"] is None]}


def _judge(plan, engine, batches, keys, counted, state, out, progress) -> None:
    """Pass 3 from the first batch not yet written: each batch's document lines, and every query's
    best k chunks merged into the run's state."""
    totals = counted["totals"]
    k = audit_rerank.kept(plan.retrieval, plan.k)
    shared = {"retrieval": plan.retrieval, "chunking": plan.chunking, "overlaps": counted["live"], "k": k,
              "keys": keys["keys"], "key_id": keys["key_id"], "by_term": keys["by_term"], "pdf_mode": plan.pdf_mode,
              "terms": frozenset(keys["by_term"]), "dense": plan.dense, "rerank": plan.rerank,
              "collections": {o: (totals[o]["chunks"], totals[o]["total"], totals[o]["df"]) for o in counted["live"]}}
    judge = audit_stream.judge_pass
    if plan.dense:  # the chunks embedded on the workers, the machine's cores shared among them
        shared["threads"] = max(1, engines.cores() // max(1, engine.workers))
        judge = audit_dense.judge_pass
    first = state["batches_done"]
    items = [(batches[i], counted["bases"][i], counted["kept"][i]) for i in range(first, len(batches))]
    try:
        for j, result in run_pass(engine, judge, shared, items, progress, "rank", batches[first:]):
            if isinstance(result, engines.Failed):
                skip_failed(plan, batches[first + j], result)
                state["failed"].extend(s.path for s in batches[first + j])
            else:
                _merge(state, result, k)
                out.documents(_document_lines(plan, result))
            state["batches_done"] = first + j + 1
            out.checkpoint(state)
    except KeyboardInterrupt:
        where = out.interrupted(state)
        raise Interrupted(f"interrupted after {state['documents']:,} documents; {where}, and "
                          "the same command with --resume goes on from there") from None


def _merge(state, result, k) -> None:
    """A batch's documents counted, and its best chunks merged into the run's."""
    state["documents"] += sum(len(entry["docs"]) for entry in result["files"])
    for o, per in result["best"].items():
        mine = state["best"].setdefault(str(o), {})
        for key, top in per.items():
            mine[str(key)] = heapq.nsmallest(k, [tuple(x) for x in mine.get(str(key), [])] + [tuple(x) for x in top])
    for o, first in result.get("first", {}).items():  # with a reranker: the corpus's first chunks
        state.setdefault("first", {})[str(o)] = (state.get("first", {}).get(str(o), []) + [list(x) for x in first])[: 2 * k]


def _document_lines(plan, result):
    for entry in result["files"]:  # a file skipped was listed by the first pass
        for doc in entry["docs"]:
            yield {"type": "document", "file": plan.files[entry["seq"]].path, **doc}


def _finish(plan, counted, state, out, on_fact, keys, progress) -> dict:
    """The fact lines (each fact's overlaps where it is destroyed or found) and the summary; with a
    reranker, its lists asked as the facts need them (progress: the `rerank` pass, by file)."""
    live, totals, k = counted["live"], counted["totals"], plan.k
    reranked = audit_rerank.Reranked(plan, state, keys, progress) if plan.rerank else None

    def in_top(at, o, key):
        return reranked.found(at, o, key) if reranked else _in_top(at, state, o, key, k, plan.dense)
    rows = {o: {"destroyed": 0, "within": 0, "found": 0, "dropped": 0} for o in live}
    facts = documents = 0
    gap = None
    destroyed_listed, destroyed_facts = [], 0
    for doc in out.read_documents():
        documents += 1
        if reranked:
            reranked.reading(doc["file"])
        if doc.get("gap") is not None:
            gap = max(gap or 0, doc["gap"])
        for f in doc["facts"]:
            record = _fact(f, live, rows, in_top)
            facts += 1
            if record["destroyed_at"]:
                destroyed_facts += 1
                if len(destroyed_listed) < LISTED:
                    destroyed_listed.append(record)
            out.fact(record)
            if on_fact is not None:
                on_fact(record)
    summary = _summary(plan, live, totals, rows, facts, documents, gap, state)
    if reranked:
        summary["rerank"] = reranked.report()
    out.finish(summary)
    return {**summary, "destroyed_listed": destroyed_listed, "destroyed_facts": destroyed_facts}


def _fact(f, live, rows, in_top_of) -> dict:
    found, destroyed, answering = [], [], {}
    baseline = None
    for o in live:
        at = f["at"][str(o)]
        answering[str(o)] = at["answering"]
        r = rows[o]
        in_top = False
        if not at["answering"]:
            destroyed.append(o)
            r["destroyed"] += 1
            r["within"] += at["within"]
        else:
            in_top = in_top_of(at, str(o), str(f["key"]))
        if baseline is None:
            baseline = in_top
        elif baseline and not in_top and at["answering"]:
            r["dropped"] += 1
        if in_top:
            found.append(o)
            r["found"] += 1
    keep = ("doc", "name", "value", "name_text", "value_text", "stretch", "sentence", "quote", "quote_text")
    return {**{n: f[n] for n in keep}, "destroyed_at": destroyed, "found_at": found, "answering": answering}


def _in_top(at, state, o, key, k, dense=False) -> bool:
    """Whether the fact's best answering chunk ranks within k for its name: among the query's top k
    positive chunks, or, scoring 0, after every positive chunk and the zero-scoring ones before it
    (fewer than k positive chunks in all: then every one of them is among the best kept). Dense
    keeps every name's best k chunks whatever their cosine: among them."""
    score, p = at["best"]
    best = [list(x) for x in state["best"].get(o, {}).get(key, [])]
    if score > 0 or dense:
        return [-score, p] in best
    if len(best) >= k:
        return False
    return 1 + len(best) + p - sum(1 for _, q in best if q < p) <= k


def _summary(plan, live, totals, rows, facts, documents, gap, state) -> dict:
    table = []
    for o in plan.overlaps:
        t = totals[o]
        if t["error"] is not None:
            table.append({"overlap": o, "error": t["error"]})
            continue
        r = rows[o]
        table.append({"overlap": o, "unit": t["unit"], "chunks": t["chunks"], "units_stored": t["units"],
                      "facts": facts, "destroyed": r["destroyed"], "destroyed_within_overlap": r["within"],
                      "found_top_k": r["found"], "error": None, "dropped_top_k": r["dropped"]})
    unit = next((totals[o]["unit"] for o in live), None)
    size = plan.chunking.get("size") if isinstance(plan.chunking.get("size"), int) else None
    sentence = corpus_sentence(table, facts, documents, gap, unit, plan.chunking.get("strategy", "window") == "window", size)
    return {"type": "summary", "sentence": sentence, "documents": documents, "facts": facts,
            "rows": table, "precision_k": plan.k, "overlaps": plan.overlaps, "longest_gap": gap,
            "skipped": [{"path": p, "reason": r} for p, r in plan.skipped], "failed": state["failed"]}
