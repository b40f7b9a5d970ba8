"""Chunks exported from stores whose servers ragsim cannot reach: the JSON their own APIs answer, saved
to a file, recognised by its shape (docs/stores.md, "Exports of served stores"). Pure: the parsed JSON
in (already bounded by `chunk_files.load_json`), rows for `chunk_files` out.

- Elasticsearch and OpenSearch: a `_search` or scroll answer, `{"hits": {"hits": [{"_id", "_source"}]}}`,
  a list of such pages, or a list of hits (elasticdump's `--type=data`, also one hit a line in JSON
  Lines). LangChain's `ElasticsearchStore` writes `_source` as `{"text", "metadata", "vector"}`
  (`query_field="text"`, `vector_query_field="vector"`), LlamaIndex's as `{"content", "metadata",
  "embedding"}` with its node in `metadata._node_content`.
- Weaviate: the REST object list `GET /v1/objects`, `{"objects": [{"class", "id", "properties",
  "vector"}]}`, or a list of `{"uuid" or "id", "properties"}` (the Python client's objects). LangChain's
  `WeaviateVectorStore` keeps the text under its `text_key` ("text") and each metadata key as a property.
- Pinecone: `Index.fetch(ids)`'s answer, `{"vectors": {id: {"id", "values", "metadata"}}, "namespace"}`
  (or the `matches` of a `query` with `include_metadata`). LangChain's `PineconeVectorStore` keeps the
  text in the metadata under `text_key` ("text"); LlamaIndex's its node in `_node_content`.

Vectors (`vector`, `embedding`, `values`) are left out of every row.
"""

VECTORS = ("vector", "embedding", "values", "sparse_values", "sparseValues")
# The text of an exported record, first found wins: LangChain's (text), LangChain's Documents
# (page_content), LlamaIndex's Elasticsearch field (content), LlamaIndex's serialised node.
EXPORT_TEXT = ("text", "page_content", "content", "_node_content")


def _plain(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in VECTORS}


def _hits(data) -> list | None:
    """The hits of an Elasticsearch/OpenSearch answer, a list of answers, or a list of hits."""
    if isinstance(data, dict) and isinstance(data.get("hits"), dict) and isinstance(data["hits"].get("hits"), list):
        return data["hits"]["hits"]
    if isinstance(data, list) and data and all(isinstance(p, dict) and isinstance(p.get("hits"), dict) for p in data):
        return [h for page in data for h in (page["hits"].get("hits") or [])]
    if isinstance(data, list) and data and all(isinstance(h, dict) and isinstance(h.get("_source"), dict) for h in data):
        return data
    return None


def hit_row(hit) -> dict:
    """One Elasticsearch/OpenSearch hit as a flat record: its `_source` less the vectors, its `_id`."""
    if not isinstance(hit, dict) or not isinstance(hit.get("_source"), dict):
        return hit  # refused by `record`, in its words
    row = _plain(hit["_source"])
    if isinstance(row.get("content"), str) and not any(k in row for k in ("text", "page_content")):
        row["text"] = row.pop("content")  # LlamaIndex's text_field
    return {**row, "id": hit["_id"]} if isinstance(hit.get("_id"), (str, int)) else row


def _weaviate(data) -> list | None:
    objects = data.get("objects") if isinstance(data, dict) else data
    if isinstance(objects, list) and objects and all(
            isinstance(o, dict) and isinstance(o.get("properties"), dict) and ("uuid" in o or "id" in o)
            and not any(k in o for k in EXPORT_TEXT) for o in objects):  # not a chunk whose metadata says properties
        rows = []
        for o in objects:
            key = o.get("uuid", o.get("id"))
            rows.append({**_plain(o["properties"]), **({"id": str(key)} if key is not None else {})})
        return rows
    return None


def _pinecone(data) -> list | None:
    if not isinstance(data, dict):
        return None
    vectors, matches = data.get("vectors"), data.get("matches")
    if isinstance(vectors, dict) and all(isinstance(v, dict) for v in vectors.values()):
        entries = [(key, v) for key, v in vectors.items()]
    elif isinstance(matches, list) and all(isinstance(v, dict) and "id" in v for v in matches):
        entries = [(v["id"], v) for v in matches]
    else:
        return None
    rows = []
    for key, v in entries:
        metadata = v.get("metadata") if isinstance(v.get("metadata"), dict) else {}
        rows.append({**_plain(metadata), "id": str(v.get("id", key))})
    return rows


def exported_store(data, name: str):
    """(kind, rows) of a served store's export, or None for JSON of another shape; each row is
    `(where, record)` as `chunk_files` reads rows."""
    hits = _hits(data)
    if hits is not None:
        return "elasticsearch", [(f"Hit {i} of {name}", hit_row(h)) for i, h in enumerate(hits)]
    for kind, rows in (("weaviate", _weaviate(data)), ("pinecone", _pinecone(data))):
        if rows is not None:
            return kind, [(f"Object {i} of {name}" if kind == "weaviate" else f"Vector {r.get('id')!r} of {name}", r)
                          for i, r in enumerate(rows)]
    return None
