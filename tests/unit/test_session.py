"""The session's caches stay bounded: by the caller's bounds, or by one request's documents."""

from helpers import make_request
from ragsim.wire.api import Session, simulate


def test_bounds_hold_for_small_requests_and_grow_for_a_large_collection():
    session = Session(documents=2, splits=1)
    for size in (5, 6, 7):
        simulate(make_request("a b c d e f g h i j " * 5, size=size, overlap=1), session)
    assert len(session._splits.data) == 1 and len(session._indexes.data) == 1
    many = make_request("x", size=5, overlap=1)
    many["documents"] = [{"id": str(i), "title": "", "text": f"doc {i} " * 20} for i in range(12)]
    simulate(many, session)
    assert len(session._indexes.data) == 12  # every document of the request is indexed once
    simulate(make_request("a b c", size=5, overlap=1), session)
    assert len(session._indexes.data) <= 2 and len(session._splits.data) <= 1  # and back within bounds
