"""Embeddings from the user's own model: an OpenAI-compatible `POST {endpoint}/embeddings`
(`{"model", "input": [...]}` -> `{"data": [{"embedding": [...], "index"}]}`), which Ollama, LM Studio,
llama.cpp's server, vLLM, Hugging Face TEI, LiteLLM and OpenAI all speak.

`EndpointEmbedder` is a drop-in for `embed_onnx.Embedder` (`embed`, `similarities`, `np`, `cache`):
the core and the streamed runs rank with the user's vectors in the model's place. Its contract:

- texts sent in batches of `batch`, one request in flight, each vector kept by text (a text is
  embedded once a run); the key from $RAGSIM_EMBED_API_KEY, else $OPENAI_API_KEY (never a flag), sent
  only to the endpoint's own origin (`http_client`: no redirect to another host, a total deadline);
- each vector L2-normalised, so a similarity is the cosine, as for the built-in model;
- HTTP 429 and 503 retried after the server's Retry-After (or 1, 2, 4 s), then one sentence; any
  other failure (down, slow, another shape, vectors of varying dimension, NaN, fewer vectors than
  texts) is one sentence (`EndpointError`) naming the endpoint and what to check.
"""

from __future__ import annotations

import json
import os
import time
from collections import OrderedDict

from ragsim.errors import RequestError
from ragsim.host import http_client
from ragsim.host.embed_onnx import cached_rows
from ragsim.host.ask import said, server_message

KEY_ENV = ("RAGSIM_EMBED_API_KEY", "OPENAI_API_KEY")
BATCH = 64  # texts per request
TIMEOUT = 120.0  # seconds for one request, redirects and retries included
RETRIES = 3  # after a 429 or 503
MAX_REPLY_BYTES = 256 * 2**20
MAX_WAIT = 30.0  # seconds of Retry-After honoured
CACHE_LIMIT = 200_000  # vectors kept, by text


class EndpointError(RequestError):
    """The endpoint could not give the vectors; the message is one sentence saying what to do (a
    `RequestError` on `retrieval.embedding`, so every caller says it as it says a bad request)."""

    def __init__(self, message: str):
        super().__init__("retrieval.embedding", message)


def api_key() -> str | None:
    return next((os.environ[k] for k in KEY_ENV if os.environ.get(k)), None)


def _base(endpoint: str) -> str:
    endpoint = (endpoint or "").strip().rstrip("/")
    if http_client.origin(endpoint) is None:
        raise EndpointError(f"The embedding endpoint {endpoint!r} is not an http:// or https:// URL; give the "
                            "server's OpenAI-compatible base URL, e.g. http://localhost:11434/v1.")
    return endpoint[: -len("/embeddings")] if endpoint.endswith("/embeddings") else endpoint


