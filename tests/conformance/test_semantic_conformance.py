"""ragsim.semantic against the real semantic chunkers (SPEC section 12).

langchain-experimental's `SemanticChunker` and llama-index-core's `SemanticSplitterNodeParser` run
for real, each handed an embeddings object; Chroma's `ClusterSemanticChunker` and
`KamradtModifiedChunker` run as transcribed in chroma_chunkers_ref.py (not on PyPI). The embedding is
a deterministic hashed bag of words (64 dimensions, normalised), and, on one text, the project's
all-MiniLM-L6-v2. Each embeddings object records the texts it was asked for: they must be the ones
`texts_to_embed` names, and the core, handed the same vectors, must yield the same chunk texts.
"""

import pathlib
import random
import re
import warnings

import llama_index.core
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings
from llama_index.core import Document
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.node_parser import SemanticSplitterNodeParser

from ragsim.split import semantic
from ragsim.wire import api
from ragsim.split import semantic_numpy as npm

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "langchain-experimental is being sunset"
    from langchain_experimental.text_splitter import SemanticChunker

import chroma_chunkers_ref as chroma  # noqa: E402
from corpus import TEXTS  # noqa: E402
from helpers import hashed  # noqa: E402

pytestmark = pytest.mark.slow  # the real semantic chunkers and model

EDGE_TEXTS = {"empty": "", "blank": "  \n ", "one": "Just one sentence", "two": "A b. C d.",
              "three": "Alpha beta. Alpha beta. Gamma delta!"}
ALL = {**TEXTS, **EDGE_TEXTS}


@pytest.fixture(scope="module", autouse=True)
def tiktoken_cache():
    # tiktoken (in Chroma's openai_token_count) reads cl100k_base from LlamaIndex's bundled cache.
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(pathlib.Path(llama_index.core.__file__).parent / "_static/tiktoken_cache"))
    yield
    mp.undo()


def hashed_batch(texts) -> list[list[float]]:
    return [hashed(t) for t in texts]


class Recorder:
    """An embedding function (texts -> vectors) that remembers every text it embedded, in order."""

    def __init__(self, embed=hashed_batch):
        self.embed, self.seen = embed, []

    def __call__(self, texts):
        self.seen.extend(texts)
        return self.embed(list(texts))


class LangChainEmbeddings(Embeddings):
    def __init__(self, recorder):
        self.recorder = recorder

    def embed_documents(self, texts):
        return self.recorder(texts)

    def embed_query(self, text):
        return self.recorder([text])[0]


class LlamaIndexEmbedding(BaseEmbedding):
    recorder: object = None

    def _get_text_embedding(self, text):
        return self.recorder([text])[0]

    def _get_text_embeddings(self, texts):
        return self.recorder(texts)

    def _get_query_embedding(self, query):
        return self.recorder([query])[0]

    async def _aget_query_embedding(self, query):
        return self.recorder([query])[0]


def ours(text, chunking, embed=hashed_batch):
    texts = semantic.texts_to_embed(text, chunking)
    chunks, curve = semantic.cut(text, chunking, embed(texts) if texts else [])
    return texts, chunks, curve


def assert_extents(text, chunks, rejoined: bool):
    """Chunks in order, each over its own stretch; a slice where the library's text is one."""
    for (a, b, units, chunk), nxt in zip(chunks, [*chunks[1:], None]):
        assert 0 <= a <= b <= len(text) and (nxt is None or b <= nxt[0])
        if not rejoined:
            assert text[a:b] == chunk and units == len(chunk)


# -- LangChain ------------------------------------------------------------------------------------

