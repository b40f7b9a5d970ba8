"""A store a notebook holds, read from memory as `inspect` reads the same store from disk.

    stored(value, collection=..., text_field=..., doc_field=...) -> {"store": {...}, "chunks": [...]}

`value` is a store's path or spec (`chroma:DIR`, a chunk file: `host.clients.stores.read_store`, as the
command line reads it), or an object read by its attributes, its library never imported:
- a LangChain `Chroma` (its `_collection`) or a chromadb `Collection`: `get()` of ids, documents and
  metadatas, each read as `host.clients.stores` reads a persisted collection's;
- LangChain's `InMemoryVectorStore` (`store`, the dict its `dump` writes) and `FAISS` (`docstore`,
  `index_to_docstore_id`);
- a LlamaIndex index or `StorageContext` (its `docstore`'s `to_dict()`, the docstore.json it would
  persist; a Chroma vector store behind the index when the docstore holds no nodes);
- a list of chunks: LangChain Documents (`split_documents`' answer), LlamaIndex nodes, or dicts.
The records are the shared `chunk_records` ones, so a store read here and from its folder give the
same report.
"""

from __future__ import annotations

import os

from ragsim.errors import RequestError
from ragsim.host.clients import store_faiss, stores as disk
from ragsim.pyapi.inputs import kind_of
from ragsim.wire import chunk_files
from ragsim.wire.chunk_records import PAYLOAD_TEXT, check_count, from_chroma, from_row

STORE_KINDS = ("a store's path (chroma:DIR, faiss:DIR, a .jsonl of chunks, ...), a LangChain vector store "
               "(Chroma, InMemoryVectorStore, FAISS), a chromadb Collection, a LlamaIndex index or StorageContext, "
               "or a list of chunks (LangChain Documents, LlamaIndex nodes)")


def _summary(kind: str, path, collection, chunks: list) -> dict:
    return {"store": {"kind": kind, "path": None if path is None else str(path), "collection": collection,
                      "chunks": len(chunks)}, "chunks": chunks}


def _chroma_path(holder) -> str | None:
    """The directory a Chroma client persists to (its settings'), None in memory or for a server."""
    try:
        settings = holder._client.get_settings()
    except Exception:  # noqa: BLE001  (another client, or none: the path is only shown)
        return None
    return settings.persist_directory if getattr(settings, "is_persistent", False) else None


def chroma_collection(col, options: dict, holder=None) -> dict:
    """A chromadb Collection's chunks, as `host.clients.stores` reads a persisted one."""
    name, path = getattr(col, "name", None), _chroma_path(holder if holder is not None else col)
    check_count(col.count(), f"Chroma collection {name!r}")
    got = col.get(include=["documents", "metadatas"])
    chunks = [from_chroma(cid, document, metadata, **options, where=f"Chunk {cid!r} of Chroma collection {name!r}")
              for cid, document, metadata in zip(got["ids"], got["documents"], got["metadatas"])]
    return _summary("chroma", path, name, chunks)


def in_memory(store: dict, options: dict) -> dict:
    """LangChain's InMemoryVectorStore's `store`, read as its `dump` file is."""
    kind, rows = chunk_files.saved_store(store, "InMemoryVectorStore") or ("langchain-inmemory", [])
    check_count(len(rows), "The InMemoryVectorStore")
    return _summary(kind, None, None, [chunk_files.record(row, i, options["text_field"], options["doc_field"], where)
                                       for i, (where, row) in enumerate(rows)])


def faiss_store(vs, options: dict) -> dict:
    """LangChain's FAISS in memory: its docstore's Documents in row order, as `store_faiss` reads its folder."""
    rows, documents = vs.index_to_docstore_id, vs.docstore._dict
    check_count(len(rows), "The FAISS index")
    chunks = []
    for position, row in enumerate(sorted(rows)):
        key = rows[row]
        doc, where = documents[key], f"Document {key!r} of the FAISS index"
        record = {"page_content": doc.page_content, "metadata": store_faiss.plain(doc.metadata or {}, where),
                  **({"id": key} if isinstance(key, str) else {})}
        chunks.append(from_row(record, str(position), candidates=PAYLOAD_TEXT, **options, where=where))
    return _summary("faiss", None, None, chunks)


