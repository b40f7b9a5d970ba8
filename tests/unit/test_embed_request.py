"""The user's own embedding model named in one request (`retrieval.embedding: {"endpoint", "model"}`,
the form the page sends and `python -m ragsim` reads), and the equivalent code that names it,
against a local server started here on 127.0.0.1 (tests/fake_openai.py).

- Served all-MiniLM-L6-v2's vectors, the ranks, scores and verdict equal the built-in model's; the
  response names the model (`dense.model`) and reports no truncation (the server has its own limit).
- Served a hashed bag of words, the ranks equal a numpy cosine ranking of those vectors.
- The page's request (cosines it computed, the model named) is ranked by those cosines alone.
- The equivalent code names the model: LangChain's OpenAIEmbeddings(base_url, model) for an
  OpenAI-compatible endpoint, OllamaEmbeddings(model, base_url) at Ollama's port; run with a stand-in
  `langchain_openai` over the real `openai` client against the server, its top k is ragsim's.
"""

import json
import pathlib
import sys
import types

import numpy as np
import pytest

from fake_openai import FakeOpenAI, hashed_vector
from ragsim.host import embed_endpoint
from ragsim.wire.api import simulate
from ragsim.wire.codegen import equivalent_code

pytestmark = pytest.mark.slow  # the model's vectors and a local server

HARBOUR = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "harbour.md").read_text(encoding="utf-8")
QUERY = "when does the pilot boat leave the harbour"


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture(autouse=True)
def fresh_embedders():
    embed_endpoint._ONE.clear()
    yield
    embed_endpoint._ONE.clear()


def request(method="dense", embedding=None, k=3) -> dict:
    retrieval = {"k": k, "method": method}
    if embedding:
        retrieval["embedding"] = embedding
    return {"documents": [{"id": "harbour", "text": HARBOUR}], "query": QUERY,
            "chunking": {"unit": "words", "size": 40, "overlap": 8}, "retrieval": retrieval,
            "span": {"doc": "harbour", "start": 0, "end": 40}, "scores": "all"}


def test_minilm_named_in_the_request_ranks_as_the_built_in_model(server):
    built_in = simulate(request())
    ours = simulate(request(embedding={"endpoint": server.endpoint, "model": "minilm"}))
    assert "error" not in ours, ours
    assert [c["rank"] for c in ours["chunks"]] == [c["rank"] for c in built_in["chunks"]]
    assert [c["score"] for c in ours["chunks"]] == pytest.approx([c["score"] for c in built_in["chunks"]], abs=1e-6)
    assert ours["verdict"] == built_in["verdict"]
    assert ours["dense"]["model"] == "minilm" and "model" not in built_in["dense"]
    assert not any(c["truncated"] for c in ours["chunks"])  # the server's own limit, unknown to ragsim


@pytest.mark.parametrize("method", ["dense", "hybrid"])
def test_another_model_named_in_the_request_ranks_by_its_vectors(server, method):
    out = simulate(request(method, {"endpoint": server.endpoint, "model": "hashed"}, k=5))
    assert "error" not in out, out
    texts = [HARBOUR[c["start"]:c["end"]] for c in out["chunks"]]
    v = np.array([hashed_vector(t) for t in texts])
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q = np.array(hashed_vector(QUERY))
    cosines = v @ (q / np.linalg.norm(q))
    if method == "dense":
        assert [c["score"] for c in out["chunks"]] == pytest.approx(cosines.tolist(), abs=1e-6)
        want = sorted(range(len(texts)), key=lambda i: (-cosines[i], i))
        assert [c["number"] - 1 for c in sorted(out["chunks"], key=lambda c: c["rank"])] == want
    assert out["dense"]["model"] == "hashed"


def test_the_pages_cosines_rank_with_the_model_named_and_no_truncation():
    """The page embeds and sends cosines; the core ranks by them and names the model."""
    long = "word " * 600  # far past all-MiniLM-L6-v2's 256 word pieces
    req = {"documents": [{"id": "d", "text": long}], "query": "word", "chunking": {"unit": "words", "size": 300, "overlap": 0},
           "retrieval": {"k": 1, "method": "dense", "similarities": [["d", 0, 1499, 0.1], ["d", 1500, 2999, 0.9]],
                         "embedding": {"endpoint": "http://localhost:11434/v1", "model": "nomic-embed-text"}}}
    out = simulate(req)
    assert "error" not in out, out
    assert [c["rank"] for c in out["chunks"]] == [2, 1]
    assert out["dense"]["model"] == "nomic-embed-text" and out["dense"]["truncated"] == 0
    del req["retrieval"]["embedding"]
    assert simulate(req)["dense"]["truncated"] == 2  # all-MiniLM-L6-v2 reads 256 pieces of each


