"""ragsim.wire.calls: the worker's one `call {fn, request}` answers each fn with the very string its
wire module writes, and refuses a name it does not offer."""

import json

import pytest

from helpers import make_request
from ragsim.wire import api, ask_checks, audit, calls, inspect, question_io

TEXT = "The Galle Ring orbits at 42,000 km. Kestrel Station has 14 crew. " * 3
DOCS = [{"id": "d", "title": "doc", "text": TEXT}]

CASES = [
    ("audit", {"documents": DOCS, "chunking": {"unit": "chars", "size": 40}, "overlaps": [0, 30]},
     lambda j, s: audit.audit_json(j, s)),
    ("code", make_request(TEXT, query="crew"), lambda j, s: api.equivalent_code_json(j)),
    ("ask", {"context": "Kestrel has 14 crew.", "question": "How many crew?", "answers": ["14 crew"], "samples": ["14 crew", "NOT IN CONTEXT"]},
     lambda j, s: ask_checks.page_json(j)),
    ("inspect", {"chunks": [{"id": "c1", "doc": "d", "text": TEXT[:60]}], "documents": [{"id": "d", "text": TEXT}]}, lambda j, s: inspect.inspect_json(j)),
    ("questions.import", {"text": json.dumps([{"query": "crew", "references": [{"doc": "d", "start": 36, "end": 64}]}]), "documents": DOCS},
     lambda j, s: question_io.import_questions_json(j)),
    ("questions.export", {"questions": [{"id": "q1", "query": "crew", "references": [{"doc": "d", "start": 36, "end": 64}]}], "documents": DOCS},
     lambda j, s: question_io.export_questions_json(j)),
]


@pytest.mark.parametrize("fn, request_, direct", CASES, ids=[c[0] for c in CASES])
def test_each_fn_answers_with_its_writers_own_string(fn, request_, direct):
    text = json.dumps(request_)
    assert calls.call_json(fn, text, api.Session()) == direct(text, api.Session())
    assert calls.call_json(fn, "{bad", None) == direct("{bad", None)  # bad JSON refused alike


def test_every_offered_fn_is_tested():
    assert set(calls.CALLS) == {c[0] for c in CASES}


def test_an_unknown_fn_is_refused_naming_the_field():
    error = json.loads(calls.call_json("simulate", "{}"))["error"]
    assert error["field"] == "fn"
    assert "'simulate'" in error["message"] and "audit, inspect, code" in error["message"]
