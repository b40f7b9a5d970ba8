"""A reranker's reply, whatever it holds, is one finite score per text or one sentence
(host.clients.rerank_endpoint.parse): any JSON at all, and both right shapes (Cohere's {"results": [{"index",
"relevance_score"}]} and TEI's bare [{"index", "score"}]) bent: indexes out of range or repeated, scores
of every kind, fewer or more results than texts."""

import json
import math

from hypothesis import given, settings, strategies as st

from ragsim.errors import MAX_MESSAGE
from ragsim.host.clients.rerank_endpoint import RerankError, parse

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=20)
NUMBER = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**400, 10**400) | st.booleans() | JSON
INDEX = st.integers(-2, 6) | st.booleans() | st.floats(0, 4) | JSON
COHERE = st.fixed_dictionaries({"results": st.lists(st.fixed_dictionaries({"index": INDEX, "relevance_score": NUMBER}),
                                                    max_size=6)}, optional={"model": st.text(max_size=5)})
TEI = st.lists(st.fixed_dictionaries({"index": INDEX, "score": NUMBER}), max_size=6)
URL = "http://127.0.0.1:9/rerank"


def check(body: bytes, count: int) -> None:
    try:
        got = parse(body, count, URL)
    except RerankError as e:
        assert len(e.message) <= MAX_MESSAGE and "\n" not in e.message and e.message.endswith(".")
        return
    assert len(got) == count and all(isinstance(s, float) and math.isfinite(s) for s in got)
    rows = json.loads(body)
    rows = rows["results"] if isinstance(rows, dict) else rows
    assert sorted(r["index"] for r in rows) == list(range(count))  # every text once, no other


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(0, 4))
def test_any_json_reply_is_scores_or_one_sentence(reply, count):
    check(json.dumps(reply).encode(), count)


@settings(max_examples=300, deadline=None)
@given(COHERE | TEI, st.integers(0, 5))
def test_a_bent_reply_of_either_shape_is_scores_or_one_sentence(reply, count):
    check(json.dumps(reply).encode(), count)


@given(st.permutations(range(5)), st.lists(st.floats(-1e6, 1e6), min_size=5, max_size=5), st.booleans())
def test_a_right_reply_in_any_order_gives_each_text_its_score(order, scores, tei):
    field = "score" if tei else "relevance_score"
    rows = [{"index": i, field: scores[i]} for i in order]
    assert parse(json.dumps(rows if tei else {"results": rows}).encode(), 5, URL) == scores


@given(st.binary(max_size=64))
def test_bytes_that_are_no_json_are_one_sentence(body):
    check(body, 1)
