"""PostgreSQL with pgvector, named by a connection string (`postgresql://USER:PASSWORD@HOST:PORT/DB`;
SQLAlchemy's `postgresql+psycopg://...`, which LangChain's quick-starts use, is taken too), read
through psycopg in a read-only transaction (`host.clients.stores` dispatches connection strings here).

Three layouts, found by their tables' columns in every schema the user may read:
- LangChain's `PGVector` (langchain-postgres, and langchain-community's before it):
  `langchain_pg_collection` (`uuid`, `name`) and `langchain_pg_embedding` (`document`, `cmetadata`,
  `collection_id`, and `id`, or the older `custom_id`/`uuid`); one collection a name.
- LangChain's `PGVectorStore` (langchain-postgres's newer store): a table of `langchain_id`,
  `content` and `langchain_metadata`, its other non-vector columns metadata too.
- LlamaIndex's `PGVectorStore`: `data_<table_name>` (`id`, `text`, `metadata_`, `node_id`), the
  node's offsets and source in `metadata_`'s `_node_content`.

The chunks come in the order they were stored (the table's physical order for LangChain's, which has
no other; `id` for LlamaIndex's), a page at a time from a server-side cursor; the vectors are never
selected to read chunks, so the pgvector extension need not even be loaded (`inspect --questions`
ranking over the index's own vectors reads the vector column, cast to real[] by the server). The
password is never shown: the store's `path` (and every sentence) carries the connection string with
it replaced by `***`.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

from ragsim.errors import RequestError
from ragsim.host.clients.store_records import (
    check_count, counted, from_chroma, from_row, pick_one, preferred_vector, vector_row)
from ragsim.host.clients.store_safety import Address, client_module, unreachable

PAGE = 1000
SCHEMES = ("postgresql", "postgres")


def is_url(spec: str) -> bool:
    scheme, sep, _ = spec.partition("://")
    return bool(sep) and scheme.lower().split("+")[0] in SCHEMES


def address(spec: str) -> Address:
    """The connection string psycopg takes (a SQLAlchemy `+driver` dropped), and how it is shown."""
    scheme, _, rest = spec.partition("://")
    url = scheme.lower().split("+")[0] + "://" + rest
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.rpartition("@")[0].partition(":")[0] + ":***@" + netloc.rpartition("@")[2]
    query = urlencode([(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)],
                      safe="/*")
    shown = f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "") + \
        (f"#{parts.fragment}" if parts.fragment else "")
    return Address(url, shown)


def _connected(where: Address):
    """(psycopg, a read-only connection) to the server at `where`; one sentence where there is none."""
    psycopg = client_module("psycopg", "psycopg[binary]")
    try:
        conn = psycopg.connect(where.url, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise unreachable(where, exc, "PostgreSQL runs there, and the connection string's host, port, database, "
                                      "user and password") from None
    conn.read_only = True  # every statement in a READ ONLY transaction: nothing can be written
    return psycopg, conn


def pg_pages(where: Address, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """The collection's (or table's) name, then its chunks a page at a time."""
    psycopg, conn = _connected(where)
    try:
        sources = _sources(conn, psycopg.sql)
        if not sources:
            raise RequestError("store", f"{where} holds no table of LangChain's PGVector (langchain_pg_embedding) "
                                        f"or PGVectorStore, nor of LlamaIndex's PGVectorStore (data_*): ragsim reads "
                                        f"those.")
        name = pick_one(list(sources), _alias(collection, sources), where, "collection")
        layout, count, select, args, _ = sources[name]
        total = conn.execute(count, args).fetchone()[0]
        if limit:
            check_count(total, f"{where}'s collection {name!r}")
        yield name
        with conn.cursor(name="ragsim_chunks") as cursor:  # server-side: a page in memory at a time
            cursor.execute(select, args)
            yield from counted(iter(lambda: cursor.fetchmany(PAGE), []), total, progress, lambda row: _chunk(
                layout, row, text_field, doc_field, f"Row {row[0]} of collection {name!r}"))
    finally:
        conn.close()


def stored_vectors(where: Address, name: str) -> dict:
    """{chunk id: its vector} of the collection `name` (as `pg_pages` named it), from its vector column
    (`embedding`, or the only column of pgvector's vector type) cast to real[] by the server,
    so psycopg needs no adapter; {} where there is no such column ragsim can choose."""
    psycopg, conn = _connected(where)
    try:
        found = _sources(conn, psycopg.sql).get(name)
        if found is None or found[4] is None:
            return {}
        out = {}
        with conn.cursor(name="ragsim_vectors") as cursor:  # server-side: a page in memory at a time
            cursor.execute(found[4], found[3])
            for rows in iter(lambda: cursor.fetchmany(PAGE), []):
                out.update((str(key), vector_row(vector)) for key, vector in rows if vector is not None)
        return out
    finally:
        conn.close()


def _alias(collection, sources):
    """LlamaIndex's `table_name` for its `data_<table_name>` table."""
    if collection is not None and collection not in sources and f"data_{collection}" in sources:
        return f"data_{collection}"
    return collection


VECTOR_TYPES = ("vector",)  # pgvector's float vectors (halfvec, sparsevec and bit are not read)


def _columns(conn) -> tuple[dict, dict]:
    """({(schema, table): its columns}, {(schema, table): its columns of a pgvector dense type})."""
    rows = conn.execute("SELECT table_schema, table_name, column_name, udt_name FROM information_schema.columns "
                        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
                        "ORDER BY table_schema, table_name, ordinal_position").fetchall()
    tables: dict = {}
    vectors: dict = {}
    for schema, table, column, kind in rows:
        tables.setdefault((schema, table), []).append(column)
        if kind in VECTOR_TYPES:
            vectors.setdefault((schema, table), []).append(column)
    return tables, vectors


def _vectors_select(sql, key: str, ident, vectors: list[str], where: str = ""):
    """The query of (key, vector as real[]) over a table's chosen vector column, or None for none."""
    column = preferred_vector(vectors, "embedding")
    if column is None:
        return None
    return sql.SQL("SELECT " + key + "::text, {}::real[] FROM {}" + where).format(sql.Identifier(column), ident)


def _sources(conn, sql) -> dict:
    """{collection name: (layout, count query, select query, arguments, vectors query or None)} for
    every collection found."""
    found = {}
    tables, vectors = _columns(conn)
    for (schema, table), columns in tables.items():
        shown = table if schema == "public" else f"{schema}.{table}"
        ident, kept = sql.Identifier(schema, table), vectors.get((schema, table), [])
        if table == "langchain_pg_embedding" and {"document", "cmetadata", "collection_id"} <= set(columns):
            found.update(_langchain_collections(conn, sql, schema, ident, columns, kept))
        elif {"langchain_id", "content", "langchain_metadata"} <= set(columns):
            own = ("langchain_id", "content", "langchain_metadata", "embedding", *kept)
            extra = [c for c in columns if c not in own]
            fields = sql.SQL(", ").join(map(sql.Identifier, ["langchain_id", "content", "langchain_metadata", *extra]))
            found[shown] = (("langchain-store", extra), sql.SQL("SELECT count(*) FROM {}").format(ident),
                            sql.SQL("SELECT {} FROM {} ORDER BY ctid").format(fields, ident), (),
                            _vectors_select(sql, "langchain_id", ident, kept))
        elif {"id", "text", "metadata_", "node_id"} <= set(columns):
            found[shown] = (("llamaindex", None), sql.SQL("SELECT count(*) FROM {}").format(ident),
                            sql.SQL("SELECT node_id, text, metadata_ FROM {} ORDER BY id").format(ident), (),
                            _vectors_select(sql, "node_id", ident, kept))
    return found


def _langchain_collections(conn, sql, schema, embeddings, columns, kept) -> dict:
    key = "id" if "id" in columns else "COALESCE(custom_id, uuid::text)"
    collections = conn.execute(sql.SQL("SELECT name, uuid FROM {}").format(
        sql.Identifier(schema, "langchain_pg_collection"))).fetchall()
    prefix = "" if schema == "public" else f"{schema}."
    count = sql.SQL("SELECT count(*) FROM {} WHERE collection_id = %s").format(embeddings)
    select = sql.SQL("SELECT " + key + "::text, document, cmetadata FROM {} WHERE collection_id = %s "
                     "ORDER BY ctid").format(embeddings)
    vectors = _vectors_select(sql, key, embeddings, kept, " WHERE collection_id = %s")
    return {prefix + name: (("langchain", None), count, select, (uuid,), vectors) for name, uuid in collections}


def _chunk(layout, row, text_field, doc_field, where) -> dict:
    kind, extra = layout
    if kind == "langchain":
        chunk_id, document, metadata = row
        return from_chroma(chunk_id, document, _plain(metadata), text_field=text_field, doc_field=doc_field,
                           where=where)
    if kind == "langchain-store":
        chunk_id, document, metadata, *values = row
        metadata = {**_plain(metadata), **{k: _scalar(v) for k, v in zip(extra, values)}}
        return from_chroma(str(chunk_id), document, metadata, text_field=text_field, doc_field=doc_field,
                           where=where)
    node_id, text, metadata = row
    record = {**_plain(metadata), "text": text}
    return from_row(record, str(node_id), candidates=("text",), text_field=text_field, doc_field=doc_field,
                    where=where, own_id=True)


def _plain(metadata) -> dict:
    """A json/jsonb column as psycopg gives it (a dict, or text where the column is text)."""
    if isinstance(metadata, str):
        import json

        try:
            metadata = json.loads(metadata)
        except ValueError:
            return {}
    return metadata if isinstance(metadata, dict) else {}


def _scalar(value):
    return value if value is None or isinstance(value, (str, int, float, bool, list, dict)) else str(value)
