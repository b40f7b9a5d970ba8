"""The cost guard's estimate of a read request equals the estimate it made of the raw request.

`cost.estimate` used to read the request dict as sent, beside the documents `read_request` checked;
it now takes the read request (`wire.answers.read`: the checked fields and the answers wanted, whose
inputs it reads as sent). `old_estimate` below is that former function, kept word for word as the
reference (the constants and the splitter terms, which did not change, come from `cost`), and every
request of `CASES` goes through both paths: the same terms, or the same refusal.

Precedence, unchanged by the move: the request's own fields (documents, query, retrieval, span,
fact, price, wire, tokenizer, ...) are read first and refused before the cost, because the estimate
counts the checked documents and needs k, the method and the tokenizer; then `answers`; then the
guard; the splitter's fields and the answers' inputs (questions, map, find, cuts, sweep, expand) are
checked after it, by their readers. So a request that is both invalid in one of those and too costly
is refused for its cost, as before: reading them is work the guard exists to refuse (a question set
places every reference; the splitter splits), and the response of every request stays what it was.
"""

import copy

import pytest

from helpers import harbour_questions, make_request
from ragsim.errors import RequestError
from ragsim.wire import answers, cost, keys
from ragsim.wire.api import simulate
from ragsim.wire.cost import (B_CHUNK, B_CONTEXT, B_INDEX, B_QUESTION_CHUNK, S_CELL, S_CHUNK, S_CONTEXT, S_EMBED,
                              S_INDEX, S_LAYOUT, S_QUESTION, S_TOKEN, S_TOKEN_HARD, Cost, Term, chunks_for,
                              unit_of, units_in)
from ragsim.wire.cost import cluster_terms as _cluster_terms, split_terms as _split_terms
from ragsim.wire.request import read_request


# --- the former estimate of the raw request, as it was ------------------------------------------

def _int(obj, key: str, default: int, lo: int = 0) -> int:
    v = obj.get(key, default) if isinstance(obj, dict) else default
    return max(lo, v) if isinstance(v, int) and not isinstance(v, bool) else default


def _list(obj, key: str) -> list:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, list) else []