LANGCHAIN_SETTINGS = [
    {},
    {"breakpoint_threshold_type": "standard_deviation"},
    {"breakpoint_threshold_type": "interquartile"},
    {"breakpoint_threshold_type": "gradient"},
    {"breakpoint_threshold_amount": 70},
    {"breakpoint_threshold_type": "standard_deviation", "breakpoint_threshold_amount": 0.5},
    {"breakpoint_threshold_type": "interquartile", "breakpoint_threshold_amount": 0},
    {"breakpoint_threshold_type": "gradient", "breakpoint_threshold_amount": 50, "buffer_size": 0},
    {"number_of_chunks": 4},
    {"number_of_chunks": 1000, "breakpoint_threshold_type": "gradient"},
    {"min_chunk_size": 200},
    {"min_chunk_size": 60, "breakpoint_threshold_amount": 40},
    {"buffer_size": 2},
    {"buffer_size": 2, "breakpoint_threshold_type": "interquartile", "min_chunk_size": 100},
    {"sentence_split_regex": r"\n+"},
    {"sentence_split_regex": r"(\n)"},
]


@pytest.mark.parametrize("fields", LANGCHAIN_SETTINGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "defaults")
def test_langchain_semantic_chunker(fields):
    for name, text in ALL.items():
        recorder = Recorder()
        chunker = SemanticChunker(LangChainEmbeddings(recorder), **fields)
        want = chunker.split_text(text)
        chunking = {"strategy": "langchain-semantic", **fields}
        texts, chunks, curve = ours(text, chunking)
        assert [c[3] for c in chunks] == want, name
        assert [c[2] for c in chunks] == [len(c) for c in want]
        assert recorder.seen in (texts, []), name  # none for one sentence (or two, for gradient)
        assert_extents(text, chunks, rejoined=True)
        if "sentence_split_regex" not in fields:  # the regex's whitespace became one space
            assert [re.sub(r"\s+", " ", text[a:b]) for a, b, _, _ in chunks] == [re.sub(r"\s+", " ", c) for c in want]
        if recorder.seen:  # the curve is the library's: its distances and its threshold
            distances, _ = chunker._calculate_sentence_distances(re.split(chunker.sentence_split_regex, text))
            assert curve["distances"] == pytest.approx(distances, abs=1e-12)
            if fields.get("number_of_chunks") is None and len(distances) > 1:
                threshold, _ = chunker._calculate_breakpoint_threshold(distances)
                assert curve["threshold"] == pytest.approx(float(threshold), abs=1e-12)


# -- LlamaIndex -----------------------------------------------------------------------------------

LLAMAINDEX_SETTINGS = [{}, {"buffer_size": 2}, {"buffer_size": 0}, {"breakpoint_percentile_threshold": 70},
                       {"breakpoint_percentile_threshold": 50, "buffer_size": 3}, {"breakpoint_percentile_threshold": 30}]


@pytest.mark.parametrize("fields", LLAMAINDEX_SETTINGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "defaults")
def test_llamaindex_semantic_splitter(fields):
    for name, text in ALL.items():
        recorder = Recorder()
        parser = SemanticSplitterNodeParser(embed_model=LlamaIndexEmbedding(recorder=recorder, embed_batch_size=2048),
                                            include_metadata=False, include_prev_next_rel=False, **fields)
        want = [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]
        texts, chunks, _ = ours(text, {"strategy": "llamaindex-semantic", **fields})
        assert [c[3] for c in chunks] == want, name
        assert recorder.seen == texts, name
        assert_extents(text, chunks, rejoined=False)


# -- Chroma ---------------------------------------------------------------------------------------

CHROMA_SETTINGS = [("chroma-cluster", 400, 50), ("chroma-cluster", 200, 50), ("chroma-cluster", 120, 30),
                   ("chroma-kamradt", 400, 50), ("chroma-kamradt", 150, 50), ("chroma-kamradt", 60, 20)]


