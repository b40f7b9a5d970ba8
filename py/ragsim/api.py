"""The JSON boundary (SPEC section 6): the only module that knows the wire format.

`simulate(request) -> response` validates the request, calls the core and returns plain dicts.
A `Session` keeps a small, bounded cache of indexed documents and splits so that a slider drag
re-uses the index (a drag never re-tokenizes the text); without one, everything is computed afresh
and the response is identical.
"""

import json
import math
import statistics
from collections import OrderedDict, deque
from itertools import compress, repeat
from operator import sub

from . import analyzers, bm25, explore, spans, splitters
from .errors import RequestError
from .fields import get_choice, get_int, get_number, get_str
from .index import DocIndex, terms

DEFAULT_PRICE = 3.0
# How the response carries its chunks: SPEC section 6's list of objects, or (asked for by the page's
# worker, which rebuilds the objects in JavaScript) the same values as columns, `chunk_columns`.
WIRES = ("objects", "columns")


class _LRU:
    """A dict that forgets its least recently used entry beyond `limit` entries."""

    def __init__(self, limit: int):
        self.limit = limit
        self.data: OrderedDict = OrderedDict()

    def get(self, key, make):
        try:
            self.data.move_to_end(key)
            return self.data[key]
        except KeyError:
            value = make()
            self.data[key] = value
            while len(self.data) > self.limit:
                self.data.popitem(last=False)
            return value


class Session:
    """What a caller holds between requests: up to 8 indexed texts and 32 splits of them, or, for a
    request with more documents, all of its documents and 8 splits of each (see `hold`)."""

    def __init__(self, documents: int = 8, splits: int = 32):
        self._indexes = _LRU(documents)
        self._splits = _LRU(splits)
        self._least = (documents, splits)

    def hold(self, documents: int) -> None:
        """Make room for a request's `documents`, so a collection larger than the bounds is indexed
        once rather than once per request; the bounds fall back when smaller requests follow."""
        grow = documents > self._least[0]  # within the bounds, the caller's bounds stand
        self._indexes.limit = documents if grow else self._least[0]
        self._splits.limit = max(self._least[1], 8 * documents) if grow else self._least[1]

    def index(self, text: str, analyzer=None) -> DocIndex:
        key = (text, None if analyzer is None else analyzer.key)
        return self._indexes.get(key, lambda: DocIndex.build(text, analyzer))

    def split(self, doc: DocIndex, chunking: dict):
        key = (doc.text, doc.analyzer_key, json.dumps(chunking, sort_keys=True))
        return self._splits.get(key, lambda: _split_and_layout(doc, chunking))


class _Fresh(Session):
    """No caching at all: the from-scratch path the tests compare the cached one against."""

    def index(self, text, analyzer=None):
        return DocIndex.build(text, analyzer)

    def split(self, doc, chunking):
        return _split_and_layout(doc, chunking)


def _split_and_layout(doc: DocIndex, chunking: dict):
    """A document's split and where its words and terms fall (each chunk's `dl` among them)."""
    split = splitters.split(doc, chunking)
    return split, doc.layout(split.starts, split.ends, split.word_ranges)


# --- request validation ------------------------------------------------------------------------

def _read_documents(request: dict) -> list[dict]:
    docs = request.get("documents")
    if not isinstance(docs, list):
        raise RequestError("documents", "Give documents as a list of {id, title, text} objects.")
    if not docs:
        raise RequestError("documents", "Add at least one document to simulate.")
    seen = set()
    out = []
    for i, d in enumerate(docs):
        field = f"documents[{i}]"
        if not isinstance(d, dict):
            raise RequestError(field, f"{field} must be an object with id, title and text.")
        doc_id = get_str(d, "id", f"{field}.id")
        if doc_id in seen:
            raise RequestError(f"{field}.id", f"Document ids must be unique; {doc_id!r} appears twice.")
        seen.add(doc_id)
        out.append({
            "id": doc_id,
            "title": get_str(d, "title", f"{field}.title", default=""),
            "text": get_str(d, "text", f"{field}.text"),
        })
    return out


def _find_doc(docs: list[dict], doc_id, field: str) -> int:
    for i, d in enumerate(docs):
        if d["id"] == doc_id:
            return i
    raise RequestError(field, f"No document has the id {doc_id!r}; use one of the documents' ids.")


