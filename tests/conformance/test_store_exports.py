"""Exports of stores whose servers cannot run here (ragsim.wire.chunk_exports): Elasticsearch/OpenSearch,
Weaviate and Pinecone, each written as the server answers, holding the records LangChain (and LlamaIndex)
write there. The chunks are LangChain's own (`RecursiveCharacterTextSplitter(1000, 200,
add_start_index=True)`) and LlamaIndex's (`SentenceSplitter()` nodes through `node_to_metadata_dict`).

The shapes, as read in the libraries' sources and the servers' API references:
- LangChain's ElasticsearchStore: `query_field="text"`, `vector_query_field="vector"`, the Document's
  metadata under `metadata` (langchain-ai/langchain-elastic,
  libs/elasticsearch/langchain_elasticsearch/_sync/vectorstores.py, `ElasticsearchStore.__init__`; hits
  read back by `_hits_to_docs_scores` from `hit["_source"]["metadata"]`); a `_search` answer is
  `{"took", "timed_out", "_shards", "hits": {"total", "max_score", "hits": [{"_index", "_id", "_score",
  "_source"}]}}` (https://www.elastic.co/guide/en/elasticsearch/reference/current/search-search.html);
  LlamaIndex's ElasticsearchStore writes `{"content", "metadata", "embedding"}`.
- LangChain's WeaviateVectorStore: `data_properties = {self._text_key: text}` and each metadata key a
  property (langchain-ai/langchain-weaviate, libs/weaviate/langchain_weaviate/vectorstores.py,
  `add_texts`); `GET /v1/objects` answers `{"objects": [{"class", "id", "properties", "vector",
  "creationTimeUnix", "lastUpdateTimeUnix"}], "totalResults"}`
  (https://weaviate.io/developers/weaviate/api/rest#tag/objects/get/objects).
- LangChain's PineconeVectorStore: `metadata[self._text_key] = text` ("text"), upserted as
  `(id, embedding, metadata)` (langchain-ai/langchain-pinecone, libs/pinecone/langchain_pinecone/vectorstores.py,
  `add_texts`); `fetch` answers `{"vectors": {id: {"id", "values", "metadata"}}, "namespace", "usage"}`
  (https://docs.pinecone.io/reference/api/data-plane/fetch), Pinecone keeping every number as a float.
"""

import json
import uuid

import pytest

from helpers import run_cli
from store_helpers import langchain_chunks, source_texts, vector
from corpus import TEXTS_DIR
from ragsim.host.stores import read_store

pytestmark = pytest.mark.slow  # the command line

NAMES = ("udhr_article1.txt", "prose.txt")


@pytest.fixture
def chunks():
    return langchain_chunks(NAMES, 1000, 200)


def sources(folder) -> list[str]:
    for name, text in source_texts(*NAMES).items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in NAMES]


def ids_of(chunks) -> list[str]:
    return [str(uuid.uuid5(uuid.NAMESPACE_URL, f"{i}")) for i in range(len(chunks))]


