"""A reranker over the retriever's ranking (`retrieval.rerank`, docs/retrievers.md): the first `depth`
chunks of the ranking put in the order of a relevance score per chunk, before k is taken.

The core never runs the reranker. A host (CPython's `host.clients.rerank_endpoint`, a `/rerank` endpoint of
the user's own) gives one relevance score per text of the first `depth`, or the request carries the
scores a host asked for before it (`retrieval.rerank.scores`, the page's: `Given`, whose missing lists
leave the ranking as the retriever gave it and are reported in `needs`); this module applies them:
those chunks by score descending, ties by their rank before, the chunks after `depth` as they were.
A verdict that is `ranked_out` where the answer was within k before reranking says so
(`after_reranking`)."""

import math
from dataclasses import dataclass

from ragsim.errors import RequestError
from ragsim.fields import get_int, get_str

DEPTH = 20  # chunks reordered by default, as --rerank-depth
MAX_DEPTH = 1000  # a reranker reads every chunk it reorders: a request of more is a mistake


@dataclass(frozen=True)
class Options:
    """`retrieval.rerank`: the reranker's `model` and `endpoint` (the host's to reach) and `depth`."""

    model: str
    endpoint: str | None = None
    depth: int = DEPTH
    given: object = None  # Given: the scores the request carries (`retrieval.rerank.scores`), or None


def read_options(r: dict) -> Options | None:
    """`retrieval.rerank` of the request's retrieval object, None without one, or RequestError."""
    rr = r.get("rerank")
    if rr is None:
        return None
    if not isinstance(rr, dict):
        raise RequestError("retrieval.rerank", 'Give retrieval.rerank as {"endpoint": URL, "model": NAME, "depth": 20}.')
    model = get_str(rr, "model", "retrieval.rerank.model", default="").strip()
    if not model:
        raise RequestError("retrieval.rerank.model", "Give the reranker's model name in retrieval.rerank.model.")
    endpoint = get_str(rr, "endpoint", "retrieval.rerank.endpoint", default="") or None
    depth = get_int(rr, "depth", "retrieval.rerank.depth", default=DEPTH, minimum=1)
    if depth > MAX_DEPTH:
        raise RequestError("retrieval.rerank.depth", f"retrieval.rerank.depth is at most {MAX_DEPTH} (got {depth}); "
                           "a reranker reads every chunk it reorders.")
    given = rr.get("scores")
    return Options(model=model, endpoint=endpoint, depth=depth, given=None if given is None else Given.read(given))


class Given:
    """Scores a host asked for before the request (the page: its reranker is asked from JavaScript),
    by (query, the list of texts): a listwise reranker's score of a text depends on the others sent.
    A list it has no scores for is collected in `missing`, for the host to ask and send next time."""

    FIELD = "retrieval.rerank.scores"

    def __init__(self, scores: dict):
        self.given = scores
        self.missing: dict = {}  # (query, texts) -> None, in the order first asked

    @classmethod
    def read(cls, entries) -> "Given":
        if not isinstance(entries, list):
            raise RequestError(cls.FIELD, f'Give {cls.FIELD} as a list of {{"query", "texts": [...], "scores": [...]}}.')
        given = {}
        for i, e in enumerate(entries):
            ok = (isinstance(e, dict) and set(e) == {"query", "texts", "scores"} and isinstance(e["query"], str)
                  and isinstance(e["texts"], list) and all(isinstance(t, str) for t in e["texts"])
                  and isinstance(e["scores"], list) and len(e["scores"]) == len(e["texts"])
                  and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                          for x in e["scores"]))
            if not ok:
                raise RequestError(f"{cls.FIELD}[{i}]", f'{cls.FIELD}[{i}] must be {{"query", "texts": [...], "scores": '
                                   "[...]}: one finite score per text.")
            given[(e["query"], tuple(e["texts"]))] = [float(x) for x in e["scores"]]
        return cls(given)

    def scores(self, query: str, texts: list[str]) -> list[float] | None:
        """The scores of `texts` for `query`, or None (and the list noted) when the request lacks them."""
        key = (query, tuple(texts))
        if key not in self.given:
            self.missing[key] = None
            return None
        return list(self.given[key])


