"""LangChain's FAISS store as `FAISS.save_local(folder, index_name="index")` writes it: `index.faiss`
(the vectors, in faiss's own format) and `index.pkl`, a pickle of the pair
`(InMemoryDocstore, {row: docstore id})` (`host.clients.stores` dispatches `faiss:DIR` here).

A pickle can run any code while it loads, and ragsim never lets it. `index.pkl` is read by an
allow-list unpickler: the only classes it resolves are LangChain's InMemoryDocstore and Document, under
the module names LangChain has pickled them from, each mapped to a local stand-in that only records
the state pickle hands it, so neither LangChain nor anything the file names is imported or called.
Dicts, lists, tuples, strings and numbers are pickle's own opcodes; older protocols (0 to 2) reach
sets and instances by a call, and only those calls are allowed (`set`, `frozenset`, `object`, and
copyreg's reconstructor of a stand-in). Any other class is refused in one sentence naming it, before
it is looked up.

The vectors are not needed to place chunks. `index.faiss` is only checked to hold one vector per row
of the pickle's map, from its header (`d` and `ntotal`, as faiss's `read_index_header` reads them),
so faiss itself is not needed and its reader never runs on the file to read chunks. Only `inspect
--questions` ranking over the index's own vectors (`stored_vectors`) reads them, by faiss's own reader
(`read_index`, then `reconstruct_n`), once the header has shown a dimension and a count that fit.
"""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

from ragsim.errors import RequestError
from ragsim.host.clients.store_records import PAYLOAD_TEXT, check_count, from_row, pick_one
from ragsim.host.clients.store_safety import client_module
from ragsim.wire.chunk_files import MAX_FILE_BYTES

PAGE = 1000
ALLOWED = "InMemoryDocstore, Document, dicts, lists, strings and numbers"


class _Recorded:
    """A stand-in for one of LangChain's classes: it keeps what pickle hands it and does nothing else."""

    def __init__(self, *args, **kwargs):  # a REDUCE of the class (no protocol LangChain uses does this)
        self.args, self.state = args, kwargs or None

    def __setstate__(self, state):  # BUILD: the instance's state (its __dict__, or pydantic's)
        self.state = state


class Docstore(_Recorded):
    """langchain_community.docstore.in_memory.InMemoryDocstore: state {"_dict": {id: Document}}."""


class Document(_Recorded):
    """langchain_core.documents.base.Document: pydantic's state {"__dict__": {"page_content",
    "metadata", "id", "type"}, "__pydantic_fields_set__", ...} (pydantic 1: "__fields_set__")."""


def _reconstructor(cls, base, state):
    """copyreg._reconstructor, which protocols 0 and 1 call to make an instance: only of a stand-in."""
    if not (isinstance(cls, type) and issubclass(cls, _Recorded)):
        raise _Forbidden("copyreg", "_reconstructor of " + getattr(cls, "__name__", type(cls).__name__))
    return cls.__new__(cls)


# The module names LangChain's classes have been pickled from, old and new, and what each becomes.
STAND_INS = {
    ("langchain_community.docstore.in_memory", "InMemoryDocstore"): Docstore,
    ("langchain.docstore.in_memory", "InMemoryDocstore"): Docstore,  # langchain before the community split
    ("langchain_core.documents.base", "Document"): Document,
    ("langchain.schema.document", "Document"): Document,
    ("langchain.schema", "Document"): Document,
    ("langchain.docstore.document", "Document"): Document,
}
# What older protocols (0 to 2) reach by a call, each harmless: a set from a list, and an instance of
# a stand-in (copyreg._reconstructor(cls, object, None)); under Python 2's names too, which pickle
# writes for protocols below 3.
for _module in ("builtins", "__builtin__"):
    STAND_INS.update({(_module, "set"): set, (_module, "frozenset"): frozenset, (_module, "object"): object})
for _module in ("copyreg", "copy_reg"):
    STAND_INS[(_module, "_reconstructor")] = _reconstructor


class _Forbidden(Exception):
    def __init__(self, module: str, name: str):
        super().__init__(f"{module}.{name}")


