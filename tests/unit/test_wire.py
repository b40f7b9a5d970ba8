"""The binary wire (`"wire": "binary"`, docs/wire.md): the page's form of the chunks carries the same
values as SPEC section 6's objects. Decoded here as the page decodes it (assets/js/worker-client.js):
the columns from the bytes, `retrieved` from `top`, and the rank of a chunk that holds nothing from
the scores (best first, ties by position)."""

import array
import base64
import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_request
from ragsim.wire import api

TYPES = {"f64": "d", "i32": "i"}


def decode(packed: dict, data: bytes, documents: list[dict]) -> list[dict]:
    """The objects the page would build from `chunk_bytes`, its bytes and the response's documents."""
    n = packed["count"]
    cols = {}
    for name, (kind, at) in packed["columns"].items():
        a = array.array(TYPES[kind])
        a.frombytes(data[at: at + n * a.itemsize])
        if sys.byteorder == "big":
            a.byteswap()
        cols[name] = a.tolist()
    top = packed["top"]
    scores = cols["score"]

    def rank(p):
        if str(p) in packed["ranks"]:
            return packed["ranks"][str(p)]
        if p in top:
            return top.index(p) + 1
        s = scores[p]
        return 1 + sum(1 for q, t in enumerate(scores) if t > s or (t == s and q < p))

    doc_of = [i for i, d in enumerate(documents) for _ in range(d["chunks"])]  # chunks are in document order
    assert len(doc_of) == n
    out = []
    for p in range(n):
        first = p == 0 or doc_of[p - 1] != doc_of[p]
        o = None if first else max(0, cols["end"][p - 1] - cols["start"][p])
        c = {"doc": packed["ids"][doc_of[p]], "number": p + 1, "start": cols["start"][p], "end": cols["end"][p],
             "units": cols["units"][p], "score": scores[p], "rank": rank(p), "retrieved": p in top,
             "holds": packed["holds"].get(str(p)), "overlap_prev": o}
        if "read_end" in cols:
            e = cols["read_end"][p]
            c["read_end"] = None if e < 0 else e
            c["truncated"] = e >= 0
        out.append(c)
    return out


def binary(request):
    text, data = api.simulate_packed(json.dumps({**request, "wire": "binary"}), api.Session())
    return json.loads(text), data


def assert_same(request):
    objects = api.simulate(request)
    assert "error" not in objects, objects
    out, data = binary(request)
    packed = out.pop("chunk_bytes")
    assert len(data) == packed["count"] * (8 + 4 * (len(packed["columns"]) - 1))
    assert list(packed["columns"]) == ["score", "start", "end", "units"]
    assert decode(packed, data, out["documents"]) == objects.pop("chunks")
    assert out == objects  # everything else is the same
    assert len(packed["top"]) == objects["stats"]["retrieved"]


TEXT = "alpha beta gamma delta epsilon zeta eta theta iota kappa " * 20


def test_binary_wire_carries_the_same_chunks_with_ties_span_and_fact():
    # the text repeats, so many chunks tie on score: their ranks follow position
    a = TEXT.index("gamma")
    assert_same(make_request(TEXT, query="gamma kappa", size=7, overlap=2, k=3, span=(a, a + 20),
                             fact=((a, a + 5), (a + 30, a + 35))))
    assert_same(make_request(TEXT, query="nothing matches", size=5, overlap=0, k=4))  # every score 0


def test_binary_wire_over_a_collection_and_characters():
    req = make_request(TEXT, query="theta", unit="chars", size=60, overlap=15, k=5)
    req["documents"].append({"id": "e", "title": "two", "text": "theta 🙂 iota " * 40})
    req["span"] = {"doc": "e", "start": 6, "end": 20}
    assert_same(req)


def test_texts_beside_the_request_are_the_documents():
    req = {**make_request(TEXT, query="gamma", size=7, overlap=2, span=(6, 22)), "wire": "binary"}
    bare = {**req, "documents": [{**req["documents"][0], "text": ""}]}
    session = api.Session()
    assert api.simulate_packed(json.dumps(bare), session, [TEXT]) == api.simulate_packed(json.dumps(req), session)
    assert "error" in json.loads(api.simulate_packed(json.dumps(bare), session)[0])  # no text, no answer


