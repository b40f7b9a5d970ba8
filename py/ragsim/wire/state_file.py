"""The page's "Download state" file (assets/js/persist.js `toSaved`) as a request, so the command line
takes that file as it is: `python -m ragsim < ragsim-state.json`, `python -m ragsim eval ragsim-state.json`.

The file holds `{ragsim: "state", version: 1, docs: [{id, title, text}], sel, settings: {name: value},
span, fact, questions, ...}`, with the page's parameter names and offsets in UTF-16 code units. The
request is built as the page's `buildRequest` (assets/js/params.js) builds it: each setting goes to
its request field when it applies to the splitter or retriever chosen, converted as the page does,
and the marks and questions are turned into code points. The investigation panels' questions (find,
cuts, expand) are left out: the verdict, the numbers and the question set are the same.
"""

import json

from ragsim.errors import RequestError

LANGCHAIN = ("langchain-character", "langchain-recursive")
TOKEN_STRATEGIES = ("langchain-token", "llamaindex-sentence", "llamaindex-token")
LLAMAINDEX_SIZED = ("llamaindex-sentence", "llamaindex-token")
OWN_UNIT = ("window", "sentences")
# the semantic chunkers (SPEC section 12): no overlap; LangChain's and LlamaIndex's no size either
CHROMA = ("chroma-cluster", "chroma-kamradt")
UNSIZED = ("llamaindex-markdown", "langchain-semantic", "llamaindex-semantic")


def _json(v):
    return json.loads(v) if isinstance(v, str) else v


def _keep(v):
    return {"true": True, "false": False}.get(v, v) if isinstance(v, str) else v


def _tokenizer_applies(s):
    strategy = s["strategy"]
    if strategy == "window":
        return s["unit"] == "tokens"
    if strategy == "langchain-recursive":
        return s["length"] == "tokens"
    return strategy in TOKEN_STRATEGIES or strategy in CHROMA


