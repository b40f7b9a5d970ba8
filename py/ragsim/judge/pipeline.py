"""Step 2 of `api.simulate`: split -> score -> rank -> judge, over the whole corpus as columns.

Chunks are numbered globally in document order; position `p` (0-based) is chunk `p + 1`. Every
column below has one entry per chunk. Nothing here knows the wire format (that is `encode`).

`req` is the request read by the wire layer (`ragsim.wire.request.Request`); only its fields are read.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from bisect import bisect_left, bisect_right
from itertools import islice, repeat
from operator import add, le, setitem, sub

from ragsim.rank import bm25, dense, reranking
from ragsim.rank import ranking, weights
from ragsim.text import tokens as ragsim_tokens
from ragsim.rank.corpus import Corpus, nondecreasing, rankable
from ragsim.judge import spans


class Judged:
    """A scored and ranked corpus, and what its chunks hold of the marked span and fact.

    A slider move needs the top k and the ranks of a few chunks, not a full ranking: `top` is found
    without sorting the rest and `rank_of(p)` counts; `order` (positions, best first) and `ranks`
    (per position, 1-based) are computed on first access, for callers that want every chunk's rank.
    """

    PASS_LIMIT = 4  # ranks counted by a pass over the scores before sorting them
    COUNT_LIMIT = 64  # ranks counted one by one (by bisection, but ties by a pass) before ranking every chunk
    __slots__ = ("corpus", "_scores", "top", "held", "answering", "_shared", "chunking", "dense", "_order", "_ranks",
                 "_asked", "_ascending", "pruned", "_score_all", "before_top")

    def __init__(self, corpus: Corpus, scores: list[float] | None, top: list[int], held: dict, answering: list[int],
                 shared: list, dense: dict | None = None, order: list[int] | None = None):
        self.corpus = corpus
        self._scores = scores  # None until read when `pruned` found the top k without them
        self.pruned = None  # ranking.MaxScore: the top k and ranks from the chunks that can reach them
        self._score_all = None  # () -> every chunk's score, when `scores` is None
        self.top = top  # the first k positions of `order`
        self.held = held  # position -> "whole" / "part" (chunks meeting the span)
        self.answering = answering  # positions holding the fact's name-to-value stretch
        self._shared = shared or None  # per position: characters shared with the previous chunk of its document, or None
        self.chunking = None  # the split's chunking, for `shared` (made on first read)
        self.dense = dense  # dense or hybrid retrieval's report (dense.rerank), None for BM25
        self._order = order
        self._ranks = None
        self._asked = 0  # ranks counted one by one so far
        self._ascending = None  # the scores sorted, for counting ranks
        self.before_top = None  # with a reranker (`retrieval.rerank`): the top k the retriever gave before it

    @property
    def shared(self) -> list:
        """Per position, the characters shared with the previous chunk of its document (None for a first chunk)."""
        if self._shared is None:
            self._shared = _shared(self.corpus, self.chunking)
        return self._shared

    def overlap_counts(self) -> Counter:
        """How many neighbouring chunks share each number of characters (first chunks left out),
        counted without building `shared` when it has not been read."""
        if self._shared is not None:
            counts = Counter(self._shared)
            counts.pop(None, None)
            return counts
        return _overlap_counts(self.corpus, self.chunking)

    @property
    def scores(self) -> list[float]:
        """Every chunk's score (computed on first read after a pruned ranking)."""
        if self._scores is None:
            self._scores = self._score_all()
        return self._scores

    def score_of(self, pos: int) -> float:
        if self._scores is None:
            return self.pruned.score_of(pos)
        return self._scores[pos]

    @property
    def order(self) -> list[int]:
        """Positions, best first (score descending, ties by position)."""
        if self._order is None:
            self._order = ranking.rank(self.scores)
        return self._order

    @property
    def ranks(self) -> list[int]:
        """Per position, its 1-based rank."""
        if self._ranks is None:
            order = self.order
            ranks = [0] * len(order)
            deque(map(setitem, repeat(ranks), order, range(1, len(order) + 1)), maxlen=0)  # ranks[order[i]] = i + 1
            self._ranks = ranks
        return self._ranks

    def rank_of(self, pos: int) -> int:
        """The 1-based rank of position `pos`, without ranking every chunk (unless that is done already)."""
        if self._ranks is not None:
            return self._ranks[pos]
        if self._scores is None:
            return self.pruned.best_rank([pos])
        self._asked += 1
        if self._order is not None or self._asked > self.COUNT_LIMIT:
            return self.ranks[pos]  # a given order (dense, hybrid) is the ranking; many asked: rank them all
        # a few asked: a pass over the scores each; more: the scores sorted once, then bisection
        return ranking.rank_of(self.scores, pos, self.ascending if self._asked > self.PASS_LIMIT else None)

    @property
    def ascending(self) -> list[float]:
        """The scores sorted ascending (by value alone: cheap)."""
        if self._ascending is None:
            self._ascending = sorted(self.scores)
        return self._ascending


