"""`inspect` reads a store a page at a time (each client's own paging) and checks it a
document at a time, giving one request's report: stores built by the real libraries (langchain-chroma,
langchain-qdrant in local mode, LangChain's LanceDB, JSON Lines of LangChain Documents), read in pages
of 7, compared with the same store read as one request (`--one-request`)."""

import json
import uuid
from pathlib import Path

import pytest

from store_helpers import DIM, HashEmbeddings, langchain_chunks, source_texts

from langchain_chroma import Chroma
from langchain_community.vectorstores import LanceDB
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient
from qdrant_client.models import Distance, VectorParams

from ragsim.host.commands import inspect_cli
from ragsim.host.clients import store_files, stores

pytestmark = pytest.mark.slow  # real stores of four libraries

NAMES = ("prose.txt", "repeated.txt")
ROOT = Path(__file__).resolve().parents[2]
HARBOUR = (ROOT / "examples" / "harbour.md").read_text(encoding="utf-8")  # name-value facts, some ranked out at k 1


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect-stream")
    splitter = RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=40, add_start_index=True)
    docs = langchain_chunks(NAMES) + splitter.split_documents([Document(page_content=HARBOUR, metadata={"source": "harbour.md"})])
    ids = [f"c{i:03d}" for i in range(len(docs))]
    Chroma(collection_name="chunks", embedding_function=HashEmbeddings(),
           persist_directory=str(root / "chroma")).add_documents(docs, ids=ids)
    client = QdrantClient(path=str(root / "qdrant"))
    client.create_collection("chunks", vectors_config=VectorParams(size=DIM, distance=Distance.COSINE))
    QdrantVectorStore(client=client, collection_name="chunks", embedding=HashEmbeddings()).add_documents(
        docs, ids=[str(uuid.UUID(int=i + 1)) for i in range(len(docs))])
    client.close()
    LanceDB(uri=str(root / "lance"), embedding=HashEmbeddings(), table_name="chunks").add_documents(docs, ids=ids)
    (root / "chunks.jsonl").write_text("".join(d.model_dump_json() + "\n" for d in docs), encoding="utf-8")
    for name, text in {**source_texts(*NAMES), "harbour.md": HARBOUR}.items():
        (root / name).write_bytes(text.encode("utf-8"))
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / name).write_bytes(text.encode("utf-8"))
    text = source_texts("prose.txt")["prose.txt"]
    return {"root": root, "docs": docs, "phrase": text[400:460].strip()}


def inspect_json(capsys, *argv) -> dict:
    assert inspect_cli.run_inspect([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("store", ["chroma:{root}/chroma", "qdrant:{root}/qdrant", "lancedb:{root}/lance",
                                   "{root}/chunks.jsonl"])
@pytest.mark.parametrize("with_sources", [True, False])
def test_a_store_read_in_pages_gives_one_request_s_report(built, store, with_sources, capsys, monkeypatch):
    spec = store.format(root=built["root"])
    sources = ["--source", *(str(built["root"] / n) for n in (*NAMES, "harbour.md"))] if with_sources else []
    argv = [spec, *sources, "--phrase", built["phrase"], "--k", "1"]
    one = inspect_json(capsys, *argv, "--one-request")
    pages = []
    monkeypatch.setattr(stores, "PAGE", 7)
    real = store_files.pages
    monkeypatch.setattr(store_files, "pages", lambda *a, **kw: real(*a, **{**kw, "page": 7}))
    monkeypatch.setattr(inspect_cli, "_progress", lambda args: lambda done, total: pages.append((done, total)))
    streamed = inspect_json(capsys, *argv)
    assert len(pages) >= len(built["docs"]) // 7  # read page by page
    assert streamed == one
    assert len(streamed["documents"]) == 3 and len(streamed["chunks"]) == len(built["docs"])
    assert streamed["phrases"] and streamed["facts"]["count"] >= streamed["facts"]["found_top_k"] > 0
    assert [d["rebuilt"] for d in streamed["documents"]] == [not with_sources] * 3
    if store.startswith("chroma"):  # the documents placed and checked on a pool of 2 give the same
        assert inspect_json(capsys, *argv, "--workers", "2") == one


def test_jsonl_output_a_line_per_document_then_the_summary(built, tmp_path, capsys):
    out = tmp_path / "inspect.jsonl"
    spec = f"chroma:{built['root']}/chroma"
    assert inspect_cli.run_inspect([spec, "--source", str(built["root"] / "src"), "--jsonl", str(out)]) == 0
    report = capsys.readouterr().out
    assert "store: chroma" in report and "splitter:" in report
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["document"] * 3 + ["summary"]
    assert sum(len(line["chunk_entries"]) for line in lines[:3]) == len(built["docs"])
    assert lines[-1]["documents"] == [{k: v for k, v in line.items() if k not in ("type", "chunk_entries")}
                                      for line in lines[:3]]
    assert not (tmp_path / "inspect.jsonl.resume").exists()


def test_a_dense_ranking_of_the_facts_streams_and_gives_one_request_s_report(built, capsys, monkeypatch):
    """`--method dense`: each fact's name ranked by cosine over every placed chunk (the model embeds
    each document's chunks, a document at a time): one request's report, and other facts found than
    BM25 finds."""
    pytest.importorskip("onnxruntime")
    spec = f"chroma:{built['root']}/chroma"
    argv = [spec, "--source", *(str(built["root"] / n) for n in (*NAMES, "harbour.md")), "--k", "1", "--method", "dense"]
    one = inspect_json(capsys, *argv, "--one-request")
    monkeypatch.setattr(stores, "PAGE", 7)
    assert inspect_cli.streams(inspect_cli.inspect_parser().parse_args(argv))
    streamed = inspect_json(capsys, *argv)
    assert streamed == one
    bm25 = inspect_json(capsys, *argv[:-2])
    found = [f["found_top_k"] for f in streamed["facts"]["facts"]]
    assert len(found) >= 2 and found != [f["found_top_k"] for f in bm25["facts"]["facts"]]  # ranked otherwise


@pytest.mark.parametrize("chunking", [{"strategy": "langchain-recursive", "size": 200, "overlap": 40},
                                      {"strategy": "langchain-recursive", "size": 300, "overlap": 0}])
def test_a_splitter_to_compare_with_runs_a_document_at_a_time_and_gives_one_request_s_answer(built, capsys, monkeypatch,
                                                                                             chunking):
    """`--chunking`: each document's stored chunks set beside the splitter's, a document at a time (on a
    pool of 2 too): one request's `compared`, the splitter that made the store reproducing every chunk."""
    spec = f"chroma:{built['root']}/chroma"
    argv = [spec, "--source", *(str(built["root"] / n) for n in (*NAMES, "harbour.md")), "--chunking", json.dumps(chunking)]
    one = inspect_json(capsys, *argv, "--one-request")
    assert inspect_cli.streams(inspect_cli.inspect_parser().parse_args(argv))
    monkeypatch.setattr(stores, "PAGE", 7)
    streamed = inspect_json(capsys, *argv)
    assert streamed == one and len(streamed["compared"]["documents"]) == 3
    assert inspect_json(capsys, *argv, "--workers", "2") == one
    harbour = next(r for r in streamed["compared"]["documents"] if r["doc"].endswith("harbour.md"))
    assert (harbour["reproduced"] == harbour["stored"]) == (chunking["size"] == 200)
