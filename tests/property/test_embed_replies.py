"""An embedding endpoint's reply, whatever it holds, is vectors or one sentence (host.clients.embed_endpoint):
the fuzz of the replies around the core (tests/fuzz_surfaces.py) for the endpoint added with
--embed-endpoint. Any JSON at all, and the right shape bent (counts, dimensions, numbers)."""

import json
import math

from hypothesis import given, settings, strategies as st

from ragsim.errors import MAX_MESSAGE
from ragsim.host.clients.embed_endpoint import EndpointEmbedder, EndpointError

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=20)
NUMBER = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**400, 10**400) | st.just(0) | st.just(1e308)
ROW = st.fixed_dictionaries({"embedding": st.lists(NUMBER, max_size=5) | JSON}, optional={"index": st.integers(-3, 5) | JSON,
                                                                                          "object": st.just("embedding")})
SHAPED = st.fixed_dictionaries({"data": st.lists(ROW, max_size=4)}, optional={"model": st.text(max_size=5)})


def embedder() -> EndpointEmbedder:
    return EndpointEmbedder("http://127.0.0.1:9/v1", "m")


def check(body: bytes, count: int) -> None:
    model = embedder()
    try:
        got = model._vectors(body, count)
    except EndpointError as e:
        assert len(e.message) <= MAX_MESSAGE and "\n" not in e.message
        return
    assert got.shape[0] == count and all(math.isfinite(float(x)) for x in got.ravel())
    assert all(abs(float((row * row).sum()) - 1) < 1e-5 for row in got)  # unit vectors, as the cosine needs


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(0, 4))
def test_any_json_reply_is_vectors_or_one_sentence(reply, count):
    check(json.dumps(reply).encode(), count)


@settings(max_examples=300, deadline=None)
@given(SHAPED, st.integers(0, 4))
def test_a_bent_reply_of_the_right_shape_is_vectors_or_one_sentence(reply, count):
    check(json.dumps(reply).encode(), count)


def test_vectors_of_nested_lists_are_one_sentence():
    """Found by the fuzz: `[[]]` has one element, so its dimension looked like 1."""
    for vector in ([[]], [[1.0]], [[1.0], [2.0]]):
        check(json.dumps({"data": [{"embedding": vector}]}).encode(), 1)


@given(st.binary(max_size=64))
def test_bytes_that_are_no_json_are_one_sentence(body):
    check(body, 1)
