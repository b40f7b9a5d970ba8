"""The corpus audit with dense and hybrid retrieval (SPEC sections 8 and 10): each fact's name is its
own query, ranked by its cosines, checked against the main pipeline (api.simulate) fact by fact."""

import pathlib

import pytest
from test_dense_questions import cosine, session  # the fixed pseudo-cosine and a session with its host

from ragsim.wire import api
from ragsim.wire.audit import audit

COLLECTION = pathlib.Path(__file__).resolve().parents[2] / "assets" / "collection"
DOCS = [{"id": p.name, "text": p.read_text(encoding="utf-8")} for p in sorted(COLLECTION.glob("*.md"))][:2]
CHUNKING = {"unit": "words", "size": 40}


def run(retrieval, overlaps=(0, 10)):
    return audit({"documents": DOCS, "chunking": CHUNKING, "overlaps": list(overlaps), "retrieval": retrieval,
                  "precision_k": 3}, session())


@pytest.mark.parametrize("retrieval", [{"method": "dense"}, {"method": "hybrid", "rrf_c": 5, "weights": [0.3, 0.8]}])
def test_found_in_top_k_is_each_names_own_ranking(retrieval):
    out = run(retrieval)
    assert "error" not in out, out
    facts = out["facts"]
    assert len(facts) > 5
    for row in out["rows"]:
        o = row["overlap"]
        found = 0
        for f in facts:
            numbers = f["answering"][str(o)]
            if not numbers:
                continue
            r = api.simulate({"documents": DOCS, "query": f["name_text"], "chunking": {**CHUNKING, "overlap": o},
                              "retrieval": {"k": 3, **retrieval}}, session())
            best = min(c["rank"] for c in r["chunks"] if c["number"] in numbers)
            found += best <= 3
            assert (o in f["found_at"]) == (best <= 3), f["name_text"]
        assert row["found_top_k"] == found
    assert out["dense"] == {"questions_pending": False, "question_needs": {}, "pending": False}
    bm25 = audit({"documents": DOCS, "chunking": CHUNKING, "overlaps": [0, 10], "precision_k": 3})
    assert [f["found_at"] for f in out["facts"]] != [f["found_at"] for f in bm25["facts"]]
    assert [f["answering"] for f in out["facts"]] == [f["answering"] for f in bm25["facts"]]  # chunking is the same


def test_the_pending_round_trip_by_fact_name():
    direct = run({"method": "hybrid"})
    first = run({"method": "hybrid", "similarities": []})
    assert first["dense"]["pending"] is True
    needs = first["dense"]["question_needs"]
    assert set(needs) == {f["name_text"] for f in first["facts"] if any(f["answering"].values())}
    given = {q: [[*k, cosine(q, next(d["text"] for d in DOCS if d["id"] == k[0])[k[1]:k[2]])] for k in keys]
             for q, keys in needs.items()}
    second = run({"method": "hybrid", "similarities": [], "question_similarities": given})
    assert second["dense"]["pending"] is False
    assert second["facts"] == direct["facts"] and second["rows"] == direct["rows"]
