"""`inspect --questions` over the vectors already in the index (host.clients.stored_vectors) for the stores
beyond Chroma's, Qdrant's and LanceDB's folders: LangChain's FAISS.save_local folder (a flat and an IVF
index), Milvus Lite, pgvector as LangChain's PGVector and PGVectorStore and LlamaIndex's PGVectorStore
write it (a PostgreSQL with pgvector started here on 127.0.0.1 and stopped), a Chroma server (`chroma
run`, likewise), LlamaIndex's persist folder and the in-memory stores LangChain and Haystack save. Each
is built by its own library with the example's chunks and vectors given explicitly (tests/vector_helpers:
the `hashed` model's vectors of the texts, perturbed); the queries are embedded by a local endpoint
(tests/fake_openai.py). The ranks equal an independent numpy cosine ranking of the stored vectors; a
dimension that differs from the endpoint's is one sentence naming both."""

import asyncio
import json
import threading

import psycopg
import pytest

from fake_openai import FakeOpenAI
from helpers import run_cli
from servers import chroma as chroma_server, postgres
from store_helpers import HashEmbeddings  # noqa: F401  (imported first: it turns chroma's telemetry off)
from vector_helpers import IDS, META, TEXTS, check_ranks, inspect, stored

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

pytestmark = [pytest.mark.slow,  # real stores, servers and the command line
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]  # langchain-community's sunset notice


class Stored(Embeddings):
    """LangChain's embedding interface giving each chunk's stored vector (never called for a query here:
    ragsim embeds the queries itself)."""

    def __init__(self, vectors):
        self.by_text = {t: [float(x) for x in v] for t, v in zip(TEXTS, vectors)}

    def embed_documents(self, texts):
        return [self.by_text[t] for t in texts]

    def embed_query(self, text):
        raise AssertionError("the store's own query is not run")


def documents() -> list[Document]:
    return [Document(page_content=t, metadata=dict(m)) for t, m in zip(TEXTS, META)]


def faiss(root, vectors, request) -> tuple[str, str]:
    from langchain_community.vectorstores import FAISS

    FAISS.from_documents(documents(), Stored(vectors), ids=IDS).save_local(str(root / "faiss"))
    return f"faiss:{root / 'faiss'}", "faiss"


def faiss_ivf(root, vectors, request) -> tuple[str, str]:
    """An IVF index (its vectors kept in lists, by cluster) under LangChain's FAISS, as
    `FAISS(embedding_function, index, docstore, index_to_docstore_id)` takes one."""
    import faiss as faiss_library
    import numpy as np
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

    rows = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss_library.IndexIVFFlat(faiss_library.IndexFlatL2(rows.shape[1]), rows.shape[1], 2)
    index.train(rows)
    store = FAISS(Stored(vectors), index, InMemoryDocstore(), {})
    store.add_documents(documents(), ids=IDS)
    store.save_local(str(root / "faiss"))
    return f"faiss:{root / 'faiss'}", "faiss"


def milvus(root, vectors, request) -> tuple[str, str]:
    from milvus_lite.server_manager import server_manager_instance
    from pymilvus import MilvusClient

    uri = str(root / "milvus_demo.db")
    client = MilvusClient(uri)
    client.create_collection(collection_name="harbour", dimension=vectors.shape[1])
    client.insert("harbour", [{"id": i, "vector": [float(x) for x in v], "text": t, **m}
                              for i, (t, m, v) in enumerate(zip(TEXTS, META, vectors))])
    client.close()
    server_manager_instance.release_server(uri)  # as the application's exit would
    return f"milvus:{uri}", "milvus"


