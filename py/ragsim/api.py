"""The JSON boundary (SPEC section 6): the only module that knows the wire format.

`simulate(request) -> response` validates the request, calls the core and returns plain dicts.
A `Session` keeps a small, bounded cache of indexed documents and splits so that a slider drag
re-uses the index (a drag never re-tokenizes the text); without one, everything is computed afresh
and the response is identical.
"""

import json
import math
import statistics
from collections import OrderedDict

from . import bm25, spans, splitters
from .errors import RequestError
from .fields import get_choice, get_int, get_number, get_str
from .index import DocIndex, terms

DEFAULT_PRICE = 3.0


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
            if len(self.data) > self.limit:
                self.data.popitem(last=False)
            return value


class Session:
    """What a caller holds between requests: up to 8 indexed texts and 32 splits of them."""

    def __init__(self, documents: int = 8, splits: int = 32):
        self._indexes = _LRU(documents)
        self._splits = _LRU(splits)

    def index(self, text: str) -> DocIndex:
        return self._indexes.get(text, lambda: DocIndex.build(text))

    def split(self, doc: DocIndex, chunking: dict):
        key = (doc.text, json.dumps(chunking, sort_keys=True))
        return self._splits.get(key, lambda: _split_with_lengths(doc, chunking))


class _Fresh(Session):
    """No caching at all: the from-scratch path the tests compare the cached one against."""

    def index(self, text):
        return DocIndex.build(text)

    def split(self, doc, chunking):
        return _split_with_lengths(doc, chunking)


def _split_with_lengths(doc: DocIndex, chunking: dict):
    """A document's split and each chunk's BM25 length `dl`, computed together and cached together."""
    split = splitters.split(doc, chunking)
    lengths = [doc.counts_in(e.start, e.end, ())[0] for e in split.extents]
    return split, lengths


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


