"""A reranker over the retriever's ranking (`retrieval.rerank`, docs/retrievers.md): the first `depth`
chunks of the ranking put in the order of a relevance score per chunk, before k is taken.

The core never runs the reranker. A host (CPython's `host.clients.rerank_endpoint`, a `/rerank` endpoint of
the user's own) gives one relevance score per text of the first `depth`; this module applies them:
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
    return Options(model=model, endpoint=endpoint, depth=depth)


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
    """The registered host's reranker for `options`; a sentence when there is none."""
    if not HOSTS:
        raise RequestError("retrieval.rerank", "Reranking needs the reranker's host, which this Python has not "
                           "loaded: call ragsim.host.register() first (python -m ragsim does).")
    return HOSTS[0](options)


def rerank(options: Options, query: str, order: list[int], text_of) -> list[int]:
    """`order` reordered by the host's scores of the texts (`text_of(position)`) of its first `depth`."""
    head = order[: options.depth]
    if len(head) < 2:
        return list(order)
    return reorder(order, options.depth, host(options).scores(query, [text_of(p) for p in head]))


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
        self.head = rerank(options, query, head, text_of)
        self.places = {p: i + 1 for i, p in enumerate(self.head)}

    def top(self, k: int) -> list[int]:
        return self.head[:k] if k <= len(self.head) else self.head + self.before.top(k)[len(self.head):]

    def best_rank(self, chunks: list[int]) -> int:
        ranks = [self.places[c] for c in chunks if c in self.places]
        rest = [c for c in chunks if c not in self.places]
        return min(ranks + ([self.before.best_rank(rest)] if rest else []))


def report(options: Options) -> dict:
    """The response's `rerank`: which reranker reordered how many of each ranking's first chunks."""
    return {"model": options.model, "endpoint": options.endpoint, "depth": options.depth}