def _read_span(request: dict, docs: list[dict]):
    span = request.get("span")
    if span is None:
        return None
    if not isinstance(span, dict):
        raise RequestError("span", "Give span as {doc, start, end} or null.")
    d = _find_doc(docs, span.get("doc"), "span.doc")
    start = get_int(span, "start", "span.start", minimum=0)
    end = get_int(span, "end", "span.end", minimum=0)
    return (d, *spans.trim(docs[d]["text"], start, end, "span"))


def _read_pair(fact: dict, key: str, text: str) -> tuple[int, int]:
    pair = fact.get(key)
    field = f"fact.{key}"
    if not isinstance(pair, list) or len(pair) != 2:
        raise RequestError(field, f"Give {field} as [start, end].")
    start = get_int({"v": pair[0]}, "v", field, minimum=0)
    end = get_int({"v": pair[1]}, "v", field, minimum=0)
    return spans.trim(text, start, end, field)


def _read_fact(request: dict, docs: list[dict]):
    fact = request.get("fact")
    if fact is None:
        return None
    if not isinstance(fact, dict):
        raise RequestError("fact", "Give fact as {doc, name: [start, end], value: [start, end]} or null.")
    d = _find_doc(docs, fact.get("doc"), "fact.doc")
    name = _read_pair(fact, "name", docs[d]["text"])
    value = _read_pair(fact, "value", docs[d]["text"])
    if name[0] < value[1] and value[0] < name[1]:
        raise RequestError("fact.value", "The name and the value overlap; mark them as two separate pieces of text.")
    return d, name, value


def read_retrieval_options(r: dict) -> dict:
    """Everything of `retrieval` but k: the variant, its parameters and the term analyzer."""
    return {
        "variant": get_choice(r, "variant", "retrieval.variant", tuple(bm25.VARIANTS), default="lucene"),
        "k1": get_number(r, "k1", "retrieval.k1", default=1.2, minimum=0, maximum=1000),
        "b": get_number(r, "b", "retrieval.b", default=0.75, minimum=0, maximum=1),
        "delta": get_number(r, "delta", "retrieval.delta", default=0.5, minimum=0, maximum=1000),
        "analyzer": analyzers.read_terms(r),
    }


def _read_retrieval(request: dict) -> dict:
    r = request.get("retrieval")
    if not isinstance(r, dict):
        raise RequestError("retrieval", "Give retrieval as an object with at least k.")
    return {"k": get_int(r, "k", "retrieval.k", minimum=1), **read_retrieval_options(r)}


def query_terms_for(query: str, analyzer) -> list[str]:
    """The query's terms, mapped by the same analyzer as the documents' (SPEC section 3)."""
    ts = terms(query)
    return analyzer(ts) if analyzer is not None else ts


def _read_chunking(request: dict) -> dict:
    c = request.get("chunking")
    if not isinstance(c, dict):
        raise RequestError("chunking", "Give chunking as an object with unit, size and overlap.")
    return c


# --- the simulation ----------------------------------------------------------------------------

def _overlap_stats(overlaps: list[int]) -> dict:
    if not overlaps:
        return {"overlap_min": None, "overlap_median": None, "overlap_max": None, "boundaries_without_overlap": 0}
    return {
        "overlap_min": min(overlaps),
        "overlap_median": statistics.median(overlaps),
        "overlap_max": max(overlaps),
        "boundaries_without_overlap": sum(1 for o in overlaps if o == 0),
    }


