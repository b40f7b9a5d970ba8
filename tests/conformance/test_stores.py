"""The store readers (ragsim.host.clients.stores, SPEC section 11) against stores the real libraries build here:
LangChain's splitter into langchain-chroma, langchain-qdrant (Qdrant local mode) and LangChain's
LanceDB; LlamaIndex's SentenceSplitter into VectorStoreIndex and StorageContext.persist(); LlamaIndex's
own node payloads (node_to_metadata_dict) in Qdrant and LanceDB; files as LangChain writes Documents.
Every chunk read back must be the splitter's own output: id, text, document and offsets."""

import csv
import json
import uuid
from pathlib import Path

import numpy as np
import pytest

from helpers import run_cli
from store_helpers import (DIM, HashEmbeddings, fingerprint, langchain_chunks, leftovers, offline_chroma_model,
                           source_texts, vector)
from ragsim.host.clients import embed_onnx
from ragsim.errors import RequestError
from ragsim.host.clients import stores
from ragsim.wire import chunk_records
from ragsim.host.clients.stores import chroma_query, read_store, store_pages

import chromadb  # noqa: E402  (after store_helpers, which turns chroma's telemetry off)
from langchain_chroma import Chroma
from langchain_community.vectorstores import LanceDB
from langchain_core.documents import Document
from langchain_core.load import dumpd
from langchain_qdrant import QdrantVectorStore
from llama_index.core import Document as LIDocument
from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.vector_stores.utils import node_to_metadata_dict
from qdrant_client import QdrantClient
from qdrant_client.models import Distance, PointStruct, VectorParams

pytestmark = pytest.mark.slow  # real stores of four libraries

TEXTS = source_texts("prose.txt", "repeated.txt", "markdown.md")


def error(call, *args, **kwargs) -> RequestError:
    with pytest.raises(RequestError) as caught:
        call(*args, **kwargs)
    assert "\n" not in caught.value.message and caught.value.message.endswith(".")
    return caught.value


def assert_langchain(chunks, documents, ids=None):
    """The chunks read back are LangChain's: same texts in order, the source as document, start_index
    as the offset (and the text at it in its source is the chunk)."""
    assert [c["text"] for c in chunks] == [d.page_content for d in documents]
    assert [c["doc"] for c in chunks] == [d.metadata["source"] for d in documents]
    assert [c["start"] for c in chunks] == [d.metadata["start_index"] for d in documents]
    for c in chunks:
        assert c["end"] == c["start"] + len(c["text"])
        assert TEXTS[c["doc"]][c["start"]:c["end"]] == c["text"]
        assert c["metadata"]["source"] == c["doc"]
    if ids is not None:
        assert [c["id"] for c in chunks] == ids


# --- Chroma -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lc_docs():
    documents = langchain_chunks()
    assert len({d.metadata["source"] for d in documents}) == 2 and len(documents) > 10
    return documents


def test_chroma_langchain_collection_read_back_in_pages(tmp_path, lc_docs, monkeypatch):
    ids = [f"chunk-{i:03d}" for i in range(len(lc_docs))]
    store = Chroma(collection_name="prose_chunks", embedding_function=HashEmbeddings(), persist_directory=str(tmp_path))
    store.add_documents(lc_docs, ids=ids)
    monkeypatch.setattr(stores, "PAGE", 7)  # several pages of get(limit, offset), in order
    seen = []
    got = read_store(f"chroma:{tmp_path}", progress=lambda done, total: seen.append((done, total)))
    assert got["store"] == {"kind": "chroma", "path": str(tmp_path), "collection": "prose_chunks",
                            "chunks": len(lc_docs)}
    assert_langchain(got["chunks"], lc_docs, ids)
    n = len(lc_docs)
    assert seen == [(min(d, n), n) for d in range(7, n + 7, 7)]
    assert read_store(str(tmp_path))["chunks"] == got["chunks"]  # a bare directory is recognised


def two_stores(folder: Path, docs) -> tuple[Path, Path]:
    """A Chroma and a Qdrant local store of `docs`, each written by its own library under `folder`."""
    chroma_dir, qdrant_dir = folder / "chroma", folder / "qdrant"
    Chroma(collection_name="prose_chunks", embedding_function=HashEmbeddings(),
           persist_directory=str(chroma_dir)).add_documents(docs)
    client = qdrant_collection(qdrant_dir, "lc_chunks")
    QdrantVectorStore(client=client, collection_name="lc_chunks", embedding=HashEmbeddings()).add_documents(docs)
    client.close()
    return chroma_dir, qdrant_dir


