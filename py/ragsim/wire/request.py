"""Step 1 of `api.simulate`: read and check a request (SPEC section 6) into a plain `Request`.

Every field is checked here except `chunking`, whose fields each splitter checks itself (the
strategy decides which fields exist); the optional questions (find, cuts, sweep, expand) are read
by `read_questions`, after the simulation, so a bad question never hides a bad setting.
"""

from dataclasses import dataclass, field

from ragsim.text import analyzers, tokens
from ragsim.rank import bm25, dense
from ragsim.rank import ranking
from ragsim import limits
from ragsim.judge import spans
from ragsim.errors import RequestError
from ragsim.text.extents import Split
from ragsim.split.semantic_split import read_have, read_vectors
from ragsim.fields import get_choice, get_int, get_number, get_str, shown
from ragsim.text.index import terms

DEFAULT_PRICE = 3.0
# How the response carries its chunks: SPEC section 6's list of objects, or (asked for by the page's
# worker, which rebuilds the objects in JavaScript) the same values as columns, `chunk_columns`, or
# packed bytes, `chunk_bytes` (encode.chunk_bytes, docs/wire.md).
WIRES = ("objects", "columns", "binary")
# On the binary wire, "top" leaves the score column out: only the top k's and the ranked chunks'
# scores are sent, so a move scores only the chunks that can reach the top k (ranking.MaxScore).
SCORES = ("all", "top")
# The least k1 above 0: k1 times the length norm (1 - b + b * dl / avgdl, at least about
# 1e-7 for a chunk with a term among 10 million characters) must not underflow to 0, or BM25+'s
# tfc divides 0 by 0 for a chunk without the term (5e-324 did). No one tunes k1 below 0.000001; b and
# delta are never alone in a denominator (b = 1 with an empty chunk is refused by bm25.check_lengths).
MIN_K1 = 1e-6


@dataclass(frozen=True)
class Asks:
    """The answers a request wants, as `wire.answers.read_asks` reads them: `wanted` (answer names
    in the order of its table, the verdict first) and `inputs`, the request fields those answers
    read, as sent (each is checked by its answer's writer, after the simulation)."""

    wanted: tuple = ("verdict",)
    inputs: dict = field(default_factory=dict)


@dataclass
class Request:
    """A request whose fields have been checked; `docs` are `{id, title, text}` dicts."""

    docs: list[dict]
    query: str
    query_terms: list[str]
    chunking: dict
    k: int
    variant: str
    k1: float
    b: float
    delta: float
    analyzer: object  # analyzers.read_terms: None or a callable with a `key`
    span: tuple | None  # (doc position, start, end)
    fact: tuple | None  # (doc position, (name start, end), (value start, end))
    price: float
    wire: str
    retriever: dense.Options = dense.Options()  # SPEC section 10: bm25, dense or hybrid (default BM25)
    tokenizer: str | None = None  # SPEC section 9: exact context_tokens and cost (ragsim.tokens)
    scores: str = "all"  # "top": the binary wire without the score column (docs/wire.md)
    given: list | None = None  # chunking "stored": each document's chunks as a Split (SPEC section 11)
    semantic_vectors: dict | None = None  # SPEC section 12: key -> the vectors of its texts (semantic_needs)
    semantic_have: frozenset = frozenset()  # SPEC section 12: the keys whose curve the caller holds
    asks: Asks = field(default_factory=Asks)  # the answers wanted (wire.answers): the verdict alone unless read


@dataclass
class Questions:
    """The optional questions, each asked by one request field (None when not asked)."""

    find: str | None
    cuts: bool
    sweep: list[int] | None
    expand: tuple[int, bool] | None  # (neighbours, whole section)


