"""`python -m ragsim eval`: the table, --json, the map, and the exit statuses for bad input."""

import functools
import json

import pytest

from helpers import CORE, ROOT, run_cli

TEXT = ("The lighthouse keeper logs the weather at dawn. Ships wait outside the harbour when fog rolls in. "
        "The pilot boat leaves at nine. Cargo is weighed on the north quay before noon. "
        "Fishermen sell their catch at the market by the church.")


def sentence(s):
    a = TEXT.index(s)
    return a, a + len(s)


run_eval = functools.partial(run_cli, "eval", cwd=CORE)  # `python -m ragsim eval ARGS`, run in py/


@pytest.fixture()
def files(tmp_path):
    doc = tmp_path / "harbour.txt"
    doc.write_text(TEXT, encoding="utf-8")
    fog, cargo = sentence("Ships wait outside the harbour when fog rolls in."), sentence("Cargo is weighed on the north quay before noon.")
    rows = [["question", "references", "corpus_id"],
            ["When do ships wait outside the harbour?", json.dumps([{"content": TEXT[slice(*fog)], "start_index": fog[0], "end_index": fog[1]}]), "harbour"],
            ["Where is cargo weighed?", json.dumps([{"content": TEXT[slice(*cargo)], "start_index": cargo[0], "end_index": cargo[1]}]), "harbour.txt"]]
    import csv

    with open(tmp_path / "q.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    ours = {"questions": [{"id": "fog", "query": "fog harbour ships",
                           "references": [{"doc": str(doc), "start": fog[0], "end": fog[1]}]}]}
    (tmp_path / "q.json").write_text(json.dumps(ours), encoding="utf-8")
    return doc, tmp_path / "q.csv", tmp_path / "q.json"


@pytest.mark.slow
def test_table_for_a_chroma_csv(files):
    doc, qcsv, _ = files
    out = run_eval(doc, "--questions", qcsv, "--unit", "words", "--size", "12", "--overlap", "3", "--k", "1")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:4] == ["id", "question", "verdict", "needed_k"]
    assert [ln.split()[0] for ln in lines[1:3]] == ["1", "2"]  # numbered as the page numbers them
    assert "2 questions at window size 12 words overlap 3, k 1:" in out.stdout


@pytest.mark.slow
def test_json_is_the_response_in_input_order_with_the_map(files):
    doc, qcsv, qjson = files
    out = run_eval(doc, "--questions", qcsv, "--unit", "words", "--size", "12", "--k", "2", "--map-sizes", "6,12,40",
              "--map-overlaps", "0,3,8", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert [q["id"] for q in r["questions"]] == ["1", "2"]
    assert r["question_stats"]["count"] == 2
    assert r["map"]["sizes"] == [6, 12, 40] and r["map"]["cells"][0][2] is None  # overlap 8 >= size 6
    assert r["map"]["cells"][2][0]["intact"] == 2  # one 40-word chunk holds the whole text
    ours = json.loads(run_eval(doc, "--questions", qjson, "--size", "12", "--json").stdout)
    assert [q["id"] for q in ours["questions"]] == ["fog"]


@pytest.mark.parametrize("args, code, words", [
    (["--size", "5", "--overlap", "5"], 2, "chunking.overlap"),
    (["--map-sizes", "10"], 2, "--map-sizes and --map-overlaps together"),
    (["--map-sizes", "1,2,x", "--map-overlaps", "0"], 2, "--map-sizes takes whole numbers"),
    (["--map-sizes", ",".join(map(str, range(1, 22))), "--map-overlaps", ",".join(map(str, range(20)))], 2,
     "ask for at most 400"),
])
def test_bad_settings_exit_2_with_one_line(files, args, code, words):
    doc, qcsv, _ = files
    out = run_eval(doc, "--questions", qcsv, *args)
    assert out.returncode == code and words in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


@pytest.mark.slow
def test_bad_question_files(files, tmp_path):
    doc, qcsv, _ = files
    a, b = sentence("The pilot boat leaves at nine.")
    moved = [{"content": TEXT[a:b], "start_index": a + 1, "end_index": b + 1}]
    (tmp_path / "moved.csv").write_text(f"question,references,corpus_id\nq,\"{json.dumps(moved).replace(chr(34), chr(34) * 2)}\",harbour\n",
                                        encoding="utf-8")
    out = run_eval(doc, "--questions", tmp_path / "moved.csv")
    assert out.returncode == 2 and "question 1 (line 2)" in out.stderr and "is not the text at" in out.stderr
    (tmp_path / "cols.csv").write_text("question,refs\nx,y\n", encoding="utf-8")
    out = run_eval(doc, "--questions", tmp_path / "cols.csv")
    assert out.returncode == 2 and "needs the columns" in out.stderr
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    out = run_eval(doc, "--questions", tmp_path / "bad.json")
    assert out.returncode == 2 and "not valid JSON" in out.stderr
    (tmp_path / "other.csv").write_text(qcsv.read_text(encoding="utf-8").replace(",harbour", ",budget"), encoding="utf-8")
    out = run_eval(doc, "--questions", tmp_path / "other.csv")
    assert out.returncode == 2 and "corpus_id 'budget' names no document" in out.stderr


@pytest.mark.slow
def test_unreadable_files_exit_1(files, tmp_path):
    doc, qcsv, _ = files
    out = run_eval(tmp_path / "missing.txt", "--questions", qcsv)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01")
    out = run_eval(tmp_path / "bin.txt", "--questions", qcsv)
    assert out.returncode == 1 and "looks binary" in out.stderr
    out = run_eval(doc, "--questions", tmp_path / "nope.csv")
    assert out.returncode == 1


@pytest.mark.slow
def test_eval_reads_a_ragas_set_of_answers_as_text(tmp_path):
    """A RAGAS EvaluationDataset as to_jsonl writes it: each answer found in the file; one that occurs
    twice is refused naming both places, and counts at both with --every-occurrence."""
    samples = [{"user_input": "When does the pilot boat leave?", "reference": "at nine in the morning",
                "retrieved_contexts": [], "response": "nine"},
               {"user_input": "Where do ships wait?", "reference": "berths"}]
    qs = tmp_path / "ragas.jsonl"
    qs.write_text("\n".join(json.dumps(s) for s in samples), encoding="utf-8")
    out = run_eval(ROOT / "examples" / "harbour.md", "--questions", qs, "--json")
    assert out.returncode == 2 and "the answer 'berths' occurs 2 times" in out.stderr, out.stderr
    out = run_eval(ROOT / "examples" / "harbour.md", "--questions", qs, "--every-occurrence", "--json")
    assert out.returncode == 0, out.stderr
    assert [q["verdict"] for q in json.loads(out.stdout)["questions"]] == ["intact", "intact"]
