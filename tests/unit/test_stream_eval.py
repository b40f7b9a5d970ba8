"""A question set over a whole knowledge base, streamed in batches, gives each question
the verdict, needed_k, metrics and retrieved chunks one request over the same documents gives."""

import json
import pathlib
import random

import pytest

from helpers import run_cli
from ragsim.host.jobs import eval_run
from ragsim.host.corpus import jsonl_out, pool, sources
from ragsim.host.corpus.progress import Progress
from ragsim.wire.api import simulate
from test_stream_audit import StopAfter  # Ctrl-C at the n-th batch ranked

pytestmark = pytest.mark.slow  # process pools and a Dask cluster

ROOT = pathlib.Path(__file__).resolve().parents[2]
COLLECTION = sorted(str(p) for p in (ROOT / "assets" / "collection").glob("*.md"))


def question_set():
    """Questions on sentences of the collection: their own words asked (intact or ranked out), a
    few words of another document (ranked out or cut), words found nowhere (every chunk scores 0)."""
    rng = random.Random(26)
    out = []
    for i, path in enumerate(COLLECTION):
        text = pathlib.Path(path).read_text(encoding="utf-8")
        for j in range(4):
            start = rng.randrange(0, len(text) - 400)
            start = text.index(" ", start) + 1
            end = start + rng.randrange(60, 380)
            words = text[start:end].split()
            query = " ".join(rng.sample(words, min(len(words), 4))) if j < 3 else "zqxj vorpal"
            out.append({"id": f"{i}-{j}", "query": query,
                        "references": [{"doc": pathlib.Path(path).name, "start": start, "end": end}]})
    return {"questions": out}


def one_request(chunking, k, questions, grid=None):
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")}
            for p in COLLECTION]
    by_name = {pathlib.Path(p).name: p for p in COLLECTION}
    asked = [{**q, "references": [{**r, "doc": by_name[r["doc"]]} for r in q["references"]]}
             for q in questions["questions"]]
    extra = {} if grid is None else {"map": {"sizes": grid[0], "overlaps": grid[1]}}
    return simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": {"k": k},
                     "questions": asked, **extra})


def streamed(chunking, k, questions, engine, batch=5000, files=COLLECTION, retrieval=None):
    files, skipped = sources.walk(files)
    plan = eval_run.Plan(chunking=chunking, retrieval={"k": k, **(retrieval or {})}, questions_text=json.dumps(questions),
                         questions_name="q.json", files=files, batch_bytes=batch, skipped=skipped)
    out = jsonl_out.Output(None)
    try:
        return eval_run.run(plan, engine, out, Progress(1, 1, quiet=True))
    finally:
        out.close()


@pytest.mark.parametrize("chunking,k", [
    ({"strategy": "window", "unit": "words", "size": 60, "overlap": 10}, 3),
    ({"strategy": "window", "unit": "chars", "size": 300, "overlap": 0}, 1),
])
def test_streamed_question_set_equals_one_request(chunking, k):
    questions = question_set()
    expected = one_request(chunking, k, questions)
    got = streamed(chunking, k, questions, pool.Local(1))
    assert got["questions"] == expected["questions"]
    assert got["question_stats"] == expected["question_stats"]
    verdicts = {q["verdict"] for q in got["questions"]}
    assert {"intact", "ranked_out"} <= verdicts
    assert streamed(chunking, k, questions, pool.Local(2))["questions"] == expected["questions"]


def test_streamed_eval_on_a_dask_cluster_equals_the_pool():
    distributed = pytest.importorskip("dask.distributed")
    chunking, k = {"strategy": "window", "unit": "words", "size": 60, "overlap": 10}, 3
    questions = question_set()
    expected = one_request(chunking, k, questions)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        engine = pool.Dask(cluster.scheduler_address)
        try:
            got = streamed(chunking, k, questions, engine)
        finally:
            engine.close()
    assert got["questions"] == expected["questions"] and got["question_stats"] == expected["question_stats"]


