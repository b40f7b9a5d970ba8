"""Read the chunks a real pipeline stored (SPEC section 11), each store through its own client library.

    read_store("chroma:DIR" | "qdrant:DIR" | "lancedb:DIR" | "faiss:DIR" | "llamaindex:DIR" | FILE, ...) -> StoredChunks
    StoredChunks = {"store": {"kind", "path", "collection", "chunks"},
                    "chunks": [{"id", "text", "doc", "metadata", "start", "end"}]}   (the store's order)

A host module: it reads files and imports chromadb, qdrant_client, lancedb or pyarrow inside the reader
that needs it, so the pure core (and Pyodide) never does. Texts are taken as stored, never changed;
`start`/`end` are the offsets the store holds (LangChain's `start_index`, LlamaIndex's
`start_char_idx`/`end_char_idx`), None when it holds none: placing chunks is alignment's job.
Files and LlamaIndex's docstore.json are read in `store_files`; LangChain's FAISS.save_local folder in
`store_faiss`, without LangChain or faiss.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ragsim.errors import RequestError
from ragsim.host.clients import store_faiss, store_files, store_milvus, store_pgvector
from ragsim.host.clients.files import not_regular
from ragsim.host.clients.store_safety import Address, client_module, guarded, heard, read_only, unreachable, with_deadline
from ragsim.host.clients.store_records import (
    MAX_CHUNKS, PAYLOAD_TEXT, check_count, from_chroma, from_row, pick_one, plain, vector_free)

KINDS = ("chroma", "qdrant", "lancedb", "llamaindex", "faiss", "milvus")
READS = ("chroma:DIR, qdrant:DIR, lancedb:DIR, llamaindex:DIR (a persist directory), faiss:DIR (LangChain's "
         "FAISS.save_local), milvus:PATH.db (Milvus Lite), a postgresql:// connection string (pgvector), "
         "chroma+http://HOST:PORT (a Chroma server), or a .jsonl, .json, .csv or .parquet file")
PAGE = 1000  # records asked of a store per call: memory stays flat, progress can be reported


def read_store(spec: str, *, collection: str | None = None, text_field: str | None = None,
               doc_field: str | None = None, progress=None) -> dict:
    """The chunks stored at `spec`, in store order (see the module docstring). `progress(done, total)`
    is called as pages are read. Bad input raises RequestError with one sentence."""
    kind, path = parse_spec(spec)
    options = {"collection": collection, "text_field": text_field, "doc_field": doc_field,
               "progress": progress}
    if kind in ("file", "llamaindex"):
        if collection is not None:
            raise RequestError("collection", f"{path} holds one set of chunks; --collection applies to "
                                             f"chroma, qdrant and lancedb stores only: leave it out.")
        # kind: jsonl, json, csv, parquet, or llamaindex (a docstore.json, whatever its name)
        kind, chunks = store_files.read(kind, path, text_field=text_field, doc_field=doc_field, progress=progress)
        name = None
    else:
        name, chunks = READERS[kind](path, **options)
    return {"store": {"kind": kind, "path": str(path), "collection": name, "chunks": len(chunks)},
            "chunks": chunks}


def store_pages(spec: str, *, collection: str | None = None, text_field: str | None = None,
                doc_field: str | None = None, progress=None) -> tuple[dict, object]:
    """The store at `spec` read a page at a time, each client's own way (Chroma's get(limit, offset),
    Qdrant's scroll, LanceDB's offset and limit, JSON Lines and Parquet a block of lines or rows;
    JSON, CSV and docstore.json files whole, within their limits): (its `store` object without
    `chunks`, the pages). A paged store has no limit on its chunks or its file's size."""
    kind, path = parse_spec(spec)
    if kind in ("file", "llamaindex"):
        if collection is not None:
            read_store(spec, collection=collection)  # refused, in read_store's words
        kind, pages = store_files.pages(kind, path, text_field=text_field, doc_field=doc_field, progress=progress)
        name = None
    else:
        pages = PAGED[kind](path, collection=collection, text_field=text_field, doc_field=doc_field, progress=progress,
                            limit=False)
        name = next(pages)
    return {"kind": kind, "path": str(path), "collection": name}, pages


def _gathered(paged):
    def read(path, **options):
        pages = paged(path, **options)
        name = next(pages)
        return name, [c for page in pages for c in page]

    return read


