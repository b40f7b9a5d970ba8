"""Question sets and the settings map with dense and hybrid retrieval (SPEC sections 8 and 10):
each question's query ranked by its own cosines, from a host (CPython) or from the page's
`retrieval.question_similarities` through the pending round trip."""

import hashlib

import pytest

from ragsim.wire import api
from ragsim.rank import dense

DOC = ("Tidewater keeps hourly snapshots for 48 hours. Daily snapshots are kept for 30 days. "
       "Weekly snapshots last a year. The committee decided to buy more disks. "
       "Compaction runs nightly and merges snapshots. Restores read the newest snapshot first.")
Q1, Q2 = "How long are hourly snapshots kept?", "What did the committee decide?"
QUESTIONS = [{"id": "q1", "query": Q1, "references": [{"doc": "a", "start": 0, "end": 46}]},
             {"id": "q2", "query": Q2, "references": [{"doc": "a", "start": DOC.index("The committee"),
                                                        "end": DOC.index("Compaction") - 1}]}]


def cosine(query, text):
    """A fixed pseudo-cosine of (query, chunk text), independent of any position."""
    h = hashlib.sha256(f"{query}\0{text}".encode()).digest()
    return int.from_bytes(h[:4], "big") / 2**32 * 2 - 1


class Host:
    def similarities(self, query, texts, keys):
        return [cosine(query, t) for t in texts]


def session():
    s = api.Session()
    s.dense = Host()
    return s


def request(method="dense", k=2, **more):
    return {"documents": [{"id": "a", "text": DOC}], "query": Q1, "chunking": {"size": 8, "overlap": 2},
            "retrieval": {"k": k, "method": method, **more}, "questions": QUESTIONS,
            "map": {"sizes": [6, 8], "overlaps": [0, 2]}}


def expected_top(req, query, k):
    """Top k by the question's own cosines, ties by position, from the chunks the main path makes."""
    base = {key: v for key, v in req.items() if key not in ("questions", "map")}
    chunks = api.simulate({**base, "query": query, "retrieval": {"k": k}})["chunks"]
    sims = [cosine(query, DOC[c["start"]:c["end"]]) for c in chunks]
    if req["retrieval"]["method"] == "dense":
        order = dense.rank(sims)
    else:
        bm25 = [c["score"] for c in chunks]
        order = dense.scores_and_order("hybrid", bm25, sims, req["retrieval"].get("rrf_c", 60),
                                       tuple(req["retrieval"].get("weights", (0.5, 0.5))))[1]
    return [p + 1 for p in order[:k]]


@pytest.mark.parametrize("method,more", [("dense", {}), ("hybrid", {}), ("hybrid", {"rrf_c": 2, "weights": [0.2, 0.9]})])
def test_each_question_is_ranked_by_its_own_query(method, more):
    req = request(method, **more)
    out = api.simulate(req, session())
    assert "error" not in out, out
    for q, r in zip(QUESTIONS, out["questions"]):
        assert r["retrieved"] == expected_top(req, q["query"], 2), q["id"]
    assert out["dense"]["questions_pending"] is False and out["dense"]["question_needs"] == {}
    # the map's cell at the request's own setting is the question set's summary
    cell = out["map"]["cells"][1][1]
    stats = out["question_stats"]
    assert [cell[v] for v in ("intact", "ranked_out", "cut")] == [stats[v] for v in ("intact", "ranked_out", "cut")]
    assert cell["recall_mean"] == pytest.approx(stats["recall_mean"])


def test_dense_changes_the_question_sets_ranking():
    bm25 = api.simulate({**request(), "retrieval": {"k": 2}})
    out = api.simulate(request(), session())
    assert [r["retrieved"] for r in out["questions"]] != [r["retrieved"] for r in bm25["questions"]]


def test_the_pending_round_trip_for_many_queries():
    host_out = api.simulate(request("hybrid"), session())
    first = api.simulate(request("hybrid", similarities=[]))
    d = first["dense"]
    assert d["pending"] is True and d["questions_pending"] is True
    assert set(d["question_needs"]) == {Q1, Q2}
    # every chunk of every map cell (sizes 6, 8 x overlaps 0, 2) for each query, once
    for q in (Q1, Q2):
        keys = d["question_needs"][q]
        assert len(keys) == len({tuple(k) for k in keys})
        assert all(k[0] == "a" for k in keys)
    by_query = {q: [[*k, cosine(q, DOC[k[1]:k[2]])] for k in keys] for q, keys in d["question_needs"].items()}
    main = [[*k, cosine(Q1, DOC[k[1]:k[2]])] for k in d["needs"]]
    second = api.simulate(request("hybrid", similarities=main, question_similarities=by_query))
    assert second["dense"]["pending"] is False and second["dense"]["question_needs"] == {}
    assert second["questions"] == host_out["questions"]
    assert second["question_stats"] == host_out["question_stats"]
    assert second["map"] == host_out["map"]


def test_the_requests_own_cosines_serve_its_query_among_the_questions():
    first = api.simulate(request(similarities=[]))
    main = [[*k, cosine(Q1, DOC[k[1]:k[2]])] for k in first["dense"]["question_needs"][Q1]]
    second = api.simulate(request(similarities=main))
    assert set(second["dense"]["question_needs"]) == {Q2}  # Q1's came with `similarities`


@pytest.mark.parametrize("value,field", [
    ([1, 2], "retrieval.question_similarities"),
    ({"q": "x"}, "retrieval.question_similarities['q']"),
    ({"q": [["a", 0, 5, 7]]}, "retrieval.question_similarities['q'][0]"),
])
def test_bad_question_similarities_name_the_field(value, field):
    out = api.simulate(request(question_similarities=value))
    assert out["error"]["field"] == field


@pytest.mark.slow
def test_with_onnxruntime_as_host_the_page_round_trip_is_the_same():
    pytest.importorskip("onnxruntime")
    from ragsim.host.clients import embed_onnx

    embedder = embed_onnx.default_embedder()
    req = request("dense")
    req["map"] = {"sizes": [8], "overlaps": [2]}
    direct = api.simulate(req)  # CPython: the core asks onnxruntime itself
    assert "error" not in direct, direct
    first = api.simulate({**req, "retrieval": {**req["retrieval"], "similarities": []}})

    def cosines(query, keys):
        return [[*k, s] for k, s in zip(keys, embedder.similarities(query, [DOC[k[1]:k[2]] for k in keys], keys))]

    by_query = {q: cosines(q, keys) for q, keys in first["dense"]["question_needs"].items()}
    second = api.simulate({**req, "retrieval": {**req["retrieval"], "similarities": cosines(Q1, first["dense"]["needs"]),
                                                "question_similarities": by_query}})
    assert second["dense"]["pending"] is False
    assert [r["retrieved"] for r in second["questions"]] == [r["retrieved"] for r in direct["questions"]]
    assert second["question_stats"] == direct["question_stats"]
