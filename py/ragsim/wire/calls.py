"""The page worker's one `call {fn, request}`: each function the page may ask for by name, mapped
to the wire module that writes its answer.

Every entry takes the request (already parsed) and the worker's session and returns the answer as
plain data; `call_json` is the string-to-string door the worker uses, so every call refuses bad
JSON alike (`jsonio.json_call`) and a name not in `CALLS` is refused naming the field `fn`. The
drag's own `simulate` is not here: it has its binary wire (`api.simulate_packed`).
"""

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.split.session import Session
from ragsim.wire.jsonio import dumps, json_call


def _audit(request, session: Session | None) -> dict:
    from ragsim.wire import audit

    return audit.audit(request, session)


def _inspect(request, session: Session | None) -> dict:
    from ragsim.wire import inspect

    return inspect.inspect(request)


def _code(request, session: Session | None) -> dict:
    from ragsim.wire import api

    return api.equivalent_code(request)


def _ask(request, session: Session | None) -> dict:
    from ragsim.wire import ask_checks

    return ask_checks.page_call(request)


def _import_questions(request, session: Session | None) -> dict:
    from ragsim.wire import question_io

    return question_io.import_questions(request)


def _export_questions(request, session: Session | None) -> dict:
    from ragsim.wire import question_io

    return question_io.export_questions(request)


def _fix(request, session: Session | None) -> dict:
    """What would keep the marked answer whole: the least overlap at this size, else the least size,
    found by running the splitter again (`judge.overlap_advice.fix`); `{"fix": null}` for a splitter
    without a size and an overlap (semantic, your index's stored chunks)."""
    from ragsim.judge import overlap_advice
    from ragsim.split import registry
    from ragsim.wire.request import read_request

    req = read_request(request)
    if req.span is None:
        raise RequestError("span", "Mark the answer first: the fix is for a marked answer.")
    d, a, b = req.span
    sp = registry.of(req.chunking)
    most = sp.size_max if sp is not None else 0
    if isinstance(most, dict):
        most = most.get(req.chunking.get(sp.unit_field, ""), max(most.values()))
    if not isinstance(most, int) or most <= 0:
        return {"fix": None}
    return {"fix": overlap_advice.fix(req.docs[d]["text"], req.chunking, a, b, most)}


# fn -> its writer. The modules are imported on first use: the worker's start imports only the drag's.
CALLS = {
    "audit": _audit,  # the corpus audit's table (wire.audit, SPEC section 7)
    "inspect": _inspect,  # your own index placed, checked and ranked (wire.inspect, SPEC section 11)
    "code": _code,  # the equivalent code of the setting (wire.codegen)
    "fix": _fix,  # the overlap (else the size) that keeps a cut answer whole (judge.overlap_advice)
    "ask": _ask,  # the prompt filled in and each model answer's two checks (wire.ask_checks)
    "questions.import": _import_questions,  # a question set's file read (wire.question_io)
    "questions.export": _export_questions,  # a question set written as a file (wire.question_io)
}


def call_json(fn: str, request_json: str, session: Session | None = None) -> str:
    """The answer of `CALLS[fn]` to a request given as JSON, as JSON (`{"error": ...}` naming `fn`
    when no such function is offered)."""
    writer = CALLS.get(fn)
    if writer is None:
        known = ", ".join(CALLS)
        return dumps(RequestError("fn", f"Unknown fn {shown(fn)}; use one of: {known}.").as_response())
    return json_call(writer, request_json, session)
