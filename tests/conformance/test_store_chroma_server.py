"""Chroma as a server (`chroma+http://HOST:PORT`, docs/stores.md), against `chroma run` started here on
127.0.0.1 and stopped at the end, written by LangChain's Chroma through `chromadb.HttpClient`: every
chunk read back as stored, placed, its splitter named; a server that is not there, or an address
that is no server's, one sentence."""

import pytest

from corpus import TEXTS_DIR
from helpers import one_line, run_cli
from servers import chroma, free_port
from store_helpers import HashEmbeddings, langchain_chunks, placed_and_named, refused, source_texts
from ragsim.host.clients.stores import read_store

import chromadb  # noqa: E402  (after store_helpers, which turns chroma's telemetry off)
from langchain_chroma import Chroma

pytestmark = pytest.mark.slow  # a Chroma server and the command line

NAMES = ("udhr_article1.txt", "prose.txt")
SIZE, OVERLAP = 1000, 200
TEXTS = source_texts(*NAMES)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """RecursiveCharacterTextSplitter(1000, 200, add_start_index=True) of two texts, added by LangChain's
    Chroma to the collection `tutorial` of a `chroma run` server; the texts beside it as files."""
    root = tmp_path_factory.mktemp("chroma-server")
    with chroma(root / "db") as (host, port):
        client = chromadb.HttpClient(host=host, port=port)
        documents = langchain_chunks(NAMES, SIZE, OVERLAP)
        ids = Chroma(client=client, collection_name="tutorial", embedding_function=HashEmbeddings()).add_documents(
            documents)
        for name in NAMES:
            (root / name).write_bytes((TEXTS_DIR / name).read_bytes())
        yield {"url": f"chroma+http://{host}:{port}", "client": client, "documents": documents, "ids": ids,
               "sources": [root / n for n in NAMES]}


def test_every_chunk_is_read_as_langchain_stored_it(served):
    got = read_store(served["url"])
    documents = served["documents"]
    assert got["store"] == {"kind": "chroma-http", "path": served["url"], "collection": "tutorial",
                            "chunks": len(documents)}
    assert [c["id"] for c in got["chunks"]] == served["ids"]
    assert [c["text"] for c in got["chunks"]] == [d.page_content for d in documents]
    assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in documents]
    for c in got["chunks"]:
        assert TEXTS[c["doc"]][c["start"]:c["end"]] == c["text"]


def test_inspect_places_every_chunk_and_names_the_splitter(served):
    lines = placed_and_named(served["url"], served["sources"], SIZE, OVERLAP)
    assert [line["id"] for line in lines] == served["ids"]


def test_several_collections_need_one_named(served):
    served["client"].create_collection("another").add(ids=["x"], documents=["Another chunk."], embeddings=[[1.0, 0.0]])
    try:
        assert refused(served["url"]) == (f"{served['url']} holds 2 collections (another, tutorial): name one "
                                          f"with --collection.")
        assert [c["text"] for c in read_store(served["url"], collection="another")["chunks"]] == ["Another chunk."]
    finally:
        served["client"].delete_collection("another")


def test_a_server_that_is_not_there_is_one_sentence():
    url = f"chroma+http://127.0.0.1:{free_port()}"
    assert refused(url) == f"{url} could not be reached (the connection was refused): check that `chroma run` serves there."
    out = run_cli("inspect", url)
    assert out.returncode == 2 and "could not be reached" in one_line(out.stderr)


@pytest.mark.parametrize("spec", ["chroma+http://", "chroma+http://127.0.0.1:port", "chroma+http://127.0.0.1:8000/db"])
def test_an_address_that_is_no_server_s(spec):
    assert refused(spec) == f"{spec} is not a Chroma server's address: give chroma+http://HOST:PORT."