def test_reading_a_store_leaves_it_as_it_was(tmp_path, lc_docs):
    chroma_dir, qdrant_dir = two_stores(tmp_path, lc_docs)
    before = leftovers()
    for spec, folder in ((f"chroma:{chroma_dir}", chroma_dir), (f"qdrant:{qdrant_dir}", qdrant_dir)):
        was = fingerprint(folder)
        assert len(read_store(spec)["chunks"]) == len(lc_docs)
        _, pages = store_pages(spec)
        next(pages)
        pages.close()  # stopped early: the copy goes all the same
        for _ in range(2):  # a new process each time, as a user runs it
            out = run_cli("export", spec, "-o", "-", timeout=None)
            assert out.returncode == 0 and len(out.stdout.splitlines()) == len(lc_docs), out.stderr
        assert fingerprint(folder) == was, spec
    assert leftovers() == before


def test_an_empty_chroma_database_stays_empty(tmp_path):
    (tmp_path / "chroma.sqlite3").write_bytes(b"")
    e = error(read_store, f"chroma:{tmp_path}")
    assert e.field in ("store", "collection") and "Traceback" not in e.message
    assert (tmp_path / "chroma.sqlite3").stat().st_size == 0 and [p.name for p in tmp_path.iterdir()] == ["chroma.sqlite3"]


def test_chroma_default_uuid_ids_are_the_stores_own(tmp_path, lc_docs):
    store = Chroma(collection_name="uuids", embedding_function=HashEmbeddings(), persist_directory=str(tmp_path))
    ids = store.add_documents(lc_docs[:5])
    assert [c["id"] for c in read_store(f"chroma:{tmp_path}")["chunks"]] == ids


def test_chroma_collections_named_or_listed(tmp_path):
    client = chromadb.PersistentClient(path=str(tmp_path))
    for name, texts in (("alpha", ["one", "two"]), ("beta", ["three"])):
        client.create_collection(name, embedding_function=None).add(
            ids=[f"{name}{i}" for i in range(len(texts))], documents=texts,
            embeddings=[vector(t) for t in texts], metadatas=[{"source": f"{name}.txt"}] * len(texts))
    e = error(read_store, f"chroma:{tmp_path}")
    assert e.field == "collection" and "alpha, beta" in e.message and "--collection" in e.message
    e = error(read_store, f"chroma:{tmp_path}", collection="gamma")
    assert e.field == "collection" and "'gamma'" in e.message and "alpha, beta" in e.message
    got = read_store(f"chroma:{tmp_path}", collection="beta")
    assert got["store"]["collection"] == "beta"
    assert got["chunks"] == [{"id": "beta0", "text": "three", "doc": "beta.txt", "metadata": {"source": "beta.txt"},
                              "start": None, "end": None}]


def test_chroma_embeddings_without_documents_say_so(tmp_path):
    client = chromadb.PersistentClient(path=str(tmp_path))
    client.create_collection("vectors_only", embedding_function=None).add(ids=["a"], embeddings=[vector("a")])
    e = error(read_store, f"chroma:{tmp_path}")
    assert e.field == "text_field" and "'a'" in e.message and "without their texts" in e.message


def test_chroma_too_many_chunks_refused_before_reading(tmp_path, lc_docs, monkeypatch):
    Chroma(collection_name="big", embedding_function=HashEmbeddings(),
           persist_directory=str(tmp_path)).add_documents(lc_docs)
    monkeypatch.setattr(chunk_records, "MAX_CHUNKS", 5)
    monkeypatch.setattr(stores, "PAGE", 1)
    pages = []
    e = error(read_store, f"chroma:{tmp_path}", progress=lambda *a: pages.append(a))
    assert e.field == "store" and f"{len(lc_docs):,} chunks" in e.message and "--collection" in e.message
    assert pages == []


# --- Chroma's own query with its default embedding function (all-MiniLM-L6-v2) -----------------------


