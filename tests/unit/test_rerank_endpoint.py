"""Reranking with the user's own reranker through a `/rerank` endpoint (`rank.reranking` in the core,
`host.clients.rerank_endpoint` its client), against a local server started here on 127.0.0.1
(tests/fake_openai.py).

- A reranker that reverses the order it is given: the first `depth` chunks come back reversed, and
  the verdicts follow (an answer at rank 1 is ranked out "after reranking" at k 1, depth 2 or more),
  in one request, in eval, inspect and ask, and for the facts of audit and inspect.
- A reranker that scores by shared words: the order equals an independent sort of those scores.
- TEI's form (`texts`, a bare list of {index, score}) is taken as well.
- A server that is down, answers another shape, an index out of range or twice, NaN, fewer results,
  or 401 without its key: one sentence each.
"""

import json
import pathlib
import re

import pytest

from fake_openai import FakeOpenAI, closed_port
from helpers import harbour_questions, rerank_server, run_cli
from ragsim.errors import RequestError
from ragsim.host.clients import rerank_endpoint
from ragsim.host.clients.rerank_endpoint import EndpointReranker, RerankError
from ragsim.rank import reranking
from ragsim.wire import api

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARBOUR = ROOT / "examples" / "harbour.md"
QUESTIONS = ROOT / "examples" / "questions.json"
TEXT = "The pilot boat leaves at nine. Fog closes the harbour. The ferry runs hourly. Gulls sit on the pier."


@pytest.fixture(scope="module")
def server():
    with rerank_server() as s:
        yield s


def request(rerank: dict | None, k: int = 1, query: str = "when does the pilot boat leave") -> dict:
    retrieval = {"k": k, **({"rerank": rerank} if rerank else {})}
    return {"documents": [{"id": "d", "text": TEXT}], "query": query, "retrieval": retrieval,
            "chunking": {"unit": "words", "size": 6, "overlap": 0}, "span": {"doc": "d", "start": 0, "end": 30}}


def order_of(response: dict) -> list[int]:
    return [c["number"] for c in sorted(response["chunks"], key=lambda c: c["rank"])]


def test_reorder_sorts_the_first_depth_by_score_ties_by_place():
    assert reranking.reorder([5, 3, 1, 0], 3, [0.1, 0.9, 0.5]) == [3, 1, 5, 0]
    assert reranking.reorder([5, 3, 1, 0], 3, [0.5, 0.5, 0.5]) == [5, 3, 1, 0]
    with pytest.raises(RequestError):
        reranking.reorder([5, 3, 1], 3, [0.1, float("nan"), 0.2])


def test_a_reversing_reranker_ranks_the_answer_out_after_reranking(server):
    before = api.simulate(request(None))
    assert before["verdict"]["kind"] == "intact" and before["verdict"]["best_rank"] == 1
    for depth in (2, 3, 4):
        got = api.simulate(request({"endpoint": server.endpoint, "model": "reverse", "depth": depth}))
        assert "error" not in got, got
        first = order_of(before)
        assert order_of(got) == first[:depth][::-1] + first[depth:]
        assert got["verdict"]["kind"] == "ranked_out" and got["verdict"]["after_reranking"] is True
        assert got["verdict"]["best_rank"] == depth
        assert got["rerank"] == {"model": "reverse", "endpoint": server.endpoint, "depth": depth}
    one = api.simulate(request({"endpoint": server.endpoint, "model": "reverse", "depth": 1}))
    assert one["verdict"]["kind"] == "intact" and one["verdict"]["after_reranking"] is False


def test_a_question_set_follows_the_reranker(server):
    req = harbour_questions()
    before = api.simulate(req)
    req["retrieval"] = {"k": 5, "rerank": {"endpoint": server.endpoint, "model": "reverse", "depth": 5}}
    after = api.simulate(req)
    for b, a in zip(before["questions"], after["questions"]):
        assert a["retrieved"] == b["retrieved"][::-1]  # the same five chunks, reversed
        assert a["verdict"] == b["verdict"] and a["after_reranking"] is False
    req["retrieval"] = {"k": 1, "rerank": {"endpoint": server.endpoint, "model": "reverse", "depth": 5}}
    one = api.simulate(req)
    moved = [a for b, a in zip(before["questions"], one["questions"]) if b["verdict"] == "intact" and b["needed_k"] == 1]
    assert moved and all(a["verdict"] == "ranked_out" and a["after_reranking"] for a in moved)


