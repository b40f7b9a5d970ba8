"""The record rules every store reader shares live in the pure `ragsim.wire.chunk_records` (the page's
worker parses chunk files with them too); this host module adds what needs pyarrow: the columns worth
reading, and a row's values as JSON has them; and which of a store's collections to read."""

import base64
import datetime
import decimal
import math
import uuid

from pathlib import Path

from ragsim.errors import RequestError
from ragsim.wire.chunk_records import (  # noqa: F401  (the readers take them from here)
    DOC_FIELDS, MAX_CHUNKS, MAX_DEPTH, ONE_DOCUMENT, PAYLOAD_TEXT, check_count, document_of, from_chroma, from_row,
    node_content, offsets, too_deep)


def plain(value, where: str, depth: int = 0):
    """A Parquet or LanceDB value (pyarrow's Python objects) as JSON holds it (docs/stores.md, "Column
    types"): a datetime, date or time as its ISO 8601 text, a duration as seconds, a Decimal as its
    exact digits in a string, bytes as base64, a UUID as its text, a NaN or infinity as null; dicts and
    lists (and a map's pairs) inside, no deeper than MAX_DEPTH."""
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            raise too_deep(where)
        if isinstance(value, dict):
            return {str(k): plain(v, where, depth + 1) for k, v in value.items()}
        return [plain(v, where, depth + 1) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def vector_free(schema) -> list[str]:
    """The columns of an Arrow schema that are not embeddings (fixed-size lists, or lists of floats)."""
    import pyarrow as pa

    keep = []
    for field in schema:
        kind = field.type
        if pa.types.is_fixed_size_list(kind) or (pa.types.is_list(kind) and pa.types.is_floating(kind.value_type)):
            continue
        keep.append(field.name)
    return keep


def pick_one(names: list[str], collection: str | None, path: Path, what: str) -> str:
    """The collection (table, index) to read: the one named, or the only one; RequestError naming
    those there are otherwise."""
    listed = ", ".join(sorted(names))
    if collection is not None:
        if collection not in names:
            raise RequestError("collection", f"{path} has no {what} {collection!r}; it has: {listed or 'none'}.")
        return collection
    if not names:
        raise RequestError("collection", f"{path} holds no {what}: there are no chunks to read.")
    if len(names) > 1:
        raise RequestError("collection", f"{path} holds {len(names)} {what}s ({listed}): name one with --collection.")
    return names[0]


def counted(batches, total: int, progress, chunk):
    """Each batch of a store's records as chunks (`chunk(record)`), `progress(done, total)` after each."""
    done = 0
    for batch in batches:
        chunks = [chunk(record) for record in batch]
        done += len(chunks)
        if progress is not None:
            progress(done, total)
        yield chunks


def vector_row(vector):
    """A stored vector as a flat float32 array (half the memory of float64; Python floats would take six
    times it); RequestError where it is not a list of numbers."""
    import numpy as np

    try:
        return np.asarray(vector, dtype=np.float32).ravel()
    except (TypeError, ValueError):
        raise RequestError("store", "The index holds a stored vector that is not a list of numbers.") from None


def preferred_vector(names: list[str], preferred: str = "vector") -> str | None:
    """The vector field (column) to read: `preferred` where it is one of `names`, else the only one;
    None for none, or several and none named `preferred` (not one ragsim can choose)."""
    return preferred if preferred in names else names[0] if len(names) == 1 else None