def test_chroma_own_query_with_default_embedding_offline(tmp_path, lc_docs, monkeypatch):
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    model = offline_chroma_model(monkeypatch, tmp_path / "chroma-model")
    client = chromadb.PersistentClient(path=str(tmp_path / "db"))
    collection = client.create_collection("minilm", embedding_function=DefaultEmbeddingFunction())
    texts = [d.page_content for d in lc_docs[:8]]
    ids = [f"c{i}" for i in range(len(texts))]
    collection.add(ids=ids, documents=texts, metadatas=[d.metadata for d in lc_docs[:8]])
    assert not (model / "onnx.tar.gz").exists()  # nothing was downloaded
    # Chroma's own embeddings are all-MiniLM-L6-v2's: those of ragsim's embedder, to float32 rounding.
    embedder = embed_onnx.Embedder(embed_onnx.model_dir())
    mine = embedder.embed(texts)
    stored = np.array(collection.get(ids=ids, include=["embeddings"])["embeddings"])
    assert np.abs(stored - mine).max() < 1e-5
    queries = ["When was the harbour dredged?", "Who disagreed with the soundings?"]
    got = chroma_query(f"chroma:{tmp_path / 'db'}", None, queries, 3)
    embedded = embedder.embed(queries)
    expected = [[ids[i] for i in np.argsort(-(mine @ q), kind="stable")[:3]] for q in embedded]
    assert got == expected
    monkeypatch.undo()  # the model_path argument alone points Chroma at the folder
    assert chroma_query(f"chroma:{tmp_path / 'db'}", "minilm", queries, 3, model_path=model) == expected


def test_chroma_own_query_with_a_broken_model_says_so(tmp_path, lc_docs, monkeypatch):
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    model = offline_chroma_model(monkeypatch, tmp_path / "chroma-model")
    chromadb.PersistentClient(path=str(tmp_path / "db")).create_collection(
        "minilm", embedding_function=DefaultEmbeddingFunction()).add(ids=["a"], documents=["x"], embeddings=[[0.0] * 384])
    (model / "onnx" / "model.onnx").unlink()
    (model / "onnx" / "model.onnx").write_bytes(b"not a model")  # present, so Chroma loads it and fails
    e = error(chroma_query, f"chroma:{tmp_path / 'db'}", None, ["harbour"], 2)
    assert e.field == "collection" and str(model / "onnx") in e.message and "place_chroma_model" in e.message


def test_chroma_own_query_refused_for_another_embedding(tmp_path, lc_docs):
    Chroma(collection_name="hashed", embedding_function=HashEmbeddings(),
           persist_directory=str(tmp_path)).add_documents(lc_docs[:3])
    e = error(chroma_query, f"chroma:{tmp_path}", None, ["harbour"], 2)
    assert e.field == "collection" and "all-MiniLM-L6-v2" in e.message


# --- LlamaIndex persist directory ---------------------------------------------------------------------


def llama_documents():
    return [LIDocument(text=TEXTS["prose.txt"], id_="prose-doc", metadata={"file_path": "prose.txt"}),
            LIDocument(text=TEXTS["markdown.md"], id_="markdown-doc")]


def test_llamaindex_persist_directory(tmp_path):
    splitter = SentenceSplitter(chunk_size=64, chunk_overlap=10)
    index = VectorStoreIndex.from_documents(llama_documents(), transformations=[splitter],
                                            embed_model=MockEmbedding(embed_dim=DIM))
    index.storage_context.persist(str(tmp_path))
    nodes = list(load_index_from_storage(StorageContext.from_defaults(persist_dir=str(tmp_path)),
                                         embed_model=MockEmbedding(embed_dim=DIM)).docstore.docs.values())
    got = read_store(f"llamaindex:{tmp_path}")
    assert got["store"] == {"kind": "llamaindex", "path": str(tmp_path), "collection": None, "chunks": len(nodes)}
    chunks = got["chunks"]
    # the splitter's own output (metadata-aware: the file_path metadata shortens prose's chunks)
    expected_texts = [n.text for n in splitter.get_nodes_from_documents(llama_documents())]
    assert [c["text"] for c in chunks] == expected_texts
    assert [c["id"] for c in chunks] == [n.node_id for n in nodes]
    assert [(c["start"], c["end"]) for c in chunks] == [(n.start_char_idx, n.end_char_idx) for n in nodes]
    # the document: metadata file_path when there is one, else the node's SOURCE (ref_doc_id)
    assert [c["doc"] for c in chunks] == ["prose.txt" if n.ref_doc_id == "prose-doc" else "markdown-doc" for n in nodes]
    assert {c["doc"] for c in chunks} == {"prose.txt", "markdown-doc"}
    source = {"prose.txt": TEXTS["prose.txt"], "markdown-doc": TEXTS["markdown.md"]}
    assert all(source[c["doc"]][c["start"]:c["end"]] == c["text"] for c in chunks)
    assert read_store(str(tmp_path / "docstore.json"))["chunks"] == chunks
    e = error(read_store, str(tmp_path), doc_field="file_path")  # the markdown document has no file_path
    assert e.field == "doc_field" and "'file_path'" in e.message



