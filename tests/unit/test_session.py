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


def test_stored_chunks_are_ranked_and_judged_as_a_splitter_s():
    """chunking "stored" (SPEC section 11): extents handed in rank exactly as the same extents made
    by a splitter (here fixed windows of characters), and the map, the sweep and code refuse them."""
    from ragsim.wire.api import equivalent_code, simulate

    text = "The Galle Ring orbits at 42,000 km. Kestrel Station has 14 crew. The ring is made of ice. " * 3
    base = {"documents": [{"id": "d", "title": "t", "text": text}], "query": "How far is the Galle Ring crew?",
            "retrieval": {"k": 2}, "span": {"doc": "d", "start": 0, "end": 35},
            "questions": [{"id": "q", "query": "Kestrel crew", "references": [{"doc": "d", "start": 36, "end": 64}]}]}
    windows = simulate({**base, "chunking": {"unit": "chars", "size": 40, "overlap": 10}})
    extents = [[c["start"], c["end"]] for c in windows["chunks"]]
    stored = simulate({**base, "chunking": {"strategy": "stored", "chunks": {"d": extents[::-1]}}})
    for key in ("verdict", "questions", "question_stats", "context"):
        assert stored[key] == windows[key], key
    assert [(c["start"], c["end"], c["score"], c["rank"]) for c in stored["chunks"]] == \
           [(c["start"], c["end"], c["score"], c["rank"]) for c in windows["chunks"]]
    for extra, field in (({"map": {"sizes": [10], "overlaps": [0]}}, "map"), ({"sweep": [0, 5]}, "sweep")):
        got = simulate({**base, **extra, "chunking": {"strategy": "stored", "chunks": {"d": extents}}})
        assert got["error"]["field"] == field
    bad = simulate({**base, "chunking": {"strategy": "stored", "chunks": {"d": [[5, 2]]}}})
    assert bad["error"]["field"] == "chunking.chunks"
    assert "error" in equivalent_code({**base, "chunking": {"strategy": "stored", "chunks": {"d": extents}}})
