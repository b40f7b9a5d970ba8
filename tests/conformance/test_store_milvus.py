"""Milvus Lite (ragsim.host.store_milvus, docs/stores.md) as LangChain's `Milvus` and pymilvus's
`MilvusClient("milvus_demo.db")` quick-starts write it, built here by langchain-milvus, pymilvus and
milvus-lite: every chunk read back as LangChain's splitter made it, placed, its splitter named by
`inspect`, written by `export`; the store left byte for byte as it was; bad input one sentence."""

import shutil
import subprocess
import sys
import tempfile

import pytest

from corpus import TEXTS_DIR
from helpers import one_line, run_cli
from store_helpers import fingerprint, langchain_chunks, placed_and_named, refused as error, source_texts
from ragsim.host.stores import read_store, store_pages

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_milvus import Milvus
from milvus_lite.server_manager import server_manager_instance
from pymilvus import DataType, MilvusClient

pytestmark = pytest.mark.slow  # real Milvus Lite stores and the command line

NAMES = ("udhr_article1.txt", "prose.txt")
SIZE, OVERLAP = 1000, 200  # LangChain's tutorial setting
TEXTS = source_texts(*NAMES)


def closed(uri) -> None:
    """milvus-lite serves a .db folder from a thread of this process until released: the test's own
    clients let it go before ragsim reads the folder, as an application's exit would."""
    server_manager_instance.release_server(str(uri))


def quick_start(uri, collection="demo_collection", rows=None) -> None:
    """pymilvus's quick-start: `create_collection(name, dimension)` (an `id` key, a `vector`, a
    dynamic schema) and rows of `id`, `vector`, `text` and `subject`."""
    client = MilvusClient(str(uri))
    client.create_collection(collection_name=collection, dimension=4)
    client.insert(collection, rows or [{"id": i, "vector": [0.1, 0.2, 0.3, 0.4], "text": f"Chunk {i} of the history.",
                                        "subject": "history"} for i in range(3)])
    client.close()
    closed(uri)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """RecursiveCharacterTextSplitter(1000, 200, add_start_index=True) of two texts, in LangChain's
    Milvus at ./milvus_demo.db (its metadata as scalar fields, auto ids)."""
    root = tmp_path_factory.mktemp("milvus")
    documents = langchain_chunks(NAMES, SIZE, OVERLAP)
    uri = root / "milvus_demo.db"
    store = Milvus.from_documents(documents, DeterministicFakeEmbedding(size=8), connection_args={"uri": str(uri)},
                                  drop_old=True)
    ids = [str(pk) for pk in store.get_pks("pk >= 0")]  # the auto ids Milvus gave, in key order
    store.client.close()
    closed(uri)
    for name in NAMES:
        shutil.copy(TEXTS_DIR / name, root / name)
    return {"root": root, "db": uri, "documents": documents, "ids": ids}


def test_every_chunk_is_read_as_langchain_stored_it(built, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the copies go: this test's own folder
    was = fingerprint(built["db"])
    got = read_store(f"milvus:{built['db']}")
    n = len(built["documents"])
    assert got["store"] == {"kind": "milvus", "path": str(built["db"]), "collection": "LangChainCollection",
                            "chunks": n}
    assert [c["id"] for c in got["chunks"]] == sorted(built["ids"], key=int)
    assert [c["text"] for c in got["chunks"]] == [d.page_content for d in built["documents"]]
    assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in built["documents"]]
    assert [c["metadata"] for c in got["chunks"]] == [d.metadata for d in built["documents"]]
    for c in got["chunks"]:
        assert TEXTS[c["doc"]][c["start"]:c["end"]] == c["text"]  # start_index, and the text at it
    assert read_store(str(built["db"]))["chunks"] == got["chunks"]  # a bare *.db folder is recognised
    store, pages = store_pages(f"milvus:{built['db']}")
    assert store["collection"] == "LangChainCollection" and len(next(pages)) == n
    pages.close()
    assert fingerprint(built["db"]) == was and list(tmp_path.iterdir()) == []  # the copies removed


UNCLOSED = """
import os, sys
from pymilvus import MilvusClient
client = MilvusClient(sys.argv[1])
client.create_collection("demo_collection", dimension=4)
client.insert("demo_collection", [{"id": i, "vector": [0.1, 0.2, 0.3, 0.4], "text": f"Row {i}."} for i in range(3)])
os._exit(0)  # a notebook killed with the store open: the rows are still in the write-ahead log
"""