def _read_retrieval(request: dict) -> dict:
    r = request.get("retrieval")
    if not isinstance(r, dict):
        raise RequestError("retrieval", "Give retrieval as an object with at least k.")
    return {
        "k": get_int(r, "k", "retrieval.k", minimum=1),
        "variant": get_choice(r, "variant", "retrieval.variant", tuple(bm25.VARIANTS), default="lucene"),
        "k1": get_number(r, "k1", "retrieval.k1", default=1.2, minimum=0),
        "b": get_number(r, "b", "retrieval.b", default=0.75, minimum=0),
        "delta": get_number(r, "delta", "retrieval.delta", default=0.5, minimum=0),
    }


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
    query = get_str(request, "query", "query", default="")
    chunking = _read_chunking(request)
    retrieval = _read_retrieval(request)
    span = _read_span(request, docs)
    fact = _read_fact(request, docs)
    price = get_number(request, "price_per_million", "price_per_million", default=DEFAULT_PRICE, minimum=0)
    k = retrieval["k"]

    query_terms = terms(query)
    wanted = tuple(dict.fromkeys(query_terms))

    # Split every document and gather each chunk's length and query-term frequencies.
    rows = []  # (doc position, Extent)
    lengths: list[int] = []
    tfs: dict[str, list[tuple[int, int]]] = {t: [] for t in wanted}
    documents_out = []
    unit, units_in_documents = None, 0
    for di, d in enumerate(docs):
        index = session.index(d["text"])
        split, doc_lengths = session.split(index, chunking)
        unit = split.unit
        units_in_documents += split.units_in_document
        documents_out.append({"id": d["id"], "units": split.units_in_document, "chunks": len(split.extents)})
        for e, dl in zip(split.extents, doc_lengths):
            pos = len(rows)
            rows.append((di, e))
            lengths.append(dl)
            if wanted:
                for t, tf in index.counts_in(e.start, e.end, wanted)[1].items():
                    if tf:
                        tfs[t].append((pos, tf))

    scores = bm25.score_all(query_terms, lengths, tfs, retrieval["variant"], retrieval["k1"], retrieval["b"], retrieval["delta"])
    order = bm25.rank(scores)
    ranks = [0] * len(rows)
    for r, pos in enumerate(order, 1):
        ranks[pos] = r

    chunks_out = []
    whole_ranks, part_ranks, retrieved_parts = [], [], []
    answering_ranks, answering_numbers = [], []
    overlaps: list[int] = []
    prev_end = {}
    for pos, (di, e) in enumerate(rows):
        number = pos + 1
        held = None
        if span is not None and span[0] == di:
            held = spans.holds(e.start, e.end, span[1], span[2])
            if held == "whole":
                whole_ranks.append(ranks[pos])
            elif held == "part":
                part_ranks.append(ranks[pos])
                if ranks[pos] <= k:
                    retrieved_parts.append(number)
        if fact is not None and fact[0] == di:
            (ns, ne), (vs, ve) = fact[1], fact[2]
            if e.start <= min(ns, vs) and max(ne, ve) <= e.end:
                answering_ranks.append(ranks[pos])
                answering_numbers.append(number)
        shared = None
        if di in prev_end:
            shared = max(0, prev_end[di] - e.start)
            overlaps.append(shared)
        prev_end[di] = e.end
        chunks_out.append({
            "doc": docs[di]["id"],
            "number": number,
            "start": e.start,
            "end": e.end,
            "units": e.units,
            "score": scores[pos],
            "rank": ranks[pos],
            "retrieved": ranks[pos] <= k,
            "holds": held,
            "overlap_prev": shared,
        })

    top = order[:k]
    context = "\n\n".join(docs[rows[p][0]]["text"][rows[p][1].start : rows[p][1].end] for p in top)

    if span is not None:
        di, s, t = span
        sent = [(rows[p][1].start, rows[p][1].end) for p in top if rows[p][0] == di]
        coverage = spans.covered(sent, s, t) / (t - s)
        verdict = spans.verdict(whole_ranks, any(r <= k for r in whole_ranks), len(part_ranks), len(retrieved_parts), coverage)
        verdict["whole_chunks"] = [c["number"] for c in chunks_out if c["holds"] == "whole"]
        verdict["part_chunks"] = [c["number"] for c in chunks_out if c["holds"] == "part"]
        verdict["parts_retrieved_chunks"] = retrieved_parts
    else:
        verdict = {"kind": None, "best_rank": None, "parts": 0, "parts_retrieved": 0, "coverage_sent": None,
                   "whole_chunks": [], "part_chunks": [], "parts_retrieved_chunks": []}

    fact_out = None
    if fact is not None:
        fact_out = {
            "kind": spans.fact_kind(answering_ranks, k),
            "answering": answering_numbers,
            "best_rank": min(answering_ranks) if answering_ranks else None,
        }

    units_stored = sum(e.units for _, e in rows)
    tokens = math.ceil(len(context) / 4)
    stats = {
        "unit": unit or chunking.get("unit", "words"),
        "units_in_documents": units_in_documents,
        "chunks": len(rows),
        "units_stored": units_stored,
        "amplification": units_stored / units_in_documents if units_in_documents else None,
        "chunks_whole": len(whole_ranks),
        "chunks_part": len(part_ranks),
        "retrieved": len(top),
        "best_rank": verdict["best_rank"],
        "context_chars": len(context),
        "context_tokens": tokens,
        "cost": tokens * price / 1_000_000,
        "price_per_million": price,
        "k": k,
        **_overlap_stats(overlaps),
    }
    return {
        "chunks": chunks_out,
        "verdict": verdict,
        "fact": fact_out,
        "stats": stats,
        "context": context,
        "documents": documents_out,
        "query_terms": query_terms,
    }


def simulate(request: dict, session: Session | None = None) -> dict:
    """Request -> response (SPEC section 6); a request that breaks the contract gets `{"error": ...}`."""
    try:
        return _simulate(request, session if session is not None else _Fresh())
    except RequestError as e:
        return e.as_response()


def simulate_json(request_json: str, session: Session | None = None) -> str:
    """The same, string to string, for the worker: nothing but JSON crosses the boundary."""
    try:
        request = json.loads(request_json)
    except (ValueError, TypeError) as e:
        return json.dumps({"error": {"field": "request", "message": f"The request is not valid JSON ({e})."}})
    return json.dumps(simulate(request, session), ensure_ascii=False, allow_nan=False)
