"""The dense and hybrid "equivalent code" yields ragsim's top k.

sentence-transformers (and torch) are not installed for the tests, so the generated code runs
against a stand-in `sentence_transformers` module whose SentenceTransformer.encode is the same
model through onnxruntime (tests/conformance/test_dense_model.py holds that model to an independent
forward pass). What is checked here is everything else the code does: the chunks, BM25 (the real
bm25s), the cosine, the tie rule and the reciprocal rank fusion.
"""

import sys
import types

import pytest

from corpus import TEXTS
from helpers import make_request
from ragsim.wire.api import simulate
from ragsim.wire.codegen import equivalent_code

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
from ragsim.host.clients import embed_onnx  # noqa: E402

CASES = (
    ("prose.txt", {"unit": "words", "size": 24, "overlap": 6}, {"method": "dense"}),
    ("markdown.md", {"strategy": "langchain-recursive", "size": 300, "overlap": 50}, {"method": "dense"}),
    ("prose.txt", {"unit": "words", "size": 24, "overlap": 6}, {"method": "hybrid"}),
    ("markdown.md", {"strategy": "haystack", "split_by": "word", "size": 60, "overlap": 10},
     {"method": "hybrid", "weights": [0.3, 0.7], "rrf_c": 10, "variant": "bm25+"}),
)
QUERY = "Were the snapshots pruned? holds width text harbour"


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    embedder = embed_onnx.default_embedder()  # the one simulate uses: its cache by text is shared

    class SentenceTransformer:
        def __init__(self, name):
            assert name == "sentence-transformers/all-MiniLM-L6-v2"

        def encode(self, texts, normalize_embeddings=False):
            assert normalize_embeddings
            return embedder.embed([texts])[0] if isinstance(texts, str) else embedder.embed(list(texts))

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = SentenceTransformer
    saved = sys.modules.get("sentence_transformers")
    sys.modules["sentence_transformers"] = module
    yield module
    if saved is None:
        del sys.modules["sentence_transformers"]
    else:
        sys.modules["sentence_transformers"] = saved


@pytest.mark.parametrize("name,chunking,retrieval", CASES)
def test_generated_dense_code_reproduces_ragsim(stand_in, name, chunking, retrieval):
    text = TEXTS[name]
    req = make_request(text, query=QUERY, k=4)
    req["chunking"] = chunking
    req["retrieval"] = {"k": 4, **retrieval}
    r = simulate(req)
    assert "error" not in r, r
    code = equivalent_code(req)
    assert "SentenceTransformer('sentence-transformers/all-MiniLM-L6-v2')" in code
    assert ("EnsembleRetriever" in code) == (retrieval["method"] == "hybrid")
    namespace = {"text": text}
    exec(compile(code, f"<equivalent code for {name}>", "exec"), namespace)
    assert namespace["chunks"] == [text[c["start"]:c["end"]] for c in r["chunks"]]
    ours = [c["score"] for c in r["chunks"]]
    theirs = namespace["similarities"] if retrieval["method"] == "dense" else namespace["fused"]
    assert ours == pytest.approx(theirs, abs=1e-6)  # the generated code takes the dot product in float32
    by_rank = sorted(r["chunks"], key=lambda c: c["rank"])
    assert namespace["top"] == [c["number"] - 1 for c in by_rank[:4]]


def test_bad_weights_name_the_field_in_the_code_too():
    req = make_request("Some text.", query="text")
    req["retrieval"] = {"k": 2, "method": "hybrid", "weights": [2, 0]}
    with pytest.raises(Exception) as e:
        equivalent_code(req)
    assert e.value.field == "retrieval.weights"
