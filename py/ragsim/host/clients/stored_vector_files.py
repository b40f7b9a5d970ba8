"""The vectors kept in the files of the stores ragsim reads as files (`stored_vectors` dispatches here):
LlamaIndex's persist folder, whose `default__vector_store.json` (SimpleVectorStore) holds
`{"embedding_dict": {node id: vector}, ...}`; LangChain's `InMemoryVectorStore.dump`, `{id: {"id",
"vector", "text", "metadata"}}`; and Haystack's `InMemoryDocumentStore.save_to_disk`, each document's
`embedding`. JSON only, parsed within the limit on a file's size; nothing in them is run. The other
files (JSON Lines, JSON lists, CSV, Parquet, the exports) are read for their texts only."""

from __future__ import annotations

import json
from pathlib import Path

from ragsim.errors import RequestError
from ragsim.host.clients.store_records import vector_row
from ragsim.wire.chunk_files import MAX_FILE_BYTES, saved_store

VECTOR_STORE = "default__vector_store.json"  # StorageContext.persist's name for the default namespace


class Unread(Exception):
    """Stored vectors that are there but not read, with why (the report's note)."""


def _json(path: Path):
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise Unread(f"{path.name} is {size / 1e6:,.0f} MB, over the {MAX_FILE_BYTES // 1_000_000} MB ragsim reads")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise RequestError("store", f"{path} is not the JSON its library writes: it may be damaged.") from None


def _rows(vectors) -> list:
    return [vector_row(v) if isinstance(v, list) and v else None for v in vectors]


def llamaindex(path: Path, name=None) -> dict:
    """{node id: vector} of the persist folder's SimpleVectorStore (beside its docstore.json); {} where
    it has none (an index kept in another vector store persists no vectors here)."""
    folder = path.parent if path.is_file() else path
    found = [folder / VECTOR_STORE] if (folder / VECTOR_STORE).is_file() else sorted(folder.glob("*vector_store.json"))
    if len(found) != 1:
        return {}
    data = _json(found[0])
    embeddings = data.get("embedding_dict") if isinstance(data, dict) else None
    if not isinstance(embeddings, dict):
        return {}
    keys = list(embeddings)
    return dict(zip(map(str, keys), _rows(embeddings[k] for k in keys)))


def in_memory(path: Path, name=None) -> list:
    """The vector of each entry of LangChain's or Haystack's saved in-memory store, in the file's order
    (the order its chunks are read in)."""
    data = _json(path)
    kind = saved_store(data, path.name)[0] if isinstance(data, dict) else None
    if kind == "langchain-inmemory":
        return _rows(entry.get("vector") for entry in data.values())
    if kind == "haystack-inmemory":
        return _rows(d.get("embedding") if isinstance(d, dict) else None for d in data["documents"])
    return []