def parse_spec(spec: str) -> tuple[str, Path | Address]:
    """(kind, path) of a store spec; a directory without a prefix is recognised by what it holds; a
    server's address (pgvector's connection string, a Chroma server's URL) is an Address."""
    if not isinstance(spec, str) or not spec.strip():
        raise RequestError("store", f"Give the store as {READS}.")
    served = _served(spec.strip())
    if served is not None:
        return served
    prefix, sep, rest = spec.partition(":")
    if sep and prefix.lower() in KINDS:
        kind, path = prefix.lower(), Path(rest)
        if not path.exists():
            raise RequestError("store", f"{path} does not exist: give the directory the store was persisted to.")
        if not _looks_like(kind, path):
            raise RequestError("store", f"{path} is not a {NAMES[kind]} store ({_MARKS[kind]}): "
                                        f"ragsim reads {READS}.")
        return kind, path
    path = Path(spec)
    if not path.exists():
        raise RequestError("store", f"{spec} does not exist: ragsim reads {READS}.")
    if path.is_dir():
        for kind in KINDS:
            if _looks_like(kind, path):
                return kind, path
        raise RequestError("store", f"{path} is a directory that holds no store ragsim knows: it reads {READS}.")
    try:
        odd = not_regular(path)
    except OSError as e:
        raise RequestError("store", f"{path} cannot be read ({e.strerror}).") from None
    if odd:
        raise RequestError("store", f"{odd}: ragsim reads {READS}.")
    if path.name == "docstore.json":
        return "llamaindex", path
    if store_faiss.looks_like(path):
        return "faiss", path
    if path.suffix.lower() in store_files.SUFFIXES:
        return "file", path
    raise RequestError("store", f"{path} is no store ragsim reads: give {READS}.")


def _served(spec: str) -> tuple[str, Address] | None:
    body = spec[len("pgvector:"):] if spec.lower().startswith("pgvector:") else spec
    if store_pgvector.is_url(body):
        return "pgvector", store_pgvector.address(body)
    scheme, _, rest = spec.partition("://")
    if scheme.lower() not in ("chroma+http", "chroma+https"):
        return None
    from urllib.parse import urlsplit

    parts, ssl = urlsplit(scheme.lower()[len("chroma+"):] + "://" + rest), scheme.lower().endswith("s")
    try:
        port = parts.port or (443 if ssl else 8000)
    except ValueError:
        port = None
    if not parts.hostname or port is None or parts.path.strip("/") or parts.query:
        raise RequestError("store", f"{spec} is not a Chroma server's address: give chroma+http://HOST:PORT.")
    return "chroma-http", Address(spec, spec, host=parts.hostname, port=port, ssl=ssl)


NAMES = {"chroma": "Chroma", "qdrant": "Qdrant local", "lancedb": "LanceDB", "llamaindex": "LlamaIndex persist",
          "faiss": "LangChain FAISS", "milvus": "Milvus Lite", "pgvector": "PostgreSQL (pgvector)",
          "chroma-http": "Chroma server"}
_MARKS = {"chroma": "it has no chroma.sqlite3", "qdrant": "it has no meta.json and collection/ folder",
          "lancedb": "it holds no .lance table", "llamaindex": "it has no docstore.json",
          "faiss": "it has no index.pkl beside index.faiss", "milvus": store_milvus.MARK}


def _looks_like(kind: str, path: Path) -> bool:
    # Checked before any client opens the path: each client would create an empty store there.
    if kind == "llamaindex":
        return (path.is_file() and path.suffix == ".json") or (path / "docstore.json").is_file()
    if kind == "faiss":
        return store_faiss.looks_like(path)
    if kind == "milvus":
        return store_milvus.looks_like(path) or (path.is_file() and path.suffix == ".db")  # refused by its reader
    if not path.is_dir():
        return False
    if kind == "chroma":
        return (path / "chroma.sqlite3").is_file()
    if kind == "qdrant":
        return (path / "meta.json").is_file() and (path / "collection").is_dir()
    return any(child.suffix == ".lance" and child.is_dir() for child in path.iterdir())


# --- Chroma ------------------------------------------------------------------------------------------


def _chroma_collection(path, collection: str | None, shown_as=None):
    """(name, collection) of a persist directory's client, or of a Chroma server's (an Address)."""
    chromadb = client_module("chromadb", "chromadb")
    if isinstance(path, Address):
        try:
            client = with_deadline(chromadb.HttpClient(**heard(path).parts))  # neither waits for ever
        except ValueError as exc:  # chromadb's word for a server that did not answer (ours is said already)
            raise (exc if isinstance(exc, RequestError) else unreachable(path, exc, "`chroma run` serves there")) from None
    else:
        client = chromadb.PersistentClient(path=str(path))
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    name = pick_one(names, collection, shown_as or path, "collection")
    # Chroma rebuilds the collection's embedding function from its configuration; reading ids,
    # documents and metadatas never calls it (only chroma_query does).
    return name, client.get_collection(name)