def run(req: Request, session, chunking: dict | None = None) -> Judged:
    """The whole pipeline for `req` (at `chunking`, by default the request's own)."""
    corpus = split_all(req, session, req.chunking if chunking is None else chunking)

    def score_all():
        return ranking.score_all(req.query_terms, corpus.lengths, corpus.occurrences, req.variant, req.k1, req.b,
                              req.delta)

    # Only the top k and a few ranks asked for (the binary wire without scores, or another setting's
    # verdict): MaxScore scores the chunks that can reach them (every chunk for BM25L and BM25+).
    pruned = None
    if req.retriever.method == "bm25" and (req.scores == "top" or chunking is not None) and req.k > 0 \
            and req.variant not in bm25.SHIFTED and req.retriever.rerank is None:
        terms = weights.Terms(corpus.lengths, corpus.occurrence, req.variant, req.k1, req.b, req.delta)
        pruned = ranking.MaxScore(terms, req.query_terms)
    if pruned is not None:
        judged = Judged(corpus, None, pruned.top(req.k), {}, [], [])
        judged.pruned, judged._score_all = pruned, score_all
    elif req.retriever.method != "bm25":  # SPEC section 10: the host's similarities, alone or fused
        scores, order, report = dense.rerank_corpus(req, corpus, score_all(), session)
        judged = Judged(corpus, scores, order[: req.k], {}, [], [], report, order)
    else:
        scores = score_all()
        judged = Judged(corpus, scores, [], {}, [], [])
        judged.top = ranking.top(scores, req.k)
    if req.retriever.rerank is not None and req.query.strip() and not (judged.dense or {}).get("pending"):
        order = reranking.rerank(req.retriever.rerank, req.query, judged.order, lambda p: corpus.text_of(p, req.docs))
        if order is not None:  # None: the request lacks the scores (the page asks its reranker, then again)
            judged.before_top, judged.top, judged._order, judged._ranks = judged.top, order[: req.k], order, None
    judged.held, judged.answering = _held(req, corpus), _answering(req, corpus)
    judged.chunking = req.chunking if chunking is None else chunking
    return judged


def split_all(req: Request, session, chunking: dict) -> Corpus:
    """Every document of `req` split at `chunking`, with the query's terms gathered."""
    ids = [d["id"] for d in req.docs]
    indexes = [session.index(d["text"], req.analyzer) for d in req.docs]
    corpus = rankable(indexes, ids, session, chunking, getattr(req, "given", None))
    corpus.occurrences = {t: corpus.occurrence(t) for t in dict.fromkeys(req.query_terms)}
    return corpus


def doc_range(corpus: Corpus, d: int) -> range:
    """The positions of document `d`'s chunks."""
    return range(corpus.first_chunk[d], corpus.first_chunk[d] + corpus.documents[d]["chunks"])


