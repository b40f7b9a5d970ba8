"""The semantic chunkers' "equivalent code" runs against the real chunker classes and
yields ragsim's chunks. The embeddings packages it imports (langchain-huggingface,
llama-index-embeddings-huggingface, sentence-transformers through chromadb) are not test extras,
and chunking_evaluation is not on PyPI: the code runs with those names bound to all-MiniLM-L6-v2
through the project's onnxruntime model (the one ragsim's CPython host embeds with), and
`chunking_evaluation.chunking` bound to the test-only transcription of Chroma's source."""

import pathlib
import sys
import types

import llama_index.core
import pytest
from chromadb.utils import embedding_functions
from langchain_core.embeddings import Embeddings
from llama_index.core.embeddings import BaseEmbedding

import chroma_chunkers_ref
from corpus import TEXTS
from ragsim.wire import api
from ragsim.wire.codegen import equivalent_code

pytestmark = pytest.mark.slow  # runs the generated code against the real chunkers


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
    import ragsim.host
    from ragsim.host.clients import embed_onnx

    ragsim.host.register()  # ragsim's own side embeds through the registered host
    embedder = embed_onnx.default_embedder()
    return lambda texts: embedder.embed(list(texts)).tolist()


@pytest.fixture
def libraries(model, monkeypatch):
    """The names the generated code imports, bound to the project's model."""
    class HuggingFaceEmbeddings(Embeddings):
        def __init__(self, model_name):
            assert model_name == "sentence-transformers/all-MiniLM-L6-v2"

        def embed_documents(self, texts):
            return model(texts)

        def embed_query(self, text):
            return model([text])[0]

    class HuggingFaceEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text):
            return model([text])[0]

        def _get_text_embeddings(self, texts):
            return model(texts)

        def _get_query_embedding(self, query):
            return model([query])[0]

        async def _aget_query_embedding(self, query):
            return model([query])[0]

    def sentence_transformer(model_name):
        assert model_name == "all-MiniLM-L6-v2"
        return model

    modules = {"langchain_huggingface": {"HuggingFaceEmbeddings": HuggingFaceEmbeddings},
               "llama_index.embeddings.huggingface": {
                   "HuggingFaceEmbedding": lambda model_name: HuggingFaceEmbedding(model_name=model_name)},
               "chunking_evaluation": {}, "chunking_evaluation.chunking": {
                   "ClusterSemanticChunker": chroma_chunkers_ref.ClusterSemanticChunker,
                   "KamradtModifiedChunker": chroma_chunkers_ref.KamradtModifiedChunker}}
    for name, attrs in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(embedding_functions, "SentenceTransformerEmbeddingFunction", sentence_transformer)
    # tiktoken (in Chroma's openai_token_count) reads cl100k_base from LlamaIndex's bundled cache
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(pathlib.Path(llama_index.core.__file__).parent / "_static/tiktoken_cache"))


CASES = [
    ("prose.txt", {"strategy": "langchain-semantic"}),
    ("markdown.md", {"strategy": "langchain-semantic", "breakpoint_threshold_type": "standard_deviation",
                     "breakpoint_threshold_amount": 1, "min_chunk_size": 80, "buffer_size": 0}),
    ("prose.txt", {"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 70}),
    ("markdown.md", {"strategy": "chroma-cluster", "size": 120, "min_chunk_size": 30}),
    ("prose.txt", {"strategy": "chroma-kamradt", "size": 100, "min_chunk_size": 30}),
]


@pytest.mark.parametrize("name, chunking", CASES, ids=[f"{c['strategy']}-{n}" for n, c in CASES])
def test_generated_semantic_code_makes_ragsims_chunks(name, chunking, libraries):
    text = TEXTS[name]
    req = {"documents": [{"id": "d", "text": text}], "query": "harbour", "chunking": chunking, "retrieval": {"k": 2}}
    session = api.Session()
    out = api.simulate(req, session)
    assert "error" not in out and out["semantic_needs"] == []
    split, _ = session.split(session.index(text), chunking)

    code = equivalent_code(req)
    assert "all-MiniLM-L6-v2" in code
    namespace = {"text": text}
    exec(compile(code, f"<equivalent code for {chunking['strategy']}>", "exec"), namespace)
    assert namespace["chunks"] == split.texts
    assert len(namespace["top"]) == min(2, len(split.texts))


def test_every_field_is_written_out_with_the_value_ragsim_used():
    code = equivalent_code({"chunking": {"strategy": "langchain-semantic", "breakpoint_threshold_type": "gradient"},
                            "retrieval": {"k": 1}})
    for line in ("buffer_size=1,", "breakpoint_threshold_type='gradient',", "breakpoint_threshold_amount=95,",
                 "number_of_chunks=None,", "min_chunk_size=None,", "sentence_split_regex='(?<=[.?!])\\\\s+',"):
        assert line in code, line
    chroma = equivalent_code({"chunking": {"strategy": "chroma-kamradt", "tokenizer": "o200k_base"}, "retrieval": {"k": 1}})
    assert "avg_chunk_size=400," in chroma and "o200k_base" in chroma and "pip install git+https://github.com/" in chroma
    refused = api.equivalent_code({"chunking": {"strategy": "llamaindex-semantic", "buffer_size": -1}, "retrieval": {"k": 1}})
    assert refused["error"]["field"] == "chunking.buffer_size"