def _simulate(request: dict, session: Session) -> dict:
    if not isinstance(request, dict):
        raise RequestError("request", "The request must be a JSON object.")
    docs = _read_documents(request)
    session.hold(len(docs))
    query = get_str(request, "query", "query", default="")
    chunking = _read_chunking(request)
    retrieval = _read_retrieval(request)
    span = _read_span(request, docs)
    fact = _read_fact(request, docs)
    price = get_number(request, "price_per_million", "price_per_million", default=DEFAULT_PRICE, minimum=0,
                       maximum=1_000_000)
    wire = get_choice(request, "wire", "wire", WIRES, default="objects")
    k = retrieval["k"]
    analyzer = retrieval["analyzer"]
    query_terms = query_terms_for(query, analyzer)
    wanted = tuple(dict.fromkeys(query_terms))

    # Split every document; gather the chunks as columns over the whole corpus, in document order.
    doc_of, starts, ends, units, lengths = [], [], [], [], []
    occurrences = {t: ([], []) for t in wanted}  # term -> (chunk positions, tfs)
    documents_out, first_chunk = [], []
    unit, units_in_documents = None, 0
    for di, d in enumerate(docs):
        index = session.index(d["text"], analyzer)
        split, layout = session.split(index, chunking)
        base = len(starts)
        first_chunk.append(base)
        unit = split.unit
        units_in_documents += split.units_in_document
        documents_out.append({"id": d["id"], "units": split.units_in_document, "chunks": len(split)})
        doc_of.extend(repeat(di, len(split)))
        starts.extend(split.starts)
        ends.extend(split.ends)
        units.extend(split.units)
        lengths.extend(layout.lengths)
        for t in wanted:
            positions, counts = occurrences[t]
            if len(index.postings.get(t, ())) * 8 < len(split):
                # a rare term: walk its occurrences
                chunks, tfs = index.sparse_frequencies(t, layout)
                positions.extend(c + base for c in chunks)
                counts.extend(tfs)
            else:
                # a common one: one pass over every chunk with the term's prefix counts
                tf = index.term_frequencies(t, layout)
                positions.extend(compress(range(base, base + len(tf)), tf))
                counts.extend(filter(None, tf))
    n = len(starts)

    scores = bm25.score_all(query_terms, lengths, occurrences, retrieval["variant"], retrieval["k1"],
                            retrieval["b"], retrieval["delta"])
    order = bm25.rank(scores)
    top = order[:k]
    ranks = [0] * n
    deque(map(ranks.__setitem__, order, range(1, n + 1)), maxlen=0)  # ranks[order[i]] = i + 1

    # What each chunk holds of the span: only the chunks of its document that meet it are looked at.
    held = {}
    if span is not None:
        di, s, t = span
        lo, hi = first_chunk[di], first_chunk[di] + documents_out[di]["chunks"]
        for pos in range(lo, hi):
            h = spans.holds(starts[pos], ends[pos], s, t)
            if h:
                held[pos] = h
    answering = []
    if fact is not None:
        di, (ns, ne), (vs, ve) = fact
        lo, hi = first_chunk[di], first_chunk[di] + documents_out[di]["chunks"]
        a, z = min(ns, vs), max(ne, ve)
        answering = [pos for pos in range(lo, hi) if starts[pos] <= a and z <= ends[pos]]

    # Characters each chunk shares with the previous chunk of its document (None for a first chunk).
    shared = [None] + [o if o > 0 else 0 for o in map(sub, ends[:-1], starts[1:])] if n else []
    for pos in first_chunk:
        if pos < n:
            shared[pos] = None
    overlaps = [o for o in shared if o is not None]

    ids = [d["id"] for d in docs]
    if wire == "columns":
        # The same chunks as columns (the page's worker asks for these: a tenth of the encoding
        # work); `number` is the position + 1 and `retrieved` is `rank <= k`, as in the objects.
        chunks_out = None
        chunk_columns = {"ids": ids, "doc": doc_of, "start": starts, "end": ends, "units": units,
                         "score": scores, "rank": ranks, "holds": {str(p): h for p, h in held.items()},
                         "overlap_prev": shared}
    else:
        chunks_out = [
            {"doc": ids[di], "number": pos + 1, "start": s, "end": e, "units": u, "score": sc, "rank": r,
             "retrieved": r <= k, "holds": held.get(pos), "overlap_prev": o}
            for pos, di, s, e, u, sc, r, o in zip(range(n), doc_of, starts, ends, units, scores, ranks, shared)
        ]
    texts = [d["text"] for d in docs]
    context = "\n\n".join(texts[doc_of[p]][starts[p] : ends[p]] for p in top)

    whole_ranks = [ranks[p] for p, h in held.items() if h == "whole"]
    parts = sorted(p for p, h in held.items() if h == "part")
    if span is not None:
        di, s, t = span
        sent = [(starts[p], ends[p]) for p in top if doc_of[p] == di]
        verdict = spans.verdict(whole_ranks, any(r <= k for r in whole_ranks), len(parts),
                                sum(1 for p in parts if ranks[p] <= k), spans.covered(sent, s, t) / (t - s))
        verdict["whole_chunks"] = sorted(p + 1 for p, h in held.items() if h == "whole")
        verdict["part_chunks"] = [p + 1 for p in parts]
        verdict["parts_retrieved_chunks"] = [p + 1 for p in parts if ranks[p] <= k]
    else:
        verdict = {"kind": None, "best_rank": None, "parts": 0, "parts_retrieved": 0, "coverage_sent": None,
                   "whole_chunks": [], "part_chunks": [], "parts_retrieved_chunks": []}

    fact_out = None
    if fact is not None:
        answering_ranks = [ranks[p] for p in answering]
        fact_out = {
            "kind": spans.fact_kind(answering_ranks, k),
            "answering": [p + 1 for p in answering],
            "best_rank": min(answering_ranks) if answering_ranks else None,
        }

    units_stored = sum(units)
    tokens = math.ceil(len(context) / 4)
    stats = {
        "unit": unit or chunking.get("unit", "words"),
        "units_in_documents": units_in_documents,
        "chunks": n,
        "units_stored": units_stored,
        "amplification": units_stored / units_in_documents if units_in_documents else None,
        "chunks_whole": len(whole_ranks),
        "chunks_part": len(parts),
        "retrieved": len(top),
        "best_rank": verdict["best_rank"],
        "context_chars": len(context),
        "context_tokens": tokens,
        "cost": tokens * price / 1_000_000,
        "price_per_million": price,
        "k": k,
        **_overlap_stats(overlaps),
    }
    response = {
        "chunks": chunks_out,
        "verdict": verdict,
        "fact": fact_out,
        "stats": stats,
        "context": context,
        "documents": documents_out,
        "query_terms": query_terms,
        "at_k": explore.at_k_table(None if span is None else whole_ranks,
                                   None if fact is None else [ranks[p] for p in answering], k),
    }
    if wire == "columns":
        del response["chunks"]
        response["chunk_columns"] = chunk_columns
    columns = {"texts": texts, "starts": starts, "ends": ends, "doc_of": doc_of, "top": top,
               "first_chunk": first_chunk, "chunk_count": [d["chunks"] for d in documents_out]}
    _explore(request, response, columns, span, fact, chunking, price, session)
    return response


