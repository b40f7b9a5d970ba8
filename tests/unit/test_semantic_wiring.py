"""Semantic chunkers wired into the simulation (SPEC section 12): the registry's entries,
`semantic_vectors` in the request, `semantic_needs` and the pending verdict, the session's kept
distances (a threshold move embeds nothing), the CPython host, the map and question sets."""

import base64
import re
import struct

import pytest

from helpers import hashed, make_request
from ragsim.errors import RequestError
from ragsim.split import registry, semantic, semantic_split
from ragsim.text import explore
from ragsim.wire import api

TEXT = ("The harbour was dredged in 1887. Ships came in at high tide. Coal barges waited outside. "
        "Cats sleep all day long. A cat purrs when it is happy. Kittens chase string! "
        "Rain fell on the town for a week. The river rose over its banks. Boats floated down the street.")
SPAN = (TEXT.index("Cats"), TEXT.index("Kittens") - 1)


class CountingHost:
    """A host embedder that counts the texts it is asked for."""

    def __init__(self):
        self.calls, self.texts = 0, 0

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return [hashed(t) for t in texts]


@pytest.fixture
def host():
    saved = list(semantic_split.HOSTS)
    counting = CountingHost()
    semantic_split.register_host(lambda: counting)
    yield counting
    semantic_split.HOSTS[:] = saved


@pytest.fixture
def no_host():
    saved = list(semantic_split.HOSTS)
    semantic_split.HOSTS[:] = []
    yield
    semantic_split.HOSTS[:] = saved


def request(chunking: dict, **extra) -> dict:
    req = make_request(TEXT, query="cat purrs", span=SPAN, **extra)
    req["chunking"] = chunking
    return req


def vectors_for(need: dict) -> list:
    return [hashed(t) for t in need["texts"]]


# -- the registry ---------------------------------------------------------------------------------

def test_the_four_strategies_are_registered_with_the_libraries_defaults():
    lc = registry.BY_NAME["langchain-semantic"]
    assert (lc.library, lc.cls, lc.unit, lc.count, lc.embeds) == ("LangChain", "SemanticChunker", "characters", None, True)
    assert {f.name: f.default for f in lc.fields} == {
        "buffer_size": 1, "breakpoint_threshold_type": "percentile", "breakpoint_threshold_amount": None,
        "number_of_chunks": None, "sentence_split_regex": r"(?<=[.?!])\s+", "min_chunk_size": None}
    amount = lc.field("breakpoint_threshold_amount").as_json()
    assert amount["default_by"] == {"field": "breakpoint_threshold_type", "values": {
        "percentile": 95, "standard_deviation": 3, "interquartile": 1.5, "gradient": 95}}
    assert amount["number"] and amount["start"] == 95
    assert lc.grid == ("breakpoint_threshold_amount", "min_chunk_size")
    li = registry.BY_NAME["llamaindex-semantic"]
    assert {f.name: f.default for f in li.fields} == {"buffer_size": 1, "breakpoint_percentile_threshold": 95}
    assert li.grid == ("breakpoint_percentile_threshold",) and li.field("breakpoint_percentile_threshold").maximum == 100
    for name, size_name in (("chroma-cluster", "max_chunk_size"), ("chroma-kamradt", "avg_chunk_size")):
        sp = registry.BY_NAME[name]
        assert {f.name: f.default for f in sp.fields} == {"size": 400, "min_chunk_size": 50, "tokenizer": "cl100k_base"}
        assert sp.field("size").library == size_name and sp.grid == ("size",) and sp.unit == "tokens"
    assert registry.EMBEDDING == {"langchain-semantic", "llamaindex-semantic", "chroma-cluster", "chroma-kamradt"}


def test_the_key_names_the_texts_to_embed_and_nothing_else():
    base = {"strategy": "langchain-semantic"}
    k = semantic_split.key(TEXT, base)
    assert re.fullmatch(r"[0-9a-f]{40}", k)
    assert semantic_split.key(TEXT, {**base, "buffer_size": 1, "breakpoint_threshold_amount": 50, "min_chunk_size": 9}) == k
    assert semantic_split.key(TEXT, {**base, "buffer_size": 2}) != k
    assert semantic_split.key(TEXT + " ", base) != k
    assert semantic_split.key(TEXT, {"strategy": "llamaindex-semantic"}) != k
    assert semantic_split.key(TEXT, {"strategy": "chroma-cluster", "size": 100}) == \
        semantic_split.key(TEXT, {"strategy": "chroma-cluster", "size": 800})


# -- the page's path: needs, then vectors ---------------------------------------------------------

