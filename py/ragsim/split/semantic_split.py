"""Semantic chunkers as splitters (SPEC section 12): where their vectors come from, what is kept.

`ragsim.split.semantic` cuts, purely, from vectors it is handed. This module gives those cutters the
splitter shape (`split(doc, chunking, embeddings) -> Split`) and finds the vectors, as dense
retrieval finds its cosines:

1. `Embeddings.kept`: a session keeps `semantic.prepare`'s result (sentences and distances) per
   `key(text, chunking)`, so a move of a threshold, a percentile or a minimum size re-cuts from it;
2. else the request's `semantic_vectors` for that key (the page's embedding worker computed them);
3. else a registered host embeds the texts (`register_host`; `ragsim.host.register()` registers
   CPython's onnxruntime all-MiniLM-L6-v2), in batches;
4. else the split is pending: no chunks, and the response's `semantic_needs` names the texts to embed.

The key is the sha1 of the strategy, the model, the fields that change the texts to embed (with the
library's defaults filled in) and the text, so it is stable across requests and across sessions.
"""

import array
import base64
import binascii
import hashlib
import json
import sys
from collections import OrderedDict

from ragsim import limits
from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.split import semantic, semantic_chunks
from ragsim.split.semantic_langchain import LANGCHAIN_SENTENCE_REGEX
from ragsim.text.extents import Split

MODEL = "all-MiniLM-L6-v2"  # SPEC section 10's model: what the hosts embed with
# The fields that change the texts to embed, with the library's defaults (docs/semantic.md's table):
# every other field re-cuts from what is kept.
EMBED_FIELDS = {
    "langchain-semantic": (("sentence_split_regex", LANGCHAIN_SENTENCE_REGEX), ("buffer_size", 1)),
    "llamaindex-semantic": (("buffer_size", 1),),
    "chroma-cluster": (("min_chunk_size", 50), ("tokenizer", "cl100k_base")),
    "chroma-kamradt": (("min_chunk_size", 50), ("tokenizer", "cl100k_base")),
}
UNITS = {"langchain-semantic": "characters", "llamaindex-semantic": "characters",
         "chroma-cluster": "tokens", "chroma-kamradt": "tokens"}
BATCH = 256  # texts per call to the host: its progress is visible and its memory bounded
KEPT = 16  # documents x embedding settings a session keeps


def key(text: str, chunking: dict) -> str:
    """The name of a text's vectors at this setting: 40 hex digits."""
    return _key(text, _named(chunking))


def _named(chunking: dict) -> str:
    name = chunking.get("strategy")
    fields = {f: chunking.get(f, default) for f, default in EMBED_FIELDS[name]}
    return json.dumps([name, MODEL, fields], sort_keys=True)


def _key(text: str, named: str) -> str:
    digest = hashlib.sha1(named.encode())
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# The embedder used when a request brings no vectors: a host registers it (CPython's is onnxruntime's,
# registered by `ragsim.host.register()`); the page's worker sends `semantic_vectors` instead.
HOSTS: list = []


def register_host(make) -> None:
    """Make `make()` (an object with `embed(texts) -> vectors`, one per text) the embedder of last resort."""
    HOSTS[:] = [make]


def _host():
    if not HOSTS:
        return None
    try:
        return HOSTS[0]()
    except ImportError as exc:
        raise RequestError("chunking.strategy", "Semantic chunking needs onnxruntime here: in the ragsim checkout, "
                           ".venv/bin/pip install -e \".[dense]\".") from exc
    except Exception as exc:  # embed_onnx.DenseUnavailable, or the model failing to load
        message = str(exc) or type(exc).__name__
        raise RequestError("chunking.strategy", message if message.endswith(".") else message + ".") from exc


