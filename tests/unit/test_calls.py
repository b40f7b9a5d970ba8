"""ragsim.wire.calls: the worker's one `call {fn, request}` answers each fn with the very string its
wire module writes, and refuses a name it does not offer."""

import json

import pytest

import pathlib

from helpers import make_request
from ragsim.wire.jsonio import json_call
from ragsim.wire import api, ask_checks, audit, calls, inspect, question_io

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
    ("fix", make_request(TEXT, query="crew", size=4, overlap=0, span=(36, 64)),
     lambda j, s: json_call(calls.CALLS["fix"], j, s)),
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


def test_fix_names_the_least_overlap_or_size_that_keeps_a_cut_answer_whole():
    """The page's "fix" call against the drag's own verdicts: at the overlap it names the answer is
    held whole and at every smaller one it is cut; where no overlap does, at the size it names."""
    from ragsim.wire.api import simulate

    text = (ROOT / "examples" / "harbour.md").read_text(encoding="utf-8")
    a = text.index("The pilot boat")
    span = {"doc": "h", "start": a, "end": text.index("afternoon.") + len("afternoon.")}

    def cut(chunking) -> bool:
        req = {"documents": [{"id": "h", "text": text}], "query": "pilot boat", "chunking": chunking,
               "retrieval": {"k": 50}, "span": span}
        return simulate(req)["verdict"]["kind"] == "cut"

    for chunking in ({"strategy": "langchain-recursive", "size": 200, "overlap": 50}, {"unit": "words", "size": 12, "overlap": 2}):
        req = {"documents": [{"id": "h", "text": text}], "query": "x", "chunking": chunking, "retrieval": {"k": 2}, "span": span}
        fix = json.loads(calls.call_json("fix", json.dumps(req)))["fix"]
        assert cut(chunking)
        if fix["overlap"] is not None:
            assert not cut({**chunking, "overlap": fix["overlap"]})
            assert all(cut({**chunking, "overlap": o}) for o in range(fix["overlap"]))
            assert fix["sentence"].startswith(f"At size {chunking['size']} characters, an overlap of {fix['overlap']} ")
        else:
            n = fix["least_size"]
            assert not cut({**chunking, "size": n}) and all(cut({**chunking, "size": m}) for m in range(chunking["size"], n))
            assert f"a size of {n} words does, at overlap 2." in fix["sentence"]
    semantic = {"documents": [{"id": "h", "text": text}], "query": "x", "chunking": {"strategy": "langchain-semantic"},
                "retrieval": {"k": 2}, "span": span}
    assert json.loads(calls.call_json("fix", json.dumps(semantic)))["fix"] is None
