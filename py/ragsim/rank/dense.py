"""Dense and hybrid retrieval (SPEC section 10): ranking, fusion and truncation, given similarities.

The core never runs the model. A host (CPython's `embed_onnx`, the page's worker with
transformers.js) embeds the query and the chunks and hands over one cosine similarity per chunk;
this module ranks by them, fuses the BM25 and dense rankings, and says which chunks the model reads
only in part (where it stops comes from `wordpiece`, the model's own tokenizer in pure Python).
"""

from dataclasses import dataclass

from ragsim.rank import bm25
from ragsim.rank import ranking, reranking
from ragsim.text import wordpiece
from ragsim.errors import RequestError
from ragsim.fields import get_choice, get_number

METHODS = ("bm25", "dense", "hybrid")
RRF_C = 60  # as LangChain's EnsembleRetriever and Elasticsearch's RRF
WEIGHTS = (0.5, 0.5)  # (BM25, dense)


def rank(similarities: list[float]) -> list[int]:
    """Chunk positions by similarity descending, ties by position (document order, chunk index)."""
    return ranking.rank(similarities)  # the same rule as BM25's; it handles negative scores


def ranks_of(order: list[int]) -> list[int]:
    """Per position, its 1-based rank in `order`."""
    ranks = [0] * len(order)
    for r, p in enumerate(order, 1):
        ranks[p] = r
    return ranks


def rrf(bm25_ranks: list[int], dense_ranks: list[int], c: float = RRF_C, weights=WEIGHTS) -> list[float]:
    """Reciprocal rank fusion over all chunks: w_bm25 / (c + rank_bm25) + w_dense / (c + rank_dense)."""
    w_bm25, w_dense = weights
    return [w_bm25 / (c + rb) + w_dense / (c + rd) for rb, rd in zip(bm25_ranks, dense_ranks)]


def scores_and_order(method: str, bm25_scores: list[float], similarities: list[float] | None,
                     c: float = RRF_C, weights=WEIGHTS) -> tuple[list[float], list[int]]:
    """The scores a method ranks by and the positions best first (ties by position)."""
    if method == "bm25":
        return bm25_scores, ranking.rank(bm25_scores)
    if method == "dense":
        return similarities, rank(similarities)
    fused = rrf(ranks_of(ranking.rank(bm25_scores)), ranks_of(rank(similarities)), c, weights)
    return fused, rank(fused)


def read_ends(texts, vocab: wordpiece.Vocab | None = None) -> list[int | None]:
    """Per chunk text: where the model stops reading it (code points into the text), or None when
    it reads all of it. A chunk with an end is `truncated`: its tail is invisible to dense retrieval."""
    return [wordpiece.read_end(t, vocab) for t in texts]


# ---------------------------------------------------------------------------------------------
# At the JSON boundary: the request's options and where the similarities come from (what is
# reported, `rerank`'s report and a question ranker's, wire.encode_dense writes into the response)


@dataclass(frozen=True)
class Options:
    """`retrieval.method`, `retrieval.rrf_c`, `retrieval.weights`, and the similarities the host
    sent with the request (`given`, None when it sent none)."""

    method: str = "bm25"
    c: float = RRF_C
    weights: tuple = WEIGHTS
    given: object = None
    by_query: object = None  # {query text: Given}: the host's cosines for the question set's queries
    rerank: object = None  # reranking.Options: a reranker over the first chunks (`retrieval.rerank`), or None
    embedding: dict | None = None  # the user's own model, {"endpoint", "model"}: None for all-MiniLM-L6-v2


def read_options(r: dict) -> Options:
    """The dense options of the request's `retrieval` object, or RequestError naming the field."""
    method = get_choice(r, "method", "retrieval.method", METHODS, default="bm25")
    c = get_number(r, "rrf_c", "retrieval.rrf_c", default=RRF_C, minimum=0, maximum=1_000_000)
    weights = r.get("weights", list(WEIGHTS))
    if (not isinstance(weights, list) or len(weights) != 2
            or not all(isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w <= 1 for w in weights)
            or not any(weights)):
        raise RequestError("retrieval.weights",
                           "Give retrieval.weights as [bm25, dense]: two numbers from 0 to 1, not both 0.")
    given = r.get("similarities")
    by_query = r.get("question_similarities")
    if by_query is not None and not (isinstance(by_query, dict) and all(isinstance(q, str) for q in by_query)):
        raise RequestError("retrieval.question_similarities",
                           "Give retrieval.question_similarities as {query: [[document id, start, end, similarity], ...]}.")
    return Options(method=method, c=c, weights=(float(weights[0]), float(weights[1])), embedding=read_embedding(r),
                   given=None if given is None else Given.read(given), rerank=reranking.read_options(r),
                   by_query=None if by_query is None else
                   {q: Given.read(v, f"retrieval.question_similarities[{q[:40]!r}]") for q, v in by_query.items()})


