"""A reranker's scores carried in the request (`retrieval.rerank.scores`, the page's way: its
reranker is asked from JavaScript, the core in Pyodide reaches no endpoint).

- Without the scores a list needs, the ranking stays the retriever's, the verdict has no
  `after_reranking`, and the response names the lists to score (`rerank.needs`, `pending`).
- Given the scores the reranker answers for those lists, every rank and verdict equals the one
  request asked of the same reranker through CPython's endpoint client.
- The overlap sweep's rows follow the scores too, each with `after_reranking`.
- A malformed entry is one sentence naming it.
"""

from __future__ import annotations

import pytest

from fake_openai import rerank_reply
from helpers import harbour_questions, rerank_server
from ragsim.wire import api

TEXT = "The pilot boat leaves at nine. Fog closes the harbour. The ferry runs hourly. Gulls sit on the pier."


@pytest.fixture(scope="module")
def server():
    with rerank_server() as s:
        yield s


def request(rerank: dict, k: int = 1) -> dict:
    return {"documents": [{"id": "d", "text": TEXT}], "query": "when does the pilot boat leave",
            "retrieval": {"k": k, "rerank": rerank}, "chunking": {"unit": "words", "size": 6, "overlap": 0},
            "span": {"doc": "d", "start": 0, "end": 30}}


def scored(needs: list[dict], model: str) -> list[dict]:
    """Each list the core needs scored as the test server's reranker `model` scores it."""
    out = []
    for n in needs:
        status, reply = rerank_reply({"model": model, "query": n["query"], "documents": n["texts"]})
        assert status == 200
        scores = [0.0] * len(n["texts"])
        for r in reply["results"]:
            scores[r["index"]] = r["relevance_score"]
        out.append({"query": n["query"], "texts": n["texts"], "scores": scores})
    return out


def ranks(response: dict) -> list[tuple]:
    return [(c["start"], c["end"], c["rank"]) for c in response["chunks"]]


@pytest.mark.parametrize("model, depth, k", [("reverse", 2, 1), ("reverse", 4, 1), ("lexical", 5, 2)])
def test_the_scores_in_the_request_rank_as_the_endpoint_does(server, model, depth, k):
    plain = api.simulate({**request({"model": model, "depth": depth}, k), "retrieval": {"k": k}})
    first = api.simulate(request({"model": model, "depth": depth, "scores": []}, k))
    assert "error" not in first, first
    assert ranks(first) == ranks(plain) and first["verdict"] == plain["verdict"]  # the retriever's, for now
    assert "after_reranking" not in first["verdict"]
    assert first["rerank"]["pending"] is True
    [need] = first["rerank"]["needs"]
    top = sorted(plain["chunks"], key=lambda c: c["rank"])[:depth]
    assert need == {"query": "when does the pilot boat leave", "texts": [TEXT[c["start"]:c["end"]] for c in top]}
    given = api.simulate(request({"model": model, "depth": depth, "scores": scored([need], model)}, k))
    asked = api.simulate(request({"model": model, "depth": depth, "endpoint": server.endpoint}, k))
    assert "error" not in asked, asked
    assert ranks(given) == ranks(asked) and given["verdict"] == asked["verdict"]
    assert given["rerank"]["pending"] is False and given["rerank"]["needs"] == []
    if model == "reverse":
        assert given["verdict"]["kind"] == "ranked_out" and given["verdict"]["after_reranking"] is True


def test_a_question_set_names_each_querys_list_and_then_follows_the_scores(server):
    req = harbour_questions()
    req["retrieval"] = {"k": 1, "rerank": {"model": "reverse", "depth": 5, "scores": []}}
    first = api.simulate(req)
    queries = {q["query"] for q in req["questions"]} | {req["query"]}
    assert {n["query"] for n in first["rerank"]["needs"]} <= queries and len(first["rerank"]["needs"]) > 1
    assert all("after_reranking" not in q for q in first["questions"])
    req["retrieval"]["rerank"]["scores"] = scored(first["rerank"]["needs"], "reverse")
    given = api.simulate(req)
    req["retrieval"]["rerank"] = {"model": "reverse", "depth": 5, "endpoint": server.endpoint}
    asked = api.simulate(req)
    assert given["rerank"]["pending"] is False
    assert [(q["verdict"], q["retrieved"], q["after_reranking"]) for q in given["questions"]] == \
        [(q["verdict"], q["retrieved"], q["after_reranking"]) for q in asked["questions"]]
    assert any(q["after_reranking"] for q in given["questions"])


def test_the_overlap_sweeps_rows_are_reranked_and_say_so(server):
    """Each sweep row's verdict after the reranker (its list named, then given), `after_reranking` on
    every row, and each row equal to the one request at that overlap asked of the same reranker."""
    req = {**request({"model": "reverse", "depth": 3, "scores": []}), "sweep": [0, 1, 2]}
    first = api.simulate(req)
    assert all("after_reranking" not in r for r in first["sweep"])
    req["retrieval"]["rerank"]["scores"] = scored(first["rerank"]["needs"], "reverse")
    given = api.simulate(req)
    assert given["rerank"]["pending"] is False
    for row in given["sweep"]:
        one = request({"model": "reverse", "depth": 3, "endpoint": server.endpoint})
        one["chunking"] = {**one["chunking"], "overlap": row["overlap"]}
        asked = api.simulate(one)["verdict"]
        assert (row["span"], row["best_rank"], row["after_reranking"]) == (asked["kind"], asked["best_rank"], asked["after_reranking"])
    assert any(r["after_reranking"] for r in given["sweep"])
    plain = api.simulate({**req, "retrieval": {"k": 1}})
    assert all("after_reranking" not in r for r in plain["sweep"])


@pytest.mark.parametrize("scores, said", [
    ({"q": [1]}, 'Give retrieval.rerank.scores as a list of {"query", "texts": [...], "scores": [...]}.'),
    ([{"query": "q", "texts": ["a", "b"], "scores": [1.0]}], "retrieval.rerank.scores[0] must be"),
    ([{"query": "q", "texts": ["a"], "scores": [True]}], "one finite score per text"),
    ([{"query": "q", "texts": ["a"], "scores": [1.0], "extra": 1}], "retrieval.rerank.scores[0] must be"),
])
def test_a_bad_scores_entry_is_one_sentence(scores, said):
    got = api.simulate(request({"model": "reverse", "scores": scores}))
    assert got["error"]["field"].startswith("retrieval.rerank.scores") and said in got["error"]["message"], got
