"""The command line's outward HTTP, standard library only (`http.client`): one request, its reply read
whole, under two rules that hold for every request.

- A redirect is followed only within the origin asked (scheme, host and port). A redirect anywhere
  else is refused with a sentence before anything is sent there: a request may carry a key
  (`Authorization`), and a server must not be able to hand it, or the prompt, to another host, nor
  pass off another host's reply as its own. Within the origin, 303 (and 301 or 302 after a POST)
  becomes a GET without the body, 307 and 308 repeat the method and the body, as browsers do; at
  most MAX_REDIRECTS.
- `timeout` is a deadline for the whole request: connecting, sending, every redirect and reading
  the whole reply. A socket's timeout bounds each read only, so a server sending a byte a second
  would never be cut off; a watchdog thread shuts the socket down when the deadline passes.
  (Looking up the host's name is not bounded: the standard library cannot interrupt it.)

Proxies named in the environment (`http_proxy`) are not used. Every failure is an HTTPFailure whose
message is one sentence a person can act on; a reply with any status is returned as it came.
"""

import http.client
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass

MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
DEFAULT_PORTS = {"http": 80, "https": 443}
SHOWN = 200  # characters of a server's Location quoted in a sentence


class HTTPFailure(Exception):
    """No whole reply came; `str(e)` is one sentence saying what to do."""


@dataclass
class Reply:
    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes  # at most max_bytes + 1 bytes: one more than allowed says the reply was too long


def origin(url: str) -> str | None:
    """`scheme://host:port` of an http(s) URL, the port always spelled out; None for any other URL."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is not a number
        return None
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{scheme}://{host}:{port or DEFAULT_PORTS[scheme]}"


def fetch(url: str, *, method: str = "GET", headers: dict | None = None, body: bytes | None = None,
          timeout: float, max_bytes: int) -> Reply:
    """The reply to one request, redirects within its origin followed, all within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    start, asked, headers = origin(url), url, dict(headers or {})
    if start is None:
        raise HTTPFailure(f"{url} is not an http:// or https:// URL with a host and a numeric port; "
                          "check the endpoint's address.")
    for _ in range(MAX_REDIRECTS + 1):
        reply = _once(url, method, headers, body, deadline, (asked, timeout), max_bytes)
        location = reply.headers.get("Location", "").strip()
        if reply.status not in REDIRECTS or not location:
            return reply
        url = urllib.parse.urljoin(url, location)
        if origin(url) != start:
            shown = origin(url) or " ".join(url.split())[:SHOWN]
            raise HTTPFailure(f"{asked} redirects to another origin, {shown}; ragsim follows a redirect only "
                              f"within {start}, so neither the request nor its key went there: point --endpoint "
                              "at the server itself.")
        if reply.status == 303 or (reply.status in (301, 302) and method == "POST"):
            method, body = "GET", None
            headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    raise HTTPFailure(f"{asked} redirected more than {MAX_REDIRECTS} times; point --endpoint at the server itself.")


def _once(url: str, method: str, headers: dict, body: bytes | None, deadline: float, named: tuple,
          max_bytes: int) -> Reply:
    """One request and its reply, cut off at `deadline`; `named` is (the URL, the timeout) sentences name."""
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme.lower() == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, parts.port, timeout=max(deadline - time.monotonic(), 0.001))
    cut, watchdog = threading.Event(), None
    try:
        try:
            conn.connect()  # bounded by the connection's timeout: what is left of the deadline
        except (OSError, ValueError) as e:  # ValueError: a host name IDNA cannot encode
            raise HTTPFailure(_unreachable(*named, e)) from None
        watchdog = threading.Timer(deadline - time.monotonic(), _cut, (conn.sock, cut))
        watchdog.daemon = True  # never keeps a process stopped with Ctrl-C alive
        watchdog.start()
        try:
            conn.request(method, urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, "")), body, headers)
            reply = conn.getresponse()
            data = reply.read(max_bytes + 1)
            promised = reply.headers.get("Content-Length", "")
            if promised.isdigit() and len(data) < min(int(promised), max_bytes + 1):
                raise http.client.IncompleteRead(data, int(promised) - len(data))
        except (OSError, http.client.HTTPException) as e:
            if cut.is_set() or isinstance(e, TimeoutError):
                raise HTTPFailure(_late(*named)) from None
            raise HTTPFailure(f"The connection to {named[0]} broke before the reply was complete "
                              f"({type(e).__name__}); check the server's log.") from None
    finally:
        if watchdog is not None:
            watchdog.cancel()
        conn.close()
    if cut.is_set():  # a reply that ends where the connection does, cut short by the deadline
        raise HTTPFailure(_late(*named))
    return Reply(reply.status, reply.reason, reply.headers, data)


def _cut(sock: socket.socket, cut: threading.Event) -> None:
    """The deadline has passed: shut the connection down, so that a blocked read returns at once."""
    cut.set()
    try:
        # The plain socket's shutdown, also for TLS: SSLSocket.shutdown would drop its TLS state
        # under a read in progress in the other thread.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


def _late(url: str, timeout: float) -> str:
    return f"{url} did not answer within {timeout:g} s; a slow model needs a longer --timeout."


def _unreachable(url: str, timeout: float, reason: Exception) -> str:
    """The sentence for a connection that could not be made."""
    if isinstance(reason, TimeoutError):
        return _late(url, timeout)
    if isinstance(reason, ConnectionRefusedError):
        return f"Nothing answers at {url} (connection refused); start the model's server or fix the address."
    if isinstance(reason, socket.gaierror):
        return f"The host of {url} was not found; check the endpoint's address."
    return f"{url} could not be reached ({reason}); check the endpoint and that its server runs."