class EndpointEmbedder:
    """Vectors of `model` from `endpoint` (see the module)."""

    def __init__(self, endpoint: str, model: str, batch: int = BATCH, timeout: float = TIMEOUT, sleep=time.sleep):
        try:
            import numpy
        except ImportError as exc:
            raise EndpointError("Ranking with your own embeddings needs numpy in this Python: in the ragsim checkout, "
                                ".venv/bin/pip install -e \".[dense]\".") from exc
        if not isinstance(model, str) or not model.strip():
            raise EndpointError("Give the embedding model's name with --embed-model NAME (as the server lists it).")
        self.np, self.url, self.model = numpy, _base(endpoint) + "/embeddings", model.strip()
        self.batch, self.timeout, self.sleep = max(1, int(batch)), timeout, sleep
        self.cache: OrderedDict = OrderedDict()
        self.dimension: int | None = None
        self.requests = 0  # sent, for the tests and the progress line

    truncates = False  # the server applies its own input limit, which ragsim does not know (no read_end)

    def describe(self) -> str:
        return f"{self.model} at {self.url}"

    def embed(self, texts: list[str]):
        """A (len(texts), dimension) float32 array of unit vectors."""
        np = self.np
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        for i in range(0, len(missing), self.batch):
            chunk = missing[i : i + self.batch]
            for text, vector in zip(chunk, self._ask(chunk)):
                self.cache[text] = vector
        return cached_rows(np, self.cache, texts, self.dimension or 0, CACHE_LIMIT)

    def similarities(self, query: str, texts: list[str], keys=None) -> list[float]:
        """Cosines of each text with the query, each product summed along its own row in float64
        (as `embed_onnx.Embedder.similarities`)."""
        if not texts:
            return []
        vectors = self.embed([query, *texts]).astype(self.np.float64)
        return [float(s) for s in (vectors[1:] * vectors[0]).sum(axis=1)]

    # --- one request -------------------------------------------------------------------------------

    def _ask(self, texts: list[str]):
        body = json.dumps({"model": self.model, "input": texts}, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "ragsim"}
        key = api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for attempt in range(RETRIES + 1):
            try:
                reply = http_client.fetch(self.url, method="POST", headers=headers, body=body, timeout=self.timeout,
                                          max_bytes=MAX_REPLY_BYTES)
            except http_client.HTTPFailure as e:
                raise EndpointError(self._masked(str(e), key)) from None
            self.requests += 1
            if reply.status in (429, 503) and attempt < RETRIES:
                self.sleep(self._wait(reply, attempt))
                continue
            if not 200 <= reply.status < 300:
                message = self._masked(server_message(reply.body[: 64 * 1024]), key) or reply.reason
                hint = {404: " (check the model's name, and that the endpoint is the base URL, e.g. ending in /v1)",
                        401: " (set the key in RAGSIM_EMBED_API_KEY)",
                        429: f" after {RETRIES} retries (the server asks for fewer requests; try again later)"}
                raise EndpointError(f"{self.url} answered HTTP {reply.status}{hint.get(reply.status, '')}: {said(message)}")
            return self._vectors(reply.body, len(texts))
        raise AssertionError("unreachable")

    @staticmethod
    def _wait(reply, attempt: int) -> float:
        try:
            wait = float(reply.headers.get("Retry-After", ""))
        except ValueError:
            wait = 2.0 ** attempt
        return min(max(0.0, wait), MAX_WAIT)

    @staticmethod
    def _masked(text: str, key: str | None) -> str:
        return text.replace(key, "***") if key else text

    def _vectors(self, body: bytes, count: int):
        np = self.np
        if len(body) > MAX_REPLY_BYTES:
            raise EndpointError(f"{self.url} sent more than {MAX_REPLY_BYTES // 2**20} MB; check the endpoint.")
        try:
            data = json.loads(body.decode("utf-8"))["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0)) if all("index" in d for d in data) else list(data)
            vectors = [d["embedding"] for d in rows]
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise EndpointError(f"{self.url} did not answer with embeddings ({{\"data\": [{{\"embedding\": [...], "
                                "\"index\"}]}); check that it is an OpenAI-compatible embeddings endpoint.") from None
        if len(vectors) != count:
            raise EndpointError(f"{self.url} returned {len(vectors)} vectors for {count} texts; every text needs its "
                                "own vector (check the server's batch limits).")
        dims = {len(v) if isinstance(v, list) else -1 for v in vectors}
        if len(dims) != 1 or -1 in dims or 0 in dims:
            raise EndpointError(f"{self.url} returned vectors of varying or no dimension ({sorted(dims)[:4]}); one "
                                "model gives one dimension: check --embed-model.")
        dim = dims.pop()
        if self.dimension is not None and dim != self.dimension:
            raise EndpointError(f"{self.url} returned vectors of dimension {dim} after {self.dimension}; the model "
                                "changed during the run.")
        try:
            array = np.asarray(vectors, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):  # not numbers, or an integer past any float
            raise EndpointError(f"{self.url} returned an embedding that is not a list of numbers.") from None
        if not np.isfinite(array).all():
            raise EndpointError(f"{self.url} returned an embedding holding NaN or infinity; the model failed on some "
                                "text.")
        scale = np.abs(array).max(axis=1, keepdims=True)  # so the squares of 1e308 do not overflow
        if (scale == 0).any():
            raise EndpointError(f"{self.url} returned an all-zero embedding, which has no direction to compare.")
        array = array / scale
        self.dimension = dim
        return (array / np.linalg.norm(array, axis=1, keepdims=True)).astype(np.float32)


ENV_ENDPOINT, ENV_MODEL = "RAGSIM_EMBED_ENDPOINT", "RAGSIM_EMBED_MODEL"


def configured() -> tuple[str, str] | None:
    """The endpoint and model a command set for this run (`use`), also seen by its worker processes."""
    endpoint, model = os.environ.get(ENV_ENDPOINT), os.environ.get(ENV_MODEL)
    return (endpoint, model) if endpoint and model else None


def use(endpoint: str, model: str) -> None:
    """Rank with `model` at `endpoint` in this process and the workers it starts (their environment)."""
    _base(endpoint)  # refused here, in one sentence, before any work
    if not isinstance(model, str) or not model.strip():
        raise EndpointError("Give the embedding model's name with --embed-model NAME (as the server lists it).")
    os.environ[ENV_ENDPOINT], os.environ[ENV_MODEL] = endpoint, model
    _ONE.clear()


_ONE: dict = {}


def default() -> EndpointEmbedder:
    """This process's embedder of the configured endpoint (one, so its vectors are kept for the run)."""
    return of(*configured())


def of(endpoint: str, model: str) -> EndpointEmbedder:
    """The embedder of `model` at `endpoint`: one per process, so its vectors are kept between
    requests (a request's `retrieval.embedding` names it; a command's --embed-endpoint too)."""
    key = (endpoint, model)
    if key not in _ONE:
        _ONE.clear()
        _ONE[key] = EndpointEmbedder(*key)
    return _ONE[key]