@pytest.mark.parametrize("model, depth, k", [("reverse", 3, 1), ("lexical", 4, 2), ("reverse", 8, 5)])
def test_a_streamed_eval_reranks_as_one_request_does(server, model, depth, k):
    """`eval` over files streams (the workers keep each question's best max(k, depth) chunks, the merge
    reranks them): every verdict, needed_k, retrieved chunk and after_reranking is one request's."""
    req = harbour_questions()
    req["retrieval"] = {"k": k, "rerank": {"endpoint": server.endpoint, "model": model, "depth": depth}}
    one = api.simulate(req)
    got = run_cli("eval", str(HARBOUR), "--questions", str(QUESTIONS), "--size", "300", "--overlap", "50", "--k", str(k),
                  "--rerank-endpoint", server.endpoint, "--rerank-model", model, "--rerank-depth", str(depth), "--json")
    assert got.returncode == 0, got.stderr
    streamed = json.loads(got.stdout)
    fields = ("id", "verdict", "needed_k", "retrieved", "after_reranking", "recall", "iou")
    assert [[q[f] for f in fields] for q in streamed["questions"]] == [[q[f] for f in fields] for q in one["questions"]]
    assert streamed["rerank"] == one["rerank"]


def test_a_lexical_reranker_orders_by_its_scores(server):
    got = api.simulate(request({"endpoint": server.endpoint, "model": "lexical", "depth": 4}, k=2,
                               query="ferry gulls pier"))
    before = order_of(api.simulate(request(None, k=2, query="ferry gulls pier")))
    words = {"ferry", "gulls", "pier"}
    texts = {c["number"]: TEXT[c["start"]:c["end"]] for c in got["chunks"]}
    shared = {i: len(words & set(re.findall(r"\w+", t.lower()))) for i, t in texts.items()}
    expected = sorted(before[:4], key=lambda i: (-shared[i], before.index(i))) + before[4:]
    assert order_of(got) == expected


def test_teis_form_is_taken(server):
    model = EndpointReranker(server.endpoint, "tei")
    assert model.scores("pilot boat", ["the pilot boat", "fog", "a boat"]) == [2.0, 0.0, 1.0]
    assert model.requests == 2 and model.field == "texts"  # asked again in TEI's form once
    assert model.scores("pilot boat", ["fog", "the ferry"]) == [0.0, 0.0] and model.requests == 3
    assert model.scores("pilot boat", ["fog", "the ferry"]) == [0.0, 0.0] and model.requests == 3  # asked once


@pytest.mark.parametrize("model, said", [
    ("rnan", "a score that is NaN or infinite"),
    ("rfew", "answered 2 results for 3 texts"),
    ("rrange", "answered index 3 for 3 texts"),
    ("rtwice", "twice; each text needs one score"),
    ("rshape", "did not answer with rerank results"),
    ("nosuch", "answered HTTP 404 (check the reranker's name"),
])
def test_a_bad_reranker_is_one_sentence(server, model, said):
    with pytest.raises(RerankError) as e:
        EndpointReranker(server.endpoint, model).scores("pilot boat", ["one", "two boat", "three"])
    assert said in e.value.message and "\n" not in e.value.message and e.value.field == "retrieval.rerank"
    got = api.simulate(request({"endpoint": server.endpoint, "model": model, "depth": 3}))
    assert got["error"]["field"] == "retrieval.rerank" and said in got["error"]["message"]


def test_a_server_that_is_down_is_one_sentence():
    port = closed_port()
    with pytest.raises(RerankError) as e:
        EndpointReranker(f"http://127.0.0.1:{port}", "reverse", timeout=5).scores("q", ["a", "b"])
    assert "Nothing answers at" in e.value.message


def test_the_key_comes_from_the_environment_and_goes_to_the_endpoint(monkeypatch):
    with FakeOpenAI(key="sk-rerank") as s:
        for name in rerank_endpoint.KEY_ENV:
            monkeypatch.delenv(name, raising=False)
        with pytest.raises(RerankError) as e:
            EndpointReranker(s.endpoint, "reverse").scores("q", ["a", "b"])
        assert "HTTP 401 (set the key in RAGSIM_RERANK_API_KEY)" in e.value.message
        monkeypatch.setenv("RAGSIM_EMBED_API_KEY", "sk-rerank")  # the embedding key when there is no reranker's
        assert EndpointReranker(s.endpoint, "reverse").scores("q", ["a", "b"]) == [0.0, 1.0]


