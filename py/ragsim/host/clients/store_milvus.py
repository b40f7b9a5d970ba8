"""Milvus Lite as LangChain's `Milvus(connection_args={"uri": "./milvus_demo.db"})` and pymilvus's
`MilvusClient("milvus_demo.db")` quick-starts write it (`host.clients.stores` dispatches `milvus:PATH`, and a
bare `*.db` folder of that layout, here).

milvus-lite 3 keeps a `.db` path as a folder (`LOCK`, `collections/NAME/schema.json`, Parquet data
and a write-ahead log under it) and serves it to pymilvus over gRPC from a thread of this process.
Loading a collection, which every query needs, writes its index files into that folder, and an
application holding the store open keeps a lock on it: the folder is read from a copy (`read_only`),
whose server is stopped before the copy is removed.

The chunks: every row of a collection in primary-key order (`query_iterator`, a page at a time),
vector fields left out; the text is LangChain's `text` field (or `--text-field`), the metadata every
other scalar field, and the fields a dynamic schema holds (pymilvus's quick-start keeps `text` there),
the id the primary key's value. Only the default database is read. The float vector field is read
only for `inspect --questions` ranking over the index's own vectors (`stored_vectors`).
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from ragsim.errors import RequestError
from ragsim.host.clients.store_records import (
    PAYLOAD_TEXT, check_count, counted, from_row, pick_one, preferred_vector, vector_row)
from ragsim.host.clients.store_safety import client_module, read_only

PAGE = 1000
MARK = "it has no collections/ folder beside LOCK, as milvus-lite keeps a .db path"


def looks_like(path: Path) -> bool:
    """milvus-lite's data folder: `collections/` with its `LOCK` (or `databases/`)."""
    return path.is_dir() and (path / "collections").is_dir() and \
        ((path / "LOCK").is_file() or (path / "databases").is_dir())


def milvus_pages(path: Path, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """The collection's name, then its rows a page at a time, read from a copy of the folder."""
    with _opened(path) as client:
        yield from _pages(client, path, collection, text_field, doc_field, progress, limit)


@contextlib.contextmanager
def _opened(path: Path):
    """A MilvusClient of a copy of the folder, its server stopped before the copy is removed."""
    if path.is_file():
        raise RequestError("store", f"{path} is a file, where milvus-lite keeps a .db path as a folder "
                                    f"(collections/, LOCK): give the folder MilvusClient was given.")
    pymilvus = client_module("pymilvus", "pymilvus")
    servers = client_module("milvus_lite.server_manager", "milvus-lite").server_manager_instance
    with read_only(path, name="milvus.db") as copy, _quiet():  # pymilvus opens only a path ending .db
        client = pymilvus.MilvusClient(str(copy))
        try:
            yield client
        finally:
            client.close()
            servers.release_server(str(copy))  # its thread, and the copy's lock


def _type(field) -> str:
    return getattr(field["type"], "name", str(field["type"]))


def stored_vectors(path: Path, name: str) -> dict:
    """{primary key as text: its row's vector} of the collection's float vector field (`vector`, as
    LangChain's Milvus and pymilvus's quick-start name it, or the only one); {} where there is none
    ragsim can choose (binary, half-precision and sparse vectors are not read)."""
    with _opened(path) as client:
        schema = client.describe_collection(name)
        column = preferred_vector([f["name"] for f in schema["fields"] if _type(f) == "FLOAT_VECTOR"])
        if column is None:
            return {}
        key = next(f["name"] for f in schema["fields"] if f.get("is_primary"))
        client.load_collection(name)
        rows, out = client.query_iterator(name, batch_size=PAGE, output_fields=[key, column]), {}
        try:
            for batch in iter(rows.next, []):
                out.update((str(row[key]), vector_row(row[column])) for row in batch)
        finally:
            rows.close()
        return out


def _pages(client, path: Path, collection, text_field, doc_field, progress, limit):
    name = pick_one(client.list_collections(), collection, path, "collection")
    schema = client.describe_collection(name)
    fields = [f for f in schema["fields"] if "VECTOR" not in _type(f)]
    key = next(f["name"] for f in schema["fields"] if f.get("is_primary"))
    wanted = [f["name"] for f in fields] + (["$meta"] if schema.get("enable_dynamic_field") else [])
    client.load_collection(name)
    total = client.query(name, filter="", output_fields=["count(*)"])[0]["count(*)"]
    if limit:
        check_count(total, f"Milvus collection {name!r}")
    yield name
    def chunk(row):
        row = dict(row)
        own = row.pop(key)
        return from_row(row, str(own), candidates=PAYLOAD_TEXT, text_field=text_field, doc_field=doc_field,
                        where=f"Row {own} of Milvus collection {name!r}", own_id=True)

    rows = client.query_iterator(name, batch_size=PAGE, output_fields=wanted)
    try:
        yield from counted(iter(rows.next, []), total, progress, chunk)
    finally:
        rows.close()


@contextlib.contextmanager
def _quiet():
    """pymilvus, milvus-lite and grpc's server log each failed call (and the timestamp call milvus-lite
    does not implement, which pymilvus's iterator tries first) to stderr; ragsim says a failure in one
    sentence instead."""
    loggers = [logging.getLogger(name) for name in ("pymilvus", "milvus_lite", "grpc._server")]
    saved = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)
