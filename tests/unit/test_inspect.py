"""ragsim.wire.inspect on small hand cases (SPEC section 11): stored records or a chunk file's text in,
the placed chunks, the phrase checks, the verdicts of the one engine and the facts destroyed out."""

import json

from ragsim.wire import chunk_files
from ragsim.wire.api import simulate
from ragsim.wire.inspect import export_records, inspect, inspect_json, ranking_verdicts

TEXT = "The Galle Ring orbits at 42,000 km. Kestrel Station has 14 crew. The ring is made of ice. "
#       0         1         2         3         4         5         6         7         8
#       0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890
CUTS = [(0, 40), (40, 70), (70, len(TEXT))]  # no overlap: "Kestrel Station has 14 crew" is cut at 40


def records(doc="notes/d.txt", cuts=CUTS):
    return [{"id": f"c{i}", "text": TEXT[a:b], "doc": doc, "metadata": {"source": doc}, "start": None, "end": None}
            for i, (a, b) in enumerate(cuts)]


SOURCE = [{"id": "/home/me/notes/d.txt", "title": "d.txt", "text": TEXT}]


def test_chunks_placed_in_the_source_they_name_by_file_name():
    out = inspect({"chunks": records(), "documents": SOURCE})
    assert out["documents"] == [{"id": "/home/me/notes/d.txt", "chunks": 3, "placed": 3, "unplaced": 0,
                                 "rebuilt": False, "gaps": []}]
    assert [(c["id"], c["start"], c["end"], c["placement"]) for c in out["chunks"]] == \
           [("c0", 0, 40, "exact"), ("c1", 40, 70, "exact"), ("c2", 70, len(TEXT), "exact")]
    assert out["unplaced"] == [] and out["stats"]["boundaries_without_overlap"] == 2


def test_a_cut_phrase_is_absent_with_its_boundary_and_the_overlap_that_keeps_it():
    out = inspect({"chunks": records(), "documents": SOURCE, "phrases": ["Kestrel Station has 14 crew", "Galle Ring"]})
    cut, whole = out["phrases"]
    assert (cut["verdict"], cut["start"], cut["end"], cut["chunks"]) == ("absent", 36, 63, [])
    assert cut["cut_by"] == [{"end_of": "c0", "start_of": "c1", "at": 40}] and cut["overlap_needed"] == 27
    assert (whole["verdict"], whole["chunks"], whole["source"]) == ("present", ["c0"], "phrase")
    # the fact audit over the same chunks: Kestrel Station's crew is destroyed, the ring's orbit is not
    destroyed = [(f["name"], f["value"]) for f in out["facts"]["destroyed"]]
    assert ("Kestrel Station", "14 crew") in destroyed and ("Galle Ring", "42,000 km") not in destroyed


def test_verdicts_are_simulate_s_over_the_stored_extents():
    questions = [{"id": "crew", "query": "Kestrel crew", "references": [{"doc": SOURCE[0]["id"], "start": 36, "end": 64}]},
                 {"id": "ring", "query": "made of ice", "references": [{"doc": SOURCE[0]["id"], "start": 74, "end": 89}]}]
    request = {"chunks": records(), "documents": SOURCE, "questions": questions, "query": "Galle Ring orbit",
               "span": {"doc": SOURCE[0]["id"], "start": 0, "end": 35}, "retrieval": {"k": 1}}
    out = inspect(request)
    want = simulate({"documents": SOURCE, "query": "Galle Ring orbit", "retrieval": {"k": 1}, "questions": questions,
                     "span": request["span"], "chunking": {"strategy": "stored", "chunks": {SOURCE[0]["id"]: [list(c) for c in CUTS]}}})
    assert out["verdict"] == want["verdict"] and out["verdict"]["kind"] == "intact"
    assert [{k: v for k, v in q.items() if k not in ("retrieved_ids", "query")} for q in out["questions"]] == want["questions"]
    assert [q["verdict"] for q in out["questions"]] == ["cut", "intact"]
    assert out["questions"][1]["retrieved_ids"] == ["c2"]
    refs = [p for p in out["phrases"] if p["source"].startswith("question")]
    assert [(p["source"], p["verdict"]) for p in refs] == [("question crew", "absent"), ("question ring", "present")]
    assert ranking_verdicts(out, {"crew": ["c0", "c1"], "ring": ["c0"]}) == {"crew": "cut", "ring": "ranked_out"}


def test_without_sources_the_document_is_rebuilt_and_unplaced_chunks_are_counted():
    rows = records(cuts=[(0, 45), (35, 80), (70, len(TEXT))])
    rows.append({"id": "x", "text": "Nothing like this was stored.", "doc": "notes/d.txt", "start": 3, "end": 9})
    out = inspect({"chunks": rows[:3]})
    assert out["documents"][0]["rebuilt"] and out["documents"][0]["gaps"] == []
    assert [c["placement"] for c in out["chunks"]] == ["exact"] * 3
    out = inspect({"chunks": rows, "documents": SOURCE})
    assert out["unplaced"] == ["x"] and out["documents"][0]["unplaced"] == 1
    assert out["chunks"][3]["placement"] == "unplaced"


def test_a_chunk_file_and_an_export_read_back():
    lines = "".join(json.dumps({"page_content": r["text"], "metadata": r["metadata"]}) + "\n" for r in records())
    out = inspect({"file": {"name": "chunks.jsonl", "text": lines}, "documents": SOURCE})
    assert [c["id"] for c in out["chunks"]] == ["0", "1", "2"] and out["documents"][0]["placed"] == 3
    exported = export_records({"chunks": records(), "documents": SOURCE})
    assert [(r["doc"], r["start"], r["end"], r["placement"]) for r in exported][0] == (SOURCE[0]["id"], 0, 40, "exact")
    text = "".join(json.dumps(r) + "\n" for r in exported)
    assert chunk_files.parse("export.jsonl", text)[1][1]["start"] == 40
    again = inspect({"file": {"name": "export.jsonl", "text": text}, "documents": SOURCE})
    assert again == inspect({"chunks": records(), "documents": SOURCE})


def test_bad_requests_name_the_field():
    assert inspect({})["error"]["field"] == "chunks"
    assert inspect({"chunks": records(), "file": {"name": "a.jsonl", "text": ""}})["error"]["field"] == "chunks"
    assert inspect({"file": {"name": "a.txt", "text": "x"}})["error"]["field"] == "store"
    assert inspect({"file": {"name": "docstore.json", "text": "{}"}})["error"]["message"].startswith("docstore.json is not")
    err = inspect({"chunks": records(), "documents": SOURCE, "phrases": ["not in the text"]})["error"]
    assert err["field"] == "phrases[0]" and "none of the documents" in err["message"]
    assert json.loads(inspect_json("{not json"))["error"]["field"] == "request"


def test_pdf_pages_are_matched_by_the_chunk_s_page_metadata():
    pages = [{"id": "docs/r.pdf#page=1", "title": "r, page 1", "text": "First page text here."},
             {"id": "docs/r.pdf#page=2", "title": "r, page 2", "text": TEXT}]
    rows = [{"id": "p", "text": TEXT[:40], "doc": "docs/r.pdf", "metadata": {"source": "docs/r.pdf", "page": 1},
             "start": 0, "end": 40}]
    out = inspect({"chunks": rows, "documents": pages})
    assert out["chunks"][0]["doc"] == "docs/r.pdf#page=2" and out["chunks"][0]["placement"] == "offsets"