@pytest.mark.parametrize("strategy, size, min_size", CHROMA_SETTINGS)
def test_chroma_chunkers_against_their_source(strategy, size, min_size):
    for name, text in ALL.items():
        recorder = Recorder()
        if strategy == "chroma-cluster":
            chunker = chroma.ClusterSemanticChunker(recorder, max_chunk_size=size, min_chunk_size=min_size)
        else:
            chunker = chroma.KamradtModifiedChunker(size, min_size, embedding_function=recorder)
        if not text.strip():  # no pieces: the library fails (np.dot of nothing); ragsim makes no chunk
            with pytest.raises((AttributeError, IndexError, TypeError, ValueError)):
                chunker.split_text(text)
            assert ours(text, {"strategy": strategy})[1] == []
            continue
        want = chunker.split_text(text)
        texts, chunks, _ = ours(text, {"strategy": strategy, "size": size, "min_chunk_size": min_size})
        assert [c[3] for c in chunks] == want, name
        assert [c[2] for c in chunks] == [chroma.openai_token_count(c) for c in want]
        assert recorder.seen == texts, name
        assert_extents(text, chunks, rejoined=True)


# -- random texts ---------------------------------------------------------------------------------

# Texts made of a few words, sentence marks and whitespace of every kind, so sentences are empty,
# whitespace-only, repeated, and split by runs the re-join collapses.
TEXTS_ST = st.lists(st.sampled_from(["cat", "dog", "sun", "Mr.", "e.g.", ".", "!", "?", " ", "  ", "\n", "\n\n",
                                     "\t", "rain falls", "U.S.", "3.5", '"', ")"]), max_size=40).map("".join)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(text=TEXTS_ST, rule=st.sampled_from(list(semantic.semantic_langchain.BREAKPOINT_DEFAULTS)),
       amount=st.none() | st.integers(0, 100), buffer_size=st.integers(0, 3),
       number_of_chunks=st.none() | st.integers(1, 6), min_chunk_size=st.none() | st.integers(0, 30))
def test_langchain_on_random_texts(text, rule, amount, buffer_size, number_of_chunks, min_chunk_size):
    fields = {"breakpoint_threshold_type": rule, "breakpoint_threshold_amount": amount, "buffer_size": buffer_size,
              "number_of_chunks": number_of_chunks, "min_chunk_size": min_chunk_size}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy on zero vectors
        want = SemanticChunker(LangChainEmbeddings(Recorder()), **fields).split_text(text)
    assert [c[3] for c in ours(text, {"strategy": "langchain-semantic", **fields})[1]] == want


@settings(max_examples=100, deadline=None, derandomize=True)
@given(text=TEXTS_ST, p=st.integers(0, 100), buffer_size=st.integers(0, 3))
def test_llamaindex_on_random_texts(text, p, buffer_size):
    parser = SemanticSplitterNodeParser(embed_model=LlamaIndexEmbedding(recorder=Recorder()), buffer_size=buffer_size,
                                        breakpoint_percentile_threshold=p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]
    chunks = ours(text, {"strategy": "llamaindex-semantic", "buffer_size": buffer_size,
                         "breakpoint_percentile_threshold": p})[1]
    assert [c[3] for c in chunks] == want


@settings(max_examples=100, deadline=None, derandomize=True)
@given(text=TEXTS_ST.filter(str.strip), strategy=st.sampled_from(["chroma-cluster", "chroma-kamradt"]),
       size=st.integers(1, 40), min_size=st.integers(1, 8))
def test_chroma_on_random_texts(text, strategy, size, min_size):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's mean of no pairs
        if strategy == "chroma-cluster":
            want = chroma.ClusterSemanticChunker(Recorder(), size, min_size).split_text(text)
        else:
            want = chroma.KamradtModifiedChunker(size, min_size, Recorder()).split_text(text)
    chunks = ours(text, {"strategy": strategy, "size": size, "min_chunk_size": min_size})[1]
    assert [c[3] for c in chunks] == want


# -- the real model -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
    from ragsim.host.clients import embed_onnx

    embedder = embed_onnx.default_embedder()  # keeps each text's vector: every window is embedded once
    return lambda texts: embedder.embed(texts).tolist()