def read_embedding(r: dict) -> dict | None:
    """`retrieval.embedding`: the user's own model at an OpenAI-compatible endpoint,
    `{"endpoint": base URL, "model": name}`, or None (all-MiniLM-L6-v2)."""
    e = r.get("embedding")
    if e is None:
        return None
    ok = (isinstance(e, dict) and set(e) <= {"endpoint", "model"}
          and all(isinstance(e.get(f), str) and e[f].strip() and len(e[f]) <= 2000 for f in ("endpoint", "model")))
    if not ok:
        raise RequestError("retrieval.embedding", 'Give retrieval.embedding as {"endpoint": "http://localhost:11434/v1", '
                           '"model": "nomic-embed-text"}: the OpenAI-compatible base URL and the model\'s name.')
    return {"endpoint": e["endpoint"].strip(), "model": e["model"].strip()}


class Given:
    """Similarities a host computed before the request (the page's worker: its model runs
    asynchronously in JavaScript), by chunk (document id, start, end). Chunks it has no similarity
    for are collected in `missing`, for the host to embed and send with the next request."""

    def __init__(self, scores: dict):
        self.scores = scores
        self.missing: dict = {}  # (doc id, start, end) -> None, in the order first asked

    @classmethod
    def read(cls, entries, field: str = "retrieval.similarities") -> "Given":
        if not isinstance(entries, list):
            raise RequestError(field, f"Give {field} as a list of [document id, start, end, similarity].")
        scores = {}
        for i, e in enumerate(entries):
            ok = (isinstance(e, list) and len(e) == 4 and isinstance(e[0], str)
                  and all(isinstance(x, int) and not isinstance(x, bool) for x in e[1:3])
                  and isinstance(e[3], (int, float)) and not isinstance(e[3], bool) and -1.5 <= e[3] <= 1.5)
            if not ok:
                raise RequestError(f"{field}[{i}]",
                                   f"{field}[{i}] must be [document id, start, end, similarity from -1 to 1].")
            scores[(e[0], e[1], e[2])] = float(e[3])
        return cls(scores)

    def similarities(self, query: str, texts: list[str], keys: list) -> list[float] | None:
        """The similarities of the chunks `keys`, or None (and the keys noted) when some are missing."""
        out = [self.scores.get(k) for k in keys]
        if None in out:
            self.missing.update((k, None) for k, s in zip(keys, out) if s is None)
            return None
        return out


# The embedder used when a request brings no similarities: a host registers it (CPython's is
# onnxruntime's, registered by `ragsim.host.register()`, as `python -m ragsim` does); the page's worker
# passes the similarities in the request instead. The core never imports a host module.
HOSTS: list = []


def register_host(make) -> None:
    """Make `make()` (an object with `similarities(query, texts, keys)`) the embedder of last resort."""
    HOSTS[:] = [make]


def cpython_host():
    """The registered host's embedder; a sentence when there is none or it cannot start."""
    return _start_host(None)


def _start_host(embedding: dict | None):
    """The registered host's embedder, of the user's model when `embedding` names one."""
    if not HOSTS:
        raise RequestError("retrieval.method", "Dense retrieval needs the model's host, which this Python has not "
                           "loaded: call ragsim.host.register() first (python -m ragsim does), or pass retrieval.similarities.")
    try:
        return HOSTS[0]() if embedding is None else HOSTS[0](embedding)
    except ImportError as exc:  # a Python without the host module's own imports
        raise RequestError("retrieval.method",
                           "Dense retrieval needs onnxruntime here: in the ragsim checkout, .venv/bin/pip install -e \".[dense]\".") from exc
    except Exception as exc:  # embed_onnx.DenseUnavailable, or the model failing to load
        message = str(exc) or type(exc).__name__
        raise RequestError("retrieval.method", message if message.endswith(".") else message + ".") from exc


def rerank(options: Options, query: str, keys: list, texts: list[str], bm25_scores: list[float],
           session=None) -> tuple[list[float], list[int], dict]:
    """(scores, order, report) for a dense or hybrid request over chunks `keys` with `texts`.
    A host is any object with `similarities(query, texts, keys) -> list[float]` (cosines).

    The similarities come from the request (`options.given`), else from the session's host
    (`session.dense`, if a caller set one), else from CPython's onnxruntime host. When the request's
    similarities lack some chunks, the ranking is BM25's for now and the report says `pending`."""
    host = options.given or getattr(session, "dense", None) or _start_host(options.embedding)
    similarities = host.similarities(query, texts, keys)
    # where all-MiniLM-L6-v2 stops reading; another model (`truncates` False, or named in the
    # request) has its own limit, which ragsim does not know
    mini = getattr(host, "truncates", True) and options.embedding is None
    ends = read_ends(texts) if mini else [None] * len(texts)
    report = {"method": options.method, "pending": similarities is None, "read_ends": ends}
    if similarities is None:
        return bm25_scores, ranking.rank(bm25_scores), report
    scores, order = scores_and_order(options.method, bm25_scores, similarities, options.c, options.weights)
    return scores, order, report