def test_binary_wire_refusals_and_json_form():
    out, data = binary(make_request(TEXT, query="gamma", size=0))
    assert data is None and "error" in out
    req = {**make_request(TEXT, query="gamma", size=7, overlap=2), "wire": "binary"}
    text_form = json.loads(api.simulate_json(json.dumps(req)))
    _, data = binary(req)
    assert base64.b64decode(text_form["chunk_bytes"]["data"]) == data


def test_binary_wire_with_dense_read_ends():
    from test_dense import FakeHost, session_with

    text = "word " * 300 + "The answer is here. " + "short text here. " * 40
    start = text.index("The answer")
    req = {"documents": [{"id": "a", "text": text}], "query": "answer",
           "span": {"doc": "a", "start": start, "end": start + 19},
           "chunking": {"unit": "chars", "size": 2_000, "overlap": 0}, "retrieval": {"k": 1, "method": "dense"}}
    objects = api.simulate(req, session_with(FakeHost()))
    text_out, data = api.simulate_packed(json.dumps({**req, "wire": "binary"}), session_with(FakeHost()))
    out = json.loads(text_out)
    packed = out.pop("chunk_bytes")
    assert "read_end" in packed["columns"]
    assert decode(packed, data, out["documents"]) == objects.pop("chunks")
    assert out == objects


@settings(max_examples=25, deadline=None)
@given(size=st.integers(2, 30), overlap=st.integers(0, 10), k=st.integers(1, 12), words=st.integers(5, 120),
       seed=st.integers(0, 5))
def test_binary_wire_equals_objects_for_any_window(size, overlap, k, words, seed):
    vocab = ["alpha", "beta", "gamma", "delta", "the", "a", "river", "stone"]
    text = " ".join(vocab[(i * (seed + 3) + i // 7) % len(vocab)] for i in range(words))
    assert_same(make_request(text, query="gamma river the", size=size, overlap=min(overlap, size - 1), k=k,
                             span=(0, min(len(text), 17))))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 40)), max_size=60))
def test_overlap_stats_are_statistics_own(overlaps):
    import statistics

    from collections import Counter

    from ragsim.wire.encode import overlap_stats

    kept = [o for o in overlaps if o is not None]
    got = overlap_stats(Counter(kept))
    if not kept:
        assert got["overlap_median"] is None and got["boundaries_without_overlap"] == 0
        return
    assert got == {"overlap_min": min(kept), "overlap_median": statistics.median(kept), "overlap_max": max(kept),
                   "boundaries_without_overlap": kept.count(0)}
    assert type(got["overlap_median"]) is type(statistics.median(kept))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([{"strategy": "window", "unit": "words", "size": 5, "overlap": 2},
                        {"strategy": "window", "unit": "words", "size": 4, "overlap": 0},
                        {"strategy": "window", "unit": "chars", "size": 30, "overlap": 7},
                        {"strategy": "langchain-recursive", "size": 40, "overlap": 10},
                        {"strategy": "langchain-character", "size": 30, "overlap": 5},
                        {"strategy": "sentences", "size": 2, "overlap": 1},
                        {"strategy": "haystack", "split_by": "word", "size": 6, "overlap": 2}]),
       st.lists(st.text(alphabet="ab .\n", min_size=0, max_size=120), min_size=1, max_size=3))
def test_overlap_stats_count_the_overlap_column_whatever_the_split(chunking, texts):
    """The stats count neighbours' shared characters from the columns (no per-chunk list); they equal
    the statistics of the objects' overlap_prev, across documents and for splits that leave gaps."""
    import statistics

    from ragsim.wire.api import simulate

    texts = [t if t.strip() else "a b" for t in texts]
    r = simulate({"documents": [{"id": f"d{i}", "title": "", "text": t} for i, t in enumerate(texts)],
                  "query": "a", "chunking": chunking, "retrieval": {"k": 2}})
    assert "error" not in r, r
    kept = [c["overlap_prev"] for c in r["chunks"] if c["overlap_prev"] is not None]
    st_ = r["stats"]
    assert st_["boundaries_without_overlap"] == kept.count(0)
    if kept:
        assert (st_["overlap_min"], st_["overlap_median"], st_["overlap_max"]) == (min(kept), statistics.median(kept), max(kept))
    else:
        assert st_["overlap_median"] is None
