"""`inspect` with a reranker of the user's own streams as it does without one (the documents checked
on the corpus engine, `--workers`, `--jsonl`, `--resume`): each fact's name ranks every placed chunk,
its first `depth` are reordered by the `/rerank` endpoint of tests/fake_openai.py (started here on
127.0.0.1), and the report equals one request's (`--one-request`) over the same store, BM25 and dense;
an interrupted run resumed gives the uninterrupted run's report and lines. A question set (`--questions`)
is still one request, as without a reranker."""

import json

import pytest

from helpers import rerank_server
from ragsim.host.commands import inspect_cli
from test_inspect_engine import argv, counting, run  # noqa: F401  (argv: the chunk file's fixture)

pytestmark = pytest.mark.slow  # process pools and a local server


@pytest.fixture(scope="module")
def server():
    with rerank_server() as s:
        yield s


def rerank(server, model, depth) -> list[str]:
    return ["--rerank-endpoint", server.endpoint, "--rerank-model", model, "--rerank-depth", str(depth)]


def report(capsys, *args) -> dict:
    status, out, err = run(capsys, *args, "--json")
    assert status == 0, err
    return json.loads(out)


@pytest.mark.parametrize("model, depth, k, method", [
    ("reverse", 5, 1, "bm25"), ("lexical", 8, 2, "bm25"), ("reverse", 2, 3, "bm25"), ("reverse", 4, 1, "dense"),
])
def test_a_reranked_inspect_streams_to_one_requests_report(argv, server, capsys, model, depth, k, method):
    args = [*argv[:-1], str(k), *rerank(server, model, depth), *(["--method", method] if method != "bm25" else [])]
    assert inspect_cli.streams(inspect_cli.inspect_parser().parse_args(args))
    one = report(capsys, *args, "--one-request")
    assert one["rerank"]["model"] == model
    for workers in ("1", "2"):
        assert report(capsys, *args, "--workers", workers) == one
    if model == "reverse" and k < depth and method == "bm25":  # the check can fail: the reranker moved a fact
        plain = report(capsys, *argv[:-1], str(k), "--one-request")
        assert plain["facts"]["found_top_k"] != one["facts"]["found_top_k"]


def test_an_interrupted_reranked_inspect_resumes_to_one_run(argv, server, tmp_path, capsys, monkeypatch):
    args = [*argv, *rerank(server, "reverse", 5), "--workers", "1"]
    whole, part = tmp_path / "whole.jsonl", tmp_path / "part.jsonl"
    status, expected, _ = run(capsys, *args, "--jsonl", str(whole))
    assert status == 0 and "reranked by reverse at" in expected
    counting(monkeypatch, stop_at=3)
    status, _, _ = run(capsys, *args, "--jsonl", str(part))
    assert status == 130
    counting(monkeypatch)
    other = [*argv, *rerank(server, "lexical", 5), "--workers", "1"]
    status, _, err = run(capsys, *other, "--jsonl", str(part), "--resume")
    assert status == 2 and "was written for other files or settings" in err  # another reranker's lines: refused
    status, out, err = run(capsys, *args, "--jsonl", str(part), "--resume")
    assert (status, err) == (0, "")
    assert out == expected and part.read_bytes() == whole.read_bytes()
