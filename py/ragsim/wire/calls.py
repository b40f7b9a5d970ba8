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


# fn -> its writer. The modules are imported on first use: the worker's start imports only the drag's.
CALLS = {
    "audit": _audit,  # the corpus audit's table (wire.audit, SPEC section 7)
    "inspect": _inspect,  # your own index placed, checked and ranked (wire.inspect, SPEC section 11)
    "code": _code,  # the equivalent code of the setting (wire.codegen)
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