def test_without_vectors_or_host_the_document_is_pending_and_the_needs_name_its_texts(no_host):
    chunking = {"strategy": "langchain-semantic"}
    out = api.simulate(request(chunking), api.Session())
    assert "error" not in out
    assert out["verdict"]["kind"] == "pending" and out["stats"]["chunks"] == 0 and out["context"] == ""
    [need] = out["semantic_needs"]
    assert need["document"] == "d" and need["key"] == semantic_split.key(TEXT, chunking)
    assert need["texts"] == semantic.texts_to_embed(TEXT, chunking) and need["count"] == len(need["texts"])
    assert out["documents"][0]["semantic"]["pending"] is True


def test_a_question_whose_document_waits_for_its_vectors_is_pending_not_cut(no_host):
    """Was a known divergence: the set was scored over no chunks, so every question "cut"."""
    other = "Nothing here is semantic. It is a plain document."
    questions = [{"id": "waits", "query": "cat purrs", "references": [{"doc": "d", "start": SPAN[0], "end": SPAN[1]}]},
                 {"id": "both", "query": "plain", "references": [{"doc": "d", "start": SPAN[0], "end": SPAN[1]},
                                                                  {"doc": "e", "start": 0, "end": 17}]}]
    req = request({"strategy": "langchain-semantic"}, questions=questions)
    req["documents"].append({"id": "e", "text": other})
    session = api.Session()
    out = api.simulate(req, session)
    assert "error" not in out, out
    assert [q["verdict"] for q in out["questions"]] == ["pending", "pending"]
    assert all(q["needed_k"] is None for q in out["questions"])
    st = out["question_stats"]
    assert st["pending"] == 2 and st["cut"] == 0 and st["count"] == 2
    need = {n["document"]: n for n in out["semantic_needs"]}
    given = [{"key": n["key"], "vectors": vectors_for(n)} for n in need.values()]
    done = api.simulate({**req, "semantic_vectors": given}, session)
    assert "pending" not in {q["verdict"] for q in done["questions"]} and "pending" not in done["question_stats"]


def test_vectors_sent_once_serve_every_later_move(no_host):
    session = api.Session()
    first = api.simulate(request({"strategy": "langchain-semantic"}), session)
    need = first["semantic_needs"][0]
    out = api.simulate(request({"strategy": "langchain-semantic"},
                               semantic_vectors=[{"key": need["key"], "vectors": vectors_for(need)}]), session)
    assert out["semantic_needs"] == [] and out["verdict"]["kind"] != "pending"
    want, curve = semantic.cut(TEXT, {"strategy": "langchain-semantic"}, vectors_for(need))
    assert [(c["start"], c["end"], c["units"]) for c in out["chunks"]] == [c[:3] for c in want]
    sem = out["documents"][0]["semantic"]
    assert {k: sem[k] for k in curve} == curve and sem["pending"] is False and sem["key"] == need["key"]
    # a threshold and a minimum size later: no vectors in the request, none needed
    for amount, min_size in ((50, None), (10, 40), (99, 0)):
        chunking = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": amount}
        if min_size is not None:
            chunking["min_chunk_size"] = min_size
        moved = api.simulate(request(chunking), session)
        assert moved["semantic_needs"] == []
        assert [c["start"] for c in moved["chunks"]] == [c[0] for c in semantic.cut(TEXT, chunking, vectors_for(need))[0]]
    # a field that changes the texts to embed needs new vectors
    other = api.simulate(request({"strategy": "langchain-semantic", "buffer_size": 0}), session)
    assert other["semantic_needs"][0]["key"] != need["key"] and other["verdict"]["kind"] == "pending"


def test_the_context_is_the_librarys_rejoined_text(no_host):
    text = "First topic here.\n\nSecond topic now.  Third one follows."
    chunking = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": 0}
    texts = semantic.texts_to_embed(text, chunking)
    req = make_request(text, query="topic", k=5)
    req["chunking"] = chunking
    req["semantic_vectors"] = [{"key": semantic_split.key(text, chunking), "vectors": [hashed(t) for t in texts]}]
    out = api.simulate(req, api.Session())
    want = [c[3] for c in semantic.cut(text, chunking, [hashed(t) for t in texts])[0]]
    assert sorted(out["context"].split("\n\n")) == sorted(want)


