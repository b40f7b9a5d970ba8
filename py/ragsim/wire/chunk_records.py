"""One stored record -> one chunk of StoredChunks (SPEC section 11): the rules every reader shares.

Which document a chunk came from, which field holds its text, which offsets the store holds, the
shape LlamaIndex gives its nodes in a vector store (`_node_content`), and the chunk limit.
Pure (standard library, no I/O): the host readers (`host.stores`, `host.store_files`) and the page's
worker (`wire.chunk_files`) hand it plain dicts.
"""

from __future__ import annotations

import json
import re

from ragsim import limits
from ragsim.errors import RequestError
from ragsim.wire.node_metadata import metadata_str

MAX_CHUNKS = 200_000
# One chunk's record (a line of JSON Lines, a row of CSV, a serialised node) holds at most this many
# characters, twice what a request's documents may hold (its text and its metadata), and this many
# JSON values; a record over either is refused before it is parsed (a 200 MB CSV field took 3 GB).
MAX_RECORD_CHARS = 2 * limits.MAX_CHARS
MAX_RECORD_VALUES = 1_000_000
# JSON values one file may hold, counted before json.loads builds them: LangChain's Document makes
# about 10, LlamaIndex's docstore node about 100, so 128 per chunk at the chunk limit. A 200 MB
# `[{}, {}, ...]` would build 50 million objects (5 GB); at this limit the worst is about 1 GB.
MAX_JSON_VALUES = 128 * MAX_CHUNKS
# Metadata nested deeper than this is refused: real metadata is a few levels deep, and the copies a
# store's chunks go through (pickled to the workers, written as JSON with indents) recurse a level or
# more per level, so 500 levels ended in a RecursionError.
MAX_DEPTH = 100
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes included
# Payload fields holding the chunk text, first found wins: LangChain's vector stores (page_content),
# LlamaIndex's and LangChain's LanceDB (text), LlamaIndex's serialised node (a JSON string whose
# "text" is the chunk, and which carries its offsets and metadata).
PAYLOAD_TEXT = ("page_content", "text", "_node_content", "content")  # content: Haystack's Document
# Metadata keys naming the source document, first found wins: LangChain loaders (source),
# LlamaIndex's SimpleDirectoryReader (file_path), LlamaIndex's vector stores (ref_doc_id, doc_id).
DOC_FIELDS = ("source", "file_path", "file_name", "ref_doc_id", "doc_id")
NESTED = "meta"  # Haystack's Document keeps its metadata (file_path, split_idx_start) under meta
ONE_DOCUMENT = "document"
# LlamaIndex's bookkeeping in a flat payload: not the user's metadata.
_NODE_KEYS = ("_node_content", "_node_type")


def check_count(total: int, what: str, counted_so_far: bool = False) -> None:
    """More than MAX_CHUNKS is refused before they are read (or, in a file, once one too many is)."""
    if total > MAX_CHUNKS:
        held = f"more than {MAX_CHUNKS:,}" if counted_so_far else f"{total:,}"
        raise RequestError("store", f"{what} holds {held} chunks, over the {MAX_CHUNKS:,} ragsim reads "
                                    f"at once: name a smaller collection with --collection, or export one "
                                    f"document's chunks to a file and read that.")


def json_values(text: str) -> int:
    """At most how many values `json.loads(text)` builds: its commas, colons and opening brackets
    (each value, member and container adds one). Strings are taken out first only where the quick
    count, which counts those inside them too, is over a limit."""
    return sum(text.count(c) for c in ",:[{") + 1


def check_json(text: str, where: str, most: int | None = None) -> None:
    """Refuse JSON text that would build more than `most` values (one record's, by default) before it
    is parsed."""
    most = MAX_RECORD_VALUES if most is None else most
    if json_values(text) <= most:
        return
    values = json_values(_STRING.sub('""', text))
    if values > most:
        raise RequestError("store", f"{where} holds about {values:,} JSON values, over the {most:,} ragsim parses "
                                    f"at once: split it, or export fewer chunks, with less metadata, to a file.")


def too_long(where: str) -> RequestError:
    """The refusal of a record longer than MAX_RECORD_CHARS."""
    return RequestError("store", f"{where} holds more than {MAX_RECORD_CHARS:,} characters, more than one chunk's "
                                 f"record may hold: split the chunk, or leave its metadata out.")


