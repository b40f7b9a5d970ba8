"""The JSON two in-memory stores save (ragsim.wire.chunk_files.saved_store, docs/stores.md), written here
by the libraries themselves: LangChain's `InMemoryVectorStore.dump` and Haystack's
`InMemoryDocumentStore.save_to_disk`. Every chunk is read as stored, placed at the offsets the library
kept, and its splitter named by `inspect`; an entry without text is one sentence."""

import json
import shutil

import pytest

from corpus import TEXTS_DIR
from helpers import one_line, run_cli
from store_helpers import langchain_chunks, source_texts
from ragsim.errors import RequestError
from ragsim.host.clients.stores import read_store

from haystack import Document as HaystackDocument
from haystack.components.preprocessors import DocumentSplitter
from haystack.document_stores.in_memory import InMemoryDocumentStore
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

pytestmark = pytest.mark.slow  # real stores and the command line

NAMES = ("udhr_article1.txt", "prose.txt")
TEXTS = source_texts(*NAMES)


def sources(folder) -> list[str]:
    for name in NAMES:
        shutil.copy(TEXTS_DIR / name, folder / name)
    return [str(folder / name) for name in NAMES]


def inspected(store, folder) -> dict:
    out = run_cli("inspect", store, "--source", *sources(folder), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["unplaced"] == [] and {c["placement"] for c in report["chunks"]} == {"offsets"}
    assert {s["doc"] for s in report["splitter"]} == {str(folder / n) for n in NAMES}
    return report


def test_langchain_in_memory_vector_store_dump(tmp_path):
    documents = langchain_chunks(NAMES, 1000, 200)
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    ids = store.add_documents(documents)
    store.dump(str(tmp_path / "store.json"))
    got = read_store(str(tmp_path / "store.json"))
    assert got["store"]["kind"] == "langchain-inmemory" and got["store"]["chunks"] == len(documents)
    assert [c["id"] for c in got["chunks"]] == ids
    assert [c["text"] for c in got["chunks"]] == [d.page_content for d in documents]
    assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in documents]
    assert [c["start"] for c in got["chunks"]] == [d.metadata["start_index"] for d in documents]
    assert all("vector" not in c["metadata"] for c in got["chunks"])
    for s in inspected(tmp_path / "store.json", tmp_path)["splitter"]:
        assert (s["strategy"], s["fields"]["size"], s["fields"]["overlap"]) == ("langchain-recursive", 1000, 200)
        assert s["reproduced"] == s["chunks"]


def haystack_chunks(length=100, overlap=20):
    """Haystack's DocumentSplitter by words over the texts, each with its file_path as a converter sets it."""
    splitter = DocumentSplitter(split_by="word", split_length=length, split_overlap=overlap)
    return splitter.run([HaystackDocument(content=t, meta={"file_path": n}) for n, t in TEXTS.items()])["documents"]


def test_haystack_in_memory_document_store_save_to_disk(tmp_path):
    documents = haystack_chunks()
    store = InMemoryDocumentStore()
    store.write_documents(documents)
    store.save_to_disk(str(tmp_path / "haystack.json"))
    got = read_store(str(tmp_path / "haystack.json"))
    assert got["store"]["kind"] == "haystack-inmemory" and got["store"]["chunks"] == len(documents)
    assert [c["id"] for c in got["chunks"]] == [d.id for d in documents]
    assert [c["text"] for c in got["chunks"]] == [d.content for d in documents]
    assert [c["doc"] for c in got["chunks"]] == [d.meta["file_path"] for d in documents]
    # Haystack's split_idx_start is the chunk's offset in its document
    assert [c["start"] for c in got["chunks"]] == [d.meta["split_idx_start"] for d in documents]
    for c in got["chunks"]:
        assert TEXTS[c["doc"]][c["start"]:c["end"]] == c["text"]
    for s in inspected(tmp_path / "haystack.json", tmp_path)["splitter"]:
        assert (s["strategy"], s["fields"]) == ("haystack", {"split_by": "word", "size": 100, "overlap": 20})
        assert s["reproduced"] == s["chunks"]


def test_a_haystack_document_without_text_is_one_sentence(tmp_path):
    store = InMemoryDocumentStore()
    store.write_documents([HaystackDocument(content="A chunk.", meta={"file_path": "a.txt"}),
                           HaystackDocument(embedding=[0.1, 0.2], meta={"file_path": "b.txt"})])
    store.save_to_disk(str(tmp_path / "haystack.json"))
    with pytest.raises(RequestError) as caught:
        read_store(str(tmp_path / "haystack.json"))
    assert caught.value.message == (f"Document 1 of haystack.json has no text content (Haystack keeps a blob or "
                                    f"only an embedding there): ragsim reads text chunks.")
    out = run_cli("inspect", tmp_path / "haystack.json")
    assert out.returncode == 2 and "Document 1 of haystack.json has no text content" in one_line(out.stderr)


def test_another_json_object_names_what_is_read(tmp_path):
    (tmp_path / "other.json").write_text(json.dumps({"a": {"text": "no vector"}}), encoding="utf-8")
    out = run_cli("inspect", tmp_path / "other.json")
    assert out.returncode == 2
    assert ("holds a JSON dict, not a list of chunks (LangChain Documents or {\"text\": ...} objects), a LlamaIndex "
            "docstore.json, LangChain's InMemoryVectorStore.dump nor Haystack's InMemoryDocumentStore.save_to_disk."
            in one_line(out.stderr))
