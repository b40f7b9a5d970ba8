"""One reading of a whole index (`splitter_index`, ragsim.judge.identify_index), against stores built by
the real libraries: LlamaIndex's `VectorStoreIndex.from_documents` (its default SentenceSplitter 1024/200,
and 512/64) over files whose paths differ in length, persisted with `StorageContext.persist` and written
into Chroma as LlamaIndex's ChromaVectorStore writes a node; and a LangChain index of several files, one
of them a single short chunk (which alone reads as any size)."""

import json
import shutil
from pathlib import Path

import pytest

from helpers import run_cli

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter
from llama_index.core import Settings, SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.vector_stores.utils import node_to_metadata_dict

pytestmark = pytest.mark.slow  # real stores and the command line

PASSAGES = Path(__file__).resolve().parents[1] / "data" / "facts" / "passages.jsonl"
TEXTS = [json.loads(line)["text"].strip() for line in PASSAGES.read_text(encoding="utf-8").splitlines()]
# three files, their paths of different lengths (LlamaIndex's metadata string holds the path)
FILES = ("a.txt", "deeper/folder/with_a_longer_name/b.md", "c/c.txt")


def corpus(root: Path) -> list[Path]:
    paths = []
    for i, (name, n) in enumerate(zip(FILES, (10, 7, 14))):
        path = root / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(TEXTS[i * 20:i * 20 + n]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def llamaindex_store(root: Path, splitter=None) -> tuple[Path, list[Path], dict]:
    """A VectorStoreIndex persisted to root/store; the files; each file's metadata tokens as LlamaIndex
    counts them when it splits (`_get_metadata_str`, its tokenizer)."""
    paths = corpus(root)
    documents = SimpleDirectoryReader(input_files=[str(p) for p in paths]).load_data()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    options = {} if splitter is None else {"transformations": [splitter]}
    index = VectorStoreIndex.from_documents(documents, **options)
    index.storage_context.persist(str(root / "store"))
    parser = splitter or SentenceSplitter()
    taken = {d.metadata["file_path"]: len(parser._tokenizer(parser._get_metadata_str(d))) for d in documents}
    return root / "store", paths, taken


def inspected(store, paths, *extra) -> dict:
    out = run_cli("inspect", str(store), "--source", *map(str, paths), "--json", *extra)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("size,overlap", [(1024, 200), (512, 64)])
def test_llamaindex_named_as_configured_once(tmp_path, size, overlap):
    splitter = None if size == 1024 else SentenceSplitter(chunk_size=size, chunk_overlap=overlap)
    store, paths, taken = llamaindex_store(tmp_path, splitter)
    assert len(set(taken.values())) > 1  # the paths' lengths differ: so do the sizes each file reproduces
    for extra in ((), ("--one-request",)):
        report = inspected(store, paths, *extra)
        assert report["unplaced"] == []
        whole = report["splitter_index"]
        assert (whole["strategy"], whole["fields"]) == ("llamaindex-sentence", {"size": size, "overlap": overlap})
        assert whole["metadata_tokens"]["documents"] == {str(p): taken[str(p)] for p in paths}
        assert whole["reproduced"] == whole["chunks"] == len(report["chunks"]) and whole["differ"] == []
        # each file alone reproduces at the size less its own metadata
        for row in report["splitter"]:
            assert row["reproduced"] == row["chunks"]
    # ragsim's export keeps the metadata string: read back, it names the same setting
    assert run_cli("export", str(store), "--source", *map(str, paths), "-o", str(tmp_path / "export.jsonl")).returncode == 0
    assert inspected(tmp_path / "export.jsonl", paths)["splitter_index"] == report["splitter_index"]
    out = run_cli("inspect", str(store), "--source", *map(str, paths))
    lines = [line for line in out.stdout.splitlines() if "SentenceSplitter(" in line]
    share = f"{min(taken.values())} to {max(taken.values())} tokens (by document)"
    assert len(lines) == 1 and lines[0].startswith(
        f"splitter: LlamaIndex SentenceSplitter(chunk_size={size}, chunk_overlap={overlap}), of which {share} go to metadata: "
        f"{len(report['chunks'])} of {len(report['chunks'])} chunks exactly over 3 documents")


def test_llamaindex_nodes_in_chroma_named_as_configured(tmp_path):
    """The nodes written as LlamaIndex's ChromaVectorStore writes them (`node_to_metadata_dict(node,
    remove_text=True, flat_metadata=True)`, the text as the document)."""
    import chromadb

    store, paths, taken = llamaindex_store(tmp_path)
    from llama_index.core import StorageContext, load_index_from_storage

    nodes = list(load_index_from_storage(StorageContext.from_defaults(persist_dir=str(store))).docstore.docs.values())
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    collection = client.create_collection("llamaindex")
    collection.add(ids=[n.node_id for n in nodes], documents=[n.get_content() for n in nodes],
                   metadatas=[node_to_metadata_dict(n, remove_text=True, flat_metadata=True) for n in nodes],
                   embeddings=[[0.1] * 8 for _ in nodes])
    del client
    whole = inspected(f"chroma:{tmp_path / 'chroma'}", paths)["splitter_index"]
    assert (whole["strategy"], whole["fields"]) == ("llamaindex-sentence", {"size": 1024, "overlap": 200})
    assert whole["metadata_tokens"]["documents"] == {str(p): taken[str(p)] for p in paths}


def test_langchain_index_with_a_one_chunk_file_is_one_reading(tmp_path):
    """A file of one short chunk reads alone as LangChain's default 4000; the index reads as 1000/200
    once, every chunk reproduced, and says which other settings reproduce as many."""
    root = tmp_path / "docs"
    root.mkdir()
    texts = {"long1.txt": "\n\n".join(TEXTS[:8]), "long2.txt": "\n\n".join(TEXTS[30:37]), "short.txt": TEXTS[50][:300]}
    documents = []
    for name, text in texts.items():
        (root / name).write_text(text, encoding="utf-8")
        documents.append(Document(page_content=text, metadata={"source": str(root / name)}))
    chunks = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200, add_start_index=True).split_documents(documents)
    store = tmp_path / "chunks.jsonl"
    store.write_text("".join(d.model_dump_json() + "\n" for d in chunks), encoding="utf-8")
    report = inspected(store, [root / n for n in texts])
    rows = {Path(r["doc"]).name: r for r in report["splitter"]}
    assert rows["short.txt"]["chunks"] == 1 and rows["short.txt"]["fields"]["size"] != 1000  # alone: any size
    whole = report["splitter_index"]
    assert (whole["strategy"], whole["fields"]) == ("langchain-recursive", {"size": 1000, "overlap": 200})
    assert whole["reproduced"] == whole["chunks"] == len(chunks) and whole["differ"] == []
    assert whole["metadata_tokens"] is None
    out = run_cli("inspect", str(store), "--source", *[str(root / n) for n in texts])
    said = [line for line in out.stdout.splitlines() if "RecursiveCharacterTextSplitter(" in line]
    assert len(said) == 1 and said[0].startswith("splitter: LangChain RecursiveCharacterTextSplitter(chunk_size=1000, "
                                                 f"chunk_overlap=200): {len(chunks)} of {len(chunks)} chunks exactly over 3 documents")