def read_vectors(entries) -> dict:
    """The request's `semantic_vectors`: `[{"key": K, "vectors": [[...], ...]}]` or, faster to pass
    through Pyodide, `[{"key": K, "dimension": d, "f32": base64 of little-endian float32}]`."""
    field = "semantic_vectors"
    if not isinstance(entries, list):
        raise RequestError(field, f'Give {field} as a list of {{"key": ..., "vectors": [[...], ...]}} (got {shown(entries)}).')
    out = {}
    for i, e in enumerate(entries):
        where = f"{field}[{i}]"
        if not isinstance(e, dict) or set(e) not in ({"key", "vectors"}, {"key", "dimension", "f32"}):
            raise RequestError(where, f'Give {where} as {{"key", "vectors"}} or {{"key", "dimension", "f32"}}.')
        k = e["key"]
        if not _is_key(k):
            raise RequestError(f"{where}.key", f"{where}.key must be a key from semantic_needs (40 hex digits, got {shown(k)}).")
        out[k] = _flat(e, where) if "f32" in e else _rows(e["vectors"], f"{where}.vectors")
    return out


def read_have(keys) -> frozenset:
    """The request's `semantic_have`: the keys whose curve (`distances`, `positions`) the caller
    already holds, so the response leaves them out for those (`trimmed`)."""
    field = "semantic_have"
    if not isinstance(keys, list) or len(keys) > HAVE:
        raise RequestError(field, f"Give {field} as a list of at most {HAVE} keys from earlier responses' "
                           f"documents[i].semantic.key (got {shown(keys)}).")
    for i, k in enumerate(keys):
        if not _is_key(k):
            raise RequestError(f"{field}[{i}]", f"{field}[{i}] must be a key from documents[i].semantic.key "
                               f"(40 hex digits, got {shown(k)}).")
    return frozenset(keys)


def _is_key(k) -> bool:
    return isinstance(k, str) and len(k) == 40 and all(c in "0123456789abcdef" for c in k)


# What a curve leaves out where the caller holds it: the same for every threshold of a key.
HELD = ("distances", "positions")
HAVE = 64  # keys one request may say it holds


def trimmed(curve: dict) -> dict:
    """A document's curve without what `semantic_have` says the caller holds: `threshold`, `cuts`,
    `count` (and `gradient`, for LangChain's gradient rule) stay."""
    return {k: v for k, v in curve.items() if k not in HELD}


# The largest float32: a model's vectors are float32 (as `f32` carries them), and past it the products of
# a cosine overflow a float.
FLOAT32_MAX = 3.4028234663852886e38


def _rows(vectors, where: str) -> list:
    if not isinstance(vectors, list):
        raise RequestError(where, f"Give {where} as a list of vectors, one per text semantic_needs named.")
    dim = None
    for j, v in enumerate(vectors):
        ok = isinstance(v, list) and v and all(type(x) in (int, float) and -FLOAT32_MAX <= x <= FLOAT32_MAX for x in v)
        if not ok:
            raise RequestError(where, f"{where}[{j}] must be a non-empty list of finite numbers (float32's range, as "
                               "a model's vectors are).")
        if dim is None:
            dim = len(v)
        elif len(v) != dim:
            raise RequestError(where, f"Every vector of {where} must have one dimension ({dim}; {where}[{j}] has {len(v)}).")
    return vectors


def _flat(e: dict, where: str) -> list:
    dim, data = e["dimension"], e["f32"]
    if type(dim) is not int or dim < 1:
        raise RequestError(f"{where}.dimension", f"{where}.dimension must be a whole number of at least 1 (got {shown(dim)}).")
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else None
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or len(raw) % (4 * dim):
        raise RequestError(f"{where}.f32", f"{where}.f32 must be base64 of little-endian float32 values, "
                           f"{dim} per vector.")
    values = array.array("f")
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    flat = values.tolist()
    if any(x - x != 0 for x in flat):
        raise RequestError(f"{where}.f32", f"{where}.f32 holds a NaN or an infinity; send finite numbers.")
    return [flat[i:i + dim] for i in range(0, len(flat), dim)]


