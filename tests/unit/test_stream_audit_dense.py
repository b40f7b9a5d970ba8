"""`audit --method dense` streams (`host.jobs.audit_dense`): each fact's name, its text, ranked by
cosine over every chunk of the corpus, the chunks embedded on the workers a batch at a time, gives the
facts and the table one request's dense audit gives: in this process, on a pool of 2, on a Dask
LocalCluster, with the names cut into blocks, and from the command line."""

import json
import pathlib

import pytest

import ragsim.host
from helpers import run_cli
from ragsim.host.jobs import audit_dense
from ragsim.host.corpus import pool
from test_stream_audit import ROOT, streamed
from ragsim.wire.audit import audit

pytestmark = pytest.mark.slow  # process pools, a Dask cluster and the real model

ragsim.host.register()  # the onnxruntime embedder one request uses

FILES = sorted(str(p) for p in (ROOT / "assets" / "collection").glob("*.md"))[:3]  # small: every chunk is embedded
DENSE = {"method": "dense"}


def one_request(files, chunking, overlaps, k=3, retrieval=DENSE):
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in files]
    got = audit({"documents": docs, "chunking": chunking, "overlaps": overlaps, "precision_k": k, "retrieval": retrieval})
    assert "error" not in got
    return got


def dense_streamed(chunking, overlaps, engine, k=3):
    return streamed(FILES, chunking, overlaps, engine, k=k, retrieval=DENSE)


@pytest.mark.parametrize("chunking,overlaps", [
    ({"strategy": "window", "unit": "chars", "size": 600}, [0, 150]),
    ({"strategy": "window", "unit": "chars", "size": 4000}, [0]),  # a batch of fewer chunks than k
])
def test_streamed_dense_audit_equals_one_request(chunking, overlaps):
    expected = one_request(FILES, chunking, overlaps)
    summary, facts = dense_streamed(chunking, overlaps, pool.Local(1))
    assert facts == expected["facts"]
    assert summary["rows"] == expected["rows"]
    answered = [f for f in facts if f["answering"][str(overlaps[0])]]
    found = [f for f in answered if overlaps[0] in f["found_at"]]
    assert 0 < len(found) < len(answered)  # some names find their chunk, some do not: ranks decide
    pooled, pooled_facts = dense_streamed(chunking, overlaps, pool.Local(2))
    assert pooled_facts == facts and pooled["rows"] == summary["rows"]


def test_the_dense_audit_ranks_by_cosine_not_by_bm25():
    chunking, overlaps = {"strategy": "window", "unit": "chars", "size": 600}, [0]
    _, dense_facts = dense_streamed(chunking, overlaps, pool.Local(1))
    _, bm25_facts = streamed(FILES, chunking, overlaps, pool.Local(1))
    assert [f["found_at"] for f in dense_facts] != [f["found_at"] for f in bm25_facts]
    assert [f["found_at"] for f in bm25_facts] == [f["found_at"] for f in one_request(FILES, chunking, overlaps,
                                                                                       retrieval={})["facts"]]


def test_names_cut_into_blocks_give_the_same_facts(monkeypatch):
    """A block of one name at a time (the memory bound on a corpus with many names): the same facts."""
    chunking, overlaps = {"strategy": "window", "unit": "chars", "size": 600}, [0, 150]
    whole = dense_streamed(chunking, overlaps, pool.Local(1))
    monkeypatch.setattr(audit_dense, "CELLS", 1)
    blocks = dense_streamed(chunking, overlaps, pool.Local(1))
    assert blocks[1] == whole[1] and blocks[0]["rows"] == whole[0]["rows"]


def test_dask_local_cluster_gives_the_same_dense_audit():
    distributed = pytest.importorskip("dask.distributed")
    chunking, overlaps = {"strategy": "window", "unit": "chars", "size": 600}, [0, 150]
    expected = one_request(FILES, chunking, overlaps)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        engine = pool.Dask(cluster.scheduler_address)
        try:
            summary, facts = dense_streamed(chunking, overlaps, engine)
        finally:
            engine.close()
    assert facts == expected["facts"] and summary["rows"] == expected["rows"]


def test_the_command_line_streams_a_directory_with_dense(tmp_path):
    """`ragsim audit DIR --method dense` reads a directory (as one request could not) and writes JSON
    Lines whose summary rows are one request's."""
    folder = tmp_path / "kb"
    folder.mkdir()
    for f in FILES:
        (folder / pathlib.Path(f).name).write_text(pathlib.Path(f).read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "audit.jsonl"
    run = run_cli("audit", folder, "--method", "dense", "--unit", "chars", "--size", "600", "--overlaps", "0,150",
                  "--workers", "1", "--jsonl", out, "--quiet", timeout=600)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    summary = lines[-1]
    assert summary["type"] == "summary"
    files = sorted(str(folder / pathlib.Path(f).name) for f in FILES)
    assert summary["rows"] == one_request(files, {"strategy": "window", "unit": "chars", "size": 600}, [0, 150])["rows"]
    assert "facts of this shape across 3 documents" in run.stdout
    assert run.stdout.splitlines()[0].endswith(", each name ranked by dense (all-MiniLM-L6-v2)")  # the retriever said