def test_eval_inspect_and_ask_take_the_reranker(server):
    rerank = ("--rerank-endpoint", server.endpoint, "--rerank-model", "reverse", "--rerank-depth", "3")
    args = (str(HARBOUR), "--questions", str(QUESTIONS), "--size", "300", "--overlap", "50", "--k", "1")
    plain = json.loads(run_cli("eval", *args, "--json").stdout)["questions"]
    done = run_cli("eval", *args, *rerank, "--json")
    assert done.returncode == 0, done.stderr
    reranked = json.loads(done.stdout)["questions"]
    moved = [q["id"] for p, q in zip(plain, reranked) if p["verdict"] == "intact" and q["verdict"] == "ranked_out"]
    assert moved and moved == [q["id"] for q in reranked if q["after_reranking"]]
    table = run_cli("eval", *args, *rerank).stdout
    assert f"ranked out after reranking (within k before it): {', '.join(moved)}" in table
    inspect = run_cli("inspect", "examples/chunks.jsonl", "--source", "examples/harbour.md", "--questions",
                      str(QUESTIONS), "--k", "1", *rerank)
    assert inspect.returncode == 0 and "reranked by reverse at" in inspect.stdout, inspect.stderr
    ask = run_cli("ask", str(HARBOUR), "--question", "When does the pilot boat leave?", "--answer", "at nine in the morning", "--endpoint",
                  server.endpoint, "--model", "reader", "--samples", "1", "--size", "300", "--k", "1", *rerank)
    assert ask.returncode == 0 and "verdict for the answer: ranked_out after reranking" in ask.stdout, ask.stderr


@pytest.mark.parametrize("command, extra, said", [
    ("eval", ("--rerank-model", "reverse"), "Give --rerank-endpoint URL and --rerank-model NAME together."),
    ("eval", ("--rerank-endpoint", "ftp://x", "--rerank-model", "m"), "is not an http:// or https:// URL"),
    ("eval", ("--rerank-endpoint", "http://127.0.0.1:9", "--rerank-model", "m", "--rerank-depth", "0"),
     "--rerank-depth must be from 1 to 1000"),
])
def test_bad_reranker_options_are_one_sentence(command, extra, said):
    got = run_cli(command, str(HARBOUR), "--questions", str(QUESTIONS), *extra)
    assert got.returncode == 2 and said in got.stderr and "Traceback" not in got.stderr


def test_audit_and_inspect_rerank_the_facts(server):
    """Each fact's name is a query of its own: the reranker reorders its first chunks too (a reversing one
    sends the answering chunk at rank 1 down to the depth)."""
    rerank = ("--rerank-endpoint", server.endpoint, "--rerank-model", "reverse", "--rerank-depth", "5")
    args = ("audit", str(HARBOUR), "--size", "200", "--overlaps", "0", "--top", "1", "--json")
    plain, reranked = json.loads(run_cli(*args).stdout), run_cli(*args, *rerank)
    assert reranked.returncode == 0, reranked.stderr
    reranked = json.loads(reranked.stdout)
    assert plain["rows"][0]["found_top_k"] == 2 and reranked["rows"][0]["found_top_k"] == 0
    assert reranked["rerank"]["model"] == "reverse" and reranked["rerank"]["depth"] == 5
    args = ("inspect", "examples/chunks.jsonl", "--source", "examples/harbour.md", "--k", "1", "--json")
    plain, reranked = json.loads(run_cli(*args).stdout), json.loads(run_cli(*args, *rerank).stdout)
    assert plain["facts"]["found_top_k"] == 1 and reranked["facts"]["found_top_k"] == 0
    assert reranked["rerank"]["model"] == "reverse"


@pytest.mark.parametrize("rerank, field, said", [
    ("reverse", "retrieval.rerank", 'Give retrieval.rerank as {"endpoint": URL, "model": NAME, "depth": 20}.'),
    ({"endpoint": "http://127.0.0.1:9"}, "retrieval.rerank.model", "Give the reranker's model name"),
    ({"model": "m", "depth": 1001}, "retrieval.rerank.depth", "retrieval.rerank.depth is at most 1000 (got 1001)"),
    ({"model": "m", "depth": 0}, "retrieval.rerank.depth", "must be at least 1"),
    ({"model": "m", "size": 3}, "retrieval.rerank.size", "is not a field of retrieval.rerank, which takes endpoint, model"),
    ({"model": "m"}, "retrieval.rerank", "Give the reranker's endpoint with --rerank-endpoint URL"),
])
def test_a_bad_rerank_field_is_one_sentence(rerank, field, said):
    got = api.simulate(request(rerank))
    assert got["error"]["field"] == field and said in got["error"]["message"], got
