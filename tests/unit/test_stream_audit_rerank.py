"""The streamed corpus audit with a reranker of the user's own (`audit --rerank-endpoint`) gives one
request's numbers: each fact's name ranks the corpus, its first `depth` chunks are reordered by the
`/rerank` endpoint of tests/fake_openai.py (started here on 127.0.0.1), and the fact is found when one
of its answering chunks is then within k. Small batches, one process and a pool of two; BM25 (its
zero-scoring chunks following the positive ones) and dense; an interrupted run resumed writes the
uninterrupted run's output; the reranker is asked once per list."""

import pathlib

import pytest

from helpers import rerank_server, run_cli
from ragsim.host.clients import rerank_endpoint
from ragsim.host.corpus import pool
from ragsim.host.corpus.progress import Progress
from test_stream_audit import COLLECTION, StopAfter, one_request, streamed
from ragsim.host.jobs import audit_run
from ragsim.wire.audit import audit

pytestmark = pytest.mark.slow  # process pools and a local server

CHUNKING, OVERLAPS = {"unit": "chars", "size": 400}, [0, 80]


@pytest.fixture(scope="module")
def server():
    with rerank_server() as s:
        yield s


def reranked(server, model, depth, method="bm25") -> dict:
    return {"rerank": {"endpoint": server.endpoint, "model": model, "depth": depth},
            **({"method": method} if method != "bm25" else {})}


def expected(retrieval, k):
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in COLLECTION]
    out = audit({"documents": docs, "chunking": CHUNKING, "overlaps": OVERLAPS, "precision_k": k, "retrieval": retrieval})
    assert "error" not in out, out
    return out


@pytest.mark.parametrize("model, depth, k, method", [
    ("reverse", 5, 1, "bm25"), ("lexical", 8, 3, "bm25"), ("reverse", 2, 4, "bm25"), ("reverse", 6, 2, "dense"),
])
def test_a_reranked_streamed_audit_equals_one_request(server, model, depth, k, method):
    retrieval = reranked(server, model, depth, method)
    one = expected(retrieval, k)
    plain = one_request(COLLECTION, CHUNKING, OVERLAPS, k)
    if model == "reverse" and k < depth:  # the check can fail: the reranker moved some fact
        assert [r["found_top_k"] for r in one["rows"]] != [r["found_top_k"] for r in plain["rows"]]
    for workers in (1, 2):
        summary, facts = streamed(COLLECTION, CHUNKING, OVERLAPS, pool.Local(workers), k=k, batch=3000,
                                  retrieval=retrieval)
        assert facts == one["facts"]
        assert summary["rows"] == one["rows"] and summary["rerank"] == one["rerank"]


class Phases(Progress):
    """The pass of each step of progress."""

    def __init__(self):
        super().__init__(1, 1, quiet=True)
        self.seen = []

    def advance(self, files, nbytes):
        self.seen.append(self.phase)
        super().advance(files, nbytes)


def test_each_list_is_asked_once_with_the_reranking_shown_by_file(server):
    rerank_endpoint._ONE.clear()
    retrieval, progress = reranked(server, "lexical", 6), Phases()
    streamed(COLLECTION, CHUNKING, OVERLAPS, pool.Local(1), k=2, batch=3000, retrieval=retrieval, progress=progress)
    client = next(iter(rerank_endpoint._ONE.values()))
    assert client.requests == len(client.cache) > 0
    assert progress.seen.count("rerank") == len(COLLECTION) and progress.seen[-1] == "rerank"


def test_an_interrupted_reranked_audit_resumes_to_the_uninterrupted_output(server, tmp_path):
    retrieval = reranked(server, "reverse", 5)
    whole = tmp_path / "whole.jsonl"
    streamed(COLLECTION, CHUNKING, OVERLAPS, pool.Local(1), k=1, batch=3000, out_path=str(whole), retrieval=retrieval)
    part = tmp_path / "part.jsonl"
    with pytest.raises(audit_run.Interrupted):
        streamed(COLLECTION, CHUNKING, OVERLAPS, pool.Local(1), k=1, batch=3000, out_path=str(part),
                 progress=StopAfter(2), retrieval=retrieval)
    streamed(COLLECTION, CHUNKING, OVERLAPS, pool.Local(1), k=1, batch=3000, out_path=str(part), resume=True,
             retrieval=retrieval)
    assert part.read_bytes() == whole.read_bytes()


def test_the_command_streams_with_workers_and_jsonl(server, tmp_path):
    out = tmp_path / "audit.jsonl"
    rerank = ("--rerank-endpoint", server.endpoint, "--rerank-model", "reverse", "--rerank-depth", "5")
    got = run_cli("audit", *COLLECTION, "--size", "400", "--overlaps", "0,80", "--top", "1", "--workers", "2",
                  "--jsonl", str(out), *rerank)
    assert got.returncode == 0, got.stderr
    assert "reranked by reverse at" in got.stdout
    summary = [line for line in out.read_text(encoding="utf-8").splitlines() if '"summary"' in line][-1]
    assert '"rerank"' in summary
