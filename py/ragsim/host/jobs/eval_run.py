"""Runs the streamed question set on an engine and writes JSON Lines: a line per document
as its batch is ranked, then a line per question, then the summary (`question_stats`).

Each question is ranked over the whole corpus from its batches' best k chunks (`eval_stream`); its
verdict and metrics come from `judge.questions`' own functions (`judge`, `chroma_scores`,
`precision_omega`, `context_tokens`, `question_stats`), handed the chunks they read through
`Retrieved`, so they are one request's numbers over the same documents.
"""

import hashlib
import heapq
from dataclasses import dataclass, field, replace

from ragsim.host.corpus import jsonl_out, pool as engines, sources, spill
from ragsim.host.corpus.refused import Refused
from ragsim.host.jobs import audit_run, eval_dense, eval_rerank, eval_stream
from ragsim.judge import questions as judged, settings_map
from ragsim.rank import reranking
from ragsim.split import registry
from ragsim.wire.question_io import format_of, read_set
from ragsim import split as splitters
from ragsim.errors import RequestError
from ragsim.split.session import Session
from ragsim.text.index import DocIndex
from ragsim.wire.request import read_request, read_retrieval_options
from ragsim.wire import keys


@dataclass
class Plan:
    chunking: dict
    retrieval: dict  # the request's retrieval, k included
    questions_text: str
    questions_name: str
    files: list
    price: float = 3.0
    pdf_mode: str = "page"
    batch_bytes: int = audit_run.BATCH_BYTES
    skipped: list = field(default_factory=list)
    stored: tuple | None = None  # (chunks, units stored) over the corpus, once the count pass has run
    every_occurrence: bool = False  # an answer given as text counts wherever it occurs

    def fingerprint(self, contents: bool = True) -> str:
        asked = hashlib.sha256(self.questions_text.encode("utf-8", "backslashreplace")).hexdigest() \
            + (" every occurrence" if self.every_occurrence else "")
        return audit_run.Plan(self.chunking, [asked], self.retrieval, 0, self.files, self.pdf_mode,
                              self.batch_bytes).fingerprint(contents)


class NothingRead(Exception):
    """Every file was skipped (exit 1, as for a file that cannot be read)."""


class LazyDocument(dict):
    """A document's id and title, its text read from its file when a reference asks for it."""

    def __init__(self, meta: dict, source, within: int, pdf_mode: str):
        super().__init__(id=meta["id"], title=meta["title"])
        self.source, self.within, self.pdf_mode = source, within, pdf_mode

    def __missing__(self, key):
        if key != "text":
            raise KeyError(key)
        self["text"] = sources.read(self.source, self.pdf_mode)[self.within]["text"]
        return self["text"]


class Retrieved:
    """What `judge.questions` reads of a Setting, for the chunks a streamed run keeps: the extents
    of the top chunks, and the referenced documents' chunks holding or touching each reference."""

    def __init__(self, extents: dict, whole: dict, touching: dict):
        self.starts = {p: e[1] for p, e in extents.items()}
        self.ends = {p: e[2] for p, e in extents.items()}
        self.doc_of = {p: e[0] for p, e in extents.items()}
        self.whole, self.touched = whole, touching

    def whole_range(self, d, s, t):
        return self.whole[(d, s, t)]

    def touching(self, d, a, b):
        return self.touched[(d, a, b)]


class Ranks:
    """`best_rank` of a question's spans, counted over the corpus by `rank_pass`."""

    def __init__(self, ranks: dict):
        self.ranks = ranks

    def best_rank(self, chunks):
        return self.ranks[tuple(chunks)]


def check_setting(chunking: dict, retrieval: dict) -> str | None:
    """What is wrong with the setting, as one request would say it (`field: message`), or None;
    checked on an empty document before any file is read."""
    try:
        keys.check({"chunking": chunking, "retrieval": retrieval})  # an unknown field named, as one request names it
        request = read_request({"documents": [{"id": "-", "text": ""}], "chunking": chunking, "retrieval": retrieval})
        splitters.split(DocIndex.build(""), request.chunking)
    except RequestError as e:
        return f"{e.field}: {e.message}"
    return None


def _documents(plan, engine, batches, progress) -> tuple[list, list]:
    """Pass 1: every document (lazily), and each batch's first document's number."""
    docs, doc_base, failed = [], [], []
    shared = {"pdf_mode": plan.pdf_mode}
    for i, result in audit_run.run_pass(engine, eval_stream.documents_pass, shared, batches, progress, "read", batches):
        if isinstance(result, engines.Failed):
            audit_run.skip_failed(plan, batches[i], result)
            failed.append(i)
            continue
        doc_base.append(len(docs))
        for entry in result:
            if entry["skipped"]:
                plan.skipped.append((plan.files[entry["seq"]].path, entry["skipped"]))
            for w, meta in enumerate(entry["docs"]):
                docs.append(LazyDocument(meta, plan.files[entry["seq"]], w, plan.pdf_mode))
    for i in reversed(failed):
        del batches[i]
    return docs, doc_base