@pytest.mark.parametrize("name", ["prose.txt"])
def test_the_real_model(name, minilm):
    text = TEXTS[name]
    for fields in ({}, {"breakpoint_threshold_type": "gradient"}, {"breakpoint_threshold_type": "standard_deviation",
                                                                   "breakpoint_threshold_amount": 1}):
        want = SemanticChunker(LangChainEmbeddings(Recorder(minilm)), **fields).split_text(text)
        assert [c[3] for c in ours(text, {"strategy": "langchain-semantic", **fields}, minilm)[1]] == want
    parser = SemanticSplitterNodeParser(embed_model=LlamaIndexEmbedding(recorder=Recorder(minilm)),
                                        breakpoint_percentile_threshold=80)
    want = [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]
    assert [c[3] for c in ours(text, {"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 80},
                               minilm)[1]] == want
    for strategy, chunker in (("chroma-cluster", chroma.ClusterSemanticChunker(Recorder(minilm), 120, 30)),
                              ("chroma-kamradt", chroma.KamradtModifiedChunker(100, 30, Recorder(minilm)))):
        want = chunker.split_text(text)
        got = ours(text, {"strategy": strategy, "size": 120 if strategy == "chroma-cluster" else 100,
                          "min_chunk_size": 30}, minilm)[1]
        assert [c[3] for c in got] == want, strategy


# -- the real model through the CPython host: the libraries handed the project's model --

# Two short real texts and two buffer sizes each (a window set embedded once, by the cached embedder):
# a few hundred short texts in all, the CI budget of a few seconds of embedding.
REAL_TEXTS = ("prose.txt", "markdown.md")
LANGCHAIN_REAL = [{}, {"breakpoint_threshold_type": "standard_deviation"},
                  {"breakpoint_threshold_type": "interquartile", "breakpoint_threshold_amount": 1},
                  {"breakpoint_threshold_type": "gradient", "min_chunk_size": 200},
                  {"buffer_size": 0, "breakpoint_threshold_amount": 70}, {"number_of_chunks": 4, "min_chunk_size": 60}]
LLAMAINDEX_REAL = [{}, {"breakpoint_percentile_threshold": 80}, {"buffer_size": 0, "breakpoint_percentile_threshold": 60}]


@pytest.fixture(scope="module")
def cpython_host(minilm):
    """ragsim's own path in CPython: `ragsim.host.register()` registers onnxruntime's embedder, which the
    session calls for the texts the core names (the same cached embedder `minilm` wraps)."""
    import ragsim.host
    from ragsim.split import semantic_split

    ragsim.host.register()
    assert semantic_split.HOSTS
    return minilm


def through_the_host(text: str, chunking: dict) -> list[str]:
    """The chunk texts ragsim's simulation makes, its vectors from the registered host."""
    session = api.Session()
    out = api.simulate({"documents": [{"id": "d", "text": text}], "query": "", "chunking": chunking,
                        "retrieval": {"k": 1}}, session)
    assert "error" not in out and out["semantic_needs"] == [], out
    split, _ = session.split(session.index(text), chunking)
    return split.texts


@pytest.mark.parametrize("name", REAL_TEXTS)
def test_langchain_with_the_real_model_through_the_host(name, cpython_host):
    text = TEXTS[name]
    for fields in LANGCHAIN_REAL:
        want = SemanticChunker(LangChainEmbeddings(Recorder(cpython_host)), **fields).split_text(text)
        assert through_the_host(text, {"strategy": "langchain-semantic", **fields}) == want, fields


@pytest.mark.parametrize("name", REAL_TEXTS)
def test_llamaindex_with_the_real_model_through_the_host(name, cpython_host):
    text = TEXTS[name]
    for fields in LLAMAINDEX_REAL:
        parser = SemanticSplitterNodeParser(embed_model=LlamaIndexEmbedding(recorder=Recorder(cpython_host)),
                                            include_metadata=False, include_prev_next_rel=False, **fields)
        want = [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]
        assert through_the_host(text, {"strategy": "llamaindex-semantic", **fields}) == want, fields


@pytest.mark.parametrize("name", REAL_TEXTS)
def test_chroma_with_the_real_model_through_the_host(name, cpython_host):
    text = TEXTS[name]
    for strategy, size, min_size in (("chroma-cluster", 120, 30), ("chroma-kamradt", 100, 30)):
        if strategy == "chroma-cluster":
            chunker = chroma.ClusterSemanticChunker(Recorder(cpython_host), max_chunk_size=size, min_chunk_size=min_size)
        else:
            chunker = chroma.KamradtModifiedChunker(size, min_size, embedding_function=Recorder(cpython_host))
        got = through_the_host(text, {"strategy": strategy, "size": size, "min_chunk_size": min_size})
        assert got == chunker.split_text(text), strategy


# -- numpy's arithmetic on random arrays ----------------------------------------------------------

def test_numpy_helpers_are_bit_for_bit_numpy():
    rng = random.Random(25)
    for trial in range(400):
        n = rng.choice([1, 2, 3, 7, 8, 9, 17, 127, 128, 129, 300, 1000, 5000])
        values = [rng.random() ** rng.choice([1, 3]) for _ in range(n)]
        if trial % 5 == 0:
            values = [round(v, 1) for v in values]  # ties
        q = rng.choice([0, 25, 50, 75, 95, 99.5, 100, rng.uniform(0, 100)])
        arr = np.array(values)
        assert npm.percentile(values, q) == float(np.percentile(arr, q))
        assert npm.pairwise_sum(values) == float(np.sum(arr))
        assert npm.mean(values) == float(np.mean(arr))
        assert npm.std(values) == float(np.std(arr))
        assert npm.row_norm(values) == float(np.linalg.norm(arr[None, :], axis=1)[0])
        if n >= 2:
            assert npm.gradient(values) == np.gradient(arr, range(n)).tolist()
        m = rng.randint(1, 9)  # a block of the cluster chunker's matrix: np.sum of a strided view
        big = np.array([[rng.gauss(0, 1) for _ in range(m + 3)] for _ in range(m + 3)])
        block = big[1:m + 1, 2:m + 2]
        assert npm.pairwise_sum(block.ravel().tolist()) == float(np.sum(block))


# -- the one divergence ---------------------------------------------------------------------------

def test_ties_at_the_threshold_are_the_one_divergence():
    """numpy's dot products are BLAS's, whose bits ours can miss by an ulp (docs/semantic.md): two
    identical windows are 0.0 apart for LlamaIndex here and -2.2e-16 for ragsim. At a low percentile of
    a repetitive text the threshold falls among those, and only there do the cuts differ; handed the
    library's own distances, the core cuts exactly as the library does."""
    text = TEXTS["repeated.txt"]
    chunking = {"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 10}
    parser = SemanticSplitterNodeParser(embed_model=LlamaIndexEmbedding(recorder=Recorder()),
                                        breakpoint_percentile_threshold=10)
    want = [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]
    sentences = parser._build_sentence_groups(parser.sentence_splitter(text))
    for s, v in zip(sentences, hashed_batch([s["combined_sentence"] for s in sentences])):
        s["combined_sentence_embedding"] = v
    lib = [float(d) for d in parser._calculate_distances_between_sentence_groups(sentences)]
    lib_threshold = float(np.percentile(lib, 10))

    kept = semantic.prepare(text, chunking, hashed_batch(semantic.texts_to_embed(text, chunking)))
    chunks, curve = semantic.recut(text, chunking, kept)
    assert kept.distances == pytest.approx(lib, abs=1e-15)
    assert [c[3] for c in chunks] != want
    ours_cut = {i for i, d in enumerate(kept.distances) if d > curve["threshold"]}
    lib_cut = {i for i, d in enumerate(lib) if d > lib_threshold}
    assert ours_cut ^ lib_cut and all(abs(lib[i] - lib_threshold) <= 1e-15 for i in ours_cut ^ lib_cut)
    chunks, _ = semantic.recut(text, chunking, type(kept).of(kept.spans, lib))
    assert [c[3] for c in chunks] == want