def read_request(request) -> Request:
    """The checked request, or RequestError naming the first wrong field (in the order below)."""
    if not isinstance(request, dict):
        raise RequestError("request", "The request must be a JSON object.")
    docs = read_documents(request)
    query = get_str(request, "query", "query", default="")
    limits.check_query(query)
    chunking = _read_chunking(request)
    retrieval = _read_retrieval(request)
    span = _read_span(request, docs)
    fact = _read_fact(request, docs)
    price = get_number(request, "price_per_million", "price_per_million", default=DEFAULT_PRICE, minimum=0,
                       maximum=1_000_000)
    wire = get_choice(request, "wire", "wire", WIRES, default="objects")
    scores = get_choice(request, "scores", "scores", SCORES, default="all")
    given = read_given(chunking, docs)
    vectors = request.get("semantic_vectors")
    vectors = None if vectors is None else read_vectors(vectors)
    have = request.get("semantic_have")
    have = frozenset() if have is None else read_have(have)
    if scores == "top" and wire != "binary":
        raise RequestError("scores", 'scores "top" leaves out the score column of the binary wire; '
                                     'ask for "wire": "binary" too, or leave scores out.')
    return Request(
        docs=docs, query=query, query_terms=query_terms_for(query, retrieval["analyzer"]), chunking=chunking,
        k=retrieval["k"], variant=retrieval["variant"], k1=retrieval["k1"], b=retrieval["b"],
        delta=retrieval["delta"], analyzer=retrieval["analyzer"], span=span, fact=fact, price=price, wire=wire,
        retriever=retrieval["dense"], tokenizer=tokens.request_tokenizer(request), scores=scores,
        given=given, semantic_vectors=vectors, semantic_have=have,
    )


def read_documents(request: dict) -> list[dict]:
    docs = request.get("documents")
    if not isinstance(docs, list):
        raise RequestError("documents", "Give documents as a list of {id, title, text} objects.")
    if not docs:
        raise RequestError("documents", "Add at least one document to simulate.")
    seen = set()
    out = []
    for i, d in enumerate(docs):
        where = f"documents[{i}]"
        if not isinstance(d, dict):
            raise RequestError(where, f"{where} must be an object with id, title and text.")
        doc_id = get_str(d, "id", f"{where}.id")
        if doc_id in seen:
            raise RequestError(f"{where}.id", f"Document ids must be unique; {shown(doc_id)} appears twice.")
        seen.add(doc_id)
        out.append({
            "id": doc_id,
            "title": get_str(d, "title", f"{where}.title", default=""),
            "text": get_str(d, "text", f"{where}.text"),
        })
    limits.check_texts(out)
    return out


def _find_doc(docs: list[dict], doc_id, where: str) -> int:
    for i, d in enumerate(docs):
        if d["id"] == doc_id:
            return i
    raise RequestError(where, f"No document has the id {shown(doc_id)}; use one of the documents' ids.")


def _read_span(request: dict, docs: list[dict]):
    span = request.get("span")
    if span is None:
        return None
    if not isinstance(span, dict):
        raise RequestError("span", "Give span as {doc, start, end} or null.")
    d = _find_doc(docs, span.get("doc"), "span.doc")
    start = get_int(span, "start", "span.start", minimum=0)
    end = get_int(span, "end", "span.end", minimum=0)
    return (d, *spans.trim(docs[d]["text"], start, end, "span"))


def _read_pair(fact: dict, key: str, text: str) -> tuple[int, int]:
    pair = fact.get(key)
    where = f"fact.{key}"
    if not isinstance(pair, list) or len(pair) != 2:
        raise RequestError(where, f"Give {where} as [start, end].")
    start = get_int({"v": pair[0]}, "v", where, minimum=0)
    end = get_int({"v": pair[1]}, "v", where, minimum=0)
    return spans.trim(text, start, end, where)


def _read_fact(request: dict, docs: list[dict]):
    fact = request.get("fact")
    if fact is None:
        return None
    if not isinstance(fact, dict):
        raise RequestError("fact", "Give fact as {doc, name: [start, end], value: [start, end]} or null.")
    d = _find_doc(docs, fact.get("doc"), "fact.doc")
    name = _read_pair(fact, "name", docs[d]["text"])
    value = _read_pair(fact, "value", docs[d]["text"])
    if name[0] < value[1] and value[0] < name[1]:
        raise RequestError("fact.value", "The name and the value overlap; mark them as two separate pieces of text.")
    return d, name, value