def _explore(request, response, columns, span, fact, chunking, price, session) -> None:
    """The optional questions of issue 5, each asked by one request field."""
    texts, starts, ends, doc_of = columns["texts"], columns["starts"], columns["ends"], columns["doc_of"]

    phrase = request.get("find")
    if phrase is not None:
        if not isinstance(phrase, str) or not phrase.strip():
            raise RequestError("find", "Type a phrase to look for in the index.")
        response["found"] = explore.find_phrase(texts, starts, ends, doc_of, phrase)

    marked_doc = span[0] if span is not None else (fact[0] if fact is not None else 0)
    if request.get("cuts") and texts:
        response["cuts"] = _cuts(texts, marked_doc, chunking, columns, session, request)

    sweep = request.get("sweep")
    if sweep is not None:
        if not isinstance(sweep, list) or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in sweep):
            raise RequestError("sweep", "Give sweep as a list of overlaps (whole numbers, at least 0).")
        response["sweep"] = [_sweep_row(request, chunking, o, session) for o in sweep[:50]]

    expand = request.get("expand")
    if expand is not None:
        response["expanded"] = _expanded(expand, columns, span, fact, price)


def _cuts(texts, d, chunking, columns, session, request) -> dict:
    """The first cuts of the marked document at overlap 0 and at the current overlap."""
    first, count = columns["first_chunk"][d], columns["chunk_count"][d]
    now = explore.cut_positions(columns["starts"][first:first + count], columns["ends"][first:first + count],
                                len(texts[d]))
    analyzer = read_retrieval_options(request.get("retrieval") or {})["analyzer"]
    try:
        split, _ = session.split(session.index(texts[d], analyzer), dict(chunking, overlap=0))
        zero = explore.cut_positions(split.starts, split.ends, len(texts[d]))
    except RequestError:
        zero = None
    shown = 5
    return {
        "doc": d,
        "overlap": chunking.get("overlap", 0),
        "at_zero": None if zero is None else zero[:shown],
        "at_current": now[:shown],
        "shared": None if zero is None else len(set(zero) & set(now)),
        "total_zero": None if zero is None else len(zero),
        "total_current": len(now),
        "moves": None if zero is None else zero[:shown] != now[:shown],
    }


