"""Chunk files from their text (SPEC section 11), pure, so the page's worker reads them as the command
line does: JSON Lines of LangChain Documents, a JSON list, CSV with a text column, LlamaIndex's
docstore.json as `StorageContext.persist()` writes it, the JSON of two in-memory stores (LangChain's
`InMemoryVectorStore.dump`, Haystack's `InMemoryDocumentStore.save_to_disk`), and ragsim's own
`export` (records with a top-level `doc`, `start`, `end` and `placement`, whose document and extent
are taken as written).

    parse("chunks.jsonl", text) -> ("jsonl", [{"id", "text", "doc", "metadata", "start", "end"}])

No file I/O: `host.store_files` reads the file (and Parquet, which needs pyarrow) and calls `parse`.
"""

import csv
import json
import re

from ragsim.errors import RequestError
from ragsim.wire import chunk_exports
from ragsim.wire import chunk_records as records  # its limits read when used (a test may lower them)
from ragsim.wire.chunk_records import (
    check_count, check_depth, check_json, document_of, from_row, loads_or_none, loads_record, offsets, source_of,
    too_long, with_node)

MAX_FILE_BYTES = 200_000_000
KINDS = ("jsonl", "json", "csv")
# Fields of a record holding the chunk text, first found wins: LangChain's Document (page_content),
# then the usual column names of a table of chunks.
RECORD_TEXT = ("page_content", "text", "document", "chunk")
OFFSET_COLUMNS = ("start_index", "start_char_idx", "end_char_idx", "start", "end")  # numbers in CSV text
# A KVDocumentStore persisted by SimpleDocumentStore: {"docstore/data": {node id: {"__type__": ...,
# "__data__": node}}, ...}. Type "4" is a whole Document (an ingestion pipeline keeps them), not a chunk.
DOCUMENT_TYPE = "4"
_LINE_END = re.compile(r"\r\n?|\n")


def kind_of(name: str) -> str | None:
    """The file kind a name says: "llamaindex" for a docstore.json, else its suffix's kind (or None)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base == "docstore.json":
        return "llamaindex"
    suffix = base.rsplit(".", 1)[-1] if "." in base else ""
    return suffix if suffix in KINDS else None


def parse(name: str, text: str, *, text_field=None, doc_field=None, progress=None) -> tuple[str, list[dict]]:
    """(kind, chunks) of a chunk file's text: kind "jsonl", "json", "csv" or "llamaindex"."""
    if not isinstance(text, str):
        raise RequestError("file", "file.text must be the file's text.")
    if len(text) > MAX_FILE_BYTES:
        raise RequestError("store", f"{name} is over the {MAX_FILE_BYTES // 1_000_000} MB ragsim reads: "
                                    f"split it, or export one document's chunks.")
    kind = kind_of(name)
    if kind is None:
        raise RequestError("store", f"{name.strip() or 'A file without a name'} is no chunk file ragsim reads: give a .jsonl, .json or .csv file "
                                    f"or a LlamaIndex docstore.json.")
    if kind == "jsonl":
        return "jsonl", _chunks(_jsonl_rows(name, text), text_field, doc_field, progress)
    if kind == "csv":
        return "csv", _chunks(_csv_rows(name, text), text_field, doc_field, progress)
    data = load_json(name, text)
    if kind == "llamaindex" or (isinstance(data, dict) and "docstore/data" in data):
        return "llamaindex", read_docstore(data, name, doc_field=doc_field, progress=progress)
    saved = saved_store(data, name) if isinstance(data, dict) else None
    saved = saved or chunk_exports.exported_store(data, name)  # Elasticsearch, Weaviate, Pinecone
    if saved is not None:
        check_count(len(saved[1]), name)
        return saved[0], _chunks(saved[1], text_field, doc_field, progress)
    if not isinstance(data, list):
        raise RequestError("store", f"{name} holds a JSON {type(data).__name__}, not a list of chunks "
                                    f"(LangChain Documents or {{\"text\": ...}} objects), a LlamaIndex "
                                    f"docstore.json, LangChain's InMemoryVectorStore.dump nor Haystack's "
                                    f"InMemoryDocumentStore.save_to_disk.")
    check_count(len(data), name)
    rows = [(f"Item {i} of {name}", row) for i, row in enumerate(data)]
    return "json", _chunks(rows, text_field, doc_field, progress)