def test_docstore_of_another_layout(tmp_path):
    (tmp_path / "docstore.json").write_text(json.dumps({"docs": {"a": {"text": "x"}}}))
    e = error(read_store, f"llamaindex:{tmp_path}")
    assert e.field == "store" and "docstore/data" in e.message and "docs" in e.message
    (tmp_path / "docstore.json").write_text(json.dumps({"docstore/data": {"n1": {"__type__": "1", "__data__": {"txt": "x"}}}}))
    e = error(read_store, str(tmp_path / "docstore.json"))
    assert e.field == "store" and "'n1'" in e.message


# --- Qdrant local mode --------------------------------------------------------------------------------


def qdrant_collection(path, name):
    client = QdrantClient(path=str(path))
    client.create_collection(name, vectors_config=VectorParams(size=DIM, distance=Distance.COSINE))
    return client


def test_qdrant_langchain_payloads(tmp_path, lc_docs):
    client = qdrant_collection(tmp_path, "lc_chunks")
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(lc_docs))]  # Qdrant scrolls in id order
    QdrantVectorStore(client=client, collection_name="lc_chunks", embedding=HashEmbeddings()).add_documents(lc_docs, ids=ids)
    client.close()
    got = read_store(f"qdrant:{tmp_path}")
    assert got["store"]["kind"] == "qdrant" and got["store"]["collection"] == "lc_chunks"
    assert_langchain(got["chunks"], lc_docs, ids)
    assert read_store(f"qdrant:{tmp_path}")["chunks"] == got["chunks"]  # the reader released its lock
    holder = QdrantClient(path=str(tmp_path))
    try:  # a store open in the user's own client is read all the same: ragsim reads a copy
        assert read_store(f"qdrant:{tmp_path}")["chunks"] == got["chunks"]
    finally:
        holder.close()


def llama_nodes():
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=10).get_nodes_from_documents(llama_documents()[:1])
    assert all(n.start_char_idx is not None for n in nodes)
    return nodes


def test_qdrant_llamaindex_node_content(tmp_path):
    nodes = llama_nodes()
    client = qdrant_collection(tmp_path, "li_nodes")
    client.upsert("li_nodes", points=[PointStruct(id=n.node_id, vector=vector(n.text),
                                                  payload=node_to_metadata_dict(n, remove_text=False, flat_metadata=False))
                                      for n in nodes])
    client.create_collection("other", vectors_config=VectorParams(size=DIM, distance=Distance.COSINE))
    client.close()
    e = error(read_store, f"qdrant:{tmp_path}")
    assert e.field == "collection" and "li_nodes, other" in e.message
    e = error(read_store, f"qdrant:{tmp_path}", collection="nodes")
    assert e.field == "collection" and "li_nodes, other" in e.message
    chunks = {c["id"]: c for c in read_store(f"qdrant:{tmp_path}", collection="li_nodes")["chunks"]}
    assert sorted(chunks) == sorted(n.node_id for n in nodes)
    for n in nodes:
        c = chunks[n.node_id]
        assert (c["text"], c["start"], c["end"], c["doc"]) == (n.text, n.start_char_idx, n.end_char_idx, "prose.txt")
        assert TEXTS["prose.txt"][c["start"]:c["end"]] == c["text"]


def test_qdrant_without_text_field_names_its_fields(tmp_path):
    client = qdrant_collection(tmp_path, "bodies")
    client.upsert("bodies", points=[PointStruct(id=1, vector=vector("x"), payload={"body": "The chunk.", "source": "a.txt"})])
    client.close()
    e = error(read_store, f"qdrant:{tmp_path}")
    assert e.field == "text_field" and "body, source" in e.message and "--text-field" in e.message
    e = error(read_store, f"qdrant:{tmp_path}", text_field="content")
    assert e.field == "text_field" and "'content'" in e.message and "body, source" in e.message
    got = read_store(f"qdrant:{tmp_path}", text_field="body")["chunks"]
    assert got == [{"id": "1", "text": "The chunk.", "doc": "a.txt", "metadata": {"source": "a.txt"},
                    "start": None, "end": None}]


