"""Asking your own model, the pure half: the prompt built from a template, and the two
plain checks of each answer. The command line (`ragsim.host.clients.ask`) and the page's worker use these
same functions, so a sample reads alike wherever it was asked.

The checks compare case-insensitively (`str.casefold`) with every run of whitespace taken as one
space and the ends trimmed, on both sides: "42,000  km" in the marked answer matches "42,000 km" in a
reply, "not in context." matches `NOT IN CONTEXT`. Nothing else is forgiven: a reply that writes the
number as "42000 km" does not contain "42,000 km" (a check that guessed would no longer be plain).
"""

import re

from ragsim.wire.jsonio import json_call
from ragsim.errors import RequestError

NOT_IN_CONTEXT = "NOT IN CONTEXT"

# The default prompt, one user message: the answer from the context only, NOT IN CONTEXT otherwise.
# {context} and {question} are replaced once each, in one pass (a context that itself holds the
# text "{question}" is sent as it is).
DEFAULT_PROMPT = (
    "Answer the question using only the context below. If the context does not contain the answer, "
    f"reply with exactly {NOT_IN_CONTEXT} and nothing else.\n"
    "\n"
    "Context:\n"
    "{context}\n"
    "\n"
    "Question: {question}\n"
    "Answer:"
)

PLACEHOLDERS = ("{context}", "{question}")
_PLACEHOLDER = re.compile(r"\{(context|question)\}")
_SPACE = re.compile(r"\s+")


def prompt(template: str, context: str, question: str) -> str:
    """The user message sent: `template` with its {context} and {question} filled in (one pass)."""
    if not isinstance(template, str):
        raise RequestError("prompt", "The prompt must be text.")
    missing = [p for p in PLACEHOLDERS if p not in template]
    if missing:
        raise RequestError("prompt", f"The prompt has no {' and no '.join(missing)}: put it back where the "
                           "model should read it, or the model is not shown what was retrieved.")
    values = {"context": context, "question": question}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def messages(template: str, context: str, question: str) -> list[dict]:
    """The chat-completions messages for one sample: the filled prompt as the only user message."""
    return [{"role": "user", "content": prompt(template, context, question)}]


def normal(text: str) -> str:
    """The form both checks compare: case folded, whitespace runs as one space, ends trimmed."""
    return _SPACE.sub(" ", text.casefold()).strip()


def contains_answer(reply: str, answers: list[str]) -> bool | None:
    """Whether the reply contains every marked answer text (a fact's value; each reference of a
    question); None when nothing is marked (no empty text counts as marked)."""
    wanted = [normal(a) for a in answers if normal(a)]
    if not wanted:
        return None
    said = normal(reply)
    return all(a in said for a in wanted)


def says_not_in_context(reply: str) -> bool:
    """Whether the reply says NOT IN CONTEXT anywhere (compared as `normal` compares)."""
    return normal(NOT_IN_CONTEXT) in normal(reply)


def check(reply: str, answers: list[str]) -> dict:
    """Both checks of one sample, as the page and the command line report them."""
    return {"contains_answer": contains_answer(reply, answers), "not_in_context": says_not_in_context(reply)}


def _strings(request: dict, field: str, default):
    value = request.get(field, default)
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise RequestError(field, f"{field} must be a list of texts.")
    return value


def page_call(request) -> dict:
    """The worker's `ask` message: `{"template", "context", "question", "answers": [str], "samples":
    [str]}` -> `{"prompt": the user message, "checks": [check per sample]}` (the prompt first, the
    checks once the samples are back)."""
    try:
        if not isinstance(request, dict):
            raise RequestError("", "The request must be an object.")
        for field in ("context", "question"):
            if not isinstance(request.get(field), str):
                raise RequestError(field, f"{field} must be text.")
        answers = _strings(request, "answers", [])
        samples = _strings(request, "samples", [])
        text = prompt(request.get("template", DEFAULT_PROMPT), request["context"], request["question"])
        return {"prompt": text, "checks": [check(s, answers) for s in samples]}
    except RequestError as e:
        return e.as_response()


def page_json(request_json: str) -> str:
    """`page_call`, string to string, for the worker."""
    return json_call(page_call, request_json)
