"""`eval --method dense` over a streamed corpus embeds the chunks on the workers, a batch at
a time (`host.jobs.eval_dense`), and gives every question the verdict, needed_k, metrics and retrieved
chunks one request's dense eval gives: in this process, on a pool of 2 and on a Dask LocalCluster."""

import json
import pathlib

import pytest

from helpers import run_cli
import ragsim.host
from ragsim.host.jobs import eval_dense
from ragsim.host.corpus import pool
from ragsim.host.clients.embed_onnx import default_embedder
from ragsim.wire.api import simulate
import test_stream_eval as stream_eval
from test_stream_eval import question_set
from test_cli_semantic import host  # noqa: F401  (the fixture: a hashed embedding that counts its texts)

pytestmark = pytest.mark.slow  # process pools, a Dask cluster and the real model

ragsim.host.register()  # the onnxruntime embedder one request uses

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = sorted(str(p) for p in (ROOT / "assets" / "collection").glob("*.md"))[:3]  # small: every chunk is embedded
CHUNKING, K = {"strategy": "window", "unit": "words", "size": 100, "overlap": 40}, 2
RETRIEVAL = {"k": K, "method": "dense"}


def questions():
    names = {pathlib.Path(p).name for p in FILES}
    return {"questions": [q for q in question_set()["questions"] if q["references"][0]["doc"] in names]}


def one_request(chunking, grid=None):
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in FILES]
    by_name = {pathlib.Path(p).name: p for p in FILES}
    asked = [{**q, "references": [{**r, "doc": by_name[r["doc"]]} for r in q["references"]]}
             for q in questions()["questions"]]
    extra = {} if grid is None else {"map": {"sizes": grid[0], "overlaps": grid[1]}}
    got = simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": RETRIEVAL, "questions": asked,
                    **extra})
    assert "error" not in got
    return got


@pytest.fixture(scope="module")
def expected():
    return one_request(CHUNKING)


def streamed(engine, chunking=CHUNKING):
    return stream_eval.streamed(chunking, K, questions(), engine, files=FILES, retrieval={"method": "dense"})


def test_streamed_dense_eval_equals_one_request_in_one_process(expected):
    got = streamed(pool.Local(1))
    assert got["questions"] == expected["questions"]
    assert got["question_stats"] == expected["question_stats"]
    verdicts = {q["verdict"] for q in got["questions"]}
    assert {"intact", "ranked_out"} <= verdicts
    assert any(q["needed_k"] and q["needed_k"] > 10 for q in got["questions"])  # a rank counted across batches


def test_the_workers_cosines_are_one_requests_within_1e_4():
    text = pathlib.Path(FILES[0]).read_text(encoding="utf-8")
    chunks = [text[i:i + 400] for i in range(0, 4000, 400)]
    query = "How is the river's flow kept for the fish?"
    mine = eval_dense.cosines({"queries": [query, "locks"], "threads": 1}, chunks)[0]
    theirs = default_embedder().similarities(query, chunks)
    assert max(abs(a - b) for a, b in zip(mine, theirs)) < 1e-4
    assert sorted(range(len(chunks)), key=lambda i: -mine[i]) == sorted(range(len(chunks)), key=lambda i: -theirs[i])
    # a chunk's cosine is the same bits in any batch (a span's threshold is compared with it exactly)
    alone = [eval_dense.cosines({"queries": [query, "locks"], "threads": 1}, chunks[i:i + 3])[0] for i in range(0, 10, 3)]
    assert [x for part in alone for x in part.tolist()] == mine.tolist()


def test_one_requests_cosines_give_the_same_text_the_same_bits_wherever_it_stands():
    """Two chunks of one text tie exactly, so they rank by position (SPEC section 3). A matrix-vector
    product rounded the rows of its last, partial block of four apart from the others (27 rows: 24, 25
    and 26), which put chunk 25 before chunk 23 of the same text in one request and not in a stream."""
    text = pathlib.Path(FILES[2]).read_text(encoding="utf-8")
    texts = [text[i:i + 180] for i in range(0, 180 * 27, 180)]
    for i in (0, 5, 22, 24, 25, 26):
        texts[i] = "Tollen Lock No."
    got = default_embedder().similarities("Which lock is at Tollen?", texts)
    assert len({got[i] for i in (0, 5, 22, 24, 25, 26)}) == 1
    assert len(set(got)) > 2


def test_streamed_dense_eval_on_two_workers_from_the_command_line(expected, tmp_path):
    (tmp_path / "q.json").write_text(json.dumps(questions()), encoding="utf-8")
    out = run_cli("eval", *FILES, "--questions", tmp_path / "q.json", "--unit", "words", "--size", "100", "--overlap", "40", "--k", K,
                  "--method", "dense", "--workers", "2", "--batch-kb", "5", "--json", "--quiet", timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert "skipped" in got and "chunk_columns" not in got  # the streamed run's answer, not one request's
    assert got["questions"] == expected["questions"]
    assert got["question_stats"] == expected["question_stats"]


def test_streamed_dense_eval_on_a_dask_cluster_equals_one_request(expected):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        engine = pool.Dask(cluster.scheduler_address)
        try:
            got = streamed(engine)
        finally:
            engine.close()
    assert got["questions"] == expected["questions"]
    assert got["question_stats"] == expected["question_stats"]


def test_a_dense_settings_map_over_a_streamed_corpus_is_one_requests_map(expected):
    from ragsim.host.jobs import eval_run
    from ragsim.host.corpus import sources
    from ragsim.host.corpus.progress import Progress

    grid = ([70, 100], [0, 40])
    files, _ = sources.walk(FILES)
    plan = eval_run.Plan(chunking=CHUNKING, retrieval={"k": K, **RETRIEVAL}, questions_text=json.dumps(questions()),
                         questions_name="q.json", files=files, batch_bytes=5000)
    got = eval_run.map_cells(plan, pool.Local(1), Progress(1, 1, quiet=True), *grid, known=streamed(pool.Local(1)))
    assert got == one_request(CHUNKING, grid)["map"]


SEMANTIC = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": 80}


def test_dense_over_a_semantic_chunkers_chunks_streams_and_embeds_each_document_once(host):
    """The semantic chunker's windows (the tests' hashed embedding, which counts them) embedded once a
    document, its chunks ranked by the model's cosines: one request's verdicts and metrics."""
    from ragsim.split import semantic

    expected = one_request(SEMANTIC)
    host.texts = 0
    got = streamed(pool.Local(1), SEMANTIC)
    assert got["questions"] == expected["questions"] and got["question_stats"] == expected["question_stats"]
    assert len({q["verdict"] for q in got["questions"]}) > 1
    windows = sum(len(semantic.texts_to_embed(pathlib.Path(p).read_text(encoding="utf-8"), SEMANTIC)) for p in FILES)
    assert host.texts == windows  # the count pass embeds each document; the other passes read what it kept
    from ragsim.host.commands import eval_cli

    assert eval_cli.streams(eval_cli._parser().parse_args(["a.md", "--questions", "q.json", "--method", "dense",
                                                          "--strategy", "langchain-semantic"]))


def test_hybrid_stays_one_request():
    from ragsim.host.commands import eval_cli

    args = eval_cli._parser().parse_args(["a.md", "--questions", "q.json", "--method", "hybrid"])
    assert not eval_cli.streams(args)
    assert eval_cli.streams(eval_cli._parser().parse_args(["a.md", "--questions", "q.json", "--method", "dense"]))