def saved_store(data: dict, name: str):
    """(kind, rows) of an in-memory store saved as one JSON object, or None for another object:
    LangChain's `InMemoryVectorStore.dump`, `{id: {"id", "vector", "text", "metadata"}}` (the vectors
    left out), and Haystack's `InMemoryDocumentStore.save_to_disk`, `{"type", "init_parameters",
    "documents": [{"id", "content", "meta", "embedding", ...}]}` (read as `{"id", "text", "metadata"}`)."""
    documents = data.get("documents")
    if isinstance(documents, list) and "init_parameters" in data:
        return "haystack-inmemory", [(f"Document {i} of {name}", _haystack_row(d, f"Document {i} of {name}"))
                                     for i, d in enumerate(documents)]
    if data and all(isinstance(v, dict) and "vector" in v and "text" in v for v in data.values()):
        return "langchain-inmemory", [(f"Entry {key!r} of {name}", {k: v for k, v in entry.items() if k != "vector"})
                                      for key, entry in data.items()]
    return None


def _haystack_row(document, where: str):
    if not isinstance(document, dict):
        return document  # refused by `record`, in its words
    if not isinstance(document.get("content"), str):
        raise RequestError("store", f"{where} has no text content (Haystack keeps a blob or only an embedding "
                                    f"there): ragsim reads text chunks.")
    row = {"text": document["content"], "metadata": document.get("meta") if isinstance(document.get("meta"), dict) else {}}
    return {**row, **({"id": document["id"]} if isinstance(document.get("id"), str) else {})}


def _chunks(rows, text_field, doc_field, progress) -> list[dict]:
    chunks = []
    for where, row in rows:
        chunks.append(record(row, len(chunks), text_field, doc_field, where))
        check_count(len(chunks), "The file", counted_so_far=True)
    if progress is not None:
        progress(len(chunks), len(chunks))
    return chunks


def record(row, position: int, text_field, doc_field, where: str) -> dict:
    """One row of a chunk file as a chunk (`position`: its place, the id of a row without one)."""
    if not isinstance(row, dict):
        raise RequestError("store", f"{where} is not an object with the chunk's text: each chunk is one "
                                    f"JSON object such as {{\"page_content\": ..., \"metadata\": {{...}}}}.")
    if row.get("lc") == 1 and isinstance(row.get("kwargs"), dict):
        row = row["kwargs"]  # LangChain's dumpd() of a Document
    elif isinstance(row.get("_source"), dict):
        row = chunk_exports.hit_row(row)  # an Elasticsearch/OpenSearch hit (elasticdump's lines)
    chunk = from_row(row, str(position), candidates=RECORD_TEXT, text_field=text_field, doc_field=doc_field, where=where)
    return exported(row, chunk) if doc_field is None else chunk


def jsonl_row(name: str, number: int, line: str):
    """Line `number` of a .jsonl file as JSON (RequestError when it is not, or is longer or holds more
    than one chunk's record may)."""
    try:
        return loads_record(line, f"Line {number} of {name}")
    except RequestError:
        raise
    except RecursionError:
        raise RequestError("store", f"Line {number} of {name} is nested too deeply to be a chunk: each line "
                                    f"of a .jsonl file is one chunk object, its metadata a few levels deep.") from None
    except ValueError as exc:
        raise RequestError("store", f"Line {number} of {name} is not JSON ({exc}): each line "
                                    f"of a .jsonl file is one chunk object.") from None


def exported(row: dict, chunk: dict) -> dict:
    """A record of ragsim's `export` keeps its own document and extent (the aligned ones)."""
    if not (isinstance(row.get("doc"), str) and "placement" in row):
        return chunk
    start, end = row.get("start"), row.get("end")
    ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (start, end))
    kept = {"metadata_str": row["metadata_str"]} if isinstance(row.get("metadata_str"), str) else {}  # LlamaIndex's
    return {**chunk, "doc": row["doc"], "start": start if ok else None, "end": end if ok else None,
            "placement": row["placement"], **kept}


def load_json(name: str, text: str):
    """A whole JSON file parsed, refused first when it holds more values than MAX_JSON_VALUES."""
    check_json(text, name, records.MAX_JSON_VALUES)
    try:
        return json.loads(text)
    except RecursionError:
        raise RequestError("store", f"{name} is nested too deeply to be a chunk file.") from None
    except ValueError as exc:
        raise RequestError("store", f"{name} is not valid JSON ({exc}): fix it or export the chunks again.") from None