def pg_database(root, request) -> str:
    """A database of its own on the module's PostgreSQL, for one store."""
    server = request.getfixturevalue("pg")
    name = f"db_{len(list(root.parent.iterdir()))}_{root.name}".lower().replace("-", "_")[:60]
    with psycopg.connect(server + "postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server + name


def sqlalchemy(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://")


def pgvector(root, vectors, request) -> tuple[str, str]:
    """LangChain's PGVector (langchain-postgres): langchain_pg_embedding's `embedding` column."""
    from langchain_postgres import PGVector

    url = pg_database(root, request)
    store = PGVector(embeddings=Stored(vectors), collection_name="harbour", use_jsonb=True, connection=sqlalchemy(url))
    store.add_documents(documents(), ids=IDS)
    store._engine.dispose()
    return url, "pgvector"


def pg_vectorstore(root, vectors, request) -> tuple[str, str]:
    """langchain-postgres's newer PGVectorStore: a table of its own (its ids UUIDs it makes)."""
    from langchain_postgres import PGEngine, PGVectorStore

    url = pg_database(root, request)
    engine = PGEngine.from_connection_string(url=sqlalchemy(url))
    engine.init_vectorstore_table(table_name="chunks", vector_size=vectors.shape[1])
    PGVectorStore.create_sync(engine=engine, table_name="chunks", embedding_service=Stored(vectors)).add_documents(
        documents())
    engine._run_as_sync(engine.close())  # its pool's connections, from its own loop
    return url, "pgvector"


def pg_llamaindex(root, vectors, request) -> tuple[str, str]:
    """LlamaIndex's PGVectorStore (`data_harbour`), its nodes' embeddings given."""
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.vector_stores.postgres import PGVectorStore as LlamaPGVectorStore

    url = pg_database(root, request)
    port = url.split("@", 1)[1].split("/", 1)[0].split(":")[1]
    store = LlamaPGVectorStore.from_params(host="127.0.0.1", port=port, database=url.rsplit("/", 1)[1],
                                           user="postgres", password="", table_name="harbour",
                                           embed_dim=vectors.shape[1])
    VectorStoreIndex(nodes(vectors), storage_context=StorageContext.from_defaults(vector_store=store),
                     embed_model=MockEmbedding(embed_dim=vectors.shape[1]))
    closing = threading.Thread(target=lambda: asyncio.run(store.close()))  # its async engine, on a loop of its own
    closing.start()
    closing.join(60)
    return url, "pgvector"


def chroma_http(root, vectors, request) -> tuple[str, str]:
    import chromadb

    host, port = request.getfixturevalue("chroma_served")
    client = chromadb.HttpClient(host=host, port=port)
    name = f"harbour{len(client.list_collections())}"
    client.create_collection(name, embedding_function=None).add(
        ids=IDS, documents=TEXTS, metadatas=META, embeddings=[[float(x) for x in v] for v in vectors])
    return f"chroma+http://{host}:{port} --collection {name}", "chroma-http"


def nodes(vectors) -> list:
    from llama_index.core.schema import TextNode

    return [TextNode(id_=i, text=t, metadata=dict(m), embedding=[float(x) for x in v],
                     start_char_idx=m["start_index"], end_char_idx=m["start_index"] + len(t))
            for i, t, m, v in zip(IDS, TEXTS, META, vectors)]


def llamaindex(root, vectors, request) -> tuple[str, str]:
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    index = VectorStoreIndex(nodes(vectors), storage_context=StorageContext.from_defaults(),
                             embed_model=MockEmbedding(embed_dim=vectors.shape[1]))
    index.storage_context.persist(str(root / "llama"))
    return f"llamaindex:{root / 'llama'}", "llamaindex"


def langchain_dump(root, vectors, request) -> tuple[str, str]:
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(Stored(vectors))
    store.add_documents(documents(), ids=IDS)
    store.dump(str(root / "store.json"))
    return str(root / "store.json"), "langchain-inmemory"


def haystack_dump(root, vectors, request) -> tuple[str, str]:
    from haystack import Document as HaystackDocument
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents([HaystackDocument(id=i, content=t, meta=dict(m), embedding=[float(x) for x in v])
                           for i, t, m, v in zip(IDS, TEXTS, META, vectors)])
    store.save_to_disk(str(root / "haystack.json"))
    return str(root / "haystack.json"), "haystack-inmemory"


BUILDERS = [faiss, faiss_ivf, milvus, pgvector, pg_vectorstore, pg_llamaindex, chroma_http, llamaindex,
            langchain_dump, haystack_dump]


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture(scope="module")
def pg():
    """`postgresql://postgres@127.0.0.1:PORT/` of a server with the vector extension in template1."""
    with postgres() as url:
        server = url.rsplit("/", 1)[0] + "/"
        with psycopg.connect(server + "template1", autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        yield server


@pytest.fixture(scope="module")
def chroma_served(tmp_path_factory):
    with chroma_server(tmp_path_factory.mktemp("chroma-server") / "db") as address:
        yield address


def spec_of(built: str) -> list[str]:
    spec, _, collection = built.partition(" --collection ")
    return [spec, "--collection", collection] if collection else [spec]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_questions_are_ranked_over_the_stored_vectors(build, server, tmp_path, request):
    vectors = stored()
    built, kind = build(tmp_path, vectors, request)
    spec, *collection = spec_of(built)
    out = inspect(spec, *collection, "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    assert out["store"]["kind"] == kind
    assert out["ranked_over"] == {"vectors": len(IDS), "dimension": 64, "queries_by": "hashed", "store": kind}
    check_ranks(out, vectors)


@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_a_dimension_that_differs_is_one_sentence(build, server, tmp_path, request):
    built, _ = build(tmp_path, stored(32), request)
    got = run_cli("inspect", *spec_of(built), "--source", "examples/harbour.md", "--questions",
                  "examples/questions.json", "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "stored vectors have 32 dimensions and hashed gives 64" in got.stderr and got.stderr.count("\n") == 1


def test_a_file_of_chunks_keeps_no_vectors_and_says_so(server):
    out = inspect("examples/chunks.jsonl", "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    assert out["ranked_over"] == {"note": "ragsim reads no stored vectors from a jsonl store; the chunks' texts "
                                          "were embedded instead"}
    got = run_cli("inspect", "examples/chunks.jsonl", "--source", "examples/harbour.md", "--questions",
                  "examples/questions.json", "--method", "dense")
    assert got.returncode == 0, got.stderr
    assert "not ranked over the index's vectors: ragsim reads no stored vectors from a jsonl store" in got.stdout
    assert json.loads(run_cli("inspect", "examples/chunks.jsonl", "--source", "examples/harbour.md", "--questions",
                              "examples/questions.json", "--json").stdout).get("ranked_over") is None  # bm25


def test_a_faiss_header_claiming_too_much_is_one_sentence(server, tmp_path):
    import struct

    spec, _ = faiss(tmp_path, stored(), None)
    index = tmp_path / "faiss" / "index.faiss"
    data = bytearray(index.read_bytes())
    data[4:8] = struct.pack("<i", 2 ** 30)  # d: a billion dimensions, never allocated
    index.write_bytes(bytes(data))
    got = run_cli("inspect", spec, "--source", "examples/harbour.md", "--questions", "examples/questions.json",
                  "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    assert got.returncode == 2 and "Traceback" not in got.stderr and got.stderr.count("\n") == 1
    assert f"claims {len(IDS)} vectors of 1,073,741,824 dimensions" in got.stderr


def test_a_vector_file_over_the_limit_is_said_not_read(tmp_path, monkeypatch):
    from ragsim.host.clients import stored_vector_files

    llamaindex(tmp_path, stored(), None)
    assert len(stored_vector_files.llamaindex(tmp_path / "llama")) == len(IDS)
    monkeypatch.setattr(stored_vector_files, "MAX_FILE_BYTES", 1000)
    with pytest.raises(stored_vector_files.Unread, match=r"default__vector_store\.json is .* MB, over the .* MB"):
        stored_vector_files.llamaindex(tmp_path / "llama" / "docstore.json")
