"""The corpus audit: counts on a hand-checked collection, the brute-force cross-check on the
built-in collection, and the command line."""

import json
import pathlib

import pytest

from helpers import CORE, run_cli
from ragsim.wire.api import Session, simulate
from ragsim.wire.audit import audit

ROOT = pathlib.Path(__file__).resolve().parents[2]
COLLECTION = ROOT / "assets" / "collection"

# Two documents. In "a" the fact "Galle Ring ... 42,000 km" spans characters 4..34 (30 chars);
# windows of 20 characters at overlap 0 cut at 20 and 40, so it is destroyed at overlap 0.
A = "The Galle Ring orbits at 42,000 km. Kestrel Station has 14 crew."
B = "Nothing to see here at all, only words and more words."


def small(overlaps, size=20):
    return audit({"documents": [{"id": "a", "text": A}, {"id": "b", "text": B}],
                  "chunking": {"unit": "chars", "size": size}, "overlaps": overlaps})


def test_counts_by_hand():
    r = small([0, 10, 19])
    names = [(f["name_text"], f["value_text"]) for f in r["facts"]]
    assert names == [("Galle Ring", "42,000 km"), ("Kestrel Station", "14 crew")]
    # Galle Ring..km = [4, 34): 30 characters, longer than any window of 20: always destroyed.
    # Kestrel Station..crew = [36, 63): 27 characters: also always destroyed at size 20.
    assert [row["destroyed"] for row in r["rows"]] == [2, 2, 2]
    assert [row["destroyed_within_overlap"] for row in r["rows"]] == [0, 0, 0]
    # At size 40: overlap 0 windows [0,40) [40,65): Galle Ring kept, Kestrel cut at 40.
    r = small([0, 30], size=40)
    assert [row["destroyed"] for row in r["rows"]] == [1, 0]
    assert r["facts"][0]["destroyed_at"] == [] and r["facts"][1]["destroyed_at"] == [0]
    # chunks: "a" 65 chars -> 2 windows at 40/0, windows at 0,10,20,30 at 40/30; "b" 54 chars -> 2 and 3
    assert [row["chunks"] for row in r["rows"]] == [4, 7]


def test_rule_never_broken_by_fixed_windows_on_the_collection():
    docs = [{"id": p.name, "text": p.read_text(encoding="utf-8")} for p in sorted(COLLECTION.glob("*.md"))]
    for unit, size, overlaps in (("chars", 900, [0, 25, 50, 100, 150, 300]), ("words", 150, [0, 4, 8, 17, 25, 50])):
        r = audit({"documents": docs, "chunking": {"unit": unit, "size": size}, "overlaps": overlaps})
        assert len(r["facts"]) >= 35  # the finder measured on labelled text keeps only plainly stated pairs
        assert all(row["destroyed_within_overlap"] == 0 for row in r["rows"])
        assert r["rows"][0]["destroyed"] > r["rows"][-1]["destroyed"]  # overlap saves facts


def test_audit_matches_brute_force_on_the_built_in_collection():
    docs = [{"id": p.name, "title": p.name, "text": p.read_text(encoding="utf-8")}
            for p in sorted(COLLECTION.glob("*.md"))]
    overlaps = [0, 50, 150]
    r = audit({"documents": docs, "chunking": {"unit": "chars", "size": 900}, "overlaps": overlaps})
    session = Session()
    for row in r["rows"]:
        o = row["overlap"]
        destroyed = found = 0
        for f in r["facts"]:
            req = {"documents": docs, "query": f["name_text"],
                   "chunking": {"unit": "chars", "size": 900, "overlap": o}, "retrieval": {"k": 3},
                   "fact": {"doc": f["doc"], "name": f["name"], "value": f["value"]}}
            brute = simulate(req, session)["fact"]
            # every fact against every chunk, by hand
            a, z = f["stretch"]
            by_hand = [c["number"] for c in simulate(req, session)["chunks"]
                       if c["doc"] == f["doc"] and c["start"] <= a and z <= c["end"]]
            assert f["answering"][str(o)] == by_hand == brute["answering"]
            destroyed += brute["kind"] == "destroyed"
            found += brute["kind"] == "intact"
            assert (o in f["destroyed_at"]) == (brute["kind"] == "destroyed")
            assert (o in f["found_at"]) == (brute["kind"] == "intact")
        assert (row["destroyed"], row["found_top_k"]) == (destroyed, found)


def test_bad_audit_requests():
    assert audit({"documents": [{"id": "a", "text": A}], "chunking": {"unit": "chars", "size": 20},
                  "overlaps": [-1]})["error"]["field"] == "overlaps"
    r = audit({"documents": [{"id": "a", "text": A}], "chunking": {"unit": "chars", "size": 20}, "overlaps": [0, 25]})
    assert r["rows"][1]["error"] == "Overlap must be smaller than the chunk size (got 25 and 20)."


@pytest.mark.slow
def test_cli_prints_the_table_and_json():
    files = [str(p) for p in sorted(COLLECTION.glob("*.md"))]
    out = run_cli("audit", *files, "--unit", "chars", "--size", "900", "--overlaps", "0,25,50,100,150,300", cwd=CORE)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split()[:3] == ["overlap", "chunks", "stored"]
    assert [ln.split()[0] for ln in lines[2:8]] == ["0", "25", "50", "100", "150", "300"] and lines[8] == ""
    data = json.loads(run_cli("audit", *files, "--size", "900", "--overlaps", "0,150", "--json", cwd=CORE).stdout)
    assert [row["overlap"] for row in data["rows"]] == [0, 150]


@pytest.mark.parametrize("content,code,message", [
    (b"\x00\x01binary", 1, "looks binary"),
    (b"\xff\xfe\xfa not utf8", 1, "not UTF-8"),
])
def test_cli_refuses_files_that_are_not_text(tmp_path, content, code, message):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    out = run_cli("audit", bad, cwd=CORE)
    assert out.returncode == code and message in out.stderr and "Traceback" not in out.stderr
