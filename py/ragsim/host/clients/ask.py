"""An OpenAI-compatible chat-completions client, standard library only (ragsim.host.clients.http_client:
a redirect is followed only within the endpoint's origin, and --timeout is a deadline for a whole request).

`POST {endpoint}/chat/completions` for each sample, `GET {endpoint}/models` for the model list. Ollama
(`http://localhost:11434/v1`), llama.cpp's server, vLLM and LM Studio all speak this. One request per
sample, not the API's `n`: Ollama and several llama.cpp builds ignore `n` and return one choice, so
asking `n` times is the only way that gives n samples everywhere (the first choice of each reply is
the sample). A key, when the server wants one, is read from an environment variable (named by the
caller, `OPENAI_API_KEY` by default), never from a flag or a file. Every failure is an `AskError`
whose message is one sentence a person can act on.
"""

import json
import os
import urllib.parse

from ragsim.host.clients import http_client

DEFAULT_TIMEOUT = 120.0  # seconds for one sample: a local model on a CPU can take a while
MAX_REPLY_BYTES = 8 * 2**20  # a chat reply is a few kilobytes; more is not a chat reply
SHOWN = 200  # characters of a server's own error message quoted in a sentence


class AskError(Exception):
    """The endpoint did not give an answer; `str(e)` is one sentence saying what to do."""


def check_endpoint(endpoint: str) -> str:
    """The endpoint without a trailing slash; AskError unless it is an http(s) URL with a host."""
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AskError(f"The endpoint {endpoint!r} is not an http:// or https:// URL; give the server's "
                       "OpenAI-compatible base URL, e.g. http://localhost:11434/v1.")
    return endpoint.strip().rstrip("/")


def api_key(env_name: str) -> str | None:
    """The key in the environment variable `env_name`, or None when it is unset or empty."""
    return os.environ.get(env_name) or None


def said(text: str) -> str:
    """A server's own words closing our sentence: a full stop added unless they end one already."""
    text = text.strip() or "no reason given"
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def server_message(body: bytes) -> str:
    """The server's own error text: OpenAI's {"error": {"message"}}, Ollama's {"error": "..."}, or the body."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message")
        if isinstance(err, str) and err.strip():
            text = err.strip()
    text = " ".join(text.split())
    return text[:SHOWN] + ("…" if len(text) > SHOWN else "")


def _request(url: str, key: str | None, timeout: float, payload: dict | None = None):
    """The JSON of a GET (no payload) or POST to `url`; AskError with one sentence for any failure,
    which never holds the key (a server may quote what it was sent)."""
    try:
        return _exchange(url, key, timeout, payload)
    except AskError as e:
        if key and key in str(e):
            raise AskError(str(e).replace(key, "***")) from None
        raise


def _exchange(url: str, key: str | None, timeout: float, payload: dict | None):
    headers = {"Accept": "application/json", "User-Agent": "ragsim"}
    data = None
    if payload is not None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        reply = http_client.fetch(url, method="GET" if data is None else "POST", headers=headers, body=data,
                                  timeout=timeout, max_bytes=MAX_REPLY_BYTES)
    except http_client.HTTPFailure as e:
        raise AskError(str(e)) from None
    body = reply.body
    if not 200 <= reply.status < 300:
        message = server_message(body[:64 * 1024])
        hint = {401: " (set the key in the environment variable --api-key-env names)",
                404: " (check the model's name and that the endpoint ends in /v1)"}.get(reply.status, "")
        raise AskError(f"{url} answered HTTP {reply.status}{hint}: {said(message or reply.reason)}")
    if len(body) > MAX_REPLY_BYTES:
        raise AskError(f"{url} sent more than {MAX_REPLY_BYTES // 2**20} MB, which is no chat reply; check the endpoint.")
    try:
        return json.loads(body.decode("utf-8"))
    except RecursionError:
        raise AskError(f"{url} answered with JSON nested too deeply to be a chat reply; check the endpoint.") from None
    except ValueError:
        raise AskError(f"{url} did not answer with JSON (it sent {len(body):,} bytes of something else); "
                       "check that the endpoint is an OpenAI-compatible API (a streaming one is not asked for).") from None


def models(endpoint: str, key: str | None = None, timeout: float = 10.0) -> list[str]:
    """The model names the server lists (`GET /models`: `{"data": [{"id": ...}]}`)."""
    url = check_endpoint(endpoint) + "/models"
    data = _request(url, key, timeout)
    listed = data.get("data") if isinstance(data, dict) else None
    if not isinstance(listed, list) or not all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in listed):
        raise AskError(f"{url} answered, but not with a model list ({{\"data\": [{{\"id\": ...}}]}}); "
                       "check that it is an OpenAI-compatible endpoint.")
    return [m["id"] for m in listed]


def content_of(data, url: str) -> str:
    """The first choice's message text of a chat-completions reply; AskError for another shape."""
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise AskError(f"{url} answered JSON without choices[0].message.content text; check that it is an "
                       "OpenAI-compatible chat-completions endpoint.")
    return content


def complete(endpoint: str, model: str, messages: list[dict], *, temperature: float | None = None,
             key: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> str:
    """One sample: the model's reply to `messages`, verbatim."""
    url = check_endpoint(endpoint) + "/chat/completions"
    payload = {"model": model, "messages": messages, "stream": False}
    if temperature is not None:
        payload["temperature"] = temperature
    try:
        data = _request(url, key, timeout, payload)
    except AskError as e:
        raise AskError(_with_models(str(e), endpoint, model, key)) from None
    return content_of(data, url)


def _with_models(sentence: str, endpoint: str, model: str, key: str | None) -> str:
    """A 404's sentence with the models the server does list, when it lists any."""
    if " HTTP 404" not in sentence:
        return sentence
    try:
        names = models(endpoint, key, timeout=5.0)
    except AskError:
        return sentence
    if names and model not in names:
        return f"{sentence.rstrip('.')}; the server lists {', '.join(names[:10])}."
    return sentence


def sample(endpoint: str, model: str, messages: list[dict], samples: int, **options) -> list[str]:
    """`samples` replies to the same messages, one request each, in order; the first failure stops."""
    return [complete(endpoint, model, messages, **options) for _ in range(samples)]