# --- LanceDB ------------------------------------------------------------------------------------------


def test_lancedb_langchain_and_llamaindex_tables(tmp_path, lc_docs):
    import lancedb

    ids = [f"lc-{i}" for i in range(len(lc_docs))]
    LanceDB(uri=str(tmp_path), embedding=HashEmbeddings(), table_name="chunks").add_documents(lc_docs, ids=ids)
    nodes = llama_nodes()
    # LlamaIndex's LanceDBVectorStore rows: id, doc_id, vector, text, and its node dict as metadata
    rows = [{"id": n.node_id, "doc_id": n.ref_doc_id, "vector": vector(n.text), "text": n.text,
             "metadata": node_to_metadata_dict(n, remove_text=True, flat_metadata=True)} for n in nodes]
    lancedb.connect(str(tmp_path)).create_table("li_nodes", data=rows)
    e = error(read_store, f"lancedb:{tmp_path}")
    assert e.field == "collection" and "chunks, li_nodes" in e.message and "tables" in e.message
    e = error(read_store, f"lancedb:{tmp_path}", collection="vectorstore")
    assert e.field == "collection" and "'vectorstore'" in e.message and "chunks, li_nodes" in e.message
    got = read_store(f"lancedb:{tmp_path}", collection="chunks")
    assert got["store"]["kind"] == "lancedb" and got["store"]["chunks"] == len(lc_docs)
    assert_langchain(got["chunks"], lc_docs, ids)
    assert all("vector" not in c["metadata"] for c in got["chunks"])
    li = read_store(f"lancedb:{tmp_path}", collection="li_nodes")["chunks"]
    assert [(c["id"], c["text"], c["start"], c["end"], c["doc"]) for c in li] == [
        (n.node_id, n.text, n.start_char_idx, n.end_char_idx, "prose.txt") for n in nodes]


def test_a_lancedb_table_over_one_page_numbers_its_rows_on_across_pages(tmp_path):
    import lancedb

    # a table without ids: each row's id is its place, which must go on past the first page of 1,000 rows
    # (each page numbered from 0 again gave "chunks[1000].id '0' repeats chunks[0]'s")
    n = 2 * stores.PAGE + 500
    rows = [{"text": f"Chunk number {i}.", "source": "a.txt", "vector": [float(i % 7), 1.0]} for i in range(n)]
    lancedb.connect(str(tmp_path)).create_table("rows", data=rows)
    got = read_store(f"lancedb:{tmp_path}")["chunks"]
    assert [(c["id"], c["text"]) for c in got] == [(str(i), f"Chunk number {i}.") for i in range(n)]
    _, pages = store_pages(f"lancedb:{tmp_path}")
    paged = list(pages)
    assert [len(p) for p in paged] == [stores.PAGE, stores.PAGE, 500]
    assert [c["id"] for p in paged for c in p] == [str(i) for i in range(n)]
    report = run_cli("inspect", f"lancedb:{tmp_path}", "--json")
    assert report.returncode == 0, report.stderr


# --- Files --------------------------------------------------------------------------------------------


def test_jsonl_of_langchain_documents(tmp_path, lc_docs):
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(d.model_dump_json() + "\n" for d in lc_docs), encoding="utf-8")
    got = read_store(str(path))
    assert got["store"] == {"kind": "jsonl", "path": str(path), "collection": None, "chunks": len(lc_docs)}
    assert_langchain(got["chunks"], lc_docs, [str(i) for i in range(len(lc_docs))])


def test_json_list_of_dumped_documents_and_of_texts(tmp_path, lc_docs):
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps([dumpd(d) for d in lc_docs]), encoding="utf-8")
    assert_langchain(read_store(str(path))["chunks"], lc_docs)
    path.write_text(json.dumps([{"text": "first", "doc_id": "d1"}, {"text": "second"}]))
    assert [(c["text"], c["doc"], c["metadata"]) for c in read_store(str(path))["chunks"]] == [
        ("first", "d1", {"doc_id": "d1"}), ("second", "document", {})]