def test_an_interrupted_question_set_resumes_to_the_uninterrupted_output(tmp_path):
    from ragsim.host.jobs import audit_run

    chunking, k, questions = {"strategy": "window", "unit": "words", "size": 60, "overlap": 10}, 3, question_set()
    files, _ = sources.walk(COLLECTION)

    def run(path, progress, resume=False):
        plan = eval_run.Plan(chunking=chunking, retrieval={"k": k}, questions_text=json.dumps(questions),
                             questions_name="q.json", files=files, batch_bytes=5000)
        out = jsonl_out.Output(str(path))
        try:
            return eval_run.run(plan, pool.Local(1), out, progress, resume=resume)
        finally:
            out.close()

    whole = run(tmp_path / "whole.jsonl", Progress(1, 1, quiet=True))
    with pytest.raises(audit_run.Interrupted, match="--resume"):
        run(tmp_path / "part.jsonl", StopAfter(2))
    lines = (tmp_path / "part.jsonl.part").read_text(encoding="utf-8").splitlines()  # moved into place when whole
    assert lines and all(json.loads(line)["type"] == "document" for line in lines)
    run(tmp_path / "part.jsonl", Progress(1, 1, quiet=True), resume=True)
    assert (tmp_path / "part.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    last = json.loads((tmp_path / "whole.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "summary" and last["question_stats"] == whole["question_stats"]


def test_eval_reads_a_directory_on_the_command_line(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps(question_set()), encoding="utf-8")
    (tmp_path / "kb").mkdir()
    for p in COLLECTION:
        (tmp_path / "kb" / pathlib.Path(p).name).write_bytes(pathlib.Path(p).read_bytes())
    (tmp_path / "kb" / "logo.md").write_bytes(b"\x00PNG")
    out = run_cli("eval", tmp_path / "kb", "--questions", tmp_path / "q.json", "--unit", "words", "--size", "60", "--overlap",
                  "10", "--k", "3", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "logo.md" in out.stderr and "looks binary" in out.stderr
    expected = one_request({"strategy": "window", "unit": "words", "size": 60, "overlap": 10}, 3, question_set())
    got = json.loads(out.stdout)
    assert [q["verdict"] for q in got["questions"]] == [q["verdict"] for q in expected["questions"]]
    assert got["question_stats"] == expected["question_stats"]


MAP_CHUNKING, MAP = {"strategy": "window", "unit": "words", "size": 60, "overlap": 10}, ([40, 60], [0, 10, 50])


def test_the_settings_map_over_a_streamed_corpus_is_one_requests_map():
    """Each cell a streamed run of its own (a refused one, overlap 50 at size 40, null): one request's
    cells, bit for bit; the cell at the run's own setting is the run itself."""
    questions = question_set()
    expected = one_request(MAP_CHUNKING, 3, questions, MAP)["map"]
    got = streamed(MAP_CHUNKING, 3, questions, pool.Local(1))
    files, _ = sources.walk(COLLECTION)
    plan = eval_run.Plan(chunking=MAP_CHUNKING, retrieval={"k": 3}, questions_text=json.dumps(questions),
                         questions_name="q.json", files=files, batch_bytes=5000)
    grid = eval_run.map_cells(plan, pool.Local(2), Progress(1, 1, quiet=True), *MAP, known=got)
    assert grid == expected
    assert grid["cells"][0][2] is None and len({c["intact"] for row in grid["cells"] for c in row if c}) > 1
    older = {k: v for k, v in got.items() if k != "chunks"}  # resumed from an output of before the chunks
    assert eval_run.map_cells(plan, pool.Local(1), Progress(1, 1, quiet=True), *MAP, known=older) == expected


def test_eval_streams_a_directorys_map_on_the_command_line(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps(question_set()), encoding="utf-8")
    (tmp_path / "kb").mkdir()
    for p in COLLECTION:
        (tmp_path / "kb" / pathlib.Path(p).name).write_bytes(pathlib.Path(p).read_bytes())
    out = run_cli("eval", tmp_path / "kb", "--questions", tmp_path / "q.json", "--unit", "words", "--size", "60", "--overlap",
                  "10", "--k", "3", "--map-sizes", "40,60", "--map-overlaps", "0,10,50", "--quiet", timeout=300)
    assert out.returncode == 0, out.stderr
    expected = one_request(MAP_CHUNKING, 3, question_set(), MAP)["map"]
    rows = [line for line in out.stdout.splitlines() if line.strip().startswith(("40 |", "60 |"))]
    assert len(rows) == 2 and rows[0].split("|")[3].strip() == "-"
    assert rows[1].split("|")[1].strip() == f"{expected['cells'][1][0]['intact']} " \
                                            f"({expected['cells'][1][0]['context_tokens_mean']:.0f} tok)"


def test_the_resume_fingerprint_is_the_same_in_every_process():
    """--resume runs in a new process: its checkpoint's fingerprint must not hang on a per-process hash."""
    import os
    import subprocess
    import sys

    code = ("import json, sys; from ragsim.host.jobs import eval_run; from ragsim.host.corpus import sources; "
            "print(eval_run.Plan(chunking={'size': 60}, retrieval={'k': 3}, questions_text='{\"questions\": []}', "
            "questions_name='q.json', files=sources.walk(sys.argv[1:])[0]).fingerprint())")
    prints = {subprocess.run([sys.executable, "-c", code, *COLLECTION], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PYTHONPATH": str(ROOT / "py"), "PYTHONHASHSEED": seed}).stdout
              for seed in ("1", "2")}
    assert len(prints) == 1 and len(prints.pop().strip()) == 64
