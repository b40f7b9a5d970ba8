"""The "equivalent code" with a reranker of the user's own (`retrieval.rerank`) yields ragsim's reranked
top k: the generated snippet, run with the installed LangChain (a BaseDocumentCompressor in a
ContextualCompressionRetriever) or LlamaIndex (a BaseNodePostprocessor), posts the retriever's first
`depth` chunks to the `/rerank` endpoint of tests/fake_openai.py, started here on 127.0.0.1, and its
`top` equals the top k of one request (`simulate`) naming the same reranker.

The reversing reranker (`reverse`) moves the answer; the `lexical` one scores by shared words (ties by
the order sent, which the code must keep as ragsim does). Dense retrieval runs with the stand-in
`sentence_transformers` of test_dense_codegen (the same model through onnxruntime).
"""

import pytest

from corpus import TEXTS
from helpers import make_request, rerank_server
from ragsim.wire.api import simulate
from ragsim.wire.codegen import equivalent_code
from test_dense_codegen import stand_in  # noqa: F401  (the stand-in sentence_transformers, a fixture)

pytest.importorskip("langchain_classic", reason="LangChain's retrievers come with langchain-community (test extras)")
pytest.importorskip("requests")

QUERY = "Were the snapshots pruned? holds width text harbour"
CASES = (  # (text, chunking, retrieval without the reranker, reranker, depth, k)
    ("prose.txt", {"unit": "words", "size": 24, "overlap": 6}, {}, "reverse", 5, 3),
    ("markdown.md", {"strategy": "langchain-recursive", "size": 300, "overlap": 50}, {"variant": "bm25+"}, "lexical", 6, 2),
    ("prose.txt", {"unit": "words", "size": 24, "overlap": 6}, {}, "reverse", 2, 4),  # k past the depth
    ("prose.txt", {"strategy": "llamaindex-sentence", "size": 60, "overlap": 10}, {}, "reverse", 4, 2),
    ("markdown.md", {"strategy": "llamaindex-token", "size": 50, "overlap": 5}, {}, "lexical", 5, 3),
)


@pytest.fixture(scope="module")
def server():
    with rerank_server() as s:
        yield s


def reranked_top(server, name, chunking, retrieval, model, depth, k):
    """(the code's `top`, ragsim's top k after the reranker, the code) for one request."""
    text = TEXTS[name]
    req = make_request(text, query=QUERY, k=k)
    req["chunking"] = chunking
    req["retrieval"] = {"k": k, **retrieval, "rerank": {"endpoint": server.endpoint, "model": model, "depth": depth}}
    out = simulate(req)
    assert "error" not in out, out
    code = equivalent_code(req)
    asked = len(server.requests)
    namespace = {"text": text}
    exec(compile(code, f"<equivalent code for {name}>", "exec"), namespace)
    posts = [r for r in server.requests[asked:] if r["path"].endswith("/rerank")]
    assert len(posts) == 1 and len(posts[0]["body"]["documents"]) == min(depth, len(namespace["chunks"]))
    assert namespace["chunks"] == [text[c["start"]:c["end"]] for c in out["chunks"]]
    by_rank = sorted(out["chunks"], key=lambda c: c["rank"])
    return namespace["top"], [c["number"] - 1 for c in by_rank[:k]], code


@pytest.mark.parametrize("name,chunking,retrieval,model,depth,k", CASES)
def test_the_code_reranks_as_ragsim_does(server, name, chunking, retrieval, model, depth, k):
    theirs, ours, code = reranked_top(server, name, chunking, retrieval, model, depth, k)
    assert theirs == ours
    llamaindex = chunking.get("strategy", "").startswith("llamaindex")
    assert ("BaseNodePostprocessor" in code) == llamaindex and ("ContextualCompressionRetriever" in code) != llamaindex
    assert f"url={server.endpoint + '/rerank'!r}, model={model!r}, top_n={k}" in code


def test_a_reversing_reranker_changes_the_codes_top(server):
    """The check can fail: without the reranker's lines the code's top k is the retriever's, not ragsim's."""
    theirs, ours, code = reranked_top(server, *CASES[0])
    cut = code[: code.index("class YourReranker")]
    namespace = {"text": TEXTS[CASES[0][0]]}
    exec(compile(cut, "<the retriever alone>", "exec"), namespace)
    assert namespace["top"][: len(ours)] != ours == theirs


def test_dense_and_hybrid_rerank_too(server, stand_in):
    for method in ("dense", "hybrid"):
        theirs, ours, code = reranked_top(server, "prose.txt", {"unit": "words", "size": 24, "overlap": 6},
                                          {"method": method}, "reverse", 4, 2)
        assert theirs == ours and "SentenceTransformer" in code