def _meeting(corpus: Corpus, d: int, s: int, t: int) -> range:
    """Positions of document `d`'s chunks that may meet `[s, t)` (every one that does is inside):
    when starts and ends never go backwards (every window and most splitters), by bisection."""
    r = doc_range(corpus, d)
    starts, ends = corpus.starts, corpus.ends
    lo, hi = r.start, r.stop
    if hi - lo > 64 and (corpus.ordered or nondecreasing(starts, lo, hi) and nondecreasing(ends, lo, hi)):
        return range(bisect_right(ends, s, lo, hi), bisect_left(starts, t, lo, hi))
    return r


def _held(req: Request, corpus: Corpus) -> dict:
    """What each chunk holds of the span: only the chunks of its document that meet it are looked at."""
    held = {}
    if req.span is not None:
        di, s, t = req.span
        for pos in _meeting(corpus, di, s, t):
            h = spans.holds(corpus.starts[pos], corpus.ends[pos], s, t)
            if h:
                held[pos] = h
    return held


def _answering(req: Request, corpus: Corpus) -> list[int]:
    """The chunks holding the fact's whole name-to-value stretch."""
    if req.fact is None:
        return []
    di, (ns, ne), (vs, ve) = req.fact
    a, z = min(ns, vs), max(ne, ve)
    return [pos for pos in _meeting(corpus, di, a, max(z, a + 1)) if corpus.starts[pos] <= a and z <= corpus.ends[pos]]


def _shared(corpus: Corpus, chunking: dict | None = None) -> list:
    """Characters each chunk shares with the previous chunk of its document (None for a first chunk)."""
    starts, ends = corpus.starts, corpus.ends
    n = len(starts)
    if not n:
        return []
    window = corpus.ordered and chunking is not None
    overlap = chunking.get("overlap", 0) if window else None
    if window and corpus.unit == "chars":  # every window shares exactly the overlap with the one before
        shared = [None]
        shared.extend(repeat(overlap, n - 1))
    elif window and corpus.unit == "words" and overlap == 0:  # words apart: nothing shared
        shared = [None]
        shared.extend(repeat(0, n - 1))
    else:
        shared = [None, *map(sub, islice(ends, n - 1), islice(starts, 1, n))]
        # windows sharing words always share characters; other splits may leave gaps
        if not (window and corpus.unit == "words") and n > 1 and min(islice(shared, 1, n)) < 0:
            shared[1:] = map(max, islice(shared, 1, n), repeat(0))
    for pos in corpus.first_chunk:
        if pos < n:
            shared[pos] = None
    return shared


def _overlap_counts(corpus: Corpus, chunking: dict | None) -> Counter:
    """`Counter` of `_shared`'s values without None, from the columns directly (no list per chunk)."""
    starts, ends = corpus.starts, corpus.ends
    n = len(starts)
    boundaries = n - sum(1 for pos in corpus.first_chunk if pos < n)  # chunks after another of their document
    if boundaries <= 0:
        return Counter()
    window = corpus.ordered and chunking is not None
    overlap = chunking.get("overlap", 0) if window else None
    if window and corpus.unit == "chars":
        return Counter({overlap: boundaries})
    if window and corpus.unit == "words" and overlap == 0:
        return Counter({0: boundaries})
    counts = Counter(map(sub, islice(ends, n - 1), islice(starts, 1, n)))
    for pos in corpus.first_chunk:  # the pairs across two documents do not count
        if 0 < pos < n:
            counts[ends[pos - 1] - starts[pos]] -= 1
    counts = +counts  # drop the zero counts
    if not (window and corpus.unit == "words"):  # other splits may leave gaps: nothing shared
        gaps = sum(c for v, c in counts.items() if v < 0)
        if gaps:
            counts = Counter({v: c for v, c in counts.items() if v >= 0})
            counts[0] += gaps
    return counts


