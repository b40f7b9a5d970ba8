"""LangChain's FAISS store (ragsim.host.clients.store_faiss, docs/stores.md) as `FAISS.save_local` writes it,
built here by langchain-community and faiss: every chunk read back as LangChain's splitter made it,
placed, its splitter named by `inspect`, written by `export`; LangChain itself never imported to read
it; and a pickle holding anything but LangChain's docstore refused in one sentence without running."""

import json
import os
import pickle
import shutil
import subprocess
import sys
import warnings

import pytest

from helpers import cli_env, one_line, run_cli
from store_helpers import langchain_chunks, placed_and_named, refused as error, source_texts
from corpus import TEXTS_DIR
from ragsim.host.clients.stores import read_store

with warnings.catch_warnings():  # langchain-community's sunset notice, said on its first import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.vectorstores import FAISS
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

pytestmark = [pytest.mark.slow,  # real FAISS stores and the command line
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]  # langchain-community's sunset notice

NAMES = ("udhr_article1.txt", "prose.txt")
SIZE, OVERLAP = 1000, 200  # LangChain's tutorial setting; these texts name it alone (smaller ones tie)
TEXTS = source_texts(*NAMES)


def save(folder, documents, index_name="index", **options):
    """A FAISS store of `documents` saved by LangChain (deterministic fake embeddings, no model)."""
    store = FAISS.from_documents(documents, DeterministicFakeEmbedding(size=8), **options)
    store.save_local(str(folder), index_name=index_name)
    return store


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """RecursiveCharacterTextSplitter(1000, 200, add_start_index=True) of two texts, in a FAISS store."""
    root = tmp_path_factory.mktemp("faiss")
    documents = langchain_chunks(NAMES, SIZE, OVERLAP)
    store = save(root / "db", documents)
    for name in NAMES:
        shutil.copy(TEXTS_DIR / name, root / name)
    ids = [store.index_to_docstore_id[i] for i in range(len(documents))]
    return {"root": root, "db": root / "db", "documents": documents, "ids": ids}


def test_every_chunk_is_read_as_langchain_stored_it(built):
    got = read_store(f"faiss:{built['db']}")
    n = len(built["documents"])
    assert got["store"] == {"kind": "faiss", "path": str(built["db"]), "collection": "index", "chunks": n}
    assert [c["id"] for c in got["chunks"]] == built["ids"]  # the docstore's ids, in the index's row order
    assert [c["text"] for c in got["chunks"]] == [d.page_content for d in built["documents"]]
    assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in built["documents"]]
    for c in got["chunks"]:
        assert TEXTS[c["doc"]][c["start"]:c["end"]] == c["text"]  # start_index, and the text at it
    # a bare folder, the .pkl and the .faiss file are recognised as the same store
    for spec in (built["db"], built["db"] / "index.pkl", built["db"] / "index.faiss"):
        assert read_store(str(spec))["chunks"] == got["chunks"]


def test_inspect_places_every_chunk_and_names_the_splitter(built):
    lines = placed_and_named(f"faiss:{built['db']}", [built["root"] / n for n in NAMES], SIZE, OVERLAP)
    assert len(lines) == len(built["documents"])
    assert [r["id"] for r in lines] == built["ids"] and all(r["start"] is not None for r in lines)