def _jsonl_rows(name: str, text: str):
    lines = text.split("\n")  # not splitlines: a JSON string may hold U+2028 unescaped
    check_count(sum(1 for line in lines if line.strip()), name)  # refused before any is parsed
    check_json(text, name, records.MAX_JSON_VALUES)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        yield f"Line {number} of {name}", jsonl_row(name, number, line)


def _number(value):
    return int(value) if isinstance(value, str) and value.strip().lstrip("-").isdigit() else value


class _Lines:
    """A CSV text's lines, each with its end (\\n, \\r\\n or a lone \\r, as a file opened with newline=""
    gives them), the characters of the record being read counted: a record longer than
    MAX_RECORD_CHARS is refused before the csv module gathers it (it holds a field at four bytes a
    character: a 200 MB field took 3 GB). `held` is set back to 0 after each record."""

    def __init__(self, name: str, text: str):
        self.name, self.text, self.at, self.held = name, text, 0, 0

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self.at >= len(self.text):
            raise StopIteration
        found = _LINE_END.search(self.text, self.at)
        end = found.end() if found else len(self.text)
        self.held += end - self.at
        if self.held > records.MAX_RECORD_CHARS:
            raise too_long(f"A row of {self.name}")
        line, self.at = self.text[self.at:end], end
        return line


def _csv_rows(name: str, text: str):
    csv.field_size_limit(records.MAX_RECORD_CHARS)  # never reached: a longer row is refused by _Lines
    lines = _Lines(name, text[1:] if text.startswith("\ufeff") else text)
    for number, row in enumerate(csv.DictReader(lines), start=2):  # line 1 is the header
        lines.held = 0
        for key in OFFSET_COLUMNS:
            if key in row:
                row[key] = _number(row[key])
        if "placement" in row and "metadata" in row and isinstance(row["metadata"], str):
            # an export written as CSV keeps its metadata as JSON text
            parsed = loads_or_none(row["metadata"], f"Row {number} of {name}'s metadata")
            row["metadata"] = row["metadata"] if parsed is None else parsed
        yield f"Row {number} of {name}", {k: v for k, v in row.items() if k is not None}


def read_docstore(data, name: str, *, doc_field=None, progress=None) -> list[dict]:
    """The nodes of a LlamaIndex docstore.json (its parsed JSON), in their order; Documents skipped."""
    entries = data.get("docstore/data") if isinstance(data, dict) else None
    if isinstance(data, dict) and "docstore/data" in data and not isinstance(entries, dict):
        raise RequestError("store", f"{name}'s \"docstore/data\" is a JSON {type(entries).__name__}, not the object of "
                                    f"nodes LlamaIndex's StorageContext.persist() writes: persist the index again.")
    if not isinstance(entries, dict):
        found = ", ".join(sorted(map(str, data))[:8]) if isinstance(data, dict) else type(data).__name__
        raise RequestError("store", f"{name} is not a docstore.json as LlamaIndex's StorageContext.persist() "
                                    f"writes it (no \"docstore/data\"; it holds {found or 'nothing'}): give the "
                                    f"persist directory of a LlamaIndex index.")
    nodes = [(key, entry) for key, entry in entries.items()
             if isinstance(entry, dict) and str(entry.get("__type__")) != DOCUMENT_TYPE]
    check_count(len(nodes), f"{name}")
    chunks = []
    for key, entry in nodes:
        node = entry.get("__data__")
        if isinstance(node, str):  # older LlamaIndex wrote the node as a JSON string
            node = loads_or_none(node, f"Node {key!r} in {name}")
        if not isinstance(node, dict) or not isinstance(node.get("text"), str):
            raise RequestError("store", f"Node {key!r} in {name} has no text (\"__data__\": {{\"text\": ...}}): "
                                        f"this is not a docstore.json of LlamaIndex's layout; persist the index again.")
        chunks.append(_node_chunk(str(node.get("id_") or key), node, name, doc_field))
    if progress is not None:
        progress(len(chunks), len(chunks))
    return chunks


def _node_chunk(node_id: str, node: dict, name: str, doc_field) -> dict:
    text = node["text"]
    metadata = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
    ref_doc = source_of(node)  # NodeRelationship.SOURCE: the document's id
    start, end = offsets(text, metadata, node.get("start_char_idx"), node.get("end_char_idx"))
    where = f"Node {node_id!r} in {name.replace(chr(92), '/').rsplit('/', 1)[-1]}"
    check_depth(metadata, where)
    return with_node({"id": node_id, "text": text, "doc": document_of(metadata, doc_field, ref_doc, where),
                      "metadata": metadata, "start": start, "end": end}, node)