def overlap_stats(counts: Counter) -> dict:
    """Min, median and max of the characters neighbouring chunks share, and how many share none, from
    how many pairs share each number (`Judged.overlap_counts`). Counted, not sorted: a few distinct values."""
    n = sum(counts.values())
    if not n:
        return {"overlap_min": None, "overlap_median": None, "overlap_max": None, "boundaries_without_overlap": 0}
    values = sorted(counts)

    def nth(i):  # the i-th smallest (0-based)
        for v in values:
            i -= counts[v]
            if i < 0:
                return v

    median = nth(n // 2) if n % 2 else (nth(n // 2 - 1) + nth(n // 2)) / 2  # as statistics.median
    return {
        "overlap_min": values[0],
        "overlap_median": median,
        "overlap_max": values[-1],
        "boundaries_without_overlap": counts.get(0, 0),
    }


def whole_ranks(judged: Judged) -> list[int]:
    """The ranks of the chunks holding the whole span."""
    return [judged.rank_of(p) for p, h in judged.held.items() if h == "whole"]


def answering_ranks(judged: Judged) -> list[int]:
    """The ranks of the chunks answering the fact (holding its name and value together)."""
    return [judged.rank_of(p) for p in judged.answering]


def verdict(req: Request, judged: Judged) -> dict:
    """SPEC section 4's verdict on the marked span (every field None or empty without one)."""
    if req.span is None:
        return {"kind": None, "best_rank": None, "parts": 0, "parts_retrieved": 0, "coverage_sent": None,
                "whole_chunks": [], "part_chunks": [], "parts_retrieved_chunks": []}
    c, k = judged.corpus, req.k
    di, s, t = req.span
    wr = whole_ranks(judged)
    parts = sorted(p for p, h in judged.held.items() if h == "part")
    top = set(judged.top)
    retrieved_parts = [p for p in parts if p in top]  # rank <= k
    sent = [(c.starts[p], c.ends[p]) for p in judged.top if c.doc_of[p] == di]
    out = spans.verdict(wr, any(r <= k for r in wr), len(parts), len(retrieved_parts),
                        spans.covered(sent, s, t) / (t - s))
    out["whole_chunks"] = sorted(p + 1 for p, h in judged.held.items() if h == "whole")
    out["part_chunks"] = [p + 1 for p in parts]
    out["parts_retrieved_chunks"] = [p + 1 for p in retrieved_parts]
    if judged.before_top is not None:  # ranked out by the reranker: the answer was within k before it
        whole = [p for p, h in judged.held.items() if h == "whole"]
        out["after_reranking"] = reranking.after_reranking(out["kind"], [whole], judged.before_top)
    return out


def fact_verdict(req: Request, judged: Judged) -> dict | None:
    """Whether a chunk holding the fact's name and value together is retrieved (None without a fact)."""
    if req.fact is None:
        return None
    ranks = answering_ranks(judged)
    return {
        "kind": spans.fact_kind(ranks, req.k),
        "answering": [p + 1 for p in judged.answering],
        "best_rank": min(ranks) if ranks else None,
    }


def context(req: Request, judged: Judged) -> str:
    """The text sent to the model: the top k chunks in rank order, separated by blank lines."""
    c = judged.corpus
    if c.texts is not None:  # a semantic chunker's chunks are its library's texts (re-joined with " ")
        return "\n\n".join(c.text_of(p, req.docs) for p in judged.top)
    return "\n\n".join(req.docs[c.doc_of[p]]["text"][c.starts[p] : c.ends[p]] for p in judged.top)


def tokens_of(text: str) -> int:
    """SPEC section 5's token estimate: a token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def context_tokens(req: Request, text: str) -> int:
    """Tokens of a context: exact with the request's top-level tokenizer (SPEC section 9), else the estimate."""
    return tokens_of(text) if req.tokenizer is None else ragsim_tokens.get(req.tokenizer).count(text)
