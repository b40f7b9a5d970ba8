"""One JSON POST to a model server of the user's own (an embedding or a reranking endpoint), as the
two clients share it: through `http_client` (no redirect to another host, a total deadline), the key
as a Bearer header to the endpoint's own origin only, HTTP 429 and 503 retried after the server's
Retry-After (or 1, 2, 4 s, at most MAX_WAIT), and every failure one sentence (`fail(message)`
raises it), the key masked wherever a server echoes it."""

import json

from ragsim.host.clients import http_client
from ragsim.host.clients.ask import said, server_message

RETRIES = 3  # after a 429 or 503
MAX_WAIT = 30.0  # seconds of Retry-After honoured
HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "ragsim"}


def post(url: str, payload: dict, key: str | None, *, timeout: float, max_bytes: int, sleep, fail, hints: dict,
         counted=None) -> http_client.Reply:
    """The 2xx reply to `payload` POSTed to `url`; `fail(sentence)` for anything else. `hints` adds
    advice after the status code (by status); `counted()` is called per request sent."""
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    headers = dict(HEADERS, **({"Authorization": f"Bearer {key}"} if key else {}))
    for attempt in range(RETRIES + 1):
        try:
            reply = http_client.fetch(url, method="POST", headers=headers, body=body, timeout=timeout,
                                      max_bytes=max_bytes)
        except http_client.HTTPFailure as e:
            raise fail(masked(str(e), key)) from None
        if counted is not None:
            counted()
        if reply.status in (429, 503) and attempt < RETRIES:
            sleep(wait(reply, attempt))
            continue
        if not 200 <= reply.status < 300:
            message = masked(server_message(reply.body[: 64 * 1024]), key) or reply.reason
            hint = {**hints, 429: f" after {RETRIES} retries (the server asks for fewer requests; try again later)"}
            raise fail(f"{url} answered HTTP {reply.status}{hint.get(reply.status, '')}: {said(message)}")
        return reply
    raise AssertionError("unreachable")


def wait(reply, attempt: int) -> float:
    """Seconds to wait before retrying: the server's Retry-After, else 1, 2, 4 s."""
    try:
        seconds = float(reply.headers.get("Retry-After", ""))
    except ValueError:
        seconds = 2.0 ** attempt
    return min(max(0.0, seconds), MAX_WAIT)


def masked(text: str, key: str | None) -> str:
    return text.replace(key, "***") if key else text