# (setting, request field, default, {strategy: default}, strategies, when, wire): params.js's PARAMS rows
# that reach the core's request; `wire` returns None for "leave the field out".
ROWS = (
    ("unit", "chunking.unit", "words", {}, OWN_UNIT, None, None),
    ("split_by", "chunking.split_by", "word", {}, ("haystack",), None, None),
    ("length", "chunking.length", "chars", {}, ("langchain-recursive",), None, lambda v: v if v == "tokens" else None),
    ("tokenizer", "chunking.tokenizer", "cl100k_base", {}, ("window", "langchain-recursive", *TOKEN_STRATEGIES, *CHROMA),
     _tokenizer_applies, None),
    ("size", "chunking.size", 24, {"langchain-character": 4000, "langchain-recursive": 4000, "haystack": 200,
                                   "sentences": 40, "langchain-token": 4000, "llamaindex-sentence": 1024,
                                   "llamaindex-token": 1024, "chroma-cluster": 400, "chroma-kamradt": 400}, None,
     lambda s: s["strategy"] not in UNSIZED, None),
    ("overlap", "chunking.overlap", 6, {"langchain-character": 200, "langchain-recursive": 200, "haystack": 0,
                                        "sentences": 10, "langchain-token": 200, "llamaindex-sentence": 200,
                                        "llamaindex-token": 20}, None, lambda s: s["strategy"] not in (*UNSIZED, *CHROMA),
     None),
    ("split_threshold", "chunking.split_threshold", 0, {}, ("haystack",), None, None),
    ("language", "chunking.language", "", {}, ("langchain-recursive",), None, lambda v: v or None),
    ("separators", "chunking.separators", '["\\n\\n", "\\n", " ", ""]', {}, ("langchain-recursive",),
     lambda s: not s["language"], _json),
    ("separator", "chunking.separator", '"\\n\\n"', {"llamaindex-sentence": '" "', "llamaindex-token": '" "'},
     ("langchain-character", *LLAMAINDEX_SIZED), None, _json),
    ("paragraph_separator", "chunking.paragraph_separator", '"\\n\\n\\n"', {}, ("llamaindex-sentence",), None, _json),
    ("secondary_chunking_regex", "chunking.secondary_chunking_regex", json.dumps("[^,.;。？！]+[,.;。？！]?|[,.;。？！]"),
     {}, ("llamaindex-sentence",), None, _json),
    ("backup_separators", "chunking.backup_separators", '["\\n"]', {}, ("llamaindex-token",), None, _json),
    ("metadata", "chunking.metadata", json.dumps("file_path: data/document.txt"), {}, LLAMAINDEX_SIZED, None,
     lambda v: _json(v) or None),
    ("is_separator_regex", "chunking.is_separator_regex", False, {}, LANGCHAIN,
     lambda s: not (s["strategy"] == "langchain-recursive" and s["language"]), None),
    ("keep_separator", "chunking.keep_separator", "false", {"langchain-recursive": "true"}, LANGCHAIN, None, _keep),
    ("strip_whitespace", "chunking.strip_whitespace", True, {}, LANGCHAIN, None, None),
    ("buffer_size", "chunking.buffer_size", 1, {}, ("langchain-semantic", "llamaindex-semantic"), None, None),
    ("breakpoint_threshold_type", "chunking.breakpoint_threshold_type", "percentile", {}, ("langchain-semantic",), None,
     None),
    ("breakpoint_threshold_amount", "chunking.breakpoint_threshold_amount", 95, {}, ("langchain-semantic",), None, None),
    ("breakpoint_percentile_threshold", "chunking.breakpoint_percentile_threshold", 95, {}, ("llamaindex-semantic",),
     None, None),
    ("number_of_chunks", "chunking.number_of_chunks", 0, {}, ("langchain-semantic",), None, lambda v: v or None),
    ("min_chunk_size", "chunking.min_chunk_size", 0, {"chroma-cluster": 50, "chroma-kamradt": 50},
     ("langchain-semantic", *CHROMA), None, lambda v: v or None),
    ("sentence_split_regex", "chunking.sentence_split_regex", json.dumps("(?<=[.?!])\\s+"), {}, ("langchain-semantic",),
     None, _json),
    ("k", "retrieval.k", 2, {}, None, None, None),
    ("method", "retrieval.method", "bm25", {}, None, None, lambda v: None if v == "bm25" else v),
    ("rrf_c", "retrieval.rrf_c", 60, {}, None, lambda s: s["method"] == "hybrid", None),
    ("w_bm25", "retrieval.weights.0", 0.5, {}, None, lambda s: s["method"] == "hybrid", None),
    ("w_dense", "retrieval.weights.1", 0.5, {}, None, lambda s: s["method"] == "hybrid", None),
    ("variant", "retrieval.variant", "lucene", {}, None, None, None),
    ("k1", "retrieval.k1", 1.2, {}, None, None, None),
    ("b", "retrieval.b", 0.75, {}, None, None, None),
    ("delta", "retrieval.delta", 0.5, {}, None, lambda s: s["variant"] in ("bm25l", "bm25+"), None),
    ("stopwords", "retrieval.terms.stopwords", False, {}, None, None, lambda v: "english" if v else None),
    ("stem", "retrieval.terms.stemmer", False, {}, None, None, lambda v: "snowball-english" if v else None),
)
OTHER = {"q": "", "strategy": "window", "count": "", "price": 3}


def is_state(obj) -> bool:
    """Whether a parsed JSON value is the page's state file."""
    return isinstance(obj, dict) and obj.get("ragsim") == "state"


def settings(state: dict) -> dict:
    """Every setting the request needs: the file's, else the page's default (by splitter where it has one)."""
    given = state.get("settings") if isinstance(state.get("settings"), dict) else {}
    s = {name: given.get(name, default) for name, default in OTHER.items()}
    for name, _, default, by_strategy, *_ in ROWS:
        s[name] = given.get(name, by_strategy.get(s["strategy"], default))
    return s


