"""The commands accept the retriever: `eval` and `audit` with --method dense or hybrid give
what the JSON boundary gives for the same request, with the model through onnxruntime."""

import json

import pytest

from ragsim.wire import api
from ragsim.wire.audit import audit
from ragsim.host.commands.audit_cli import main as audit_main
from ragsim.host.commands.eval_cli import main as eval_main

TEXT = ("Retention policy. Hourly snapshots are kept for 48 hours. Daily snapshots are kept for 30 days. "
        "Weekly snapshots last one year. The compaction job runs at 02:00 UTC every night and merges "
        "hourly snapshots into a daily one. Restores take about ten minutes per terabyte.")
QUESTIONS = [
    {"id": "a", "query": "how long are weekly backups retained", "piece": "Weekly snapshots last one year."},
    {"id": "b", "query": "when does the nightly merge happen", "piece": "The compaction job runs at 02:00 UTC"},
]


@pytest.fixture()
def files(tmp_path):
    doc = tmp_path / "policy.txt"
    doc.write_text(TEXT)
    qs = [{"id": q["id"], "query": q["query"], "references": [
        {"doc": str(doc), "start": TEXT.index(q["piece"]), "end": TEXT.index(q["piece"]) + len(q["piece"])}]}
        for q in QUESTIONS]
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps({"questions": qs}))
    return doc, qfile


@pytest.mark.slow
@pytest.mark.parametrize("options, retrieval", [
    (["--method", "dense"], {"method": "dense"}),
    (["--method", "hybrid", "--rrf-c", "5", "--weights", "0.3,0.8"], {"method": "hybrid", "rrf_c": 5, "weights": [0.3, 0.8]}),
])
def test_eval_ranks_with_the_chosen_retriever(files, capsys, options, retrieval):
    doc, qfile = files
    assert eval_main([str(doc), "--questions", str(qfile), "--unit", "words", "--size", "8", "--overlap", "2", "--k", "1", "--json", *options]) == 0
    got = json.loads(capsys.readouterr().out)
    request = {"documents": [{"id": str(doc), "title": doc.name, "text": TEXT}], "query": "",
               "chunking": {"strategy": "window", "size": 8, "overlap": 2}, "retrieval": {"k": 1, **retrieval},
               "questions": [{"id": q["id"], "query": q["query"], "references": [
                   {"doc": str(doc), "start": TEXT.index(q["piece"]), "end": TEXT.index(q["piece"]) + len(q["piece"])}]}
                   for q in QUESTIONS]}
    want = api.simulate(request)
    assert "error" not in want
    assert got["questions"] == want["questions"]
    assert got["question_stats"] == want["question_stats"]


def test_audit_ranks_with_the_chosen_retriever(files, capsys):
    doc, _ = files
    assert audit_main([str(doc), "--size", "60", "--overlaps", "0,20", "--method", "hybrid", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = audit({"documents": [{"id": str(doc), "title": doc.name, "text": TEXT}],
                  "chunking": {"strategy": "window", "unit": "chars", "size": 60}, "overlaps": [0, 20],
                  "precision_k": 3, "retrieval": {"method": "hybrid"}})
    assert got == want


@pytest.mark.parametrize("command", ["eval", "audit"])
def test_an_unknown_retriever_is_a_refusal(files, capsys, command):
    doc, qfile = files
    if command == "eval":
        code = eval_main([str(doc), "--questions", str(qfile), "--method", "neural"])
    else:
        code = audit_main([str(doc), "--method", "neural"])
    assert code == 2
    err = capsys.readouterr().err
    assert "retrieval.method" in err and "Traceback" not in err
