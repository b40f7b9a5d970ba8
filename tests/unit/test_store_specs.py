"""How a store is named (ragsim.host.clients.stores.parse_spec, docs/stores.md) for the stores served over a
network or opened by a client library, without any of those libraries: ragsim imports without them,
a connection string's password is never shown, and a missing client is one sentence naming it."""

import subprocess
import sys

import pytest

from helpers import cli_env
from ragsim.errors import RequestError
from ragsim.host.clients.stores import parse_spec

CLIENTS = ("chromadb", "pymilvus", "milvus_lite", "psycopg", "qdrant_client", "lancedb")


@pytest.mark.parametrize("spec, shown", [
    ("postgresql://me:pw@db.example:5432/rag", "postgresql://me:***@db.example:5432/rag"),
    ("postgresql+psycopg://me:p%40ss@localhost/rag", "postgresql://me:***@localhost/rag"),
    ("pgvector:postgres://me@localhost/rag?password=pw&sslmode=require",
     "postgres://me@localhost/rag?password=***&sslmode=require"),
    ("postgresql:///rag?host=/var/run/postgresql", "postgresql:///rag?host=/var/run/postgresql"),
])
def test_a_connection_string_is_shown_without_its_password(spec, shown):
    kind, where = parse_spec(spec)
    assert kind == "pgvector" and str(where) == shown and f"{where}" == shown
    assert where.url == spec.removeprefix("pgvector:").replace("+psycopg", "")  # psycopg's form, password kept


def test_a_chroma_server_s_address():
    kind, where = parse_spec("chroma+http://localhost")
    assert kind == "chroma-http" and where.parts == {"host": "localhost", "port": 8000, "ssl": False}
    assert parse_spec("chroma+https://chroma.example:9443")[1].parts == {"host": "chroma.example", "port": 9443,
                                                                          "ssl": True}


def test_ragsim_imports_and_names_a_missing_client_without_the_clients(tmp_path):
    """With every store client unimportable, the stores module loads, and a Milvus Lite folder or a
    connection string is refused in one sentence naming what to install."""
    (tmp_path / "milvus_demo.db" / "collections").mkdir(parents=True)
    (tmp_path / "milvus_demo.db" / "LOCK").write_bytes(b"")
    code = ("import sys\n"
            f"for name in {CLIENTS!r}: sys.modules[name] = None\n"
            "from ragsim.errors import RequestError\n"
            "from ragsim.host.clients.stores import read_store\n"
            f"for spec in ({str(tmp_path / 'milvus_demo.db')!r}, 'postgresql://me@127.0.0.1:1/rag'):\n"
            "    try:\n"
            "        read_store(spec)\n"
            "    except RequestError as e:\n"
            "        print(e.message)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Reading this store needs pymilvus in this Python: pip install pymilvus.",
                                       "Reading this store needs psycopg[binary] in this Python: pip install "
                                       "psycopg[binary]."]


def test_importing_the_stores_loads_no_client():
    code = ("import sys, ragsim.host.clients.stores, ragsim.host.commands.inspect_cli; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({CLIENTS!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env())
    assert out.returncode == 0 and out.stdout == "[]\n", out.stderr


def test_a_milvus_lite_file_or_an_unknown_scheme(tmp_path):
    with pytest.raises(RequestError) as caught:
        parse_spec(f"milvus:{tmp_path / 'absent.db'}")
    assert "does not exist" in caught.value.message
    with pytest.raises(RequestError) as caught:
        parse_spec("mysql://me@localhost/rag")
    assert "does not exist: ragsim reads" in caught.value.message and "postgresql://" in caught.value.message
