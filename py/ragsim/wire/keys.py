"""Every key a request may hold, at every level; an unknown one is refused with the nearest valid name.

A misspelt field used to be ignored in silence (`"answer": ...` gave a response with no verdict and
exit 0). `check(request)` runs before anything is read, so the sentence names the key as typed:
`chunking.chunk_size is not a field of the window splitter; perhaps you meant chunking.size.`

The lists are what the core reads (`request.py`, `answers`, `investigate`, `question_out`, `questions`,
`dense.read_options`, `analyzers`, each splitter) and what the page sends of its own (`wire`,
`scores`, `find`, `cuts`, `expand`, `sweep`, `map`, the dense cosines). The chunking fields depend
on the strategy: `CHUNKING_FIELDS` holds them, one entry a splitter, from the splitter registry.
A value of the wrong type is left to the reader of that field, which says what to give.
"""

import difflib

from ragsim.errors import RequestError
from ragsim.split import registry
from ragsim.wire.request import STORED

# chunking fields by strategy (SPEC sections 7 and 9), each besides `strategy`: the registry's, and
# the chunks handed in for stored chunks (SPEC section 11)
CHUNKING_FIELDS = {s.name: tuple(f.name for f in s.fields) for s in registry.SPLITTERS}
CHUNKING_FIELDS[STORED] = ("chunks",)

# the libraries' own names for our fields: `chunk_size` means `size` even though difflib would not say so
ALIASES = {
    "chunk_size": "size", "split_length": "size", "chunk_overlap": "overlap", "split_overlap": "overlap",
    "length_function": "length", "encoding_name": "tokenizer", "metadata_str": "metadata", "top_k": "k",
    "similarity_top_k": "k", "splitter": "strategy", "question": "query", "answer": "span",
    "refs": "references",  # the page's own name for them (its state and state file)
}


class Chunking:
    """The `chunking` object: its fields are those of the strategy it names."""


DOCUMENT = {"id": None, "title": None, "text": None}
RETRIEVAL = {
    "k": None, "variant": None, "k1": None, "b": None, "delta": None,
    "terms": {"stopwords": None, "stemmer": None},
    "method": None, "rrf_c": None, "weights": None, "similarities": None, "question_similarities": None,
    "rerank": {"endpoint": None, "model": None, "depth": None, "scores": None},
    "embedding": {"endpoint": None, "model": None},
}
REFERENCE = {"doc": None, "start": None, "end": None, "content": None}
QUESTION = {"id": None, "query": None, "references": [REFERENCE]}
# `simulate`'s request (api.simulate)
REQUEST = {
    "documents": [DOCUMENT], "query": None, "chunking": Chunking, "retrieval": RETRIEVAL,
    "span": {"doc": None, "start": None, "end": None}, "fact": {"doc": None, "name": None, "value": None},
    "price_per_million": None, "tokenizer": None, "wire": None, "scores": None,
    "questions": [QUESTION], "map": {"sizes": None, "overlaps": None},
    "find": None, "cuts": None, "sweep": None, "expand": {"neighbours": None, "section": None},
    "semantic_vectors": [{"key": None, "vectors": None, "dimension": None, "f32": None}], "semantic_have": None,
    "answers": None,  # the answers wanted (wire.answers), checked by its reader
}
# the corpus audit's request (audit.audit)
AUDIT_REQUEST = {"documents": [DOCUMENT], "chunking": Chunking, "retrieval": RETRIEVAL, "overlaps": None,
                 "precision_k": None}


def check(request, shape: dict = REQUEST) -> None:
    """RequestError naming the first key `shape` does not know, at any depth; nothing for a request
    that is not an object (its reader says so)."""
    _object(request, shape, "", "the request")


def _object(obj, shape: dict, path: str, what: str) -> None:
    if not isinstance(obj, dict):
        return
    for key, value in obj.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in shape:
            _refuse(where, str(key), list(shape), path, what)
        _value(value, shape[key], where, key)


def _value(value, shape, where: str, key: str) -> None:
    if shape is Chunking:
        _chunking(value, where)
    elif isinstance(shape, dict):
        _object(value, shape, where, where)
    elif isinstance(shape, list) and isinstance(value, list):
        for i, item in enumerate(value):
            _object(item, shape[0], f"{where}[{i}]", f"{where}[{i}]")


def _chunking(chunking, where: str) -> None:
    if not isinstance(chunking, dict):
        return
    strategy = chunking.get("strategy", "window")
    fields = CHUNKING_FIELDS.get(strategy) if isinstance(strategy, str) else None
    if fields is None:  # an unknown strategy: the splitter names the known ones
        return
    for key in chunking:
        if key != "strategy" and key not in fields:
            _refuse(f"{where}.{key}", str(key), ["strategy", *fields], where, f"the {strategy} splitter")


def _refuse(where: str, key: str, known: list, parent: str, what: str) -> None:
    near = ALIASES.get(key) if ALIASES.get(key) in known else None
    near = near or next(iter(difflib.get_close_matches(key, known, n=1)), None)
    prefix = f"{parent}." if parent else ""
    if near is not None:
        raise RequestError(where, f"{where} is not a field of {what}; perhaps you meant {prefix}{near}.")
    listed = ", ".join(known) if known else "no fields"
    raise RequestError(where, f"{where} is not a field of {what}, which takes {listed}.")
