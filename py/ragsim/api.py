"""The JSON boundary (SPEC section 6): the only module that knows the wire format.

`simulate(request) -> response` runs three steps, each in its own module: `request` reads and checks
the request into a plain `Request`, `pipeline` splits, scores, ranks and judges, and `encode` builds
the response as plain dicts (`investigate` adds the optional questions' fields).

A `Session` keeps a small, bounded cache of indexed documents and splits so that a slider drag
re-uses the index (a drag never re-tokenizes the text); without one, everything is computed afresh
and the response is identical.
"""

import base64
import json
from collections import OrderedDict

from . import dense, encode, investigate, jsonio, limits, pipeline, questions
from .errors import RequestError
from .index import DocIndex
from .pipeline import split_and_layout as _split_and_layout
from .request import DEFAULT_PRICE, WIRES, query_terms_for, read_questions, read_request, read_retrieval_options  # noqa: F401
from .request import read_documents as _read_documents  # noqa: F401  (audit reads documents alike)


class _LRU:
    """A dict that forgets its least recently used entries beyond `limit` entries, or beyond a total
    `weight` of `budget` (the newest entry is always kept, whatever it weighs)."""

    def __init__(self, limit: int, budget: int | None = None, weight=None):
        self.limit = limit
        self.data: OrderedDict = OrderedDict()
        self.budget, self.weight, self.weights, self.total = budget, weight, {}, 0

    def get(self, key, make):
        try:
            self.data.move_to_end(key)
            return self.data[key]
        except KeyError:
            value = make()
            self.data[key] = value
            if self.weight is not None:
                self.weights[key] = w = self.weight(value)
                self.total += w
            while len(self.data) > self.limit or (self.budget is not None and self.total > self.budget
                                                  and len(self.data) > 1):
                old, _ = self.data.popitem(last=False)
                self.total -= self.weights.pop(old, 0)
            return value


class Session:
    """What a caller holds between requests: up to 8 indexed texts and 32 splits of them, or, for a
    request with more documents, all of its documents and 8 splits of each (see `hold`)."""

    def __init__(self, documents: int = 8, splits: int = 32):
        # Bounded in memory too: the characters indexed and the chunks split (ragsim.limits).
        self._indexes = _LRU(documents, limits.CACHE_CHARS, lambda index: len(index.text))
        self._splits = _LRU(splits, limits.CACHE_CHUNKS, lambda split_layout: len(split_layout[0]))
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


def _simulate(request, session: Session) -> dict:
    req = read_request(request)
    session.hold(len(req.docs))
    judged = pipeline.run(req, session)
    response = encode.response(req, judged)
    investigate.answer(req, judged, read_questions(request), response, session)
    questions.answer(req, request, response, session)  # SPEC section 8: question sets and the settings map
    dense.finish(req, response)
    return response


def simulate(request: dict, session: Session | None = None) -> dict:
    """Request -> response (SPEC section 6); a request that breaks the contract gets `{"error": ...}`."""
    try:
        return _simulate(request, session if session is not None else _Fresh())
    except RequestError as e:
        return e.as_response()


def json_call(function, request_json: str, *args) -> str:
    """Run `function(request, *args)` on a request given as JSON and return its answer as JSON; every
    JSON entry point (simulate, audit, equivalent code) goes through here, so bad JSON is refused
    alike everywhere and nothing but strings crosses the worker boundary (as valid UTF-8: jsonio)."""
    try:
        request = jsonio.loads(request_json)
    except RequestError as e:
        answer = e.as_response()
    else:
        answer = function(request, *args)
    return jsonio.dumps(answer)


def simulate_json(request_json: str, session: Session | None = None) -> str:
    """`simulate`, string to string (a `"wire": "binary"` response's bytes as base64 in `chunk_bytes.data`)."""
    def run(request, session):
        out = simulate(request, session)
        data = encode.take_data(out)
        if data is not None:
            out["chunk_bytes"]["data"] = base64.b64encode(data).decode("ascii")
        return out

    return json_call(run, request_json, session)


def simulate_packed(request_json: str, session: Session | None = None,
                    texts: list[str] | None = None) -> tuple[str, bytes | None]:
    """`simulate` for the worker: (the response's JSON, the bytes of `"wire": "binary"`'s columns,
    None for any other wire or a refusal), so the bytes reach JavaScript without a JSON list.
    `texts`, when given, are the documents' texts in order (the request's own are left empty): the
    worker keeps long texts as strings between requests instead of sending them inside the JSON."""
    data = None

    def run(request, session):
        nonlocal data
        docs = request.get("documents") if isinstance(request, dict) else None
        if texts is not None and isinstance(docs, list) and len(docs) == len(texts):
            for d, text in zip(docs, texts):
                if isinstance(d, dict):
                    d["text"] = text
        out = simulate(request, session)
        data = encode.take_data(out)
        return out

    return json_call(run, request_json, session), data


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