def rerank_corpus(req, corpus, bm25_scores: list[float], session=None):
    """`rerank` over a pipeline corpus (chunks as columns over the request's documents)."""
    ids = [d["id"] for d in req.docs]
    spans = list(zip(corpus.doc_of, corpus.starts, corpus.ends))
    keys = [(ids[d], s, e) for d, s, e in spans]
    texts = [req.docs[d]["text"][s:e] for d, s, e in spans]
    return rerank(req.retriever, req.query, keys, texts, bm25_scores, session)


# ---------------------------------------------------------------------------------------------
# Question sets and the settings map (SPEC section 8): each question is a query of its own.


class GivenByQuery:
    """A host for many queries from cosines the page sent: `options.by_query` per question's query
    and `options.given` for the request's own query. What is missing is collected per query."""

    def __init__(self, options: Options, query: str):
        self.by_query = dict(options.by_query or {})
        if options.given is not None:
            self.by_query.setdefault(query, Given(dict(options.given.scores)))

    def similarities(self, query: str, texts: list[str], keys: list) -> list[float] | None:
        return self.by_query.setdefault(query, Given({})).similarities(query, texts, keys)

    def needs(self) -> dict:
        return {q: [list(k) for k in g.missing] for q, g in self.by_query.items() if g.missing}


class Ranked:
    """A full ranking with ranking.MaxScore's interface: `top(k)` and `best_rank(chunks)` (1-based)."""

    def __init__(self, order: list[int]):
        self.order = order
        self.ranks = ranks_of(order)

    def top(self, k: int) -> list[int]:
        return self.order[:k]

    def best_rank(self, chunks: list[int]) -> int:
        return min(self.ranks[c] for c in chunks)


class QuestionRanker:
    """Ranks one question's query over one setting's chunks (a topk.Setting) by the request's
    dense or hybrid method. Where the host lacks cosines the ranking is BM25's and `pending` is set
    (the page embeds `host.needs()` and asks again)."""

    def __init__(self, req, session=None):
        self.options = req.retriever
        given = self.options.given is not None or self.options.by_query is not None
        self.host = GivenByQuery(self.options, req.query) if given else (
            getattr(session, "dense", None) or _start_host(self.options.embedding))
        self.ids = [d["id"] for d in req.docs]
        self.pending = False

    def query(self, setting, text: str, terms: list[str]) -> Ranked:
        texts = setting.words.indexes
        keys = [(self.ids[d], s, e) for d, s, e in zip(setting.doc_of, setting.starts, setting.ends)]
        chunk_texts = [texts[d].text[s:e] for d, s, e in zip(setting.doc_of, setting.starts, setting.ends)]
        similarities = self.host.similarities(text, chunk_texts, keys) if keys else []
        bm25_scores = ranking.every_score(setting.terms, terms)
        if similarities is None:
            self.pending = True
            return Ranked(ranking.rank(bm25_scores))
        o = self.options
        return Ranked(scores_and_order(o.method, bm25_scores, similarities, o.c, o.weights)[1])

    def scores_over(self, text: str, indexes, starts: list, ends: list, bm25_scores: list[float]) -> list[float]:
        """The audit's scores for query `text` over chunks given per document (starts[d], ends[d],
        documents' DocIndex `indexes`): cosines (dense), RRF (hybrid), or BM25's while pending."""
        keys = [(self.ids[d], s, e) for d in range(len(indexes)) for s, e in zip(starts[d], ends[d])]
        texts = [indexes[d].text[s:e] for d in range(len(indexes)) for s, e in zip(starts[d], ends[d])]
        similarities = self.host.similarities(text, texts, keys) if keys else []
        if similarities is None:
            self.pending = True
            return bm25_scores
        o = self.options
        return scores_and_order(o.method, bm25_scores, similarities, o.c, o.weights)[0]

    def report(self) -> dict:
        """Whether some question's ranking waited for cosines (`pending`) and, from the page's
        cosines, the chunks to embed per query (`needs`): plain data, `wire.encode_dense` writes it."""
        return {"pending": self.pending, "needs": self.host.needs() if isinstance(self.host, GivenByQuery) else {}}