def to_request(state: dict) -> dict:
    """The request the page builds from this state (RequestError when the file cannot be one)."""
    if state.get("version") != 1:
        raise RequestError("version", "This state file is of another version; save it again with the page's \"Download state\".")
    docs = state.get("docs")
    if not isinstance(docs, list) or not docs or not all(isinstance(d, dict) and isinstance(d.get("text"), str)
                                                         and isinstance(d.get("id"), str) for d in docs):
        raise RequestError("docs", "The state file's docs must be a list of {id, title, text}; save it again with the page.")
    documents = [{"id": d.get("id"), "title": d.get("title", ""), "text": d["text"]} for d in docs]
    s = settings(state)
    request = {"documents": documents, "query": s["q"], "chunking": {"strategy": s["strategy"]}, "retrieval": {}}
    for name, field, _, _, strategies, when, wire in ROWS:
        if (strategies and s["strategy"] not in strategies) or (when and not when(s)):
            continue
        try:
            value = wire(s[name]) if wire else s[name]
        except (ValueError, RecursionError):  # a setting the page keeps as JSON text that is none
            raise RequestError(f"settings.{name}", f"The state file's {name} is not the JSON text the page writes; "
                                                   "save the state again with the page.") from None
        if value is not None:
            _put(request, field, value)
    if "weights" in request["retrieval"]:
        w = request["retrieval"]["weights"]
        request["retrieval"]["weights"] = [w.get("0"), w.get("1")]
    request["price_per_million"] = s["price"]
    if s["count"]:
        request["tokenizer"] = s["count"]
    texts = {d["id"]: d["text"] for d in documents}
    sel = state.get("sel") if isinstance(state.get("sel"), int) and 0 <= state.get("sel") < len(docs) else 0
    request["span"] = _span(state.get("span"), texts, documents[sel]["id"])
    request["fact"] = _fact(state.get("fact"), texts)
    questions = _questions(state.get("questions"), texts)
    if questions:
        request["questions"] = questions
    return request


def _put(request: dict, field: str, value) -> None:
    path = field.split(".")
    at = request
    for key in path[:-1]:
        at = at.setdefault(key, {})
    at[path[-1]] = value


def code_point(text: str, u16: int) -> int:
    """A UTF-16 offset into `text` as a code-point offset (the page's offsetMap.toCp)."""
    return len(text.encode("utf-16-le", "surrogatepass")[: 2 * u16].decode("utf-16-le", "surrogatepass"))


def _fits(text, x) -> bool:
    return (isinstance(x, dict) and all(type(x.get(k)) is int for k in ("start", "end"))
            and 0 <= x["start"] < x["end"] <= len(text.encode("utf-16-le", "surrogatepass")) // 2)


def _cp(text: str, x: dict) -> tuple[int, int]:
    return code_point(text, x["start"]), code_point(text, x["end"])


def _names_one(doc, texts: dict) -> bool:
    """Whether a mark's `doc` is the id of one of the documents (a file may hold any JSON there)."""
    return isinstance(doc, str) and doc in texts


def _span(span, texts: dict, selected):
    if not isinstance(span, dict):
        return None
    doc = span.get("doc") if span.get("doc") is not None else selected
    if not _names_one(doc, texts) or not _fits(texts[doc], span):
        return None
    start, end = _cp(texts[doc], span)
    return {"doc": doc, "start": start, "end": end}


def _fact(fact, texts: dict):
    if not isinstance(fact, dict) or not _names_one(fact.get("doc"), texts):
        return None
    text = texts[fact["doc"]]
    if not (_fits(text, fact.get("name")) and _fits(text, fact.get("value"))):
        return None
    return {"doc": fact["doc"], "name": list(_cp(text, fact["name"])), "value": list(_cp(text, fact["value"]))}


def _questions(questions, texts: dict) -> list:
    """The scorable questions (question-wire.js questionsForRequest): references that still fit, in code points."""
    out = []
    for q in questions if isinstance(questions, list) else []:
        if not isinstance(q, dict) or not isinstance(q.get("refs"), list):
            continue
        refs = [{"doc": r["doc"], "start": a, "end": z} for r in q["refs"]
                if isinstance(r, dict) and _names_one(r.get("doc"), texts) and _fits(texts[r["doc"]], r)
                for a, z in [_cp(texts[r["doc"]], r)] if texts[r["doc"]][a:z].strip()]
        if refs:
            out.append({"id": q.get("id"), "query": q.get("query", ""), "references": refs})
    return out