def _count(plan, engine, batches, terms, progress, doc_base, kept, referenced=frozenset()) -> tuple[tuple, list, dict, list]:
    """Pass 2: the collection, each batch's first chunk, each document's first chunk, and where each
    batch's work for the rank pass was kept (and a semantic chunker's preparation of each
    `referenced` document, `(file's seq, document within it)`, for the referenced pass)."""
    o = plan.chunking.get("overlap", 0)
    shared = {"retrieval": plan.retrieval, "chunking": plan.chunking, "overlaps": [o], "wanted": frozenset(terms),
              "pdf_mode": plan.pdf_mode, "spill": kept, "referenced": referenced}
    chunks = total = units = 0
    df, bases, doc_first, ready = {}, [], {}, []
    for i, result in audit_run.run_pass(engine, eval_stream.prepare_pass, shared, batches, progress, "count", batches):
        if isinstance(result, engines.Failed):
            raise Refused(f"a batch of files could not be counted ({result.reason}); run again")
        row = result["per"][o]
        if row["error"]:
            raise ValueError(row["error"])
        bases.append(chunks)
        ready.append(result["kept"])
        for j, n in enumerate(row.get("doc_chunks", [])):
            doc_first[doc_base[i] + j] = chunks
            chunks += n
        total += row["total"]
        units += row["units"]
        for t, n in row["df"].items():
            df[t] = df.get(t, 0) + n
    plan.stored = (chunks, units)
    return (chunks, total, df), bases, doc_first, ready


def run(plan: Plan, engine, out, progress, resume: bool = False) -> dict:
    """The question set of `plan` over its files: {"questions", "question_stats", "documents"}."""
    batches = sources.batches(plan.files, plan.batch_bytes)
    docs, doc_base = _documents(plan, engine, batches, progress)
    if not docs:
        raise NothingRead("no document could be read; give text or Markdown files")
    questions, _ = read_set(plan.questions_text, docs, format_of(plan.questions_name), "strict", plan.every_occurrence)
    analyzer = read_retrieval_options(plan.retrieval)["analyzer"]
    terms = [judged.query_terms(q, analyzer) for q in questions]
    texts = eval_rerank.DocumentTexts(docs)  # the chunks' texts a reranker reads
    with spill.directory("ragsim-eval-") as kept:
        wanted = {t for ts in terms for t in ts}
        referenced = frozenset((docs[d].source.seq, docs[d].within) for q in questions for d, _, _ in q.spans + q.refs)
        collection, bases, doc_first, ready = _count(plan, engine, batches, wanted, progress, doc_base, kept, referenced)
        by_term: dict = {}
        for qi, ts in enumerate(terms):
            for t in dict.fromkeys(ts):
                by_term.setdefault(t, []).append(qi)
        shared = {"retrieval": plan.retrieval, "chunking": plan.chunking, "terms": terms, "by_term": by_term,
                  "collection": collection, "k": eval_rerank.kept(plan.retrieval), "pdf_mode": plan.pdf_mode,
                  "overlaps": [plan.chunking.get("overlap", 0)], "wanted": frozenset(wanted),
                  "questions": [{"spans": list(q.spans), "refs": list(q.refs)} for q in questions]}
        if dense(plan):  # the chunks' embedding on the workers (eval_dense)
            shared.update(eval_dense.shared_fields(questions, engine.workers, engines.cores()))
        shared["spill"] = kept
        whole, touching = _referenced(plan, engine, shared, docs, doc_first, progress)
        shared["thresholds"] = {}
        for (qi, si), (_, best) in whole.items():
            if best is not None:
                shared["thresholds"].setdefault(qi, {})[f"{qi}:{si}"] = best
        state = out.resume_state(plan.fingerprint(not out.temporary)) if resume else None
        if state is not None and state.get("complete"):  # a finished run: its question lines as they are
            asked = [{k: v for k, v in line.items() if k not in ("type", "query")}
                     for line in out.read_lines() if line.get("type") == "question"]
            tops = [_ranked(plan, state, qi, q.query, texts)[:2] for qi, q in enumerate(questions)]
            result = {**state["summary"], "questions": asked, "retrieved_at": [[ext[p] for p in top] for top, ext in tops]}
        else:
            state = state or out.start(plan.fingerprint(not out.temporary))
            _rank(plan, engine, batches, (bases, doc_base, ready), shared, state, out, progress)
            result = _finish(plan, questions, whole, touching, state, out, texts)
    result["asked"] = [(q.query, list(q.refs)) for q in questions]  # for `contexts` (not printed)
    result["documents_read"] = docs
    return result


