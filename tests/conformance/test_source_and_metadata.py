"""`--source` and a store's own metadata together (ragsim.wire.place_by_text, host.inspect_placing,
chunk_records.lookup): chunks whose metadata names no given file are placed in the files by their text,
a LlamaIndex docstore whose document ids are not the files' names included; Haystack's nested
`meta.file_path` names the document (and `--doc-field meta.file_path` reaches it). Each store is built
by its own library; both inspect paths (streamed, and one request) are checked."""

import json
from pathlib import Path

import pytest

from helpers import run_cli

from langchain_text_splitters import RecursiveCharacterTextSplitter

pytestmark = pytest.mark.slow  # real stores and the command line

PASSAGES = Path(__file__).resolve().parents[1] / "data" / "facts" / "passages.jsonl"
TEXTS = [json.loads(line)["text"].strip() for line in PASSAGES.read_text(encoding="utf-8").splitlines()]


def files(root: Path) -> list[Path]:
    paths = []
    for i, n in enumerate((9, 12)):
        path = root / f"file{i}.txt"
        path.write_text("\n\n".join(TEXTS[60 + i * 20:60 + i * 20 + n]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def inspected(store: str, paths) -> list[dict]:
    """The report of both inspect paths."""
    reports = []
    for extra in ((), ("--one-request",)):
        out = run_cli("inspect", store, "--source", *map(str, paths), "--json", *extra)
        assert out.returncode == 0, out.stderr
        reports.append(json.loads(out.stdout))
    return reports


def every_chunk_in_the_files(report: dict, paths, count: int) -> None:
    assert report["unplaced"] == []
    by_doc = {d["id"]: d for d in report["documents"]}
    assert set(by_doc) == {str(p) for p in paths}  # no pseudo-document beside the files
    assert all(not d["rebuilt"] and d["chunks"] > 0 for d in by_doc.values())
    assert sum(d["chunks"] for d in by_doc.values()) == count


def test_raw_chromadb_without_metadatas_is_placed_in_the_files(tmp_path):
    import chromadb

    paths = files(tmp_path)
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    chunks = [c for p in paths for c in splitter.split_text(p.read_text(encoding="utf-8"))]
    client = chromadb.PersistentClient(path=str(tmp_path / "db"))
    client.create_collection("raw").add(ids=[f"c{i}" for i in range(len(chunks))], documents=chunks,
                                        embeddings=[[0.1, 0.2, 0.3] for _ in chunks])
    del client
    for report in inspected(f"chroma:{tmp_path / 'db'}", paths):
        every_chunk_in_the_files(report, paths, len(chunks))
        whole = report["splitter_index"]
        assert (whole["strategy"], whole["fields"], whole["reproduced"]) == (
            "langchain-recursive", {"size": 1000, "overlap": 200}, len(chunks))


def test_llamaindex_document_ids_that_are_not_the_file_names(tmp_path):
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    paths = files(tmp_path)
    documents = [Document(text=p.read_text(encoding="utf-8"), id_=f"doc-{i}") for i, p in enumerate(paths)]
    Settings.embed_model = MockEmbedding(embed_dim=8)
    index = VectorStoreIndex.from_documents(documents)
    index.storage_context.persist(str(tmp_path / "store"))
    count = len(index.docstore.docs)
    for report in inspected(str(tmp_path / "store"), paths):
        every_chunk_in_the_files(report, paths, count)
        assert {c["placement"] for c in report["chunks"]} == {"offsets"}  # the nodes' own char idx
        whole = report["splitter_index"]
        assert (whole["strategy"], whole["fields"]) == ("llamaindex-sentence", {"size": 1024, "overlap": 200})
        assert whole["reproduced"] == count


def test_haystack_documents_in_qdrant_name_their_file_in_meta(tmp_path):
    """As qdrant-haystack writes a point: `document.to_dict(flatten=False)` less the embedding
    (haystack_integrations/document_stores/qdrant/converters.py), so the text is `content` and the
    file and offset are `meta.file_path` and `meta.split_idx_start`."""
    from haystack import Document
    from haystack.components.preprocessors import DocumentSplitter
    from qdrant_client import QdrantClient, models

    paths = files(tmp_path)
    splitter = DocumentSplitter(split_by="word", split_length=120, split_overlap=20)
    splitter.warm_up() if hasattr(splitter, "warm_up") else None
    split = splitter.run([Document(content=p.read_text(encoding="utf-8"), meta={"file_path": str(p)}) for p in paths])
    chunks = split["documents"]
    client = QdrantClient(path=str(tmp_path / "qdrant"))
    client.create_collection("haystack", vectors_config=models.VectorParams(size=3, distance=models.Distance.COSINE))
    points = []
    for i, d in enumerate(chunks):
        payload = d.to_dict(flatten=False)
        payload.pop("embedding", None)
        points.append(models.PointStruct(id=i, vector=[0.1, 0.2, 0.3], payload=payload))
    client.upsert("haystack", points)
    client.close()
    for report in inspected(f"qdrant:{tmp_path / 'qdrant'}", paths):
        every_chunk_in_the_files(report, paths, len(chunks))
        assert {c["placement"] for c in report["chunks"]} == {"offsets"}
    out = run_cli("inspect", f"qdrant:{tmp_path / 'qdrant'}", "--doc-field", "meta.file_path", "--json")
    assert out.returncode == 0, out.stderr
    assert {d["id"] for d in json.loads(out.stdout)["documents"]} == {str(p) for p in paths}