def llamaindex(holder, options: dict) -> dict:
    """A LlamaIndex index or StorageContext: its docstore's nodes, as `docstore.json` would hold them;
    a Chroma collection behind the index when the docstore holds none (stores_text vector stores)."""
    data = holder.docstore.to_dict()
    chunks = chunk_files.read_docstore(data, "the index's docstore", doc_field=options["doc_field"])
    behind = getattr(getattr(holder, "vector_store", None), "_collection", None)
    if not chunks and behind is not None and hasattr(behind, "get"):
        return chroma_collection(behind, options)
    return _summary("llamaindex", None, None, chunks)


def chunk_list(items, options: dict) -> dict:
    """Chunks held as a list: LangChain Documents, LlamaIndex nodes, or dicts as a chunk file holds them."""
    check_count(len(items), "The list")
    rows = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            rows.append(item)
            continue
        text = getattr(item, "page_content", None)
        key = "page_content" if isinstance(text, str) else "text"
        text = text if isinstance(text, str) else getattr(item, "text", None)
        if not isinstance(text, str):
            raise RequestError("store", f"store[{i}] is {kind_of(item)}; a list of chunks holds LangChain "
                                        f"Documents, LlamaIndex nodes or dicts with \"text\".")
        row = {key: text, "metadata": dict(getattr(item, "metadata", None) or {})}
        own = getattr(item, "id", None) or getattr(item, "id_", None)
        for attr in ("start_char_idx", "end_char_idx"):  # a LlamaIndex node's own extent
            if isinstance(getattr(item, attr, None), int):
                row[attr] = getattr(item, attr)
        source = getattr(item, "ref_doc_id", None)  # a LlamaIndex node's document (NodeRelationship.SOURCE)
        if isinstance(source, str):
            row["relationships"] = {"1": {"node_id": source}}
        rows.append({**row, **({"id": own} if isinstance(own, str) else {})})
    return _summary("list", None, None, [chunk_files.record(row, i, options["text_field"], options["doc_field"],
                                                            f"store[{i}]") for i, row in enumerate(rows)])


def stored(value, *, collection=None, text_field=None, doc_field=None) -> dict:
    """StoredChunks of any of STORE_KINDS (RequestError with one sentence for anything else)."""
    if isinstance(value, (str, os.PathLike)):  # a spec or a path, read as the command line reads it
        return disk.read_store(os.fspath(value), collection=collection, text_field=text_field, doc_field=doc_field)
    if collection is not None:
        raise RequestError("collection", f"collection names a collection of a store's path (chroma:DIR, qdrant:DIR, "
                                         f"...); store is {kind_of(value)}, which holds its own: leave it out.")
    options = {"text_field": text_field, "doc_field": doc_field}
    col = getattr(value, "_collection", None)
    if col is not None and hasattr(col, "get") and hasattr(col, "count"):  # LangChain's Chroma
        return chroma_collection(col, options, value)
    if type(value).__module__.split(".")[0] == "chromadb" and hasattr(value, "get") and hasattr(value, "count"):
        return chroma_collection(value, options)
    if isinstance(getattr(value, "store", None), dict) and hasattr(value, "dump"):
        return in_memory(value.store, options)
    if hasattr(value, "index_to_docstore_id") and hasattr(getattr(value, "docstore", None), "_dict"):
        return faiss_store(value, options)
    if hasattr(getattr(value, "docstore", None), "to_dict"):
        return llamaindex(value, options)
    if isinstance(value, (list, tuple)):
        return chunk_list(value, options)
    raise RequestError("store", f"store is {kind_of(value)}; ragsim reads {STORE_KINDS}.")
