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

from ragsim.judge import pipeline, settings_map
from ragsim.rank import dense, reranking
from ragsim.wire import cost, encode, investigate, keys
from ragsim.wire.jsonio import json_call
from ragsim.errors import RequestError
from ragsim.split.session import Fresh, Session  # noqa: F401  (callers take Session from here)
from ragsim.wire.request import DEFAULT_PRICE, WIRES, query_terms_for, read_questions, read_request, read_retrieval_options  # noqa: F401


def answer(request, session: Session | None = None, budget: cost.Budget = cost.INTERACTIVE) -> dict:
    """`simulate`'s response, or RequestError naming the first wrong field: what the other wire
    modules call (`wire.inspect`), the error left to their caller rather than read back."""
    session = session if session is not None else Fresh()
    keys.check(request)  # a misspelt key is refused, never ignored
    req = read_request(request)
    cost.guard(cost.estimate(request, req.docs), budget)  # refused before the work, not during
    session.hold(len(req.docs))
    session.semantic.begin(req.semantic_vectors)  # SPEC section 12: the vectors the page embedded
    judged = pipeline.run(req, session)
    response = encode.response(req, judged)
    investigate.answer(req, judged, read_questions(request), response, session)
    settings_map.answer(req, request, response, session)  # SPEC section 8: question sets and the settings map
    dense.finish(req, response)
    if req.retriever.rerank is not None:
        response["rerank"] = reranking.report(req.retriever.rerank)
    encode.semantic(req, judged, response, session.semantic, request.get("questions"))
    return response


def simulate(request: dict, session: Session | None = None, budget: cost.Budget = cost.INTERACTIVE) -> dict:
    """Request -> response (SPEC section 6); a request that breaks the contract, or would cost more
    than `budget` (ragsim.wire.cost: about 30 s or 1 GB for one request), gets `{"error": ...}`."""
    try:
        return answer(request, session, budget)
    except RequestError as e:
        return e.as_response()


def simulate_plain(request, session: Session | None = None) -> dict:
    """`simulate` with nothing but JSON in the answer: a `"wire": "binary"` response's bytes go as
    base64 in `chunk_bytes.data` (the JSON text and the command line answer this way)."""
    out = simulate(request, session)
    data = encode.take_data(out)
    if data is not None:
        out["chunk_bytes"]["data"] = base64.b64encode(data).decode("ascii")
    return out


def simulate_json(request_json: str, session: Session | None = None) -> str:
    """`simulate_plain`, string to string."""
    return json_call(simulate_plain, request_json, session)


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
    from ragsim.wire import codegen

    try:
        return {"code": codegen.equivalent_code(request)}
    except RequestError as e:
        return e.as_response()


def equivalent_code_json(request_json: str) -> str:
    """`equivalent_code`, string to string, for the worker."""
    return json_call(equivalent_code, request_json)
