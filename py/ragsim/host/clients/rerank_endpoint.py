"""Relevance scores from the user's own reranker: `POST {endpoint}/rerank`, the shape Cohere, Jina,
vLLM, Infinity and LiteLLM share (`{"model", "query", "documents": [...], "top_n"}` -> `{"results":
[{"index", "relevance_score"}]}`), and Hugging Face TEI's (`{"query", "texts": [...]}` -> a bare list
`[{"index", "score"}]`): a server answering 422 about `texts` is asked again in TEI's form.

The core (`rank.reranking`) asks `scores(query, texts)` for the first chunks of a ranking and puts
them in that order. Each (query, texts) is asked once a run; the key comes from
$RAGSIM_RERANK_API_KEY, else the embedding endpoint's ($RAGSIM_EMBED_API_KEY, $OPENAI_API_KEY),
never a flag, and goes only to the endpoint's own origin (`endpoint_post`). A server that is down,
slow, answers another shape, an index out of range or repeated, a score that is no finite number, or
fewer results than texts: one sentence each (`RerankError`)."""

from __future__ import annotations

import json
import math
import os
import time

from ragsim.errors import RequestError
from ragsim.host.clients import endpoint_post, http_client
from ragsim.host.clients.embed_endpoint import KEY_ENV as EMBED_KEY_ENV

KEY_ENV = ("RAGSIM_RERANK_API_KEY", *EMBED_KEY_ENV)
TIMEOUT = 120.0  # seconds for one request, redirects and retries included
MAX_REPLY_BYTES = 16 * 2**20
CACHE_LIMIT = 10_000  # rankings kept, by (query, texts)
SHAPE = '{"results": [{"index", "relevance_score"}]}'


class RerankError(RequestError):
    """The reranker could not give the scores; one sentence saying what to do."""

    def __init__(self, message: str):
        super().__init__("retrieval.rerank", message)


def api_key() -> str | None:
    return next((os.environ[k] for k in KEY_ENV if os.environ.get(k)), None)


def rerank_url(endpoint: str | None) -> str:
    """`{endpoint}/rerank` (an endpoint given with /rerank already is taken as it is)."""
    endpoint = (endpoint or "").strip().rstrip("/")
    if http_client.origin(endpoint) is None:
        raise RerankError(f"The reranking endpoint {endpoint!r} is not an http:// or https:// URL; give the server's "
                          "base URL, e.g. http://localhost:8080 (TEI) or http://localhost:8000/v1 (vLLM).")
    return endpoint if endpoint.endswith("/rerank") else endpoint + "/rerank"


def parse(body: bytes, count: int, url: str) -> list[float]:
    """One finite score per text, in the texts' order, from a reply of either shape; RerankError else."""
    if len(body) > MAX_REPLY_BYTES:
        raise RerankError(f"{url} sent more than {MAX_REPLY_BYTES // 2**20} MB; check the endpoint.")
    try:
        reply = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        reply = None
    rows = reply.get("results") if isinstance(reply, dict) else reply
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise RerankError(f"{url} did not answer with rerank results ({SHAPE}, or TEI's [{{\"index\", \"score\"}}]); "
                          "check that it is a /rerank endpoint.")
    scores: list = [None] * count
    for r in rows:
        i, s = r.get("index"), r.get("relevance_score", r.get("score"))
        if isinstance(i, bool) or not isinstance(i, int) or isinstance(s, bool) or not isinstance(s, (int, float)):
            raise RerankError(f"{url} answered a result without an integer index and a numeric score ({SHAPE}).")
        if not 0 <= i < count:
            raise RerankError(f"{url} answered index {i} for {count} texts; an index names a text sent (0 to "
                              f"{count - 1}).")
        if scores[i] is not None:
            raise RerankError(f"{url} answered index {i} twice; each text needs one score.")
        try:
            score = float(s)
        except OverflowError:  # an integer past any float
            score = math.inf
        if not math.isfinite(score):
            raise RerankError(f"{url} answered a score that is NaN or infinite; the model failed on some text.")
        scores[i] = score
    if None in scores:
        got = count - scores.count(None)
        raise RerankError(f"{url} answered {got} results for {count} texts; every text needs its score (check that "
                          "the server does not cut top_n).")
    return scores


class EndpointReranker:
    """Scores of `model` at `endpoint` (see the module)."""

    def __init__(self, endpoint: str | None, model: str, timeout: float = TIMEOUT, sleep=time.sleep):
        if not isinstance(model, str) or not model.strip():
            raise RerankError("Give the reranker's name with --rerank-model NAME (as the server lists it).")
        self.url, self.model = rerank_url(endpoint), model.strip()
        self.timeout, self.sleep = timeout, sleep
        self.cache: dict = {}
        self.field = "documents"  # TEI's "texts" once the server asks for it
        self.requests = 0  # sent, for the tests

    def describe(self) -> str:
        return f"{self.model} at {self.url}"

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """A relevance score per text (higher is more relevant), in the texts' order."""
        key = (query, tuple(texts))  # the whole list: a listwise reranker's score depends on the others
        if key not in self.cache:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache.clear()
            self.cache[key] = self._ask(query, list(texts))
        return list(self.cache[key])

    def _ask(self, query: str, texts: list[str]) -> list[float]:
        try:
            return self._post(query, texts)
        except RerankError as e:
            if self.field != "documents" or "HTTP 422" not in e.message or "texts" not in e.message:
                raise
            self.field = "texts"  # Hugging Face TEI: {"query", "texts"}
            return self._post(query, texts)

    def _post(self, query: str, texts: list[str]) -> list[float]:
        def counted():
            self.requests += 1

        payload = {"model": self.model, "query": query, self.field: texts}
        if self.field == "documents":
            payload["top_n"] = len(texts)
        reply = endpoint_post.post(self.url, payload, api_key(), timeout=self.timeout, max_bytes=MAX_REPLY_BYTES,
                                   sleep=self.sleep, fail=RerankError, counted=counted,
                                   hints={404: " (check the reranker's name, and that the endpoint is the server's "
                                               "base URL)", 401: " (set the key in RAGSIM_RERANK_API_KEY)"})
        return parse(reply.body, len(texts), self.url)


_ONE: dict = {}


def for_options(options) -> EndpointReranker:
    """This process's reranker of `options` (rank.reranking.Options: endpoint, model), one per pair,
    so its scores are kept for the run."""
    if not options.endpoint:
        raise RerankError("Give the reranker's endpoint with --rerank-endpoint URL (retrieval.rerank.endpoint).")
    key = (options.endpoint, options.model)
    if key not in _ONE:
        _ONE.clear()
        _ONE[key] = EndpointReranker(*key)
    return _ONE[key]