class Embeddings:
    """What a session keeps of semantic chunking: per key, `semantic.prepare`'s result (at most
    `limit` of them, and at most `limits.CACHE_CHUNKS` sentences together); for the request being
    answered, the vectors it brought (`given`) and the texts still to embed (`needs`, by key)."""

    def __init__(self, limit: int = KEPT):
        self.kept: OrderedDict = OrderedDict()
        self.limit, self.weights = limit, {}
        self.given: dict = {}
        self.needs: dict = {}
        self.fresh: set = set()  # the keys prepared for the request being answered (their curve goes whole)
        self.embedded = 0  # texts the host embedded, for the tests and the benchmark
        self.keys: OrderedDict = OrderedDict()  # (setting, text) -> key: a move hashes no text again

    def key(self, text: str, chunking: dict) -> str:
        """`key(text, chunking)`, remembered for the last `limit` texts and settings."""
        named = _named(chunking)
        got = self.keys.get((named, text))
        if got is None:
            got = self.keys[named, text] = _key(text, named)
            while len(self.keys) > self.limit:
                self.keys.popitem(last=False)
        return got

    def begin(self, given: dict | None) -> None:
        """A new request: its vectors (`read_vectors`), nothing needed yet."""
        self.given, self.needs, self.fresh = given or {}, {}, set()

    def prepared(self, text: str, chunking: dict, k: str):
        """The kept preparation of `text` at `chunking`, made from the request's vectors or the
        host's; None (and the texts noted in `needs`) when neither has them."""
        got = self.kept.get(k)
        if got is not None:
            self.kept.move_to_end(k)
            return got
        vectors = self.given.get(k)
        texts = None
        if vectors is None:
            texts = semantic.texts_to_embed(text, chunking)
            host = _host() if texts else None
            if texts and host is None:
                self.needs[k] = texts
                return None
            vectors = self._embed(host, texts) if texts else []
        try:
            got = semantic.prepare(text, chunking, vectors)
        except RequestError as e:
            if e.field != "vectors":
                raise
            raise RequestError("semantic_vectors", f"The vectors of key {k[:8]}...: {e.message}") from None
        self._keep(k, got)
        self.fresh.add(k)
        return got

    def _embed(self, host, texts: list) -> list:
        out = []
        for i in range(0, len(texts), BATCH):
            batch = host.embed(texts[i:i + BATCH])
            out.extend(batch.tolist() if hasattr(batch, "tolist") else batch)
        self.embedded += len(texts)
        return out

    def _keep(self, k: str, got) -> None:
        self.kept[k] = got
        self.weights[k] = len(got.spans)
        while len(self.kept) > 1 and (len(self.kept) > self.limit or sum(self.weights.values()) > limits.CACHE_CHUNKS):
            old, _ = self.kept.popitem(last=False)
            del self.weights[old]


class SemanticSplit(Split):
    """A semantic strategy's split: its chunks, and `semantic`, the curve (SPEC section 12) with
    the key and whether it is `pending`; `texts` are the library's chunk texts (re-joined)."""

    __slots__ = ("semantic", "texts")


def split(doc, chunking: dict, embeddings: Embeddings | None = None) -> Split:
    """Split `doc.text` by the semantic strategy `chunking` names, from kept or given vectors."""
    name = chunking.get("strategy")
    store = embeddings if embeddings is not None else Embeddings()
    text = doc.text
    k = store.key(text, chunking)
    kept = store.prepared(text, chunking, k)
    if kept is None:
        out = SemanticSplit([], UNITS[name], len(text))
        out.semantic = {"key": k, "pending": True, "count": len(store.needs[k]), "distances": [], "positions": [],
                        "threshold": None, "cuts": []}
        out.texts = []
        return out
    chunks, curve = semantic.recut_chunks(text, chunking, kept)
    units_in_document = len(text) if UNITS[name] == "characters" else sum(chunks.units)
    out = SemanticSplit.columns(chunks.starts, chunks.ends, chunks.units, UNITS[name], units_in_document,
                                semantic_chunks.word_ranges(doc, kept.spans, chunks))
    out.semantic = {"key": k, "pending": False, "count": len(kept.spans), **curve}
    out.texts = chunks.texts  # made when read: only the context's chunks are joined
    return out


def needs(ids: list, splits_semantic: list, store: Embeddings) -> list:
    """The response's `semantic_needs`: per pending document, its key, and the texts to embed."""
    out, named = [], set()
    for doc_id, sem in zip(ids, splits_semantic):
        if sem is not None and sem["pending"] and sem["key"] in store.needs and sem["key"] not in named:
            named.add(sem["key"])
            texts = store.needs[sem["key"]]
            out.append({"document": doc_id, "key": sem["key"], "count": len(texts), "texts": texts})
    return out