def test_the_store_is_left_as_it_was(tmp_path):
    """Why ragsim reads a copy: a store last left open keeps its rows in the write-ahead log, and
    opening it replays them into new data and index files; an application holding it open locks it.
    ragsim reads every row in both cases and leaves the folder as it was."""
    folder = tmp_path / "milvus_demo.db"
    made = subprocess.run([sys.executable, "-c", UNCLOSED, str(folder)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert list(folder.glob("collections/demo_collection/wal/*.arrow"))
    shutil.copytree(folder, tmp_path / "control.db")
    was = fingerprint(folder)
    holder = MilvusClient(str(folder))  # an application with the store open
    assert [c["text"] for c in read_store(str(folder))["chunks"]] == ["Row 0.", "Row 1.", "Row 2."]
    out = run_cli("export", folder, "-o", "-")  # another process
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 3, out.stderr
    holder.close()
    closed(folder)
    assert fingerprint(folder) == was
    client = MilvusClient(str(tmp_path / "control.db"))  # the client itself, on the control copy
    client.load_collection("demo_collection")
    client.close()
    closed(tmp_path / "control.db")
    assert fingerprint(tmp_path / "control.db") != was


def test_inspect_places_every_chunk_and_names_the_splitter(built):
    lines = placed_and_named(f"milvus:{built['db']}", [built["root"] / n for n in NAMES], SIZE, OVERLAP)
    assert [line["text"] for line in lines] == [d.page_content for d in built["documents"]]
    assert [line["id"] for line in lines] == sorted(built["ids"], key=int)


def test_pymilvus_quick_start_keeps_text_in_its_dynamic_field(tmp_path):
    quick_start(tmp_path / "milvus_demo.db")
    got = read_store(str(tmp_path / "milvus_demo.db"))
    assert got["store"]["collection"] == "demo_collection"
    assert [(c["id"], c["text"], c["metadata"], c["doc"]) for c in got["chunks"]] == [
        (str(i), f"Chunk {i} of the history.", {"subject": "history"}, "document") for i in range(3)]


def test_a_text_field_of_another_name(tmp_path):
    uri = tmp_path / "notes.db"
    client = MilvusClient(str(uri))
    schema = client.create_schema(auto_id=False)
    schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("body", DataType.VARCHAR, max_length=1000)
    schema.add_field("file", DataType.VARCHAR, max_length=200)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=4)
    index = client.prepare_index_params()
    index.add_index("embedding", index_type="FLAT", metric_type="COSINE")
    client.create_collection("notes", schema=schema, index_params=index)
    client.insert("notes", [{"key": "n1", "body": "First note.", "file": "a.md", "embedding": [1, 0, 0, 0]}])
    client.close()
    closed(uri)
    assert error(f"milvus:{uri}") == ("Row n1 of Milvus collection 'notes' has no text field (page_content, text, "
                                      "_node_content, content); its fields are body, file: name the one holding the "
                                      "chunk text with --text-field.")
    [chunk] = read_store(f"milvus:{uri}", text_field="body", doc_field="file")["chunks"]
    assert (chunk["id"], chunk["text"], chunk["doc"], chunk["metadata"]) == ("n1", "First note.", "a.md",
                                                                             {"file": "a.md"})


def test_several_collections_need_one_named(tmp_path):
    uri = tmp_path / "milvus_demo.db"
    quick_start(uri, "first")
    quick_start(uri, "second", [{"id": 7, "vector": [0, 0, 0, 1], "text": "Only one."}])
    assert "holds 2 collections (first, second): name one with --collection" in error(str(uri))
    got = read_store(str(uri), collection="second")
    assert [c["text"] for c in got["chunks"]] == ["Only one."]
    assert "has no collection 'third'; it has: first, second." in error(str(uri), collection="third")


def test_what_is_no_milvus_lite_store_is_one_sentence(tmp_path):
    (tmp_path / "old.db").write_bytes(b"SQLite format 3\x00")
    assert error(f"milvus:{tmp_path / 'old.db'}").startswith(f"{tmp_path / 'old.db'} is a file, where milvus-lite "
                                                             f"keeps a .db path as a folder")
    (tmp_path / "empty.db").mkdir()
    assert "is not a Milvus Lite store (it has no collections/ folder beside LOCK" in error(f"milvus:{tmp_path / 'empty.db'}")
    uri = tmp_path / "damaged.db"
    quick_start(uri)
    (uri / "collections" / "demo_collection" / "schema.json").write_text("{not json")
    said = error(str(uri))
    assert said.startswith(f"{uri} could not be read as a Milvus Lite store (") and "milvus-lite" in said
    out = run_cli("inspect", f"milvus:{uri}")
    assert out.returncode == 2 and "could not be read as a Milvus Lite store" in one_line(out.stderr)