def loads_record(text: str, where: str):
    """A record's JSON text parsed, refused first when it is longer than a record may be."""
    if len(text) > MAX_RECORD_CHARS:
        raise too_long(where)
    check_json(text, where)
    return json.loads(text)


def loads_or_none(text: str, where: str):
    """`loads_record`, or None where the text is not JSON (a field that may hold JSON, or not)."""
    try:
        return loads_record(text, where)
    except RequestError:
        raise
    except (ValueError, RecursionError):
        return None


def too_deep(where: str) -> RequestError:
    return RequestError("store", f"{where}'s metadata is nested more than {MAX_DEPTH} levels deep, deeper than "
                                 f"ragsim reads: flatten it, or leave that field out of the chunks you give.")


def check_depth(metadata, where: str) -> None:
    """Refuse metadata whose dicts and lists nest more than MAX_DEPTH deep (walked without recursion)."""
    stack = [(metadata, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
        if children and depth > MAX_DEPTH:
            raise too_deep(where)
        stack.extend((child, depth + 1) for child in children)


def _offset(value) -> int | None:
    if isinstance(value, float) and value.is_integer() and 0 <= value < 2**53:
        value = int(value)  # Pinecone keeps every metadata number as a float: start_index 1234.0
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def offsets(text: str, metadata: dict, start=None, end=None) -> tuple[int | None, int | None]:
    """The extent the store holds for a chunk: its own start/end (a LlamaIndex node's), else metadata
    start_char_idx/end_char_idx, else LangChain's start_index (add_start_index=True: the chunk's
    first character; -1 when LangChain could not find it), else Haystack's split_idx_start (its
    DocumentSplitter's). None when it holds none."""
    start, end = _offset(start), _offset(end)
    if start is None:
        start, end = _offset(metadata.get("start_char_idx")), _offset(metadata.get("end_char_idx"))
    for key in ("start_index", "split_idx_start"):
        if start is None:
            start, end = _offset(lookup(metadata, key)), None
    if start is None:
        return None, None
    return start, end if end is not None else start + len(text)


def document_of(metadata: dict, doc_field: str | None, ref_doc: str | None, where: str) -> str:
    """The document a chunk came from: the key the user names, else the first of DOC_FIELDS, else
    the store's own reference (a LlamaIndex node's SOURCE), else the one document."""
    if doc_field is not None:
        if lookup(metadata, doc_field, nested=False) in (None, ""):
            keys = ", ".join(sorted(metadata)) or "none"
            raise RequestError("doc_field", f"{where} has no metadata key {doc_field!r} (its keys: {keys}): "
                                            f"name the key that says which document it came from (a nested "
                                            f"one with dots: meta.file_path).")
        return str(lookup(metadata, doc_field, nested=False))
    for key in DOC_FIELDS:
        if lookup(metadata, key) not in (None, ""):
            return str(lookup(metadata, key))
    return str(ref_doc) if ref_doc else ONE_DOCUMENT


def lookup(metadata: dict, key: str, nested: bool = True):
    """`metadata[key]`; a dotted key (`meta.file_path`) walks into nested objects where no key holds
    the dots; with `nested`, a key missing at the top is looked for in Haystack's `meta`."""
    if key in metadata:
        return metadata[key]
    value = metadata
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None and nested and isinstance(metadata.get(NESTED), dict):
        return metadata[NESTED].get(key)
    return value if "." in key else None


def node_content(row: dict, where: str = "A record") -> dict | None:
    """LlamaIndex's serialised node (`node_to_metadata_dict`): `_node_content` at the top of a payload
    or inside its `metadata` (LanceDB's metadata column)."""
    for holder in (row, row.get("metadata") if isinstance(row.get("metadata"), dict) else {}):
        raw = holder.get("_node_content")
        if isinstance(raw, str):
            node = loads_or_none(raw, f"{where}'s _node_content")  # None: the payload read as it is
            if isinstance(node, dict):
                return node
    return None


def source_of(node: dict | None) -> str | None:
    """The document id a LlamaIndex node names as its source (None where it names none)."""
    relationships = _mapping((node or {}).get("relationships"))
    source = relationships.get("1")  # NodeRelationship.SOURCE
    return source.get("node_id") if isinstance(source, dict) else None


def _mapping(value) -> dict:
    """`value` where it is an object, else none: a node's parts are read as far as they have its shape."""
    return value if isinstance(value, dict) else {}


def _fields_message(row: dict, where: str, text_field: str | None, candidates) -> str:
    fields = ", ".join(sorted(map(str, row))) or "none"
    if text_field is not None:
        return f"{where} has no text field {text_field!r} (its fields: {fields}): name the field with --text-field."
    return (f"{where} has no text field ({', '.join(candidates)}); its fields are {fields}: name the one "
            f"holding the chunk text with --text-field.")


def _text(row: dict, node: dict | None, candidates, text_field: str | None, where: str) -> tuple[str, str]:
    """(text, the field it came from)."""
    for key in ((text_field,) if text_field is not None else candidates):
        if key == "_node_content" and node is not None and isinstance(node.get("text"), str):
            if node["text"] or text_field is not None:
                return node["text"], key
        elif key != "_node_content" and isinstance(row.get(key), str):
            return row[key], key
    raise RequestError("text_field", _fields_message(row, where, text_field, candidates))


def from_row(row: dict, position: str, *, candidates, text_field=None, doc_field=None, where: str,
             own_id: bool = False) -> dict:
    """A chunk from a flat record: a Qdrant payload, a LanceDB/CSV/Parquet row, a JSON object.
    Its id is the record's `id` (or LlamaIndex's `id_`), else `position`; with own_id, `position`
    is the store's own id (a Qdrant point's)."""
    node = node_content(row, where)
    text, key = _text(row, node, candidates, text_field, where)
    if isinstance(row.get("metadata"), dict):
        metadata = {k: v for k, v in row["metadata"].items() if k not in _NODE_KEYS}
    else:
        skip = {key, "id", "id_", "metadata", *_NODE_KEYS}
        metadata = {k: v for k, v in row.items() if k not in skip}
    if node is not None:
        metadata = {**_mapping(node.get("metadata")), **metadata}
    chunk_id = position
    if not own_id:
        for id_key in ("id", "id_"):
            if isinstance(row.get(id_key), (str, int)) and not isinstance(row.get(id_key), bool):
                chunk_id = str(row[id_key])
                break
        else:
            if node is not None and isinstance(node.get("id_"), str):
                chunk_id = node["id_"]
    check_depth(metadata, where)
    holder = node if node is not None else row
    start, end = offsets(text, metadata, holder.get("start_char_idx"), holder.get("end_char_idx"))
    ref_doc = source_of(node) or source_of(row)
    return with_node({"id": chunk_id, "text": text, "doc": document_of(metadata, doc_field, ref_doc, where),
                      "metadata": metadata, "start": start, "end": end}, node)


def from_chroma(chunk_id, document, metadata, *, text_field=None, doc_field=None, where: str) -> dict:
    """A chunk from Chroma's ids/documents/metadatas: the document is the text (or a metadata key the
    user names); LlamaIndex's ChromaVectorStore adds its serialised node to the metadata."""
    metadata = dict(metadata or {})
    node = node_content(metadata, where)
    if text_field is not None:
        text, _ = _text(metadata, node, (), text_field, where)
    elif isinstance(document, str):
        text = document
    else:
        raise RequestError("text_field", f"{where} has no document (embeddings were stored without their "
                                         f"texts): name the metadata key holding the text with --text-field.")
    user = {k: v for k, v in metadata.items() if k not in _NODE_KEYS and k != text_field}
    if node is not None:
        user = {**_mapping(node.get("metadata")), **user}
    check_depth(user, where)
    holder = node or {}
    start, end = offsets(text, user, holder.get("start_char_idx"), holder.get("end_char_idx"))
    return with_node({"id": str(chunk_id), "text": text, "doc": document_of(user, doc_field, source_of(node), where),
                      "metadata": user, "start": start, "end": end}, node)


def with_node(chunk: dict, node: dict | None) -> dict:
    """A LlamaIndex node's chunk carries `metadata_str`, the string its node parser took off the size."""
    said = metadata_str(node)
    return chunk if said is None else {**chunk, "metadata_str": said}