def contexts(result: dict, chunking: dict):
    """Per question of a finished run, in order: (query, the context it sends, its references' texts):
    its top k chunks' texts in rank order joined by a blank line, as one request's `context` joins them
    (`judge.pipeline.context`). A fixed splitter's chunks are slices of their documents; a semantic
    chunker's are its library's texts (sentences re-joined with " "), so a document holding one is
    split again (its windows embedded again). Each document is read from its file when a question
    needs it, the last few kept."""
    docs, splits = result["documents_read"], {}
    embeds = getattr(registry.of(chunking), "embeds", False)
    text = eval_rerank.DocumentTexts(docs)

    def chunk(d, s, e):
        if not embeds:
            return text(d)[s:e]
        if d not in splits:
            if len(splits) >= 8:
                splits.pop(next(iter(splits)))
            session = Session()
            split, _ = session.split(session.index(text(d)), chunking)
            splits[d] = dict(zip(zip(split.starts, split.ends), split.texts))
        return splits[d][(s, e)]

    for (query, refs), at in zip(result["asked"], result["retrieved_at"]):
        yield (query, "\n\n".join(chunk(d, s, e) for d, s, e in at),
               [text(d)[s:e].strip() for d, s, e in refs])


def dense(plan) -> bool:
    return plan.retrieval.get("method", "bm25") == "dense"


def passes(plan) -> tuple:
    """The referenced and rank passes: BM25's (eval_stream) or the cosine's (eval_dense)."""
    if dense(plan):
        return eval_dense.referenced_pass, eval_dense.rank_pass
    return eval_stream.referenced_pass, eval_stream.rank_pass


def _referenced(plan, engine, shared, docs, doc_first, progress) -> tuple[dict, dict]:
    wanted = sorted({d for q in shared["questions"] for d, _, _ in q["spans"] + q["refs"]})
    items = [(docs[d].source, docs[d].within, d, doc_first[d]) for d in wanted]
    whole, touching = {}, {}
    for _, result in engine.map(passes(plan)[0], shared, items):
        if isinstance(result, engines.Failed):
            raise Refused(f"a referenced document could not be split ({result.reason})")
        whole.update(result["whole"])
        touching.update(result["touching"])
    return whole, touching


def _rank(plan, engine, batches, starts, shared, state, out, progress) -> None:
    """Pass 4 from the first batch not yet written; `starts`: per batch its first chunk, its first
    document and where its work was kept."""
    first = state["batches_done"]
    bases, doc_base, ready = starts
    items = [(batches[i], bases[i], doc_base[i], ready[i]) for i in range(first, len(batches))]
    k = shared["k"]
    try:
        for j, r in audit_run.run_pass(engine, passes(plan)[1], shared, items, progress, "rank", batches[first:]):
            if isinstance(r, engines.Failed):
                raise Refused(f"a batch of files could not be ranked ({r.reason}); run again with --resume")
            for qi, top in r["best"].items():
                mine = [tuple(x) for x in state["best"].get(str(qi), [])]
                state["best"][str(qi)] = heapq.nsmallest(k, mine + [tuple(x) for x in top])
            for name in ("positive", "above", "before"):
                for key, n in r[name].items():
                    state.setdefault(name, {})[str(key)] = state.get(name, {}).get(str(key), 0) + n
            state["first"] = (state.get("first", []) + [list(x) for x in r["first"]])[: 2 * k]
            state["documents"] += len(r["documents"])
            out.documents({"type": "document", **d} for d in r["documents"])
            state["batches_done"] = first + j + 1
            out.checkpoint(state)
    except KeyboardInterrupt:
        where = out.interrupted(state)
        raise audit_run.Interrupted(f"interrupted after {state['documents']:,} documents; {where}, "
                                    "and the same command with --resume goes on from there") from None


def _top(state, qi, k) -> tuple[list, dict]:
    """Question qi's top k positions over the corpus and their extents (document, start, end)."""
    ranked = [tuple(x) for x in state["best"].get(str(qi), [])]
    extents = {p: (d, s, e) for _, p, d, s, e in ranked}
    top = [p for _, p, _, _, _ in ranked]
    for p, d, s, e in state.get("first", []):  # fewer than k score above 0: the first chunks follow
        if len(top) >= k:
            break
        if p not in extents:
            top.append(p)
            extents[p] = (d, s, e)
    return top[:k], extents


