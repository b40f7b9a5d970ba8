"""The JSON boundary (SPEC section 6): the only module that knows the wire format.

`simulate(request) -> response` runs three steps, each in its own module: `answers.read` reads and
checks the request into a plain `Request` (`request.read_request`) with the answers it wants,
`pipeline` splits, scores, ranks and judges, and `answers.write` builds the response as plain dicts,
each answer by its writer (`encode` the verdict's fields, `investigate` the panels', `question_out`
the question set's and the map's).

A `Session` keeps a small, bounded cache of indexed documents and splits so that a slider drag
re-uses the index (a drag never re-tokenizes the text); without one, everything is computed afresh
and the response is identical.
"""

import base64
import json

from ragsim.judge import pipeline
from ragsim.wire import answers, cost, encode, keys
from ragsim.wire.jsonio import json_call
from ragsim.errors import RequestError
from ragsim.split.session import Fresh, Session  # noqa: F401  (callers take Session from here)
from ragsim.wire.request import DEFAULT_PRICE, WIRES, query_terms_for, read_questions, read_request, read_retrieval_options  # noqa: F401


def answer(request, session: Session | None = None, budget: cost.Budget = cost.INTERACTIVE) -> dict:
    """`simulate`'s response, or RequestError naming the first wrong field: what the other wire
    modules call (`wire.inspect`), the error left to their caller rather than read back."""
    session = session if session is not None else Fresh()
    keys.check(request)  # a misspelt key is refused, never ignored
    req = answers.read(request)  # the request's fields and the answers it wants
    cost.guard(cost.estimate(req), budget)  # refused before the work, not during
    session.hold(len(req.docs))
    session.semantic.begin(req.semantic_vectors)  # SPEC section 12: the vectors the page embedded
    judged = pipeline.run(req, session)
    return answers.write(req, judged, session)  # each answer by its writer (wire.answers)


def estimate(request) -> cost.Cost:
    """What `simulate(request)` would cost (ragsim.wire.cost), or RequestError naming the first wrong
    field of those read before the guard (the commands print it before they run)."""
    keys.check(request)
    return cost.estimate(answers.read(request))


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
