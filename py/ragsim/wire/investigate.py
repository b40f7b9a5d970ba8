"""The optional questions at the JSON boundary, each asked by one request field: find a
phrase, the cuts at overlap 0, an overlap sweep, and context expansion. They run after the main
simulation, on its columns; the arithmetic itself is in `explore`.
"""

from ragsim.wire import encode
from ragsim.text import explore
from ragsim.judge import pipeline
from ragsim.split import registry
from ragsim.errors import RequestError
from ragsim.judge.pipeline import Judged
from ragsim.wire.request import Request, read_questions


def answer(req: Request, judged: Judged, out: dict, session) -> None:
    """Add the fields of the panels' questions the request asks (`read_questions` of its inputs:
    find, cuts, sweep, expand) to the response `out` (`wire.answers`' "panels")."""
    questions = read_questions(req.asks.inputs)
    c = judged.corpus
    texts = [d["text"] for d in req.docs]
    if questions.find is not None:
        out["found"] = explore.find_phrase(texts, c.starts, c.ends, c.doc_of, questions.find)
    if req.given is not None and (questions.cuts or questions.sweep is not None):
        field = "cuts" if questions.cuts else "sweep"
        raise RequestError(field, f"{field} changes a splitter's overlap; stored chunks have none. Simulate the "
                                  "splitter that made them (inspect names it) and ask again.")
    if questions.cuts and texts:
        marked_doc = req.span[0] if req.span is not None else (req.fact[0] if req.fact is not None else 0)
        out["cuts"] = cuts(req, judged, marked_doc, session)
    if questions.sweep is not None:
        out["sweep"] = [sweep_row(req, o, session) for o in questions.sweep]
    if questions.expand is not None:
        out["expanded"] = expanded(req, judged, *questions.expand)


def cuts(req: Request, judged: Judged, d: int, session) -> dict:
    """The first cuts of the marked document at overlap 0 and at the current overlap."""
    c = judged.corpus
    text = req.docs[d]["text"]
    mine = pipeline.doc_range(c, d)
    now = explore.cut_positions(c.starts[mine.start:mine.stop], c.ends[mine.start:mine.stop], len(text))
    splitter = registry.of(req.chunking)
    if splitter is not None and splitter.field("overlap") is None:
        zero = now  # a splitter with no overlap (a semantic one): its cuts at overlap 0 are these, not split again
    else:
        try:
            split, _ = session.split(session.index(text, req.analyzer), dict(req.chunking, overlap=0))
            zero = explore.cut_positions(split.starts, split.ends, len(text))
        except RequestError:
            zero = None
    shown = 5
    return {
        "doc": d,
        "overlap": req.chunking.get("overlap", 0),
        "at_zero": None if zero is None else zero[:shown],
        "at_current": now[:shown],
        "shared": None if zero is None else len(set(zero) & set(now)),
        "total_zero": None if zero is None else len(zero),
        "total_current": len(now),
        "moves": None if zero is None else zero[:shown] != now[:shown],
    }


def sweep_row(req: Request, overlap: int, session) -> dict:
    """The marked answer and fact at one more overlap (the same request otherwise)."""
    try:
        judged = pipeline.run(req, session, dict(req.chunking, overlap=overlap))
    except RequestError as e:
        return {"overlap": overlap, "error": e.message}
    v, fact = pipeline.verdict(req, judged), pipeline.fact_verdict(req, judged)
    tokens = encode.context_tokens(req, pipeline.context(req, judged))  # exact with a tokenizer
    return {
        "overlap": overlap,
        "error": None,
        "chunks": len(judged.corpus.starts),
        "units_stored": sum(judged.corpus.units),
        "span": v["kind"],
        "best_rank": v["best_rank"],
        "fact": None if fact is None else fact["kind"],
        "fact_best_rank": None if fact is None else fact["best_rank"],
        "context_tokens": tokens,
        "cost": tokens * req.price / 1_000_000,
        **({"after_reranking": v["after_reranking"]} if "after_reranking" in v else {}),  # with a reranker
    }


def expanded(req: Request, judged: Judged, neighbours: int, section: bool) -> dict:
    """What context expansion would send: each retrieved chunk with its neighbours or its section."""
    c = judged.corpus
    texts = [d["text"] for d in req.docs]
    pieces = explore.expand(judged.top, c.starts, c.ends, c.doc_of, c.first_chunk,
                            [d["chunks"] for d in c.documents], texts, neighbours, section)
    sent = "\n\n".join(texts[d][a:z] for d, a, z in pieces)
    tokens = encode.context_tokens(req, sent)  # exact with a tokenizer

    def kind(target):
        if target is None:
            return None
        d, a, z = target
        return "intact" if any(pd == d and pa <= a and z <= pz for pd, pa, pz in pieces) else "not_sent"

    fact = req.fact
    fact_target = None if fact is None else (fact[0], min(fact[1][0], fact[2][0]), max(fact[1][1], fact[2][1]))
    return {
        "neighbours": neighbours,
        "section": section,
        "pieces": [[d, a, z] for d, a, z in pieces],
        "span": kind(req.span),
        "fact": kind(fact_target),
        "context": sent,
        "context_chars": len(sent),
        "context_tokens": tokens,
        "cost": tokens * req.price / 1_000_000,
    }