def chroma_pages(path: Path, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """The collection's name, then its chunks a page at a time (`get(limit, offset)`), read from a
    copy of the store (`read_only`)."""
    with read_only(path) as copy:
        yield from _chroma_pages(copy, path, collection, text_field, doc_field, progress, limit)


def chroma_http_pages(where: Address, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """A Chroma server's collection (`chromadb.HttpClient`): read as a persist directory is, in place."""
    yield from _chroma_pages(where, where, collection, text_field, doc_field, progress, limit)


def _chroma_pages(copy, path, collection, text_field, doc_field, progress, limit):
    name, col = _chroma_collection(copy, collection, path)
    total = col.count()
    if limit:
        check_count(total, f"Chroma collection {name!r}")
    yield name
    done = 0
    for offset in range(0, total, PAGE):
        page = col.get(limit=PAGE, offset=offset, include=["documents", "metadatas"])
        chunks = [from_chroma(cid, document, metadata, text_field=text_field, doc_field=doc_field,
                              where=f"Chunk {cid!r} of Chroma collection {name!r}")
                  for cid, document, metadata in zip(page["ids"], page["documents"], page["metadatas"])]
        done += len(chunks)
        if progress is not None:
            progress(done, total)
        yield chunks


def chroma_query(spec: str, collection: str | None, queries: list[str], k: int, *,
                 model_path: str | os.PathLike | None = None) -> list[list[str]]:
    """For each query, the ids of the k best chunks by the collection's own `query`, which embeds it
    with the collection's embedding function: Chroma's default, all-MiniLM-L6-v2 (ONNX), only.
    `model_path`: a folder laid out as Chroma's extracted model (`place_chroma_model`), used instead
    of ~/.cache/chroma/onnx_models/all-MiniLM-L6-v2, where Chroma would otherwise download it."""
    kind, path = parse_spec(spec)
    if kind != "chroma":
        raise RequestError("store", f"The collection's own query needs a Chroma store (chroma:DIR), not {kind}.")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise RequestError("k", f"k must be a whole number of at least 1 (got {k!r}).")
    with read_only(path) as copy:
        return _chroma_query(copy, path, collection, queries, k, model_path)


def _chroma_query(copy: Path, path: Path, collection, queries, k, model_path) -> list[list[str]]:
    name, col = _chroma_collection(copy, collection, path)
    function = (getattr(col, "configuration", None) or {}).get("embedding_function")
    function_name = function.name() if function is not None and hasattr(function, "name") else None
    if function_name not in ("default", "onnx_mini_lm_l6_v2"):
        raise RequestError("collection", f"Chroma collection {name!r} has the embedding function "
                                         f"{function_name or 'none (embeddings were given by the caller)'}, "
                                         f"not Chroma's default all-MiniLM-L6-v2, the one whose own query ragsim runs.")
    count = col.count()
    if not queries or count == 0:
        return [[] for _ in queries]
    with _chroma_model_at(model_path):
        try:
            found = col.query(query_texts=list(queries), n_results=min(k, count), include=[])
        except Exception as exc:  # the model's download or load failed: Chroma raises many kinds
            from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

            where = Path(ONNXMiniLM_L6_V2.DOWNLOAD_PATH) / "onnx"
            raise RequestError("collection", f"Chroma could not run its default embedding function "
                                             f"({type(exc).__name__}); it reads all-MiniLM-L6-v2 from {where}, "
                                             f"downloading it on first use: without a network, lay out "
                                             f"ragsim's copy with place_chroma_model and pass it as model_path.") from exc
    return [list(ids) for ids in found["ids"]]


@contextlib.contextmanager
def _chroma_model_at(folder):
    """Points Chroma's default embedding function at `folder` for the duration (when one is given)."""
    if folder is None:
        yield
        return
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    saved, ONNXMiniLM_L6_V2.DOWNLOAD_PATH = ONNXMiniLM_L6_V2.DOWNLOAD_PATH, Path(folder)
    try:
        yield
    finally:
        ONNXMiniLM_L6_V2.DOWNLOAD_PATH = saved


CHROMA_MODEL_FILES = ("config.json", "model.onnx", "special_tokens_map.json", "tokenizer_config.json",
                      "tokenizer.json", "vocab.txt")  # what Chroma checks before it would download


def place_chroma_model(target: str | os.PathLike, source: str | os.PathLike | None = None) -> Path:
    """Lay out ragsim's own all-MiniLM-L6-v2 (the verified model embed_onnx loads) as Chroma's
    extracted model folder, `target/onnx/...`, so Chroma's DefaultEmbeddingFunction runs without a
    download when its DOWNLOAD_PATH is `target`. Chroma reads model.onnx and tokenizer.json (and pads
    and truncates to 256 itself); the other files need only exist, and are the model's own."""
    from ragsim.host.clients.embed_onnx import model_dir

    source = Path(source) if source is not None else model_dir()
    folder = Path(target) / "onnx"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json", "config.json", "tokenizer_config.json"):
        _link_or_copy(source / "onnx" / name if name == "model.onnx" else source / name, folder / name)
    tokenizer = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tokenizer["model"]["vocab"]
    (folder / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
    # BERT's special tokens, as the model's tokenizer.json names them.
    specials = {t["content"] for t in tokenizer.get("added_tokens", [])}
    roles = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
             "mask_token": "[MASK]"}
    missing = [t for t in roles.values() if t not in specials]
    if missing:
        raise RuntimeError(f"{source / 'tokenizer.json'} lacks the special tokens {missing}")
    (folder / "special_tokens_map.json").write_text(json.dumps(roles), encoding="utf-8")
    return Path(target)


def _link_or_copy(src: Path, dst: Path) -> None:
    import shutil

    if dst.exists() or dst.is_symlink():
        dst.unlink()
    try:
        os.symlink(src.resolve(), dst)
    except OSError:  # no symlinks here (Windows without the privilege): a copy
        shutil.copyfile(src, dst)


# --- Qdrant local mode --------------------------------------------------------------------------------


def qdrant_pages(path: Path, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """The collection's name, then its points a page at a time (`scroll`), read from a copy of the
    store (`read_only`)."""
    with read_only(path) as copy:
        yield from _qdrant_pages(copy, path, collection, text_field, doc_field, progress, limit)


def _qdrant_pages(copy: Path, path: Path, collection, text_field, doc_field, progress, limit):
    qdrant_client = client_module("qdrant_client", "qdrant-client")
    try:
        client = qdrant_client.QdrantClient(path=str(copy))
    except RuntimeError as exc:  # local mode locks its folder: one client at a time
        if "already accessed" not in str(exc):
            raise
        raise RequestError("store", f"{path} is open in another Qdrant client (local mode allows one at a "
                                    f"time): close that one, or read a copy of the directory.") from None
    try:
        names = [c.name for c in client.get_collections().collections]
        name = pick_one(names, collection, path, "collection")
        total = client.count(name, exact=True).count
        if limit:
            check_count(total, f"Qdrant collection {name!r}")
        yield name
        done, offset = 0, None
        while True:
            points, offset = client.scroll(name, limit=PAGE, offset=offset, with_payload=True, with_vectors=False)
            chunks = [from_row(point.payload or {}, str(point.id), candidates=PAYLOAD_TEXT, text_field=text_field,
                               doc_field=doc_field, where=f"Point {point.id} of Qdrant collection {name!r}", own_id=True)
                      for point in points]
            done += len(chunks)
            if progress is not None:
                progress(done, total)
            yield chunks
            if offset is None or not points:
                return
    finally:
        client.close()  # local mode holds a lock on the directory until closed


# --- LanceDB ------------------------------------------------------------------------------------------


def _lance_tables(db) -> list[str]:
    if hasattr(db, "list_tables"):
        names, token = [], None
        while True:
            page = db.list_tables(page_token=token) if token else db.list_tables()
            names += list(page.tables)
            token = page.page_token
            if not token:
                return names
    return list(db.table_names())


def lancedb_pages(path: Path, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """The table's name, then its rows a page at a time (offset and limit, the vectors left out)."""
    lancedb = client_module("lancedb", "lancedb")
    db = lancedb.connect(str(path))
    name = pick_one(_lance_tables(db), collection, path, "table")
    table = db.open_table(name)
    total = table.count_rows()
    if limit:
        check_count(total, f"LanceDB table {name!r}")
    columns = vector_free(table.schema)
    yield name
    for offset in range(0, total, PAGE):
        rows = table.search().select(columns).offset(offset).limit(PAGE).to_list()
        page = []
        for i, row in enumerate(rows, start=offset):
            where = f"Row {i} of LanceDB table {name!r}"
            page.append(from_row(plain(row, where), str(i), candidates=PAYLOAD_TEXT, text_field=text_field,
                                 doc_field=doc_field, where=where))
        yield page
        if progress is not None:
            progress(min(offset + PAGE, total), total)


PAGED = {kind: guarded(kind, NAMES[kind], paged) for kind, paged in
         (("chroma", chroma_pages), ("qdrant", qdrant_pages), ("lancedb", lancedb_pages),
          ("faiss", store_faiss.faiss_pages), ("milvus", store_milvus.milvus_pages),
          ("pgvector", store_pgvector.pg_pages), ("chroma-http", chroma_http_pages))}
READERS = {kind: _gathered(PAGED[kind]) for kind in PAGED}
read_chroma, read_qdrant, read_lancedb = (READERS[k] for k in ("chroma", "qdrant", "lancedb"))
__all__ = ["read_store", "store_pages", "chroma_query", "place_chroma_model", "parse_spec", "MAX_CHUNKS", "KINDS"]