def old_estimate(request: dict, docs: list[dict]) -> Cost:
    """The cost of `request` over its checked documents `docs` (terms of zero cost left out)."""
    chunking = request.get("chunking") if isinstance(request.get("chunking"), dict) else {}
    retrieval = request.get("retrieval") if isinstance(request.get("retrieval"), dict) else {}
    chars = sum(len(d["text"]) for d in docs)
    unit = unit_of(chunking)
    units, per_unit = units_in(docs, unit)
    size = _int(chunking, "size", 200 if unit != "tokens" else 1024, lo=1)
    overlap = _int(chunking, "overlap", 0)
    n = chunks_for(units, len(docs), size, overlap)
    chunk_chars = min(chars, size * per_unit)
    terms = [Term("documents", f"{chars:,} characters indexed", chars * S_INDEX, chars * B_INDEX),
             Term("chunking.size", f"{n:,} chunks", n * S_CHUNK, n * B_CHUNK)]
    per_token = S_TOKEN if all(d["text"].isascii() for d in docs) else S_TOKEN_HARD
    terms += _split_terms(chunking, unit, chars, per_token)
    terms += _cluster_terms(chunking, docs)
    questions = len(_list(request, "questions")) or 1
    cells = _map_cells(request, units, len(docs))
    terms.append(Term("questions", f"{questions:,} questions x {n:,} chunks", questions * n * S_QUESTION,
                      n * B_QUESTION_CHUNK))
    if cells:
        count, cell_chunks = cells  # chunks over all cells together
        work = count * units * S_CELL + cell_chunks * S_CHUNK + questions * cell_chunks * S_QUESTION
        terms.append(Term("map", f"{questions:,} questions x {cell_chunks:,} chunks in {count} map cells", work,
                          cell_chunks // max(1, count) * 2 * B_CHUNK))
    sweep = _list(request, "sweep")[:50]
    if sweep:
        terms.append(Term("sweep", f"{len(sweep)} overlaps x {units:,} {unit}", len(sweep) * (units * S_LAYOUT + n * S_CHUNK),
                          n * B_CHUNK))
    terms += _context_terms(request, retrieval, n, chunk_chars, questions, per_token)
    return Cost(tuple(terms))


def _map_cells(request: dict, units: int, docs: int):
    m = request.get("map")
    sizes = [s for s in _list(m, "sizes")[:10_000] if isinstance(s, int) and not isinstance(s, bool) and s > 0]
    overlaps = [o for o in _list(m, "overlaps")[:10_000] if isinstance(o, int) and not isinstance(o, bool) and o >= 0]
    if not sizes or not overlaps:
        return None
    sizes, overlaps = set(sizes), set(overlaps)
    if len(sizes) * len(overlaps) > 400:
        return None  # refused by the map's reader before any cell is made
    pairs = [(s, o) for s in sizes for o in overlaps if o < s]
    return len(pairs), sum(chunks_for(units, docs, s, o) for s, o in pairs)


def _context_terms(request, retrieval, n: int, chunk_chars: float, questions: int, per_token: float) -> list[Term]:
    k = min(_int(retrieval, "k", 1, lo=1), n)
    context = k * chunk_chars
    out = [Term("retrieval.k", f"a context of {k:,} chunks x {chunk_chars:,.0f} characters, for {questions:,} "
                "questions", questions * context * S_CONTEXT, context * B_CONTEXT)]
    if request.get("tokenizer") is not None:
        out.append(Term("tokenizer", f"{questions:,} contexts of {context:,.0f} characters tokenized",
                        questions * context * per_token, 0))
    expand = request.get("expand")
    if isinstance(expand, dict):
        reach = min(n, k * (2 * _int(expand, "neighbours", 0) + 1))
        sent = min(reach * chunk_chars, n * chunk_chars)
        per_char = S_CONTEXT + (per_token if request.get("tokenizer") is not None else 0)
        out.append(Term("expand.neighbours", f"{k:,} chunks expanded by their neighbours", sent * per_char
                        + reach * S_CHUNK, sent * B_CONTEXT))
    if retrieval.get("method") in ("dense", "hybrid"):
        read = n * min(chunk_chars, 1_200)
        out.append(Term("retrieval.method", f"{n:,} chunks embedded", read * S_EMBED, n * 4 * 384))
    return out


# --- the two paths ----------------------------------------------------------------------------

def old_path(request):
    """What `api.answer` did before the work: the keys, read_request, the guard on the raw request."""
    try:
        keys.check(request)
        req = read_request(request)
        estimate = old_estimate(request, req.docs)
        cost.guard(estimate, cost.INTERACTIVE)
    except RequestError as e:
        return ("refused", e.field, e.message)
    return ("estimate", estimate.terms)


def new_path(request):
    """What `api.answer` does now: the keys, the read request with its answers, the guard on it."""
    try:
        keys.check(request)
        estimate = cost.estimate(answers.read(request))
        cost.guard(estimate, cost.INTERACTIVE)
    except RequestError as e:
        return ("refused", e.field, e.message)
    return ("estimate", estimate.terms)


LOREM = "lorem ipsum dolor sit amet. "
QUESTIONS = [{"id": f"q{i}", "query": "lorem dolor", "references": [{"doc": "d", "start": 0, "end": 5}]}
             for i in range(2)]
GRID = {"sizes": list(range(100, 1100, 100)), "overlaps": list(range(0, 100, 10))}


def cheap(**extra):
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. " * 20
    return make_request(text, query="delta", size=8, overlap=2, k=2, span=(18, 37), **extra)


def costly(questions=QUESTIONS, **extra):
    """Over 30 s by its map (test_hostile: between 30 and 60 s), every field valid unless `extra` says."""
    return make_request(LOREM * 100_000, unit="chars", size=200, overlap=0, questions=copy.deepcopy(questions),
                        map=copy.deepcopy(GRID), **extra)


def with_retrieval(request, **fields):
    request["retrieval"].update(fields)
    return request


def with_chunking(request, chunking):
    request["chunking"] = chunking
    return request


def harbour(**extra):
    return {**harbour_questions(), **extra}


CASES = {
    # valid and cheap
    "cheap": lambda: cheap(),
    "cheap, tokenizer": lambda: cheap(tokenizer="cl100k_base"),
    "cheap, panels": lambda: cheap(find="beta", cuts=True, sweep=[0, 1, 2], expand={"neighbours": 2}),
    "cheap, section expansion": lambda: cheap(expand={"section": True}),
    "dense": lambda: with_retrieval(cheap(), method="dense", similarities=[]),
    "hybrid": lambda: with_retrieval(cheap(), method="hybrid", rrf_c=10, weights=[0.3, 0.7]),
    "questions": lambda: harbour(),
    "questions and a map": lambda: harbour(map={"sizes": [200, 300, 400], "overlaps": [0, 50]}),
    "a map over 400 cells": lambda: harbour(map={"sizes": list(range(1, 30)), "overlaps": list(range(0, 20))}),
    "a map of the span": lambda: cheap(map={"sizes": [4, 8], "overlaps": [0, 1]}),
    "semantic": lambda: with_chunking(cheap(), {"strategy": "langchain-semantic"}),
    "chroma cluster": lambda: with_chunking(cheap(), {"strategy": "chroma-cluster", "min_chunk_size": 5}),
    "recursive separators": lambda: with_chunking(cheap(), {"strategy": "langchain-recursive", "separators": ["\n", "."]}),
    "tokens": lambda: with_chunking(cheap(), {"strategy": "llamaindex-token", "size": 64, "overlap": 8}),
    "stored chunks": lambda: with_chunking(cheap(), {"strategy": "stored", "chunks": {"d": [[0, 17], [18, 37]]}}),
    "declared answers": lambda: harbour(answers=["verdict", "questions"], map={"sizes": [200], "overlaps": [0]}),
    # valid and costly
    "costly": lambda: costly(),
    "costly by memory": lambda: make_request(LOREM * 357_000, size=1, overlap=0, map={"sizes": [1], "overlaps": [0]}),
    "costly, hybrid": lambda: with_retrieval(costly(), method="hybrid"),
    "costly, dense, tokenizer": lambda: with_retrieval(costly(tokenizer="cl100k_base"), method="dense"),
    "costly sweep and expansion": lambda: make_request(LOREM * 100_000, unit="chars", size=20, overlap=0, k=50,
                                                       sweep=list(range(0, 19)), expand={"neighbours": 40}),
    "costly semantic": lambda: with_chunking(costly(), {"strategy": "langchain-semantic"}),
    # invalid and cheap: a field read before the guard, one read after it, a splitter's field
    "cheap, k 0": lambda: with_retrieval(cheap(), k=0),
    "cheap, unknown method": lambda: with_retrieval(cheap(), method="sparse"),
    "cheap, empty find": lambda: cheap(find=""),
    "cheap, a bad map": lambda: cheap(map={"sizes": "four", "overlaps": [0]}),
    "cheap, a bad question set": lambda: cheap(questions=[{"id": "q"}]),
    "cheap, size as text": lambda: with_chunking(cheap(), {"unit": "words", "size": "8", "overlap": 2}),
    "cheap, misspelt key": lambda: cheap(finds="beta"),
    "cheap, an unknown answer": lambda: cheap(answers=["verdict", "maps"]),
    "cheap, an answer without its field": lambda: cheap(answers=["questions"]),
    "not an object": lambda: ["documents"],
    "no documents": lambda: {"query": "x", "chunking": {}, "retrieval": {"k": 1}},
    # invalid and costly
    "costly, k as text": lambda: with_retrieval(costly(), k="3"),
    "costly, a span out of range": lambda: costly(span=(0, 10**9)),
    "costly, empty find": lambda: costly(find=""),
    "costly, a bad sweep": lambda: costly(sweep=[-1]),
    "costly, a bad question set": lambda: costly(questions=[{"id": "q"}] * 3),
    "costly, a bad overlap": lambda: with_chunking(costly(), {"unit": "chars", "size": 200, "overlap": -5}),
    "costly, an answer without its field": lambda: costly(answers=["panels"]),
    "costly, its map not named": lambda: costly(answers=["questions"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_read_requests_estimate_is_the_raw_requests(name):
    request = CASES[name]()
    new = new_path(copy.deepcopy(request))
    if not (isinstance(request, dict) and "answers" in request):  # the field is new: the old path never read it
        assert new == old_path(copy.deepcopy(request))
    # and `simulate` answers what the guard decided: its refusal, or (a cheap request) no cost refusal
    out = simulate(copy.deepcopy(request))
    if new[0] == "refused":
        assert out["error"] == {"field": new[1], "message": new[2]}
    else:
        assert "would take about" not in out.get("error", {}).get("message", "")


def test_the_cases_cover_both_outcomes_and_every_kind_of_refusal():
    outcomes = {name: new_path(CASES[name]()) for name in CASES}
    costly_refusals = [n for n, o in outcomes.items() if o[0] == "refused" and "would take about" in o[2]]
    other_refusals = [n for n, o in outcomes.items() if o[0] == "refused" and "would take about" not in o[2]]
    # a request invalid in a field read after the guard, and too costly, is refused for its cost
    assert {"costly", "costly, empty find", "costly, a bad sweep", "costly, a bad question set",
            "costly, a bad overlap", "costly semantic"} <= set(costly_refusals)
    # one invalid in a field read before the guard is refused for that field, however costly
    assert {"costly, k as text", "costly, a span out of range", "cheap, k 0", "cheap, unknown method",
            "costly, an answer without its field"} <= set(other_refusals)
    assert outcomes["costly, an answer without its field"][1] == "answers[0]"


def test_a_named_answer_counts_only_its_own_fields():
    # the map (over 30 s) is not named: not read, not counted, not refused
    request = costly(answers=["questions"])
    fields = {t.field for t in cost.estimate(answers.read(request)).terms}
    assert "map" not in fields and new_path(request)[0] == "estimate"
    assert "map" in {t.field for t in cost.estimate(answers.read(costly())).terms}
