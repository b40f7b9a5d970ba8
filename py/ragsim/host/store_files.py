"""Chunks kept in files (SPEC section 11): JSON Lines of LangChain Documents, a JSON list, CSV and
Parquet with a text column, and LlamaIndex's docstore.json as `StorageContext.persist()` writes it.

Read as plain data: json and csv from the standard library, Parquet through pyarrow (imported when a
Parquet file is read; lancedb brings it). LlamaIndex itself is not needed to read its docstore.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ragsim.errors import RequestError
from ragsim.host.store_records import check_count, document_of, from_row, offsets, vector_free

MAX_FILE_BYTES = 200_000_000
SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
# Fields of a record holding the chunk text, first found wins: LangChain's Document (page_content),
# then the usual column names of a table of chunks.
RECORD_TEXT = ("page_content", "text", "document", "chunk")
_OFFSET_COLUMNS = ("start_index", "start_char_idx", "end_char_idx")  # read as numbers from CSV text


def read(kind: str, path: Path, *, text_field=None, doc_field=None, progress=None) -> tuple[str, list[dict]]:
    """(kind, chunks) of a file store: kind is "jsonl", "json", "csv", "parquet" or "llamaindex"."""
    if kind == "llamaindex" and path.is_dir():
        path = path / "docstore.json"
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise RequestError("store", f"{path} is {size / 1e6:,.0f} MB, over the {MAX_FILE_BYTES // 1_000_000} MB "
                                    f"ragsim reads: split it, or export one document's chunks.")
    suffix = path.suffix.lower()
    if kind == "llamaindex":
        return "llamaindex", read_docstore(_load_json(path), path, doc_field=doc_field, progress=progress)
    if suffix == ".jsonl":
        rows = _jsonl_rows(path)
    elif suffix == ".json":
        data = _load_json(path)
        if isinstance(data, dict) and "docstore/data" in data:
            return "llamaindex", read_docstore(data, path, doc_field=doc_field, progress=progress)
        if not isinstance(data, list):
            raise RequestError("store", f"{path} holds a JSON {type(data).__name__}, not a list of chunks "
                                        f"(LangChain Documents or {{\"text\": ...}} objects) nor a LlamaIndex "
                                        f"docstore.json.")
        check_count(len(data), path.name)
        rows = [(f"Item {i} of {path.name}", row) for i, row in enumerate(data)]
    elif suffix == ".csv":
        rows = _csv_rows(path)
    else:
        rows = _parquet_rows(path)
    return suffix[1:], _chunks(rows, text_field, doc_field, progress)


def _chunks(rows, text_field, doc_field, progress) -> list[dict]:
    chunks = []
    for where, row in rows:
        if not isinstance(row, dict):
            raise RequestError("store", f"{where} is not an object with the chunk's text: each chunk is one "
                                        f"JSON object such as {{\"page_content\": ..., \"metadata\": {{...}}}}.")
        if row.get("lc") == 1 and isinstance(row.get("kwargs"), dict):
            row = row["kwargs"]  # LangChain's dumpd() of a Document
        chunks.append(from_row(row, str(len(chunks)), candidates=RECORD_TEXT, text_field=text_field,
                               doc_field=doc_field, where=where))
        check_count(len(chunks), "The file", counted_so_far=True)
    if progress is not None:
        progress(len(chunks), len(chunks))
    return chunks


def _load_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise RequestError("store", f"{path} is not UTF-8 text: save it as UTF-8 JSON.") from None
    except ValueError as exc:
        raise RequestError("store", f"{path} is not valid JSON ({exc}): fix it or export the chunks again.") from None


def _jsonl_rows(path: Path):
    with open(path, "rb") as handle:  # counted first, so a file of too many is refused unread
        check_count(sum(1 for line in handle if line.strip()), path.name)
    with open(path, encoding="utf-8", errors="strict") as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise RequestError("store", f"Line {number} of {path.name} is not JSON ({exc}): each line "
                                                f"of a .jsonl file is one chunk object.") from None
                yield f"Line {number} of {path.name}", row
        except UnicodeDecodeError:
            raise RequestError("store", f"{path} is not UTF-8 text: save it as UTF-8 JSON Lines.") from None


def _number(value):
    return int(value) if isinstance(value, str) and value.strip().lstrip("-").isdigit() else value


def _csv_rows(path: Path):
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            csv.field_size_limit(MAX_FILE_BYTES)
            for number, row in enumerate(csv.DictReader(handle), start=2):  # line 1 is the header
                for key in _OFFSET_COLUMNS:
                    if key in row:
                        row[key] = _number(row[key])
                yield f"Row {number} of {path.name}", {k: v for k, v in row.items() if k is not None}
    except UnicodeDecodeError:
        raise RequestError("store", f"{path} is not UTF-8 text: save the CSV as UTF-8.") from None


def _parquet_rows(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise RequestError("store", "Reading Parquet needs pyarrow in this Python: pip install pyarrow.") from None
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid and OSError kinds
        raise RequestError("store", f"{path} is not a Parquet file pyarrow can read ({exc}).") from None
    columns = vector_free(parquet.schema_arrow)
    check_count(parquet.metadata.num_rows, f"{path.name}")
    number = 0
    for batch in parquet.iter_batches(batch_size=1000, columns=columns):
        for row in batch.to_pylist():
            number += 1
            yield f"Row {number} of {path.name}", row


# --- LlamaIndex's docstore.json ---------------------------------------------------------------------

# A KVDocumentStore persisted by SimpleDocumentStore: {"docstore/data": {node id: {"__type__": ...,
# "__data__": node}}, "docstore/ref_doc_info": ..., "docstore/metadata": ...}. Type "4" is a whole
# Document (an ingestion pipeline keeps them to skip repeats), not a chunk.
_DOCUMENT_TYPE = "4"


def read_docstore(data, path: Path, *, doc_field=None, progress=None) -> list[dict]:
    entries = data.get("docstore/data") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        found = ", ".join(sorted(map(str, data))[:8]) if isinstance(data, dict) else type(data).__name__
        raise RequestError("store", f"{path} is not a docstore.json as LlamaIndex's StorageContext.persist() "
                                    f"writes it (no \"docstore/data\"; it holds {found or 'nothing'}): give the "
                                    f"persist directory of a LlamaIndex index.")
    nodes = [(key, entry) for key, entry in entries.items()
             if isinstance(entry, dict) and str(entry.get("__type__")) != _DOCUMENT_TYPE]
    check_count(len(nodes), f"{path}")
    chunks = []
    for key, entry in nodes:
        node = entry.get("__data__")
        if isinstance(node, str):  # older LlamaIndex wrote the node as a JSON string
            try:
                node = json.loads(node)
            except ValueError:
                node = None
        if not isinstance(node, dict) or not isinstance(node.get("text"), str):
            raise RequestError("store", f"Node {key!r} in {path} has no text (\"__data__\": {{\"text\": ...}}): "
                                        f"this is not a docstore.json of LlamaIndex's layout; persist the index again.")
        chunks.append(_node_chunk(str(node.get("id_") or key), node, path, doc_field))
    if progress is not None:
        progress(len(chunks), len(chunks))
    return chunks


def _node_chunk(node_id: str, node: dict, path: Path, doc_field) -> dict:
    text = node["text"]
    metadata = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
    source = (node.get("relationships") or {}).get("1")  # NodeRelationship.SOURCE: the document's id
    ref_doc = source.get("node_id") if isinstance(source, dict) else None
    start, end = offsets(text, metadata, node.get("start_char_idx"), node.get("end_char_idx"))
    where = f"Node {node_id!r} in {path.name}"
    return {"id": node_id, "text": text, "doc": document_of(metadata, doc_field, ref_doc, where),
            "metadata": metadata, "start": start, "end": end}