@pytest.mark.parametrize("embedding", [
    "http://localhost:11434/v1", {"endpoint": "http://localhost:11434/v1"}, {"endpoint": "", "model": "m"},
    {"endpoint": "http://x/v1", "model": 3}, {"endpoint": "http://x/v1", "model": "m", "key": "secret"},
])
def test_a_malformed_embedding_is_one_sentence_naming_the_field(embedding):
    out = simulate(request(embedding=embedding))
    assert out["error"]["field"].startswith("retrieval.embedding")  # a key of its own: named by the key check
    assert out["error"]["message"].endswith(".") and "\n" not in out["error"]["message"]


def test_an_endpoint_that_is_down_is_one_sentence():
    out = simulate(request(embedding={"endpoint": "http://127.0.0.1:9/v1", "model": "hashed"}))
    assert out["error"]["field"] == "retrieval.embedding"
    assert "127.0.0.1:9" in out["error"]["message"] and "\n" not in out["error"]["message"]


def test_the_code_names_an_ollama_model_with_ollamas_client():
    code = equivalent_code(request(embedding={"endpoint": "http://localhost:11434/v1", "model": "nomic-embed-text"}))
    assert "OllamaEmbeddings(model='nomic-embed-text', base_url='http://localhost:11434')" in code
    assert "from langchain_ollama import OllamaEmbeddings" in code
    assert "SentenceTransformer" not in code and "Chroma's default" not in code


def test_the_code_names_an_openai_compatible_model(server):
    code = equivalent_code(request("hybrid", {"endpoint": server.endpoint, "model": "hashed"}))
    assert f"OpenAIEmbeddings(base_url={server.endpoint!r}, model='hashed'" in code
    assert "check_embedding_ctx_length=False" in code and "EnsembleRetriever" in code


@pytest.fixture
def langchain_openai():
    """A stand-in `langchain_openai` (not installed for the tests) whose OpenAIEmbeddings calls the real
    `openai` client, as the real class does once check_embedding_ctx_length is off."""
    openai = pytest.importorskip("openai")

    class OpenAIEmbeddings:
        def __init__(self, base_url, model, api_key, check_embedding_ctx_length):
            assert check_embedding_ctx_length is False
            self.client, self.model = openai.OpenAI(base_url=base_url, api_key=api_key), model

        def embed_documents(self, texts):
            data = self.client.embeddings.create(model=self.model, input=list(texts)).data
            return [d.embedding for d in sorted(data, key=lambda d: d.index)]

        def embed_query(self, text):
            return self.embed_documents([text])[0]

    module = types.ModuleType("langchain_openai")
    module.OpenAIEmbeddings = OpenAIEmbeddings
    saved = sys.modules.get("langchain_openai")
    sys.modules["langchain_openai"] = module
    yield module
    if saved is None:
        del sys.modules["langchain_openai"]
    else:
        sys.modules["langchain_openai"] = saved


@pytest.mark.parametrize("method", ["dense", "hybrid"])
def test_the_code_run_against_the_endpoint_gives_ragsims_top_k(server, langchain_openai, method):
    pytest.importorskip("bm25s")
    req = request(method, {"endpoint": server.endpoint, "model": "hashed"}, k=4)
    out = simulate(req)
    namespace = {"text": HARBOUR}
    exec(compile(equivalent_code(req), "<equivalent code>", "exec"), namespace)
    assert namespace["chunks"] == [HARBOUR[c["start"]:c["end"]] for c in out["chunks"]]
    by_rank = sorted(out["chunks"], key=lambda c: c["rank"])
    assert namespace["top"] == [c["number"] - 1 for c in by_rank[:4]]
    assert json.dumps(namespace["similarities"])  # plain floats, as the page shows them