def read_retrieval_options(r: dict) -> dict:
    """Everything of `retrieval` but k: the variant, its parameters and the term analyzer."""
    if not isinstance(r, dict):
        raise RequestError("retrieval", "Give retrieval as an object, e.g. {\"k\": 3, \"variant\": \"lucene\"}.")
    out = {
        "variant": get_choice(r, "variant", "retrieval.variant", tuple(bm25.VARIANTS), default="lucene"),
        "k1": get_number(r, "k1", "retrieval.k1", default=1.2, minimum=0, maximum=1000),
        "b": get_number(r, "b", "retrieval.b", default=0.75, minimum=0, maximum=1),
        "delta": get_number(r, "delta", "retrieval.delta", default=0.5, minimum=0, maximum=1000),
        "analyzer": analyzers.read_terms(r),
    }
    if 0 < out["k1"] < MIN_K1:
        raise RequestError("retrieval.k1", f"retrieval.k1 must be 0 or at least {MIN_K1:g} (got {out['k1']:g}): a "
                           "smaller k1 times a chunk's length norm rounds to 0 and the formula divides by it; "
                           "raise k1 or set it to 0.")
    bm25.check_parameters(out["variant"], out["k1"], out["b"], out["delta"])
    return out


def _read_retrieval(request: dict) -> dict:
    r = request.get("retrieval")
    if not isinstance(r, dict):
        raise RequestError("retrieval", "Give retrieval as an object with at least k.")
    return {"k": get_int(r, "k", "retrieval.k", minimum=1), **read_retrieval_options(r),
            "dense": dense.read_options(r)}


def query_terms_for(query: str, analyzer) -> list[str]:
    """The query's terms, mapped by the same analyzer as the documents' (SPEC section 3)."""
    ts = terms(query)
    return analyzer(ts) if analyzer is not None else ts


def _read_chunking(request: dict) -> dict:
    c = request.get("chunking")
    if not isinstance(c, dict):
        raise RequestError("chunking", "Give chunking as an object with unit, size and overlap.")
    return c


STORED = "stored"  # chunking.strategy for chunks read back from an index: extents given, not computed


def read_given(chunking: dict, docs: list[dict]) -> list | None:
    """`{"strategy": "stored", "chunks": {doc id: [[start, end], ...]}}`: each document's chunks as a
    `Split` (unit chars, in document order), None for any other strategy. Chunks read back from an
    index are placed in their documents first (ragsim.judge.stored); a document not named has none."""
    if chunking.get("strategy") != STORED:
        return None
    extents = chunking.get("chunks")
    ids = {d["id"] for d in docs}
    if not isinstance(extents, dict) or not all(isinstance(k, str) for k in extents):
        raise RequestError("chunking.chunks", 'Give the stored chunks as {"<document id>": [[start, end], ...]}.')
    unknown = [k for k in extents if k not in ids]
    if unknown:
        raise RequestError("chunking.chunks", f"chunking.chunks names a document that is not in the request "
                           f"({shown(unknown[0])}); use the documents' ids.")
    total = sum(len(v) for v in extents.values() if isinstance(v, list))
    limits.check_chunks(total)
    out = []
    for d in docs:
        pairs = extents.get(d["id"], [])
        n = len(d["text"])
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) and 0 <= p[0] < p[1] <= n
                for p in pairs):
            raise RequestError("chunking.chunks", f"Each stored chunk of {shown(d['id'])} must be [start, end] with "
                               f"0 <= start < end <= {n:,} (the document's length in code points).")
        ordered = sorted(map(tuple, pairs))
        out.append(Split([(s, e, e - s) for s, e in ordered], "chars", n))
    return out


def read_questions(request: dict) -> Questions:
    """The optional questions; each is checked only when asked."""
    phrase = request.get("find")
    if phrase is not None and (not isinstance(phrase, str) or not phrase.strip()):
        raise RequestError("find", "Type a phrase to look for in the index.")
    sweep = request.get("sweep")
    if sweep is not None and (
        not isinstance(sweep, list) or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in sweep)
    ):
        raise RequestError("sweep", "Give sweep as a list of overlaps (whole numbers, at least 0).")
    return Questions(find=phrase, cuts=bool(request.get("cuts")), sweep=None if sweep is None else sweep[:50],
                     expand=_read_expand(request.get("expand")))


def _read_expand(expand):
    if expand is None:
        return None
    if not isinstance(expand, dict):
        raise RequestError("expand", 'Give expand as {"neighbours": n} or {"section": true}.')
    section = expand.get("section", False)
    if not isinstance(section, bool):
        raise RequestError("expand.section", "expand.section must be true or false.")
    return get_int(expand, "neighbours", "expand.neighbours", default=0, minimum=0), section
