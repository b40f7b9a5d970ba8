"""PostgreSQL with pgvector (ragsim.host.clients.store_pgvector, docs/stores.md), named by a connection string,
against a real PostgreSQL 16 with pgvector started here on 127.0.0.1 (pgserver's binaries) and
stopped at the end. The stores are written by LangChain's PGVector (langchain-postgres, and
langchain-community's older schema), langchain-postgres's PGVectorStore and LlamaIndex's
PGVectorStore: every chunk read back as stored, placed, its splitter named; a server that refuses
the connection, a database without the tables, a password in the string: one sentence."""

import asyncio
import threading
import warnings

import pytest

from corpus import TEXTS, TEXTS_DIR
from helpers import one_line, run_cli
from servers import free_port, postgres
from store_helpers import langchain_chunks, placed_and_named, refused, source_texts
from ragsim.host.clients.stores import read_store

import psycopg
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_postgres import PGVector

pytestmark = [pytest.mark.slow,  # a PostgreSQL server and the command line
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]

NAMES = ("udhr_article1.txt", "prose.txt")
SIZE, OVERLAP = 1000, 200
TEXTS_BY_NAME = source_texts(*NAMES)


@pytest.fixture(scope="module")
def server():
    """`postgresql://postgres@127.0.0.1:PORT/` of a server with the vector extension in template1, so
    that every database made for a test has it."""
    with postgres() as url:
        server = url.rsplit("/", 1)[0] + "/"
        with psycopg.connect(server + "template1", autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        yield server


def database(server: str, name: str) -> str:
    with psycopg.connect(server + "postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server + name


def sqlalchemy(url: str, driver: str = "psycopg") -> str:
    return url.replace("postgresql://", f"postgresql+{driver}://")


@pytest.fixture(scope="module")
def langchain_store(server, tmp_path_factory):
    """RecursiveCharacterTextSplitter(1000, 200, add_start_index=True) of two texts in langchain-postgres's
    PGVector (collection `tutorial`), the texts beside it as files."""
    url, root = database(server, "langchain"), tmp_path_factory.mktemp("sources")
    documents = langchain_chunks(NAMES, SIZE, OVERLAP)
    store = PGVector(embeddings=DeterministicFakeEmbedding(size=8), collection_name="tutorial",
                     connection=sqlalchemy(url), use_jsonb=True)
    ids = store.add_documents(documents)
    store._engine.dispose()
    for name in NAMES:
        (root / name).write_bytes((TEXTS_DIR / name).read_bytes())
    return {"url": url, "documents": documents, "ids": ids, "sources": [root / n for n in NAMES]}


def test_langchain_pgvector_is_read_as_stored(langchain_store):
    url, documents = langchain_store["url"], langchain_store["documents"]
    got = read_store(url)
    assert got["store"] == {"kind": "pgvector", "path": url, "collection": "tutorial", "chunks": len(documents)}
    assert [c["id"] for c in got["chunks"]] == langchain_store["ids"]  # in the order they were added
    assert [c["text"] for c in got["chunks"]] == [d.page_content for d in documents]
    assert [c["doc"] for c in got["chunks"]] == [d.metadata["source"] for d in documents]
    assert [c["metadata"] for c in got["chunks"]] == [d.metadata for d in documents]
    for c in got["chunks"]:
        assert TEXTS_BY_NAME[c["doc"]][c["start"]:c["end"]] == c["text"]
    # SQLAlchemy's form, as LangChain is given it, and an explicit prefix name the same store
    for spec in (sqlalchemy(url), f"pgvector:{url}", url.replace("postgresql://", "postgres://")):
        assert read_store(spec)["chunks"] == got["chunks"]


def test_a_role_that_may_only_select_reads_it(langchain_store):
    """ragsim's session is READ ONLY and needs no more than SELECT; the password is never shown."""
    url = langchain_store["url"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE ROLE reader LOGIN PASSWORD 'pw-of-reader'")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    as_reader = url.replace("postgres@", "reader:pw-of-reader@")
    got = read_store(as_reader + "?sslmode=disable&password=pw-of-reader")
    assert got["store"]["path"] == url.replace("postgres@", "reader:***@") + "?sslmode=disable&password=***"
    assert [c["id"] for c in got["chunks"]] == langchain_store["ids"]
    with psycopg.connect(as_reader) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("DELETE FROM langchain_pg_embedding")


def test_inspect_places_every_chunk_and_names_the_splitter(langchain_store):
    lines = placed_and_named(langchain_store["url"], langchain_store["sources"], SIZE, OVERLAP)
    assert [line["id"] for line in lines] == langchain_store["ids"]


def test_langchain_community_s_older_schema(server):
    """langchain-community's PGVector: `uuid` and `custom_id` instead of `id`, metadata as json."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.vectorstores import PGVector as CommunityPGVector

        url = database(server, "community")
        documents = langchain_chunks(NAMES[:1], SIZE, OVERLAP)
        ids = [f"chunk-{i}" for i in range(len(documents))]
        store = CommunityPGVector.from_documents(documents, DeterministicFakeEmbedding(size=8), ids=ids,
                                                 connection_string=sqlalchemy(url, "psycopg2"), collection_name="old")
        store._bind.dispose()
    with psycopg.connect(url) as conn:
        columns = {r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns "
                                              "WHERE table_name = 'langchain_pg_embedding'")}
    assert {"uuid", "custom_id"} <= columns and "id" not in columns
    got = read_store(url)
    assert got["store"]["collection"] == "old"
    assert [(c["id"], c["text"], c["doc"], c["start"]) for c in got["chunks"]] == [
        (i, d.page_content, d.metadata["source"], d.metadata["start_index"]) for i, d in zip(ids, documents)]


def test_langchain_postgres_pgvectorstore(server):
    """langchain-postgres's newer PGVectorStore: a table of its own, `content` and `langchain_metadata`."""
    from langchain_postgres import PGEngine, PGVectorStore

    url = database(server, "vectorstore")
    documents = langchain_chunks(NAMES[:1], SIZE, OVERLAP)
    engine = PGEngine.from_connection_string(url=sqlalchemy(url))
    engine.init_vectorstore_table(table_name="chunks", vector_size=8)
    store = PGVectorStore.create_sync(engine=engine, table_name="chunks",
                                      embedding_service=DeterministicFakeEmbedding(size=8))
    ids = store.add_documents(documents)
    engine._run_as_sync(engine.close())  # its pool's connections, from its own loop
    got = read_store(url)
    assert got["store"]["collection"] == "chunks"
    assert sorted(c["id"] for c in got["chunks"]) == sorted(ids)
    assert [(c["text"], c["doc"], c["start"]) for c in got["chunks"]] == [
        (d.page_content, d.metadata["source"], d.metadata["start_index"]) for d in documents]


def test_llamaindex_pgvectorstore(server, tmp_path):
    """LlamaIndex's PGVectorStore (`table_name="pydoc"` makes `data_pydoc`): SentenceSplitter(256, 20)
    nodes with their offsets, placed and the splitter named."""
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.vector_stores.postgres import PGVectorStore as LlamaPGVectorStore

    url = database(server, "llamaindex")
    host_port = url.split("@", 1)[1].split("/", 1)[0]
    store = LlamaPGVectorStore.from_params(host="127.0.0.1", port=host_port.split(":")[1], database="llamaindex",
                                           user="postgres", password="", table_name="pydoc", embed_dim=8)
    texts = {"pydoc_topics.txt": TEXTS["pydoc_topics"], "udhr_article1.txt": TEXTS["udhr_article1.txt"]}
    nodes = SentenceSplitter(chunk_size=256, chunk_overlap=20).get_nodes_from_documents(
        [Document(text=t, id_=n) for n, t in texts.items()])
    VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store),
                     embed_model=MockEmbedding(embed_dim=8))
    # its async engine closed on a thread of its own: a session's sync Playwright (the browser tests, run
    # before this file in one pytest process) keeps an event loop running on the main thread
    closing = threading.Thread(target=lambda: asyncio.run(store.close()))
    closing.start()
    closing.join(60)
    got = read_store(url, collection="pydoc")  # LlamaIndex's table_name names data_pydoc
    assert got["store"]["collection"] == "data_pydoc" and read_store(url)["chunks"] == got["chunks"]
    assert [(c["id"], c["text"], c["doc"]) for c in got["chunks"]] == [(n.node_id, n.text, n.ref_doc_id) for n in nodes]
    for c in got["chunks"]:
        assert texts[c["doc"]][c["start"]:c["end"]] == c["text"]  # the node's start/end_char_idx
    sources = []
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        sources.append(str(tmp_path / name))
    placed_and_named(url, sources, None, 20, strategy="llamaindex-sentence")


# --- what is refused ------------------------------------------------------------------------------------


def test_a_server_that_refuses_the_connection(tmp_path):
    url = f"postgresql://reader:s3cret-word@127.0.0.1:{free_port()}/rag"
    said = refused(url)
    assert said.startswith(f"postgresql://reader:***@127.0.0.1:{url.rsplit(':', 1)[1].split('/')[0]}/rag could not "
                           f"be reached (") and said.endswith("check that PostgreSQL runs there, and the connection "
                                                              "string's host, port, database, user and password.")
    assert "s3cret" not in said
    out = run_cli("inspect", url.replace("postgresql://", "postgresql+psycopg://"))
    assert out.returncode == 2 and "could not be reached" in one_line(out.stderr) and "s3cret" not in out.stderr


def test_a_database_that_does_not_exist_or_lacks_the_tables(server):
    said = refused(server + "nowhere")
    assert "could not be reached (" in said and "nowhere" in said
    empty = database(server, "empty")
    assert refused(empty) == (f"{empty} holds no table of LangChain's PGVector (langchain_pg_embedding) or "
                              f"PGVectorStore, nor of LlamaIndex's PGVectorStore (data_*): ragsim reads those.")


def test_several_collections_need_one_named(server):
    url = database(server, "two")
    for name, documents in (("first", langchain_chunks(NAMES[:1], SIZE, OVERLAP)),
                            ("second", langchain_chunks(NAMES[1:], SIZE, OVERLAP))):
        store = PGVector(embeddings=DeterministicFakeEmbedding(size=8), collection_name=name,
                         connection=sqlalchemy(url), use_jsonb=True)
        store.add_documents(documents)
        store._engine.dispose()
    assert refused(url) == f"{url} holds 2 collections (first, second): name one with --collection."
    assert {c["doc"] for c in read_store(url, collection="second")["chunks"]} == {NAMES[1]}
    assert refused(url, collection="third") == f"{url} has no collection 'third'; it has: first, second."