def reorder(order: list[int], depth: int, scores: list[float]) -> list[int]:
    """`order` with its first `depth` positions sorted by `scores` (one per position of
    `order[:depth]`, in that order) descending, ties by their place before; the rest unchanged."""
    head = order[:depth]
    if len(scores) != len(head) or not all(isinstance(s, (int, float)) and math.isfinite(s) for s in scores):
        raise RequestError("retrieval.rerank", f"The reranker gave {len(scores)} scores for {len(head)} chunks, or "
                           "one that is no finite number; every chunk reordered needs one.")
    ranked = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in ranked] + order[depth:]


# The host that scores texts against a query: registered by `ragsim.host.register()` (CPython's
# endpoint client); a caller without one gets a sentence. The core never imports a host module.
HOSTS: list = []


def register_host(make) -> None:
    """Make `make(options)` (an object with `scores(query, texts) -> list[float]`) the reranker."""
    HOSTS[:] = [make]


def host(options: Options):
    """The request's scores (`options.given`), else the registered host's reranker for `options`; a
    sentence when there is neither."""
    if options.given is not None:
        return options.given
    if not HOSTS:
        raise RequestError("retrieval.rerank", "Reranking needs the reranker's host, which this Python has not "
                           "loaded: call ragsim.host.register() first (python -m ragsim does).")
    return HOSTS[0](options)


def rerank(options: Options, query: str, order: list[int], text_of) -> list[int] | None:
    """`order` reordered by the host's scores of the texts (`text_of(position)`) of its first `depth`;
    None while the request's scores lack them (`Given`: the ranking stays the retriever's)."""
    head = order[: options.depth]
    if len(head) < 2:
        return list(order)
    scores = host(options).scores(query, [text_of(p) for p in head])
    return None if scores is None else reorder(order, options.depth, scores)


def after_reranking(kind: str, wholes: list, before_top: list[int]) -> bool:
    """Whether a ranked-out answer was within k before reranking: every span held whole by a chunk
    of the top k before (`wholes`: per span, the chunks holding it whole)."""
    if kind != "ranked_out" or not wholes:
        return False
    before = set(before_top)
    return all(any(c in before for c in whole) for whole in wholes)


class Reranked:
    """A question's ranking (one with `top(k)` and `best_rank(chunks)`, dense.Ranked or
    ranking.MaxScore) with its first `depth` reordered by the reranker; `before` is the ranking as
    the retriever gave it."""

    def __init__(self, before, options: Options, query: str, text_of):
        self.before = before
        head = before.top(options.depth)
        order = rerank(options, query, head, text_of)
        self.pending = order is None  # the request lacks its scores: the retriever's ranking for now
        self.head = head if order is None else order
        self.places = {p: i + 1 for i, p in enumerate(self.head)}

    def top(self, k: int) -> list[int]:
        return self.head[:k] if k <= len(self.head) else self.head + self.before.top(k)[len(self.head):]

    def best_rank(self, chunks: list[int]) -> int:
        ranks = [self.places[c] for c in chunks if c in self.places]
        rest = [c for c in chunks if c not in self.places]
        return min(ranks + ([self.before.best_rank(rest)] if rest else []))


def report(options: Options) -> dict:
    """The response's `rerank`: which reranker reordered how many of each ranking's first chunks and,
    with the request's scores, whether some lists lacked theirs (`pending`) and which (`needs`)."""
    out = {"model": options.model, "endpoint": options.endpoint, "depth": options.depth}
    if options.given is not None:
        missing = options.given.missing
        out["pending"] = bool(missing)
        out["needs"] = [{"query": q, "texts": list(texts)} for q, texts in missing]
    return out
