"""Issue 26: a question set over a whole knowledge base, streamed in batches, gives each question
the verdict, needed_k, metrics and retrieved chunks one request over the same documents gives."""

import json
import pathlib
import random

import pytest

from ragsim.host import eval_run, jsonl_out, pool, sources
from ragsim.host.progress import Progress
from ragsim.wire.api import simulate

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


def one_request(chunking, k, questions):
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")}
            for p in COLLECTION]
    by_name = {pathlib.Path(p).name: p for p in COLLECTION}
    asked = [{**q, "references": [{**r, "doc": by_name[r["doc"]]} for r in q["references"]]}
             for q in questions["questions"]]
    return simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": {"k": k},
                     "questions": asked})


def streamed(chunking, k, questions, engine, batch=5000):
    files, skipped = sources.walk(COLLECTION)
    plan = eval_run.Plan(chunking=chunking, retrieval={"k": k}, questions_text=json.dumps(questions),
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
