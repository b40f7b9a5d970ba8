"""Chunks kept in files (SPEC section 11): JSON Lines of LangChain Documents, a JSON list, CSV and
Parquet with a text column, and LlamaIndex's docstore.json as `StorageContext.persist()` writes it.

The file is read here (its size checked first); its text is parsed by the pure `wire.chunk_files`,
which the page's worker calls on the same formats. Parquet goes through pyarrow (imported when a
Parquet file is read; lancedb brings it). LlamaIndex itself is not needed to read its docstore.
"""

from __future__ import annotations

from pathlib import Path

from ragsim.errors import RequestError
from ragsim.host.clients.store_records import check_count, from_row, plain, vector_free
from ragsim.wire import chunk_records
from ragsim.wire.chunk_records import too_long
from ragsim.wire import chunk_files
from ragsim.wire.chunk_files import MAX_FILE_BYTES, RECORD_TEXT  # noqa: F401  (the limit is the same)

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def read(kind: str, path: Path, *, text_field=None, doc_field=None, progress=None) -> tuple[str, list[dict]]:
    """(kind, chunks) of a file store: kind is "jsonl", "json", "csv", "parquet" or "llamaindex"."""
    if kind == "llamaindex" and path.is_dir():
        path = path / "docstore.json"
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise RequestError("store", f"{path} is {size / 1e6:,.0f} MB, over the {MAX_FILE_BYTES // 1_000_000} MB "
                                    f"ragsim reads: split it, or export one document's chunks.")
    if path.suffix.lower() == ".parquet" and kind != "llamaindex":
        return "parquet", _parquet_chunks(path, text_field, doc_field, progress)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RequestError("store", f"{path} is not UTF-8 text: save it as UTF-8.") from None
    if kind == "llamaindex":
        data = chunk_files.load_json(str(path), text)
        return "llamaindex", chunk_files.read_docstore(data, str(path), doc_field=doc_field, progress=progress)
    return chunk_files.parse(path.name, text, text_field=text_field, doc_field=doc_field, progress=progress)


def pages(kind: str, path: Path, *, text_field=None, doc_field=None, progress=None, page: int = 1000):
    """(kind, pages): JSON Lines a block of lines at a time and Parquet a block of rows, read as they
    come; the other files read whole (`read`), as one page."""
    if kind == "file" and path.suffix.lower() in (".jsonl", ".parquet"):
        rows = _jsonl_lines(path) if path.suffix.lower() == ".jsonl" else _parquet_rows(path, limit=False)
        return path.suffix.lower()[1:], _paged(rows, text_field, doc_field, progress, page, path.suffix.lower() == ".jsonl")
    kind, chunks = read(kind, path, text_field=text_field, doc_field=doc_field, progress=progress)
    return kind, iter([chunks])


def _jsonl_lines(path: Path):
    """The rows of a .jsonl file a line at a time, each read no further than one record may hold (a
    line of gigabytes is refused, not read)."""
    with open(path, encoding="utf-8", newline="") as f:  # a JSON string holds no raw line break
        try:
            most = chunk_records.MAX_RECORD_CHARS
            for number, line in enumerate(iter(lambda: f.readline(most + 1), ""), start=1):
                if len(line) > most:
                    raise too_long(f"Line {number} of {path.name}")
                if line.strip():
                    yield f"Line {number} of {path.name}", chunk_files.jsonl_row(path.name, number, line)
        except UnicodeDecodeError:
            raise RequestError("store", f"{path} is not UTF-8 text: save it as UTF-8.") from None


def _paged(rows, text_field, doc_field, progress, page, jsonl):
    chunks, done = [], 0
    for where, row in rows:  # no limit on the chunks: they are let go a page at a time
        position = done + len(chunks)
        chunks.append(chunk_files.record(row, position, text_field, doc_field, where) if jsonl else
                      from_row(row, str(position), candidates=RECORD_TEXT, text_field=text_field, doc_field=doc_field,
                               where=where))
        if len(chunks) == page:
            done += len(chunks)
            yield chunks
            chunks = []
            if progress is not None:
                progress(done, done)
    done += len(chunks)
    if progress is not None:
        progress(done, done)
    yield chunks


def _parquet_chunks(path: Path, text_field, doc_field, progress) -> list[dict]:
    chunks = []
    for where, row in _parquet_rows(path):
        chunks.append(from_row(row, str(len(chunks)), candidates=RECORD_TEXT, text_field=text_field,
                               doc_field=doc_field, where=where))
    if progress is not None:
        progress(len(chunks), len(chunks))
    return chunks


MAX_UNPACKED = 256 * 2**20  # bytes: a column of one row group, decompressed (pyarrow holds it whole to read a batch)


def _check_unpacked(parquet, path: Path, columns: set) -> None:
    """Refuse, from the file's own metadata and before any read, a column whose row group decompresses
    past MAX_UNPACKED: a compression bomb (a cell of a gigabyte of one letter is a megabyte on disk)."""
    meta = parquet.metadata
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.path_in_schema.split(".")[0] in columns and chunk.total_uncompressed_size > MAX_UNPACKED:
                raise RequestError("store", f"{path.name}: column {chunk.path_in_schema!r} of row group {g + 1} "
                                            f"decompresses to {chunk.total_uncompressed_size:,} bytes, more than the "
                                            f"{MAX_UNPACKED // 2**20} MB ragsim reads at once; write it in smaller row "
                                            "groups (pyarrow's row_group_size).")


def _parquet_rows(path: Path, limit: bool = True):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise RequestError("store", "Reading Parquet needs pyarrow in this Python: pip install pyarrow.") from None
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid and OSError kinds
        raise RequestError("store", f"{path} is not a Parquet file pyarrow can read ({exc}).") from None
    columns = vector_free(parquet.schema_arrow)
    if limit:
        check_count(parquet.metadata.num_rows, f"{path.name}")
    _check_unpacked(parquet, path, set(columns))
    number = 0
    for batch in parquet.iter_batches(batch_size=1000, columns=columns):
        for row in batch.to_pylist():
            number += 1
            where = f"Row {number} of {path.name}"
            yield where, plain(row, where)
