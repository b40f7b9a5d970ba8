"""A semantic chunker's threshold move costs what changed (the page's drag): the chunks'
texts are joined only when read (`semantic_chunks`), the ranking's terms come from the document's
index and are proved the same as those of LangChain's re-joined texts, and a request that says it
holds a key's curve (`semantic_have`) gets only its threshold and cuts."""

import pathlib
from collections import Counter

import pytest

from helpers import hashed, make_request
from ragsim.split import semantic, semantic_chunks, semantic_langchain, semantic_split
from ragsim.split.semantic_chunks import Chunks, Texts
from ragsim.text.index import DocIndex
from ragsim.wire import api

ROOT = pathlib.Path(__file__).resolve().parents[2]
BASE = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests/conformance/texts").iterdir())
                   if p.is_file() and p.name[0] != ".")
TEXT = "\n\n".join(f"Part {i}. {BASE}" for i in range(2))


def lc(**fields) -> dict:
    return {"strategy": "langchain-semantic", **fields}


def vectors(text: str, chunking: dict) -> list:
    return [hashed(t) for t in semantic.texts_to_embed(text, chunking)]


def eager_langchain(text: str, chunking: dict, vs: list) -> list:
    """SemanticChunker.split_text as written (every chunk joined at once), from the kept distances:
    the implementation before the texts were made lazily, kept here as the reference."""
    kept = semantic.prepare(text, chunking, vs)
    spans = kept.spans
    sentences = [text[a:b] for a, b in spans]
    _, rule, amount, count, min_size = semantic_langchain.read_langchain(chunking)
    threshold, compared = semantic_langchain.langchain_threshold(kept, rule, amount, count)
    out, start = [], 0
    for index in (i for i, x in enumerate(compared) if x > threshold):
        if min_size is not None and len(" ".join(sentences[start:index + 1])) < min_size:
            continue
        joined = " ".join(sentences[start:index + 1])
        out.append((spans[start][0], spans[index][1], len(joined), joined))
        start = index + 1
    if start < len(sentences):
        joined = " ".join(sentences[start:])
        out.append((spans[start][0], spans[-1][1], len(joined), joined))
    return out


SETTINGS = [lc(), lc(breakpoint_threshold_amount=40), lc(breakpoint_threshold_amount=70, min_chunk_size=300),
            lc(breakpoint_threshold_type="standard_deviation", breakpoint_threshold_amount=0.5),
            lc(breakpoint_threshold_type="interquartile"), lc(breakpoint_threshold_type="gradient", breakpoint_threshold_amount=60),
            lc(number_of_chunks=12), lc(sentence_split_regex=r"(\n\n)"), lc(buffer_size=0, min_chunk_size=1000)]


@pytest.mark.parametrize("chunking", SETTINGS, ids=[str(sorted(c.items())) for c in SETTINGS])
def test_lazy_chunks_are_the_eager_ones(chunking):
    vs = vectors(TEXT, chunking)
    want = eager_langchain(TEXT, chunking, vs)
    chunks, curve = semantic.recut_chunks(TEXT, chunking, semantic.prepare(TEXT, chunking, vs))
    assert isinstance(chunks.texts, Texts) and not chunks.texts.made  # nothing joined yet
    assert (chunks.starts, chunks.ends, chunks.units) == ([c[0] for c in want], [c[1] for c in want], [c[2] for c in want])
    assert chunks.texts[len(want) - 1] == want[-1][3] and list(chunks.texts.made) == [len(want) - 1]
    assert chunks.tuples() == want and chunks.texts == [c[3] for c in want]
    assert curve["cuts"] == [c[0] for c in want[1:]]