def test_csv_and_parquet_text_columns(tmp_path, lc_docs):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "chunks.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "chunk", "source", "start_index"])
        writer.writerows([f"r{i}", d.page_content, d.metadata["source"], d.metadata["start_index"]]
                         for i, d in enumerate(lc_docs))
    assert_langchain(read_store(str(path))["chunks"], lc_docs, [f"r{i}" for i in range(len(lc_docs))])
    table = pa.table({"document": [d.page_content for d in lc_docs],
                      "metadata": [d.metadata for d in lc_docs],
                      "embedding": [vector(d.page_content) for d in lc_docs]})
    pq.write_table(table, tmp_path / "chunks.parquet")
    got = read_store(str(tmp_path / "chunks.parquet"))
    assert got["store"]["kind"] == "parquet"
    assert_langchain(got["chunks"], lc_docs, [str(i) for i in range(len(lc_docs))])
    pq.write_table(pa.table({"body": ["a chunk"], "file": ["f.txt"]}), tmp_path / "named.parquet")
    e = error(read_store, str(tmp_path / "named.parquet"))
    assert e.field == "text_field" and "body, file" in e.message
    got = read_store(str(tmp_path / "named.parquet"), text_field="body", doc_field="file")["chunks"]
    assert (got[0]["text"], got[0]["doc"]) == ("a chunk", "f.txt")
    e = error(read_store, str(tmp_path / "named.parquet"), text_field="body", doc_field="source")
    assert e.field == "doc_field" and "'source'" in e.message and "file" in e.message


# --- Bad input ----------------------------------------------------------------------------------------


def test_a_path_that_is_no_store(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    for spec in (str(tmp_path / "notes.txt"), str(tmp_path), str(tmp_path / "missing.jsonl")):
        e = error(read_store, spec)
        assert e.field == "store" and "chroma:DIR" in e.message and ".jsonl" in e.message
    empty = tmp_path / "empty"
    empty.mkdir()
    for kind in ("chroma", "qdrant", "lancedb", "llamaindex"):
        e = error(read_store, f"{kind}:{empty}")
        assert e.field == "store" and "is not a" in e.message
    assert list(empty.iterdir()) == []  # no client was let loose to create a store there
    e = error(read_store, f"chroma:{tmp_path / 'nowhere'}")
    assert e.field == "store" and "does not exist" in e.message
    assert not (tmp_path / "nowhere").exists()


def test_collection_given_for_a_file(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"page_content": "x", "metadata": {}}\n')
    e = error(read_store, str(tmp_path / "c.jsonl"), collection="x")
    assert e.field == "collection"


def test_file_over_200_mb(tmp_path):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(200_000_001)  # sparse: the size is checked before anything is read
    e = error(read_store, str(path))
    assert e.field == "store" and "200 MB" in e.message


def test_more_than_200000_chunks(tmp_path, monkeypatch):
    path = tmp_path / "many.jsonl"
    path.write_text('{"text": "x"}\n' * 200_001)
    e = error(read_store, str(path))
    assert e.field == "store" and "200,001 chunks" in e.message and "200,000" in e.message
    assert "--collection" in e.message
    monkeypatch.setattr(chunk_records, "MAX_CHUNKS", 3)  # the limit itself is allowed
    path.write_text('\n{"text": "x"}\n\n' * 3)
    assert read_store(str(path))["store"]["chunks"] == 3
    (tmp_path / "many.json").write_text(json.dumps([{"text": "x"}] * 4))
    assert "4 chunks" in error(read_store, str(tmp_path / "many.json")).message


def test_bad_lines_and_shapes(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"page_content": "ok", "metadata": {}}\n{not json\n')
    e = error(read_store, str(path))
    assert e.field == "store" and e.message.startswith("Line 2 of bad.jsonl")
    path = tmp_path / "object.json"
    path.write_text('{"chunks": []}')
    assert error(read_store, str(path)).field == "store"


def test_a_damaged_store_is_one_sentence(tmp_path, lc_docs):
    """Stores whose files were damaged after their library wrote them: one sentence naming the store
    and what may be wrong, never the library's traceback, and the store left as it was."""
    chroma_dir, qdrant_dir = two_stores(tmp_path, lc_docs)
    sqlite = chroma_dir / "chroma.sqlite3"
    data = bytearray(sqlite.read_bytes())
    data[100:4096] = b"\x00" * (4096 - 100)  # the database's header and first page overwritten
    sqlite.write_bytes(bytes(data))
    (qdrant_dir / "meta.json").write_text("{not json", encoding="utf-8")
    for spec in (f"chroma:{chroma_dir}", f"qdrant:{qdrant_dir}"):
        e = error(read_store, spec)
        assert e.field in ("store", "collection") and "\n" not in e.message and len(e.message) < 400, e.message
    assert (qdrant_dir / "meta.json").read_text(encoding="utf-8") == "{not json"
