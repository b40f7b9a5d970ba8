"""Every request that breaks the contract gets one field and one actionable sentence, never a traceback."""

import json
import subprocess
import sys

import pytest

from helpers import make_request
from ragsim.api import simulate, simulate_json

TEXT = "one two three four five six"


def with_(**changes):
    req = make_request(TEXT, query="two", size=4, overlap=1)
    for path, value in changes.items():
        obj = req
        keys = path.split("__")
        for key in keys[:-1]:
            obj = obj[key]
        obj[keys[-1]] = value
    return req


BAD = [
    ({"documents": None}, "documents"),
    ({"documents": "text"}, "documents"),
    ({"documents": []}, "documents"),
    ({"documents": [{"id": "d", "title": "", "text": 5}]}, "documents[0].text"),
    ({"documents": [{"id": "d", "text": "a"}, {"id": "d", "text": "b"}]}, "documents[1].id"),
    ({"chunking__unit": "bytes"}, "chunking.unit"),  # "tokens" is a unit since issue 12
    ({"chunking__size": 0}, "chunking.size"),
    ({"chunking__size": 2.5}, "chunking.size"),
    ({"chunking__size": True}, "chunking.size"),
    ({"chunking__size": "24"}, "chunking.size"),
    ({"chunking__overlap": -1}, "chunking.overlap"),
    ({"chunking__overlap": 4}, "chunking.overlap"),
    ({"chunking__strategy": "magic"}, "chunking.strategy"),
    ({"retrieval__k": 0}, "retrieval.k"),
    ({"retrieval__k": 1.0}, "retrieval.k"),
    ({"retrieval__variant": "tfidf"}, "retrieval.variant"),
    ({"retrieval__k1": "x"}, "retrieval.k1"),
    ({"span": {"doc": "nope", "start": 0, "end": 3}}, "span.doc"),
    ({"span": {"doc": "d", "start": 0, "end": 999}}, "span"),
    ({"span": {"doc": "d", "start": 3, "end": 4}}, "span"),  # a single space
    ({"span": {"doc": "d", "start": 2, "end": 1}}, "span"),
    ({"fact": {"doc": "d", "name": [0, 3], "value": [1, 7]}}, "fact.value"),
    ({"fact": {"doc": "d", "name": [0, 3], "value": [4, 900]}}, "fact.value"),
    ({"fact": {"doc": "d", "name": [0], "value": [4, 7]}}, "fact.name"),
    ({"price_per_million": "cheap"}, "price_per_million"),
    ({"price_per_million": float("nan")}, "price_per_million"),
    ({"query": 7}, "query"),
]


@pytest.mark.parametrize("changes,field", BAD, ids=[f for _, f in BAD])
def test_bad_request_names_the_field(changes, field):
    r = simulate(with_(**changes))
    assert set(r) == {"error"}
    assert r["error"]["field"] == field
    msg = r["error"]["message"]
    assert msg.endswith(".") and "Traceback" not in msg and len(msg) < 200


def test_overlap_message_is_the_one_people_see():
    r = simulate(make_request(TEXT, size=24, overlap=30))
    assert r["error"]["message"] == "Overlap must be smaller than the chunk size (got 30 and 24)."


def test_valid_edge_cases_are_not_errors():
    assert "error" not in simulate(make_request("", query=""))
    assert "error" not in simulate(make_request("   ", query="!!!"))
    r = simulate(make_request(TEXT, query="?? --", k=3))
    assert all(c["score"] == 0.0 for c in r["chunks"])


def test_non_object_request_and_bad_json_string():
    assert simulate([1, 2])["error"]["field"] == "request"
    assert json.loads(simulate_json("{nope"))["error"]["field"] == "request"


def run_cli(stdin: str):
    return subprocess.run([sys.executable, "-m", "ragsim"], input=stdin, capture_output=True, text=True,
                          cwd="py", timeout=60)


def test_cli_round_trip_and_exit_codes():
    ok = run_cli(json.dumps(make_request(TEXT, query="two", size=4, overlap=1)))
    assert ok.returncode == 0 and json.loads(ok.stdout) == simulate(make_request(TEXT, query="two", size=4, overlap=1))
    bad = run_cli(json.dumps(make_request(TEXT, size=4, overlap=4)))
    assert bad.returncode == 2 and "chunking.overlap" in bad.stderr and "Traceback" not in bad.stderr
    broken = run_cli("{not json")
    assert broken.returncode == 1 and "not valid JSON" in broken.stderr and "Traceback" not in broken.stderr


def test_numbers_out_of_range_are_field_errors_not_crashes():
    for changes, field in (({"price_per_million": 1e308}, "price_per_million"),
                           ({"retrieval__k1": 1e308}, "retrieval.k1"),
                           ({"retrieval__b": 1.5}, "retrieval.b")):
        out = json.loads(simulate_json(json.dumps(with_(**changes))))
        assert out["error"]["field"] == field


def test_deeply_nested_json_is_refused_with_a_message():
    out = json.loads(simulate_json("[" * 100_000 + "]" * 100_000))
    assert out["error"]["field"] == "request" and "nested" in out["error"]["message"]


def test_columns_wire_carries_the_same_chunks():
    from ragsim.api import Session

    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa " * 20
    req = make_request(text, query="gamma kappa", size=7, overlap=2, k=3, span=(6, 22))
    objects = simulate(req)
    columns = simulate({**req, "wire": "columns"}, Session())
    c = columns.pop("chunk_columns")
    rebuilt = [{"doc": c["ids"][c["doc"][i]], "number": i + 1, "start": c["start"][i], "end": c["end"][i],
                "units": c["units"][i], "score": c["score"][i], "rank": c["rank"][i],
                "retrieved": c["rank"][i] <= 3, "holds": c["holds"].get(str(i)), "overlap_prev": c["overlap_prev"][i]}
               for i in range(len(c["start"]))]
    assert rebuilt == objects.pop("chunks")
    assert columns == objects  # everything else is the same
    assert simulate({**req, "wire": "rows"})["error"]["field"] == "wire"