def test_the_flat_float32_form_gives_the_same_chunks(no_host):
    chunking = {"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 60}
    texts = semantic.texts_to_embed(TEXT, chunking)
    rows = [[float(struct.unpack("<f", struct.pack("<f", x))[0]) for x in hashed(t)] for t in texts]
    k = semantic_split.key(TEXT, chunking)
    f32 = base64.b64encode(b"".join(struct.pack(f"<{len(r)}f", *r) for r in rows)).decode()
    flat = api.simulate(request(chunking, semantic_vectors=[{"key": k, "dimension": 64, "f32": f32}]), api.Session())
    nested = api.simulate(request(chunking, semantic_vectors=[{"key": k, "vectors": rows}]), api.Session())
    assert flat["chunks"] == nested["chunks"] and flat["semantic_needs"] == []
    assert flat["documents"][0]["semantic"] == nested["documents"][0]["semantic"]


@pytest.mark.parametrize("entries, field, words", [
    ({"key": "x"}, "semantic_vectors", "as a list"),
    ([{"key": "abc", "vectors": []}], "semantic_vectors[0].key", "40 hex digits"),
    ([{"key": "0" * 40}], "semantic_vectors[0]", '{"key", "vectors"}'),
    ([{"key": "0" * 40, "vectors": [[1.0, "a"]]}], "semantic_vectors[0].vectors", "finite numbers"),
    ([{"key": "0" * 40, "vectors": [[1.0, 2.0], [1.0]]}], "semantic_vectors[0].vectors", "one dimension"),
    ([{"key": "0" * 40, "dimension": 3, "f32": "AAAA"}], "semantic_vectors[0].f32", "float32"),
    ([{"key": "0" * 40, "dimension": 0, "f32": ""}], "semantic_vectors[0].dimension", "at least 1"),
    ([{"key": "0" * 40, "vector": []}], "semantic_vectors[0].vector", "perhaps you meant semantic_vectors[0].vectors"),
])
def test_bad_vectors_get_one_sentence(entries, field, words):
    out = api.simulate(request({"strategy": "langchain-semantic"}, semantic_vectors=entries))
    assert out["error"]["field"] == field and words in out["error"]["message"]
    assert out["error"]["message"].endswith(".") and "\n" not in out["error"]["message"]


def test_vectors_of_the_wrong_count_name_the_key(no_host):
    chunking = {"strategy": "langchain-semantic"}
    k = semantic_split.key(TEXT, chunking)
    out = api.simulate(request(chunking, semantic_vectors=[{"key": k, "vectors": [[1.0, 0.0]]}]))
    assert out["error"]["field"] == "semantic_vectors"
    assert k[:8] in out["error"]["message"] and "one vector per text" in out["error"]["message"]


def test_vectors_for_another_key_are_ignored(no_host):
    out = api.simulate(request({"strategy": "langchain-semantic"}, semantic_vectors=[{"key": "0" * 40, "vectors": [[1.0]]}]))
    assert out["verdict"]["kind"] == "pending" and len(out["semantic_needs"]) == 1


# -- CPython's path: a registered host -------------------------------------------------------------

def test_a_registered_host_embeds_once_and_a_threshold_move_calls_it_no_more(host):
    session = api.Session()
    out = api.simulate(request({"strategy": "langchain-semantic"}), session)
    n = len(semantic.texts_to_embed(TEXT, {"strategy": "langchain-semantic"}))
    assert out["semantic_needs"] == [] and out["verdict"]["kind"] != "pending"
    assert (host.calls, host.texts) == (1, n)
    for rule in ("standard_deviation", "interquartile", "gradient", "percentile"):
        for amount in (0.5, 1.5, 50):
            chunking = {"strategy": "langchain-semantic", "breakpoint_threshold_type": rule,
                        "breakpoint_threshold_amount": amount, "min_chunk_size": 30}
            assert "error" not in api.simulate(request(chunking), session)
    assert (host.calls, host.texts) == (1, n)
    assert session.semantic.embedded == n


def test_every_strategy_runs_through_the_host_and_yields_the_cutters_chunks(host):
    for chunking in ({"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 70},
                     {"strategy": "chroma-cluster", "size": 60, "min_chunk_size": 10},
                     {"strategy": "chroma-kamradt", "size": 30, "min_chunk_size": 10}):
        out = api.simulate(request(chunking), api.Session())
        want, _ = semantic.cut(TEXT, chunking, [hashed(t) for t in semantic.texts_to_embed(TEXT, chunking)])
        assert [(c["start"], c["end"], c["units"]) for c in out["chunks"]] == [c[:3] for c in want], chunking
        assert out["stats"]["unit"] == registry.BY_NAME[chunking["strategy"]].unit


def test_the_map_and_a_question_set_reuse_the_kept_distances(host):
    req = request({"strategy": "langchain-semantic"})
    req["map"] = {"sizes": [50, 80, 95], "overlaps": [0, 100]}
    req["questions"] = [{"id": "q1", "query": "cat purrs", "references": [{"doc": "d", "start": SPAN[0], "end": SPAN[1]}]}]
    out = api.simulate(req, api.Session())
    assert "error" not in out, out
    assert host.calls == 1
    cells = out["map"]["cells"]
    assert len(cells) == 3 and all(len(row) == 2 and None not in row for row in cells)
    alone = api.simulate({**request({"strategy": "langchain-semantic", "breakpoint_threshold_amount": 50,
                                     "min_chunk_size": 100}), "map": {"sizes": [50], "overlaps": [100]}})
    assert alone["map"]["cells"][0][0] == cells[0][1]
    assert out["questions"][0]["verdict"] in ("intact", "ranked_out", "cut")


def test_a_one_axis_map_takes_one_column_and_numbers_where_the_field_does(host):
    req = request({"strategy": "llamaindex-semantic"})
    req["map"] = {"sizes": [50, 90], "overlaps": [0]}
    out = api.simulate(req, api.Session())
    assert len(out["map"]["cells"]) == 2 and host.calls == 1
    req["map"] = {"sizes": [50, 90], "overlaps": [0, 1]}
    out = api.simulate(req, api.Session())
    assert out["error"]["field"] == "map.overlaps" and "one axis" in out["error"]["message"]
    req = request({"strategy": "langchain-semantic", "breakpoint_threshold_type": "interquartile"})
    req["map"] = {"sizes": [0.5, 1.5], "overlaps": [0]}
    assert len(api.simulate(req, api.Session())["map"]["cells"]) == 2
    req = request({"strategy": "llamaindex-semantic"})
    req["map"] = {"sizes": [50.5], "overlaps": [0]}
    assert api.simulate(req)["error"]["field"] == "map.sizes"


def test_a_bad_field_is_refused_with_its_name_even_when_kept(host):
    session = api.Session()
    api.simulate(request({"strategy": "langchain-semantic"}), session)
    out = api.simulate(request({"strategy": "langchain-semantic", "breakpoint_threshold_type": "median"}), session)
    assert out["error"]["field"] == "chunking.breakpoint_threshold_type"
    out = api.simulate(request({"strategy": "langchain-semantic", "min_chunk_size": -1}), session)
    assert out["error"]["field"] == "chunking.min_chunk_size"
    out = api.simulate(request({"strategy": "langchain-semantic", "breakpoint_threshold": 3}), session)
    assert out["error"]["field"] == "chunking.breakpoint_threshold" and "perhaps you meant" in out["error"]["message"]


def test_the_session_keeps_a_bounded_number_of_preparations(host):
    store = semantic_split.Embeddings(limit=2)
    from ragsim.text.index import DocIndex

    for i in range(4):
        semantic_split.split(DocIndex.build(TEXT + " x" * i), {"strategy": "langchain-semantic"}, store)
    assert len(store.kept) == 2 and host.calls == 4
    semantic_split.split(DocIndex.build(TEXT + " x" * 3), {"strategy": "langchain-semantic"}, store)
    assert host.calls == 4  # the newest is kept


def test_a_direct_split_without_a_store_or_host_is_pending(no_host):
    from ragsim import split as splitters
    from ragsim.text.index import DocIndex

    got = splitters.split(DocIndex.build(TEXT), {"strategy": "chroma-kamradt"})
    assert len(got) == 0 and got.semantic["pending"] and got.semantic["count"] > 0
    with pytest.raises(RequestError):
        splitters.split(DocIndex.build(TEXT), {"strategy": "chroma-kamradt", "size": 0})


def test_the_cuts_question_of_a_semantic_chunker_cuts_once(host, monkeypatch):
    """A semantic chunker has no overlap: its cuts "at overlap 0" are its cuts now, read from the
    one split (a second re-cut with overlap 0 added gave the same cuts at twice the work)."""
    calls = []
    real = semantic.recut_chunks
    monkeypatch.setattr(semantic, "recut_chunks", lambda *a: calls.append(1) or real(*a))
    session = api.Session()
    for amount in (95, 60, 30):
        chunking = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": amount}
        before = len(calls)
        out = api.simulate(request(chunking, cuts=True), session)
        assert len(calls) - before == 1
        cut = out["cuts"]
        ends = [c["end"] for c in out["chunks"]]
        now = explore.cut_positions([c["start"] for c in out["chunks"]], ends, len(TEXT))
        assert len(now) == len(ends) - 1 > 0
        assert cut["at_zero"] == cut["at_current"] == now[:5] and cut["moves"] is False
        assert cut["total_zero"] == cut["total_current"] == cut["shared"] == len(now)
