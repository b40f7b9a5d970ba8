"""The semantic chunkers over a knowledge base, streamed. `eval` and `audit` with
a semantic chunker (BM25) run in batches like every splitter and give one request's numbers; each
document's sentence windows are embedded once (the referenced pass takes the count pass's kept
distances). In process with the tests' hashed embedding; one run on two worker processes embeds with
the real model (onnxruntime's all-MiniLM-L6-v2, registered by `ragsim.host` in every worker)."""

import json
import pathlib

import pytest

from helpers import run_cli
from ragsim.host.corpus import pool
from ragsim.split import semantic
from test_cli_semantic import host  # noqa: F401  (the fixture: a hashed embedding that counts its texts)
from test_stream_audit import COLLECTION, one_request as audit_one_request, streamed as audit_streamed
from test_stream_eval import one_request as eval_one_request, question_set, streamed as eval_streamed

pytestmark = pytest.mark.slow  # process pools and the real model

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHUNKINGS = [{"strategy": "langchain-semantic", "breakpoint_threshold_amount": 80},
             {"strategy": "llamaindex-semantic"},
             {"strategy": "chroma-cluster", "size": 200}]


def windows(chunking) -> int:
    return sum(len(semantic.texts_to_embed(pathlib.Path(p).read_text(encoding="utf-8"), chunking)) for p in COLLECTION)


@pytest.mark.parametrize("chunking", CHUNKINGS, ids=lambda c: c["strategy"])
def test_a_streamed_question_set_with_a_semantic_chunker_equals_one_request_embedding_each_document_once(host, chunking):
    questions = question_set()
    expected = eval_one_request(chunking, 3, questions)
    host.texts = 0
    got = eval_streamed(chunking, 3, questions, pool.Local(1))
    assert got["questions"] == expected["questions"] and got["question_stats"] == expected["question_stats"]
    assert {"intact", "cut"} <= {q["verdict"] for q in got["questions"]}
    assert host.texts == windows(chunking)  # every document is referenced, and embedded once


def test_a_streamed_audit_with_a_semantic_chunker_is_one_row_and_equals_one_request(host):
    chunking = {"strategy": "chroma-kamradt", "size": 100, "min_chunk_size": 20}
    expected = audit_one_request(COLLECTION, chunking, [0])
    host.texts = 0
    summary, facts = audit_streamed(COLLECTION, chunking, [0], pool.Local(1))
    assert facts == expected["facts"] and summary["rows"] == expected["rows"]
    assert [r["overlap"] for r in summary["rows"]] == [0] and summary["rows"][0]["chunks"] > len(COLLECTION)
    assert host.texts == windows(chunking)


def test_the_command_line_streams_a_semantic_question_set_on_two_workers_with_the_model(tmp_path):
    pytest.importorskip("onnxruntime")
    import ragsim.host
    from ragsim.wire.api import simulate

    ragsim.host.register()  # the model as the semantic chunkers' host, as each worker registers it
    files = COLLECTION[:3]
    names = {pathlib.Path(p).name: p for p in files}
    questions = {"questions": [q for q in question_set()["questions"] if q["references"][0]["doc"] in names]}
    (tmp_path / "q.json").write_text(json.dumps(questions), encoding="utf-8")
    chunking = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": 85}
    done = run_cli("eval", *files, "--questions", tmp_path / "q.json", "--chunking", json.dumps(chunking), "--k", "2",
                   "--json", "--quiet", "--workers", "2", "--batch-kb", "8", timeout=300)
    assert done.returncode == 0, done.stderr
    streamed = json.loads(done.stdout)
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in files]
    asked = [{**q, "references": [{**r, "doc": names[r["doc"]]} for r in q["references"]]} for q in questions["questions"]]
    whole = simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": {"k": 2}, "questions": asked})
    assert [q["verdict"] for q in streamed["questions"]] == [q["verdict"] for q in whole["questions"]]
    assert streamed["question_stats"] == whole["question_stats"]


def test_a_semantic_chunkers_map_on_its_own_axes_streams_as_one_request_maps_it(host):
    """LangChain's map: threshold x min_chunk_size, each cell a streamed run: one request's cells."""
    import json

    from ragsim.host.jobs import eval_run
    from ragsim.host.corpus import sources
    from ragsim.host.corpus.progress import Progress

    chunking, grid, questions = CHUNKINGS[0], ([70, 90], [0, 300]), question_set()
    expected = eval_one_request(chunking, 3, questions, grid)["map"]
    files, _ = sources.walk(COLLECTION)
    plan = eval_run.Plan(chunking=chunking, retrieval={"k": 3}, questions_text=json.dumps(questions),
                         questions_name="q.json", files=files, batch_bytes=5000)
    got = eval_run.map_cells(plan, pool.Local(1), Progress(1, 1, quiet=True), *grid)
    assert got == expected
    assert len({c["chunks"] for row in got["cells"] for c in row}) == 4  # every axis moves the cuts


@pytest.mark.parametrize("chunking", [CHUNKINGS[0], {"strategy": "window", "unit": "words", "size": 60, "overlap": 10}],
                         ids=lambda c: c["strategy"])
def test_a_streamed_runs_contexts_are_the_ones_one_request_sends(host, chunking):
    """`eval --ask` over a streamed corpus: each question's context (its top k chunks' texts, a semantic
    chunker's re-joined ones), as one request's `context` for the question's query."""
    import json

    from ragsim.host.jobs import eval_run
    from ragsim.host.corpus import jsonl_out, sources
    from ragsim.host.corpus.progress import Progress
    from ragsim.wire.api import simulate

    questions = question_set()
    files, _ = sources.walk(COLLECTION)
    plan = eval_run.Plan(chunking=chunking, retrieval={"k": 3}, questions_text=json.dumps(questions),
                         questions_name="q.json", files=files, batch_bytes=5000)
    result = eval_run.run(plan, pool.Local(1), jsonl_out.Output(None), Progress(1, 1, quiet=True))
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in COLLECTION]
    got = list(eval_run.contexts(result, chunking))
    assert len(got) == len(questions["questions"])
    rejoined = 0
    for (query, context, answers), q in zip(got, questions["questions"]):
        one = simulate({"documents": docs, "query": query, "chunking": chunking, "retrieval": {"k": 3}})
        assert query == q["query"] and context == one["context"] and answers
        rejoined += not all(part in "".join(d["text"] for d in docs) for part in context.split("\n\n"))
    if chunking["strategy"] == "langchain-semantic":
        assert rejoined  # some chunk is the library's re-joined text, not a slice