def _ranked(plan, state, qi, query, texts) -> tuple[list, dict, list, dict]:
    """Question qi's top k (after the reranker, when the run has one), the extents of the chunks kept,
    the top k before the reranker, and the reranked chunks' new places (`eval_rerank`)."""
    ranked, extents = _top(state, qi, eval_rerank.kept(plan.retrieval))
    order, places = eval_rerank.reordered(plan.retrieval, query, ranked, extents, texts)
    k = plan.retrieval["k"]
    return order[:k], extents, ranked[:k], places


def _finish(plan, questions, whole, touching, state, out, texts) -> dict:
    results, tokens, where = [], [], []
    reranker = eval_rerank.options(plan.retrieval)
    for qi, q in enumerate(questions):
        top, extents, before, places = _ranked(plan, state, qi, q.query, texts)
        where.append([extents[p] for p in top])
        ranks = {}
        for si, (d, s, t) in enumerate(q.spans):
            held, best = whole[(qi, si)]
            if best is not None:
                key = f"{qi}:{si}"
                above = state.get("above", {}).get(key, 0)
                if best[0] == 0 and not dense(plan):  # after every positive chunk and the zero-scoring ones before it
                    above = state.get("positive", {}).get(str(qi), 0) + best[1] - state.get("before", {}).get(key, 0)
                ranks[tuple(held)] = 1 + above
        ranks = eval_rerank.best_ranks(ranks, places)
        setting = Retrieved(extents, {(d, s, t): whole[(qi, si)][0] for si, (d, s, t) in enumerate(q.spans)}, touching)
        verdict, needed = judged.judge(q, top, setting, Ranks(ranks))
        scores = judged.chroma_scores(q.refs, top, setting)
        tokens.append(judged.context_tokens(top, setting))
        result = {"id": q.id, "verdict": verdict, "needed_k": needed, "recall": scores["recall"],
                  "precision": scores["precision"], "iou": scores["iou"],
                  "precision_omega": judged.precision_omega(q.refs, setting), "covered": scores["covered"],
                  "retrieved": [c + 1 for c in top], "context_tokens": tokens[-1]}
        if reranker is not None:  # ranked out by the reranker: within k before it
            wholes = [setting.whole_range(d, s, t) for d, s, t in q.spans]
            result["after_reranking"] = reranking.after_reranking(verdict, wholes, before)
        results.append(result)
        out.line({"type": "question", "query": q.query, **result})
    stats = judged.question_stats(results, tokens, plan.price)
    summary = {"type": "summary", "documents": state["documents"], "question_stats": stats,
               "skipped": [{"path": p, "reason": r} for p, r in plan.skipped]}
    if plan.stored is not None:
        summary["chunks"], summary["units_stored"] = plan.stored
    if reranker is not None:
        summary["rerank"] = reranking.report(reranker)
    out.finish(summary)
    return {**summary, "questions": results, "retrieved_at": where}


def map_cells(plan: Plan, engine, progress, sizes: list, overlaps: list, known: dict | None = None,
              say=None) -> dict:
    """The settings map over the corpus (SPEC section 8's `map`, one request's cells): each cell the
    whole streamed run at its setting (the splitter's grid fields set to the size and the overlap),
    its questions tallied as `judge.settings_map.cell` tallies them; a setting the splitter refuses
    by a grid field is a null cell. `known`: the run at `plan.chunking` itself, which is its cell."""
    grid = registry.grid_fields(plan.chunking)
    refused = tuple(f"chunking.{name}" for name in grid)
    rows, n, done = [], len(sizes) * len(overlaps), 0
    for size in sizes:
        row = []
        for overlap in overlaps:
            at = dict(plan.chunking, **dict(zip(grid, (size, overlap))))
            done += 1
            problem = check_setting(at, plan.retrieval)
            if problem is not None:
                if not problem.startswith(refused):
                    raise ValueError(problem)
                row.append(None)
                continue
            if say is not None:
                say(f"map cell {done} of {n}: " + ", ".join(f"{g} {v}" for g, v in zip(grid, (size, overlap))))
            # the run itself is its cell (unless resumed from an output whose summary lacks the chunks)
            if known is not None and at == plan.chunking and "chunks" in known:
                result = known
            else:
                cell_plan = replace(plan, chunking=at, skipped=[], stored=None)
                out = jsonl_out.Output(None)
                try:
                    result = run(cell_plan, engine, out, progress)
                finally:
                    out.close()
            judged = [(q["verdict"], q["recall"], q["iou"], q["context_tokens"]) for q in result["questions"]]
            row.append(settings_map.tally(judged, result["chunks"], result["units_stored"], plan.price))
        rows.append(row)
    return {"sizes": sizes, "overlaps": overlaps, "cells": rows}