def elasticsearch_answer(chunks) -> dict:
    hits = [{"_index": "langchain-demo", "_id": i, "_score": 1.0,
             "_source": {"text": d.page_content, "metadata": d.metadata, "vector": vector(d.page_content)}}
            for i, d in zip(ids_of(chunks), chunks)]
    return {"took": 2, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": 1.0, "hits": hits}}


def weaviate_objects(chunks) -> dict:
    return {"objects": [{"class": "LangChain_demo", "id": i, "creationTimeUnix": 1733300000000,
                         "lastUpdateTimeUnix": 1733300000000, "properties": {"text": d.page_content, **d.metadata},
                         "vector": vector(d.page_content)} for i, d in zip(ids_of(chunks), chunks)],
            "totalResults": len(chunks)}


def pinecone_fetch(chunks) -> dict:
    def floats(metadata):
        return {k: float(v) if isinstance(v, int) else v for k, v in metadata.items()}

    return {"namespace": "", "usage": {"readUnits": 1},
            "vectors": {i: {"id": i, "values": vector(d.page_content), "metadata": {**floats(d.metadata), "text": d.page_content}}
                        for i, d in zip(ids_of(chunks), chunks)}}


@pytest.mark.parametrize("kind,build", [("elasticsearch", elasticsearch_answer), ("weaviate", weaviate_objects),
                                        ("pinecone", pinecone_fetch)])
def test_exports_read_placed_and_named(tmp_path, chunks, kind, build):
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(build(chunks)), encoding="utf-8")
    got = read_store(str(path))
    assert got["store"]["kind"] == kind and got["store"]["chunks"] == len(chunks)
    assert [c["id"] for c in got["chunks"]] == ids_of(chunks)
    assert [c["text"] for c in got["chunks"]] == [d.page_content for d in chunks]
    assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in chunks]
    assert [c["start"] for c in got["chunks"]] == [d.metadata["start_index"] for d in chunks]
    assert not any(set(c["metadata"]) & {"vector", "values", "text"} for c in got["chunks"])
    out = run_cli("inspect", str(path), "--source", *sources(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["unplaced"] == [] and {c["placement"] for c in report["chunks"]} == {"offsets"}
    whole = report["splitter_index"]
    assert (whole["strategy"], whole["fields"]) == ("langchain-recursive", {"size": 1000, "overlap": 200})
    assert whole["reproduced"] == len(chunks)


def test_scroll_pages_and_elasticdump_lines(tmp_path, chunks):
    """A scroll's pages saved as one list, and elasticdump's one hit a line (JSON Lines, read in pages)."""
    answer = elasticsearch_answer(chunks)
    hits = answer["hits"]["hits"]
    pages = [{**answer, "_scroll_id": "abc", "hits": {**answer["hits"], "hits": hits[i:i + 3]}} for i in range(0, len(hits), 3)]
    (tmp_path / "scroll.json").write_text(json.dumps(pages), encoding="utf-8")
    (tmp_path / "dump.jsonl").write_text("".join(json.dumps(h) + "\n" for h in hits), encoding="utf-8")
    for name in ("scroll.json", "dump.jsonl"):
        got = read_store(str(tmp_path / name))
        assert [c["text"] for c in got["chunks"]] == [d.page_content for d in chunks]
        assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in chunks]
        out = run_cli("inspect", str(tmp_path / name), "--source", *sources(tmp_path), "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["splitter_index"]["reproduced"] == len(chunks)


def test_llamaindex_nodes_in_an_elasticsearch_answer(tmp_path):
    """LlamaIndex's ElasticsearchStore: `content` the text, its node in `metadata._node_content`; the
    splitter named as configured (1024/200) from the nodes' metadata."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    passages = (TEXTS_DIR.parents[1] / "data" / "facts" / "passages.jsonl").read_text(encoding="utf-8").splitlines()
    text = "\n\n".join(json.loads(line)["text"].strip() for line in passages[40:54]) + "\n"
    (tmp_path / "long.txt").write_text(text, encoding="utf-8")
    document = Document(text=text, metadata={"file_path": str(tmp_path / "long.txt"), "file_name": "long.txt"},
                        excluded_embed_metadata_keys=["file_name"], excluded_llm_metadata_keys=["file_name"])
    nodes = SentenceSplitter().get_nodes_from_documents([document])
    assert len(nodes) > 2
    hits = [{"_index": "llama", "_id": n.node_id, "_source": {"content": n.get_content(), "embedding": [0.1] * 4,
                                                              "metadata": node_to_metadata_dict(n, remove_text=True, flat_metadata=False)}}
            for n in nodes]
    path = tmp_path / "llama.json"
    path.write_text(json.dumps({"hits": {"hits": hits}}), encoding="utf-8")
    out = run_cli("inspect", str(path), "--source", str(tmp_path / "long.txt"), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["unplaced"] == [] and {c["placement"] for c in report["chunks"]} == {"offsets"}
    whole = report["splitter_index"]
    assert (whole["strategy"], whole["fields"]) == ("llamaindex-sentence", {"size": 1024, "overlap": 200})
    parser = SentenceSplitter()
    assert whole["metadata_tokens"]["min"] == len(parser._tokenizer(parser._get_metadata_str(document)))
