"""Dense and hybrid ranking in the core (SPEC section 10), on hand-computed cases."""

from fractions import Fraction

import pytest

from ragsim.rank import dense
from ragsim.text import wordpiece

# Four chunks. BM25 ranks them 0, 2, 3, 1 (2 and 3 tie at 1.0: position order);
# the similarities rank them 1, 2, 0, 3.
BM25 = [2.0, 0.0, 1.0, 1.0]
SIMILARITIES = [0.1, 0.9, 0.5, -0.2]


def test_dense_ranks_by_similarity_ties_by_position():
    assert dense.rank(SIMILARITIES) == [1, 2, 0, 3]
    assert dense.rank([0.5, -0.1, 0.5, 0.7]) == [3, 0, 2, 1]
    assert dense.ranks_of([1, 2, 0, 3]) == [3, 1, 2, 4]


def test_rrf_hand_computed():
    bm25_ranks = dense.ranks_of([0, 2, 3, 1])
    dense_ranks = dense.ranks_of([1, 2, 0, 3])
    assert bm25_ranks == [1, 4, 2, 3] and dense_ranks == [3, 1, 2, 4]
    # score = 0.5 / (60 + rank_bm25) + 0.5 / (60 + rank_dense)
    expected = [Fraction(1, 2 * 61) + Fraction(1, 2 * 63), Fraction(1, 2 * 64) + Fraction(1, 2 * 61),
                Fraction(1, 2 * 62) + Fraction(1, 2 * 62), Fraction(1, 2 * 63) + Fraction(1, 2 * 64)]
    fused = dense.rrf(bm25_ranks, dense_ranks)
    assert fused == pytest.approx([float(e) for e in expected], rel=1e-15)
    scores, order = dense.scores_and_order("hybrid", BM25, SIMILARITIES)
    assert scores == fused
    assert order == [0, 2, 1, 3]  # 248/15372 > 1/62 > 125/7808 > 127/8064


def test_rrf_weights_and_c():
    # c = 1, weights 0.2 / 0.8: 0.3, 0.44, 1/3, 0.21
    scores, order = dense.scores_and_order("hybrid", BM25, SIMILARITIES, c=1, weights=(0.2, 0.8))
    assert scores == pytest.approx([0.3, 0.44, 1 / 3, 0.21])
    assert order == [1, 2, 0, 3]
    # all weight on one side is that side's ranking
    assert dense.scores_and_order("hybrid", BM25, SIMILARITIES, weights=(1, 0))[1] == [0, 2, 3, 1]
    assert dense.scores_and_order("hybrid", BM25, SIMILARITIES, weights=(0, 1))[1] == [1, 2, 0, 3]


def test_rrf_ties_fall_to_position():
    # mirrored ranks give equal fused scores: document order decides
    scores, order = dense.scores_and_order("hybrid", [1.0, 2.0], [0.9, 0.1])
    assert scores[0] == scores[1] and order == [0, 1]


def test_methods_pass_through():
    assert dense.scores_and_order("bm25", BM25, None) == (BM25, [0, 2, 3, 1])
    assert dense.scores_and_order("dense", BM25, SIMILARITIES) == (SIMILARITIES, [1, 2, 0, 3])


def test_read_ends():
    short = "A man is eating food."
    long = "word " * 300  # 300 pieces: the model reads 254 of them
    assert dense.read_ends([short, long]) == [None, 254 * 5 - 1]
    assert wordpiece.read_end("word " * 254) is None  # exactly the budget is read whole
    assert wordpiece.read_end("word " * 255) == 254 * 5 - 1
    # punctuation pieces count: "a." is two pieces
    assert wordpiece.read_end("a. " * 127) is None and wordpiece.read_end("a. " * 128) == 127 * 3 - 1


# At the JSON boundary (api.simulate): the host's similarities, the pending round trip, the reports.

import sys  # noqa: E402

from ragsim.wire import api  # noqa: E402

DOC = ("Chunking splits a document into pieces. " * 3 + "The answer is forty-two. "
       + "Retrieval ranks the pieces by a score. " * 3)


def request(**retrieval):
    return {"documents": [{"id": "a", "text": DOC}], "query": "the answer", "span": {"doc": "a", "start": 120, "end": 145},
            "chunking": {"unit": "words", "size": 8, "overlap": 0}, "retrieval": {"k": 2, **retrieval}}


class FakeHost:
    """A host whose similarity for a chunk is fixed by its position (the last chunk best)."""

    def __init__(self):
        self.calls = 0

    def similarities(self, query, texts, keys):
        self.calls += 1
        return [i / len(texts) for i in range(len(texts))]


def session_with(host):
    session = api.Session()
    session.dense = host
    return session


def test_bm25_responses_carry_no_dense_fields():
    out = api.simulate(request())
    assert "dense" not in out and "truncated" not in out["chunks"][0]


def test_dense_ranks_by_the_hosts_similarities():
    out = api.simulate(request(method="dense"), session_with(FakeHost()))
    n = len(out["chunks"])
    assert [c["rank"] for c in out["chunks"]] == list(range(n, 0, -1))
    assert [c["score"] for c in out["chunks"]] == [i / n for i in range(n)]
    assert out["dense"]["ranked_by"] == "dense" and out["dense"]["pending"] is False