class _AllowList(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return STAND_INS[(module, name)]
        except (KeyError, TypeError):
            raise _Forbidden(str(module), str(name)) from None

    def persistent_load(self, pid):
        raise _Forbidden("persistent id", repr(pid)[:40])


def looks_like(path: Path) -> bool:
    """A folder holding NAME.pkl beside NAME.faiss, or one of those two files itself."""
    if path.is_file():
        return path.suffix in (".pkl", ".faiss") and path.with_suffix(".pkl").is_file() \
            and path.with_suffix(".faiss").is_file()
    return path.is_dir() and any(p.with_suffix(".faiss").is_file() for p in path.glob("*.pkl"))


def _index(path: Path, collection: str | None) -> tuple[str, Path]:
    """(index_name, its .pkl): the one named, or the only one in the folder."""
    if path.is_file():
        if collection is not None and collection != path.stem:
            raise RequestError("collection", f"{path} is the FAISS index {path.stem!r}; --collection "
                                             f"{collection!r} names another: give its folder.")
        return path.stem, path.with_suffix(".pkl")
    names = sorted(p.stem for p in path.glob("*.pkl"))
    name = pick_one(names, collection, path, "index_name")  # save_local's own word for NAME.pkl
    return name, path / f"{name}.pkl"


def load(pkl: Path) -> tuple[Docstore, dict]:
    """The pickled pair, through the allow-list; RequestError with one sentence for anything else."""
    size = pkl.stat().st_size
    if size > MAX_FILE_BYTES:
        raise RequestError("store", f"{pkl} is {size / 1e6:,.0f} MB, over the {MAX_FILE_BYTES // 1_000_000} MB "
                                    f"ragsim reads.")
    with open(pkl, "rb") as f:
        try:
            pair = _AllowList(f).load()
        except _Forbidden as e:
            raise RequestError("store", f"{pkl} holds a pickled {e}, not one of what LangChain's FAISS.save_local "
                                        f"writes ({ALLOWED}); ragsim refuses it unread, since loading it could "
                                        f"run code.") from None
        except RecursionError:
            raise RequestError("store", f"{pkl} is nested deeper than ragsim reads.") from None
        except Exception as exc:  # noqa: BLE001  (a damaged pickle raises many kinds)
            raise RequestError("store", f"{pkl} is not a pickle ragsim can read ({type(exc).__name__}: "
                                        f"{str(exc)[:120]}); it may be damaged.") from None
    if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], Docstore)
            and isinstance(pair[1], dict) and all(type(row) is int for row in pair[1])
            and isinstance(pair[0].state, dict) and isinstance(pair[0].state.get("_dict"), dict)):
        raise RequestError("store", f"{pkl} is not the (InMemoryDocstore, index_to_docstore_id) pair LangChain's "
                                    f"FAISS.save_local writes.")
    return pair[0], pair[1]


def header(path: Path) -> tuple[int, int] | None:
    """(d, ntotal) of an index.faiss, from its header (the fourcc, then d as int32 and ntotal as int64,
    little-endian); None when it is absent or of a layout this does not know."""
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        head = f.read(16)
    if len(head) < 16 or not head[:4].isalnum() or head[:2] == b"IB":  # IB...: binary indexes, another header
        return None
    d, ntotal = struct.unpack("<iq", head[4:16])
    return (d, ntotal) if d > 0 and 0 <= ntotal < 2 ** 40 else None


def vectors(path: Path) -> int | None:
    """How many vectors an index.faiss holds, from its header; None when it is absent or unknown."""
    found = header(path)
    return None if found is None else found[1]


MAX_DIMENSION = 65_536  # more than any embedding model gives: a header claiming more is refused unread