def test_chunks_without_offsets_are_placed_by_their_text(tmp_path):
    documents = langchain_chunks(NAMES[:1], SIZE, OVERLAP)
    for d in documents:
        del d.metadata["start_index"]
    save(tmp_path / "db", documents)
    shutil.copy(TEXTS_DIR / NAMES[0], tmp_path / NAMES[0])
    out = run_cli("inspect", tmp_path / "db", "--source", tmp_path / NAMES[0], "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert {c["placement"] for c in report["chunks"]} == {"exact"} and report["unplaced"] == []
    assert report["splitter"][0]["reproduced"] == len(documents)


@pytest.mark.parametrize("protocol", [0, 2])
def test_older_pickle_protocols_read_alike(tmp_path, built, protocol):
    """Protocols 0 to 2 make instances and sets by calls (copyreg's reconstructor, builtins.set, under
    Python 2's names): those calls, of stand-ins only, are allowed."""
    store = tmp_path / "db"
    shutil.copytree(built["db"], store)
    pair = pickle.loads((store / "index.pkl").read_bytes())  # our own file: LangChain's classes
    (store / "index.pkl").write_bytes(pickle.dumps(pair, protocol=protocol))
    assert (b"copy_reg\n_reconstructor" if protocol == 0 else b"__builtin__\nset") in (store / "index.pkl").read_bytes()
    assert read_store(str(store)) == {**read_store(str(built["db"])), "store": read_store(str(store))["store"]}


def test_metadata_is_read_as_plain_data(tmp_path):
    """LangChain pickles metadata as it is: tuples, sets and bytes come back as JSON's lists and text."""
    documents = [Document(page_content="A chunk.", metadata={"source": "a.txt", "pair": (1, 2), "tags": {"b", "a"},
                                                             "raw": b"caf\xc3\xa9", 3: "a number key"})]
    save(tmp_path / "db", documents)
    [chunk] = read_store(str(tmp_path / "db"))["chunks"]
    assert chunk["metadata"] == {"source": "a.txt", "pair": [1, 2], "tags": ["a", "b"], "raw": "café", "3": "a number key"}
    out = run_cli("export", tmp_path / "db", "-o", "-")
    assert out.returncode == 0 and json.loads(out.stdout)["metadata"]["tags"] == ["a", "b"]
    nested = [Document(page_content="A chunk.", metadata={"source": "a.txt", "parent": Document(page_content="x")})]
    save(tmp_path / "nested", nested)
    assert error(str(tmp_path / "nested")).endswith("holds a Document in its metadata, where ragsim reads plain "
                                                    "values (strings, numbers, lists, dicts).")


def test_reading_never_imports_langchain(built):
    """The docstore's classes become local stand-ins: a fresh process reads the store with no
    langchain module (nor faiss) loaded at the end."""
    code = ("import sys; from ragsim.host.clients.stores import read_store; "
            f"n = len(read_store({str(built['db'])!r})['chunks']); "
            "print(n, sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('langchain', "
            "'langchain_core', 'langchain_community', 'faiss', 'pydantic')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(None, 1) == [str(len(built["documents"])), "[]\n"]


def test_named_indexes_in_one_folder(tmp_path):
    documents = langchain_chunks(NAMES[:1], SIZE, OVERLAP)
    save(tmp_path, documents[:3], index_name="small")
    save(tmp_path, documents, index_name="whole")
    assert "holds 2 index_names (small, whole): name one with --collection" in error(f"faiss:{tmp_path}")
    got = read_store(f"faiss:{tmp_path}", collection="small")
    assert got["store"]["collection"] == "small" and len(got["chunks"]) == 3
    assert "has no index_name 'other'; it has: small, whole." in error(str(tmp_path), collection="other")


# --- what is refused ------------------------------------------------------------------------------------


class Creates:
    """Unpickled by a plain pickle.load, this would create `path` (`open(path, "w")`)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


class Runs:
    def __reduce__(self):
        return os.system, ("touch ragsim-ran",)


def test_a_pickle_that_would_create_a_file_is_refused_unrun(tmp_path, built):
    control = tmp_path / "created-by-plain-pickle"
    pickle.loads(pickle.dumps(Creates(control))).close()
    assert control.exists()  # the payload works: plain pickle.load runs it
    target = tmp_path / "created-by-the-pickle"
    store = tmp_path / "db"
    shutil.copytree(built["db"], store)
    (store / "index.pkl").write_bytes(pickle.dumps(Creates(target)))
    said = error(f"faiss:{store}")
    assert said.startswith(f"{store / 'index.pkl'} holds a pickled io.open, not one of what LangChain's "
                           "FAISS.save_local writes (InMemoryDocstore, Document, dicts, lists, strings and numbers)")
    assert not target.exists()
    # and from the command line: one line, exit 2, nothing created
    out = run_cli("inspect", f"faiss:{store}", cwd=tmp_path)
    assert out.returncode == 2 and "holds a pickled io.open" in one_line(out.stderr)
    assert not target.exists()


def test_a_malicious_object_deep_in_a_real_store_is_refused(tmp_path):
    """LangChain pickles whatever a Document's metadata holds: a store saved by LangChain itself can
    carry a payload; the first class outside the allow-list stops the read."""
    target = tmp_path / "created-by-the-pickle"
    documents = [Document(page_content="A harmless chunk.", metadata={"source": "a.txt", "x": Creates(target)})]
    save(tmp_path / "db", documents)
    assert "holds a pickled io.open" in error(f"faiss:{tmp_path / 'db'}")
    assert not target.exists()
    (tmp_path / "db" / "index.pkl").write_bytes(pickle.dumps(({"docs": Runs()}, {}), protocol=0))
    assert "holds a pickled posix.system" in error(f"faiss:{tmp_path / 'db'}")
    assert not (tmp_path / "ragsim-ran").exists() and not os.path.exists("ragsim-ran")


@pytest.mark.parametrize("payload, words", [
    (pickle.dumps(["not", "a", "pair"]), "is not the (InMemoryDocstore, index_to_docstore_id) pair"),
    (pickle.dumps(({}, {0: "a"})), "is not the (InMemoryDocstore, index_to_docstore_id) pair"),
    (b"\x80\x04\x95garbage", "is not a pickle ragsim can read"),
    (pickle.dumps(set([1])), "is not the (InMemoryDocstore"),
])
def test_other_pickles_are_refused_in_one_sentence(tmp_path, built, payload, words):
    store = tmp_path / "db"
    shutil.copytree(built["db"], store)
    (store / "index.pkl").write_bytes(payload)
    assert words in error(f"faiss:{store}")


def test_vectors_of_another_save_are_refused(tmp_path, built):
    store = tmp_path / "db"
    shutil.copytree(built["db"], store)
    save(tmp_path / "other", built["documents"][:2])
    shutil.copy(tmp_path / "other" / "index.faiss", store / "index.faiss")
    n = len(built["documents"])
    assert error(f"faiss:{store}") == (f"{store / 'index.faiss'} holds 2 vectors but index.pkl maps {n}: the two "
                                       f"files are of different saves.")


def test_a_folder_without_a_pair_is_no_faiss_store(tmp_path):
    (tmp_path / "index.pkl").write_bytes(pickle.dumps(1))
    assert "is not a LangChain FAISS store (it has no index.pkl beside index.faiss)" in error(f"faiss:{tmp_path}")
    assert "holds no store ragsim knows" in error(str(tmp_path))