def test_hybrid_fuses_bm25_and_the_hosts_ranking():
    bm25_out = api.simulate(request())
    out = api.simulate(request(method="hybrid", rrf_c=10, weights=[0.3, 0.7]), session_with(FakeHost()))
    n = len(out["chunks"])
    bm25_ranks = [c["rank"] for c in bm25_out["chunks"]]
    dense_ranks = list(range(n, 0, -1))
    expected = [0.3 / (10 + rb) + 0.7 / (10 + rd) for rb, rd in zip(bm25_ranks, dense_ranks)]
    assert [c["score"] for c in out["chunks"]] == expected
    assert [c["rank"] for c in out["chunks"]] == dense.ranks_of(dense.rank(expected))


def test_the_pending_round_trip():
    first = api.simulate(request(method="dense", similarities=[]))
    assert first["dense"]["pending"] is True and first["dense"]["ranked_by"] == "bm25"
    assert [c["rank"] for c in first["chunks"]] == [c["rank"] for c in api.simulate(request())["chunks"]]
    needs = first["dense"]["needs"]
    assert needs == [["a", c["start"], c["end"]] for c in first["chunks"]]
    given = [[*key, -0.5 + i / 10] for i, key in enumerate(needs)]
    second = api.simulate(request(method="dense", similarities=given))
    assert second["dense"]["pending"] is False and second["dense"]["needs"] == []
    assert [c["rank"] for c in second["chunks"]] == list(range(len(needs), 0, -1))


def test_a_sweep_asks_for_its_chunks_too():
    req = request(method="dense", similarities=[])
    req["sweep"] = [0, 3]
    needs = api.simulate(req)["dense"]["needs"]
    at_three = api.simulate({**request(), "chunking": {"unit": "words", "size": 8, "overlap": 3}})["chunks"]
    assert all(["a", c["start"], c["end"]] in needs for c in at_three)


def test_truncation_flags_and_the_unread_answer():
    text = "word " * 300 + "The answer is here."
    start = text.index("The answer")
    req = {"documents": [{"id": "a", "text": text}], "query": "answer", "span": {"doc": "a", "start": start,
                                                                                 "end": len(text)},
           "chunking": {"unit": "chars", "size": 10_000, "overlap": 0}, "retrieval": {"k": 1, "method": "dense"}}
    out = api.simulate(req, session_with(FakeHost()))
    (chunk,) = out["chunks"]
    assert chunk["truncated"] is True and chunk["read_end"] == 254 * 5 - 1
    assert out["dense"]["truncated"] == 1 and out["dense"]["retrieved_truncated"] == [1]
    assert out["dense"]["answer_unread"] == [1]
    columns = api.simulate({**req, "wire": "columns"}, session_with(FakeHost()))
    assert columns["chunk_columns"]["read_end"] == [254 * 5 - 1]


@pytest.mark.parametrize("retrieval, field", [
    ({"method": "semantic"}, "retrieval.method"),
    ({"weights": [0.5]}, "retrieval.weights"),
    ({"weights": [1.5, 0.5]}, "retrieval.weights"),
    ({"weights": [0, 0]}, "retrieval.weights"),
    ({"weights": [True, 0.5]}, "retrieval.weights"),
    ({"rrf_c": -1}, "retrieval.rrf_c"),
    ({"rrf_c": "60"}, "retrieval.rrf_c"),
    ({"similarities": {"a": 1}}, "retrieval.similarities"),
    ({"similarities": [["a", 0, 5, 3.0]]}, "retrieval.similarities[0]"),
    ({"k": 0, "method": "hybrid"}, "retrieval.k"),
])
def test_bad_dense_settings_name_the_field(retrieval, field):
    out = api.simulate(request(**retrieval))
    assert out["error"]["field"] == field
    message = out["error"]["message"]
    assert message.endswith(".") and message.count(". ") == 0


def test_dense_without_onnxruntime_says_how_to_install_it(monkeypatch):
    from ragsim.host.clients import embed_onnx

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` now fails
    monkeypatch.setattr(embed_onnx, "default_embedder", lambda: embed_onnx.Embedder(embed_onnx.CHECKOUT))
    out = api.simulate(request(method="hybrid"))
    assert out["error"] == {"field": "retrieval.method",
                            "message": 'Dense retrieval needs onnxruntime in this Python: .venv/bin/pip install -e ".[dense]" '
                                       'in the ragsim checkout.'}


def test_dense_where_no_host_is_registered_says_so(monkeypatch):
    """The core never imports a host: without `ragsim.host.register()` (or similarities in the request)
    dense retrieval says what to do."""
    from ragsim.rank import dense

    monkeypatch.setattr(dense, "HOSTS", [])
    out = api.simulate(request(method="dense"))
    assert out["error"]["field"] == "retrieval.method"
    assert "ragsim.host.register()" in out["error"]["message"]


def test_a_model_that_cannot_load_is_one_sentence_and_bm25_still_works(monkeypatch, tmp_path):
    from ragsim.host.clients import embed_onnx

    monkeypatch.setattr(embed_onnx, "default_embedder", lambda: embed_onnx.Embedder(tmp_path))  # no files there
    pytest.importorskip("onnxruntime")
    out = api.simulate(request(method="dense"))
    assert out["error"]["field"] == "retrieval.method"
    assert out["error"]["message"] == "onnxruntime could not load the dense model (NoSuchFile)."
    assert "error" not in api.simulate(request())