def stored_vectors(path: Path, collection: str | None) -> list:
    """The vector of each Document, in the order `faiss_pages` reads them (the rows of the pickle's map),
    by faiss's reader and `reconstruct_n`; [] where the index cannot give them back (a binary index, or
    one that keeps only codes faiss cannot turn back into vectors)."""
    _, pkl = _index(path, collection)
    _, rows = load(pkl)
    index_file = pkl.with_suffix(".faiss")
    found = header(index_file)
    if found is None:
        return []
    d, ntotal = found
    if d > MAX_DIMENSION or ntotal != len(rows):
        raise RequestError("store", f"{index_file} claims {ntotal:,} vectors of {d:,} dimensions, where {pkl.name} "
                                    f"maps {len(rows):,} rows and ragsim reads {MAX_DIMENSION:,} dimensions at most: "
                                    f"the files are damaged or of different saves.")
    faiss = client_module("faiss", "faiss-cpu")
    try:
        index = faiss.read_index(str(index_file))
    except RuntimeError as exc:  # faiss's word for a file it cannot read
        raise RequestError("store", f"{index_file} is not an index faiss can read ({str(exc).splitlines()[0][:120]}"
                                    f").") from None
    matrix = _reconstructed(faiss, index)
    if matrix is None:
        return []
    return [matrix[row] if 0 <= row < len(matrix) else None for row in sorted(rows)]


def _reconstructed(faiss, index):
    """Every vector of the index (ntotal x d, float32), or None where it keeps none faiss gives back."""
    try:
        return index.reconstruct_n(0, index.ntotal)
    except RuntimeError:  # an IVF index of an older faiss gives rows back only through its direct map
        ivf = faiss.try_extract_index_ivf(index)
        if ivf is None:
            return None
        try:
            ivf.make_direct_map()
            return index.reconstruct_n(0, index.ntotal)
        except RuntimeError:
            return None


def fields(doc, key) -> dict:
    """A Document stand-in's fields (pydantic 2 or 1 state, or a plain __dict__)."""
    state = doc.state if isinstance(doc, Document) else None
    if isinstance(state, tuple) and state and isinstance(state[0], dict):  # (state, slots)
        state = state[0]
    if isinstance(state, dict) and isinstance(state.get("__dict__"), dict):
        state = state["__dict__"]
    if not isinstance(state, dict) or not isinstance(state.get("page_content"), str):
        raise RequestError("store", f"Docstore entry {key!r} is not a LangChain Document with page_content.")
    return state


def plain(value, where: str):
    """Metadata as JSON-able data, as the other stores hold it: tuples and sets as lists (a set's items
    in a fixed order), keys as strings, bytes as text; a stand-in (a Document inside metadata) refused."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): plain(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, where) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v, where) for v in value), key=repr)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "backslashreplace")
    raise RequestError("store", f"{where} holds a {type(value).__name__} in its metadata, where ragsim reads "
                                f"plain values (strings, numbers, lists, dicts).")


def faiss_pages(path: Path, *, collection=None, text_field=None, doc_field=None, progress=None, limit=True):
    """The index's name, then its Documents in row order (the order they were added), a page at a time."""
    name, pkl = _index(path, collection)
    docstore, rows = load(pkl)
    held = vectors(pkl.with_suffix(".faiss"))
    if held is not None and held != len(rows):
        raise RequestError("store", f"{pkl.with_suffix('.faiss')} holds {held:,} vectors but {pkl.name} maps "
                                    f"{len(rows):,}: the two files are of different saves.")
    total = len(rows)
    if limit:
        check_count(total, f"FAISS index {name!r}")
    yield name
    documents, order = docstore.state["_dict"], sorted(rows)
    for start in range(0, total, PAGE):
        page = []
        for position, row in enumerate(order[start:start + PAGE], start=start):
            key = rows[row]
            if key not in documents:
                raise RequestError("store", f"{pkl} maps row {row} to {key!r}, which its docstore does not hold.")
            f, where = fields(documents[key], key), f"Document {key!r} of FAISS index {name!r}"
            record = {"page_content": f["page_content"], "metadata": plain(f.get("metadata") or {}, where),
                      **({"id": key} if isinstance(key, str) else {})}
            page.append(from_row(record, str(position), candidates=PAYLOAD_TEXT, text_field=text_field,
                                 doc_field=doc_field, where=where))
        if progress is not None:
            progress(start + len(page), total)
        yield page
