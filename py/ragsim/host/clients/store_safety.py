"""Reading a user's index without changing it or failing in a library's words (`host.clients.stores` uses
these): a copy of the store's folder for the clients that write to what they open, and one sentence
for any failure of a client library.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ragsim.errors import RequestError


class Address:
    """A store served over the network: its `url` as the client takes it, shown (in `path` and in every
    sentence) as `shown`, without a password."""

    def __init__(self, url: str, shown: str, **parts):
        self.url, self.shown, self.parts = url, shown, parts

    def __str__(self) -> str:
        return self.shown

    def __format__(self, spec: str) -> str:
        return format(self.shown, spec)


def unreachable(where, exc, what: str) -> RequestError:
    """A server that refused the connection, in one sentence naming it and its client's reason."""
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return RequestError("store", f"{where} could not be reached ({reason}): check that {what}.")


SERVER_DEADLINE = 30.0  # seconds: a store's server silent this long, at the start or on one page, is not serving


def heard(where: Address) -> Address:
    """`where` once its server has answered an HTTP request within `SERVER_DEADLINE` (any answer: it
    serves). Chroma's client waits for ever on a server that accepts and stays silent, from its first
    request; this asks first, through ragsim's own client (a deadline, no redirect to another host)."""
    from ragsim.host.clients import http_client

    p = where.parts
    url = f"{'https' if p.get('ssl') else 'http'}://{p['host']}:{p['port']}/api/v2/heartbeat"
    try:
        http_client.fetch(url, timeout=SERVER_DEADLINE, max_bytes=64 * 1024)
    except http_client.HTTPFailure as exc:
        said = str(exc)
        reason = "the connection was refused" if "connection refused" in said else \
            f"nothing answered within {SERVER_DEADLINE:g} s" if "did not answer within" in said else \
            "the host was not found" if "was not found" in said else "no HTTP answer came"
        raise unreachable(where, reason, "`chroma run` serves there") from None
    return where


def with_deadline(client):
    """A chromadb HttpClient whose requests each give up after `SERVER_DEADLINE` (its own never do)."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if session is not None:
        session.timeout = httpx.Timeout(SERVER_DEADLINE)
    return client


def client_module(module: str, package: str):
    """The store's client library, imported when its store is read (ragsim imports without it)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RequestError("store", f"Reading this store needs {package} in this Python: "
                                    f"pip install {package}.") from exc


@contextlib.contextmanager
def read_only(path: Path, name: str | None = None):
    """A copy of the store's directory, removed on every way out: Chroma's and Qdrant's local clients
    write to the folder they open (Chroma migrates and rewrites `chroma.sqlite3` and its index files,
    and makes a database of an empty file; Qdrant takes a lock), and a tool that inspects a user's
    index must leave it as it was. `name`: the copy's folder name (the store's own by default)."""
    import shutil
    import tempfile

    if not path.is_dir():
        raise RequestError("store", f"{path} is not a directory; give the store's persist directory.")
    folder = Path(tempfile.mkdtemp(prefix="ragsim-store-"))
    try:
        copy = folder / (name or path.name)
        try:
            shutil.copytree(path, copy, symlinks=False, ignore=shutil.ignore_patterns(".lock"))
        except (OSError, shutil.Error) as exc:
            raise RequestError("store", f"{path} could not be read ({_reason(exc)}); check that you may read "
                                        f"every file in it.") from None
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _reason(exc) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    first = exc.args[0][0] if exc.args and exc.args[0] and isinstance(exc.args[0], list) else None
    return first[2] if first and len(first) > 2 else "a file could not be copied"


def guarded(kind: str, name: str, paged):
    """A store's pages (`paged(path, **options)`, a generator), any failure of its client library (a damaged or foreign file, metadata nested
    past Python's limit) said in one sentence naming the store, not as the library's traceback."""
    package = {"chroma": "chromadb", "qdrant": "qdrant-client", "lancedb": "lancedb", "faiss": "langchain-community",
               "milvus": "milvus-lite", "pgvector": "psycopg", "chroma-http": "chromadb"}[kind]

    def pages(path, **options):
        try:
            yield from paged(path, **options)
        except (RequestError, GeneratorExit, KeyboardInterrupt):
            raise
        except RecursionError:
            raise RequestError("store", f"{path} holds metadata nested deeper than ragsim reads; flatten it.") from None
        except Exception as exc:  # noqa: BLE001  (each client raises its own kinds: all are one sentence here)
            first = (str(exc).strip().splitlines() or [""])[0][:160]
            raise RequestError("store", f"{path} could not be read as a {name} store ({type(exc).__name__}"
                                        f"{': ' + first if first else ''}); it may be damaged, or written by another "
                                        f"version of {package}.") from None

    return pages