@pytest.mark.parametrize("chunking", [{"strategy": "llamaindex-semantic"},
                                      {"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 30}])
def test_llamaindex_chunks_are_slices_made_when_read(chunking):
    vs = vectors(TEXT, chunking)
    kept = semantic.prepare(TEXT, chunking, vs)
    chunks, curve = semantic.recut_chunks(TEXT, chunking, kept)
    spans, threshold = kept.spans, curve["threshold"]
    firsts = [0] + [i + 1 for i, d in enumerate(kept.distances) if d > threshold]
    lasts = [f - 1 for f in firsts[1:]] + [len(spans) - 1]
    assert chunks.starts == [spans[f][0] for f in firsts] and chunks.ends == [spans[e][1] for e in lasts]
    assert list(chunks.texts) == [TEXT[a:b] for a, b in zip(chunks.starts, chunks.ends)]
    assert chunks.units == [b - a for a, b in zip(chunks.starts, chunks.ends)]


def test_texts_read_like_a_list():
    made = []
    texts = Texts(3, lambda i: made.append(i) or f"t{i}")
    assert texts[-1] == "t2" and texts[0:2] == ["t0", "t1"] and texts[2] == "t2" and made == [2, 0, 1]
    assert texts == ["t0", "t1", "t2"] and texts != ["t0", "t1"] and list(reversed(texts)) == ["t2", "t1", "t0"]
    with pytest.raises(IndexError):
        texts[3]
    assert Chunks.of([(0, 2, 2, "ab")]).tuples() == [(0, 2, 2, "ab")]


@pytest.mark.parametrize("chunking", [lc(breakpoint_threshold_amount=50), lc(sentence_split_regex=r"(?<=[.?!;])\s*"),
                                      lc(sentence_split_regex=r"(\n\n)", breakpoint_threshold_amount=30)])
def test_the_rankings_terms_are_those_of_langchains_text(chunking):
    """BM25 reads each chunk's terms from the document's index over the chunk's extent (no joined
    text is tokenized): with separators that hold no word (the default one, any whitespace or
    punctuation, a captured separator), they are exactly the terms of LangChain's re-joined text,
    term by term and in number (the chunk's `dl`)."""
    chunks, _ = semantic.cut(TEXT, chunking, vectors(TEXT, chunking))
    index = DocIndex.build(TEXT)
    layout = index.layout([c[0] for c in chunks], [c[1] for c in chunks])
    assert layout.lengths == [len(index.terms(c[3])) for c in chunks]
    counts = [Counter(index.terms(c[3])) for c in chunks]
    for term in sorted({t for c in counts for t in c})[::7]:
        assert index.term_frequencies(term, layout) == [c[term] for c in counts], term


# Prose whose every sentence boundary falls between whitespace-separated words (Punkt's too)
PROSE = " ".join(f"Sentence {i} is about the {w} and its {v}. Then the {v} of {i * 7} changed."
                 for i, (w, v) in enumerate([("harbour", "tides"), ("river", "banks"), ("bank", "rates")] * 40))
CLEAN = [(TEXT, lc(breakpoint_threshold_amount=50)), (TEXT, lc(sentence_split_regex=r"(\n\n)", breakpoint_threshold_amount=30)),
         (TEXT, lc(min_chunk_size=400)), (PROSE, lc(breakpoint_threshold_amount=30)),
         (PROSE, {"strategy": "llamaindex-semantic"}), (PROSE, {"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 20})]


@pytest.mark.parametrize("text, chunking", CLEAN, ids=[f"{len(t)}-{sorted(c.items())}" for t, c in CLEAN])
def test_the_layout_from_the_sentences_words_is_the_lookup(text, chunking):
    """Where no sentence boundary cuts a (whitespace-separated) word, each chunk's words come from
    its sentences' (found once): the same layout as looking every chunk up."""
    kept = semantic.prepare(text, chunking, vectors(text, chunking))
    chunks, _ = semantic.recut_chunks(text, chunking, kept)
    index = DocIndex.build(text)
    ranges = semantic_chunks.word_ranges(index, kept.spans, chunks)
    assert ranges is not None and len(chunks) > 3
    want, got = index.layout(chunks.starts, chunks.ends), index.layout(chunks.starts, chunks.ends, ranges)
    assert (got.inner_from, got.inner_to, got.edges, got.lengths, got.monotone) == \
        (want.inner_from, want.inner_to, want.edges, want.lengths, want.monotone)
    assert semantic_chunks.word_ranges(index, kept.spans, chunks) == ranges  # kept in the index's memo


@pytest.mark.parametrize("chunking", [lc(sentence_split_regex=r"e", breakpoint_threshold_amount=50),
                                      lc(sentence_split_regex=r"(?=[A-Z])"), {"strategy": "llamaindex-semantic"}])
def test_sentences_that_cut_words_are_looked_up(chunking):
    """A boundary inside a word ("forever?** Only" cut by Punkt after the "?"): the layout looks
    every chunk up and tokenizes the clipped words, as for any splitter."""
    kept = semantic.prepare(TEXT, chunking, vectors(TEXT, chunking))
    chunks, _ = semantic.recut_chunks(TEXT, chunking, kept)
    assert semantic_chunks.word_ranges(DocIndex.build(TEXT), kept.spans, chunks) is None


def test_a_response_is_the_same_with_words_looked_up(host, monkeypatch):
    chunking = lc(breakpoint_threshold_amount=40)
    fast = run(api.Session(), chunking)
    monkeypatch.setattr(semantic_chunks, "word_ranges", lambda *args: None)
    assert run(api.Session(), chunking) == fast


def run(session, chunking, **extra):
    req = make_request(TEXT, query="harbour pilot", k=3)
    req["chunking"] = chunking
    req.update(extra)
    out = api.simulate(req, session)
    assert "error" not in out, out.get("error")
    return out


@pytest.fixture
def no_host_vectors():
    """No registered host: the vectors come in the request, as from the page."""
    saved = list(semantic_split.HOSTS)
    semantic_split.HOSTS[:] = []
    yield
    semantic_split.HOSTS[:] = saved


@pytest.fixture
def host(no_host_vectors):
    """A host that embeds with the hashed bag of words."""
    semantic_split.register_host(lambda: type("Hashed", (), {"embed": staticmethod(lambda ts: [hashed(t) for t in ts])})())


def test_a_move_joins_only_the_context_chunks(host):
    session = api.Session()
    run(session, lc())
    out = run(session, lc(breakpoint_threshold_amount=60))
    split = session.split(session.index(TEXT), lc(breakpoint_threshold_amount=60))[0]
    assert sorted(split.texts.made) == sorted(c["number"] - 1 for c in out["chunks"] if c["retrieved"])
    want = eager_langchain(TEXT, lc(breakpoint_threshold_amount=60), vectors(TEXT, lc()))
    top = sorted((c for c in out["chunks"] if c["retrieved"]), key=lambda c: c["rank"])
    assert out["context"] == "\n\n".join(want[c["number"] - 1][3] for c in top)


def test_semantic_have_leaves_out_the_curve_the_caller_holds(host):
    session = api.Session()
    first = run(session, lc())
    curve = first["documents"][0]["semantic"]
    key = curve["key"]
    assert len(curve["distances"]) == len(curve["positions"]) == curve["count"] - 1 > 100
    moved = run(session, lc(breakpoint_threshold_amount=60), semantic_have=[key])
    sem = moved["documents"][0]["semantic"]
    assert set(sem) == {"key", "pending", "count", "threshold", "cuts"} and sem["count"] == curve["count"]
    whole = run(api.Session(), lc(breakpoint_threshold_amount=60))["documents"][0]["semantic"]
    assert sem == {k: v for k, v in whole.items() if k not in ("distances", "positions")}
    assert whole["distances"] == curve["distances"] and whole["positions"] == curve["positions"]
    # the gradient rule's compared curve is not the distances: it still comes
    sem = run(session, lc(breakpoint_threshold_type="gradient"), semantic_have=[key])["documents"][0]["semantic"]
    assert "distances" not in sem and len(sem["gradient"]) == curve["count"] - 1
    # another key than the one held, or no semantic_have: the whole curve
    assert "distances" in run(session, lc(breakpoint_threshold_amount=61), semantic_have=["0" * 40])["documents"][0]["semantic"]
    assert "distances" in run(session, lc(breakpoint_threshold_amount=62))["documents"][0]["semantic"]


def test_a_new_session_sends_the_whole_curve_even_to_a_caller_that_holds_it(no_host_vectors):
    """A replaced worker (a new session) prepares the key again from the vectors the page resends:
    its curve goes whole, whatever `semantic_have` says; the next move is trimmed."""
    chunking = lc(breakpoint_threshold_amount=70)
    key = semantic_split.key(TEXT, chunking)
    session = api.Session()
    pending = run(session, chunking, semantic_have=[key])
    assert pending["semantic_needs"][0]["key"] == key and pending["documents"][0]["semantic"]["pending"] is True
    given = [{"key": key, "vectors": vectors(TEXT, chunking)}]
    sem = run(session, chunking, semantic_have=[key], semantic_vectors=given)["documents"][0]["semantic"]
    assert len(sem["distances"]) == sem["count"] - 1 and len(sem["positions"]) == sem["count"] - 1
    assert "distances" not in run(session, lc(breakpoint_threshold_amount=71), semantic_have=[key])["documents"][0]["semantic"]


@pytest.mark.parametrize("have, field", [("abc", "semantic_have"), (["xyz"], "semantic_have[0]"),
                                         (["A" * 40], "semantic_have[0]"), (["0" * 40] * 65, "semantic_have")])
def test_a_bad_semantic_have_is_refused_in_one_sentence(have, field):
    out = api.simulate({**make_request("One. Two.", query="one"), "chunking": lc(), "semantic_have": have})
    assert out["error"]["field"] == field and out["error"]["message"].count(". ") == 0


def test_a_misspelt_semantic_have_is_refused():
    out = api.simulate({**make_request("One. Two.", query="one"), "chunking": lc(), "semantic_has": []})
    assert out["error"]["field"] == "semantic_has" and "semantic_have" in out["error"]["message"]