def _sweep_row(request, chunking, overlap, session) -> dict:
    """The marked answer and fact at one more overlap (the same request otherwise)."""
    req = {key: v for key, v in request.items() if key not in ("sweep", "find", "cuts", "expand")}
    req["chunking"] = dict(chunking, overlap=overlap)
    try:
        r = _simulate(req, session)
    except RequestError as e:
        return {"overlap": overlap, "error": e.message}
    return {
        "overlap": overlap,
        "error": None,
        "chunks": r["stats"]["chunks"],
        "units_stored": r["stats"]["units_stored"],
        "span": r["verdict"]["kind"],
        "best_rank": r["verdict"]["best_rank"],
        "fact": None if r["fact"] is None else r["fact"]["kind"],
        "fact_best_rank": None if r["fact"] is None else r["fact"]["best_rank"],
        "context_tokens": r["stats"]["context_tokens"],
        "cost": r["stats"]["cost"],
    }


def _expanded(expand, columns, span, fact, price) -> dict:
    if not isinstance(expand, dict):
        raise RequestError("expand", 'Give expand as {"neighbours": n} or {"section": true}.')
    section = expand.get("section", False)
    if not isinstance(section, bool):
        raise RequestError("expand.section", "expand.section must be true or false.")
    neighbours = get_int(expand, "neighbours", "expand.neighbours", default=0, minimum=0)
    texts = columns["texts"]
    pieces = explore.expand(columns["top"], columns["starts"], columns["ends"], columns["doc_of"],
                            columns["first_chunk"], columns["chunk_count"], texts, neighbours, section)
    context = "\n\n".join(texts[d][a:z] for d, a, z in pieces)
    tokens = math.ceil(len(context) / 4)

    def kind(target, whole_kind):
        if target is None:
            return None
        d, a, z = target
        if any(pd == d and pa <= a and z <= pz for pd, pa, pz in pieces):
            return "intact"
        return whole_kind

    span_target = None if span is None else span
    fact_target = None if fact is None else (fact[0], min(fact[1][0], fact[2][0]), max(fact[1][1], fact[2][1]))
    return {
        "neighbours": neighbours,
        "section": section,
        "pieces": [[d, a, z] for d, a, z in pieces],
        "span": kind(span_target, "not_sent"),
        "fact": kind(fact_target, "not_sent"),
        "context": context,
        "context_chars": len(context),
        "context_tokens": tokens,
        "cost": tokens * price / 1_000_000,
    }


def simulate(request: dict, session: Session | None = None) -> dict:
    """Request -> response (SPEC section 6); a request that breaks the contract gets `{"error": ...}`."""
    try:
        return _simulate(request, session if session is not None else _Fresh())
    except RequestError as e:
        return e.as_response()


def json_call(function, request_json: str, *args) -> str:
    """Run `function(request, *args)` on a request given as JSON and return its answer as JSON; every
    JSON entry point (simulate, audit, equivalent code) goes through here, so bad JSON is refused
    alike everywhere and nothing but strings crosses the worker boundary."""
    try:
        request = json.loads(request_json)
    except (ValueError, TypeError) as e:
        answer = {"error": {"field": "request", "message": f"The request is not valid JSON ({e})."}}
    except RecursionError:
        answer = {"error": {"field": "request", "message": "The request is nested too deeply; send a flat request object."}}
    else:
        answer = function(request, *args)
    return json.dumps(answer, ensure_ascii=False, allow_nan=False)


def simulate_json(request_json: str, session: Session | None = None) -> str:
    """`simulate`, string to string, for the worker."""
    return json_call(simulate, request_json, session)


def equivalent_code(request: dict) -> dict:
    """`{"code": str}`: the Python that builds the request's splitter and BM25 in the real libraries
    (ragsim.codegen), or `{"error": {field, message}}`."""
    from . import codegen

    try:
        return {"code": codegen.equivalent_code(request)}
    except RequestError as e:
        return e.as_response()


def equivalent_code_json(request_json: str) -> str:
    """`equivalent_code`, string to string, for the worker."""
    return json_call(equivalent_code, request_json)
