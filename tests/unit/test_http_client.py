"""The command line's outward HTTP (ragsim.host.clients.http_client, used by ragsim.host.clients.ask) against servers
this file starts on 127.0.0.1 and 127.0.0.2: a redirect to another origin is refused before anything
is sent there (so a key never travels), a redirect within the origin is followed, and `--timeout` is
a deadline for the whole request, so a server that drips a byte at a time is cut off in time. Every
failure is one sentence that never holds the key."""

import contextlib
import json
import pathlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fake_openai import completion
from helpers import CORE, cli_env, run_cli
from ragsim.host.clients import ask

pytestmark = pytest.mark.slow  # real sockets and deadlines of seconds

ROOT = pathlib.Path(__file__).resolve().parents[2]
KEY = "sk-secret-test-key-0123456789"
HI = [{"role": "user", "content": "hi"}]


@contextlib.contextmanager
def serve(respond, host="127.0.0.1"):
    """A server on `host` at a free port, in a thread; `respond(handler)` answers every GET and POST.
    Yields (its origin, the requests it received: {"method", "path", "headers", "body"})."""
    seen, stop = [], threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.answer()

        def do_POST(self):
            self.answer()

        def answer(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
            try:
                respond(self, stop)
            except OSError:  # the client went away (a cut-off drip)
                self.close_connection = True

    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{httpd.server_address[1]}", seen
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()


def send(handler, status, body=b"", headers=()):
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def chat_reply(handler, stop=None):
    send(handler, 200, json.dumps(completion("m", "From the other server")).encode(), [("Content-Type", "application/json")])


def one_sentence(text: str):
    assert "\n" not in text and "Traceback" not in text and KEY not in text, text


@pytest.fixture()
def elsewhere():
    """Another origin (127.0.0.2 where that address can be bound, as on Linux), which answers everything."""
    try:
        with serve(chat_reply, "127.0.0.2") as other:
            yield other
    except OSError:
        with serve(chat_reply) as other:
            yield other


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_refused_and_nothing_reaches_it(elsewhere, status):
    other, reached = elsewhere
    target = f"{other}/v1/chat/completions"
    with serve(lambda h, stop: send(h, status, headers=[("Location", target)])) as (origin, seen):
        with pytest.raises(ask.AskError) as e:
            ask.complete(f"{origin}/v1", "m", HI, key=KEY, timeout=10)
        with pytest.raises(ask.AskError) as listed:
            ask.models(f"{origin}/v1", KEY)
    text = str(e.value)
    one_sentence(text)
    one_sentence(str(listed.value))
    assert reached == [] and seen[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert f"{origin}/v1/chat/completions redirects to another origin, {other};" in text
    assert f"only within {origin}" in text
    assert "point --endpoint at the server itself" in text


def test_a_redirect_to_another_scheme_or_port_of_the_same_host_is_another_origin(elsewhere):
    port = int(elsewhere[0].rsplit(":", 1)[1])
    for location in (f"https://127.0.0.1:{port}/v1/models", f"http://127.0.0.1:{port}/v1/models", "ftp://127.0.0.1/x"):
        with serve(lambda h, stop: send(h, 302, headers=[("Location", location)])) as (origin, seen):
            with pytest.raises(ask.AskError, match="redirects to another origin") as e:
                ask.models(f"{origin}/v1", KEY)
        one_sentence(str(e.value))
        assert len(seen) == 1


def test_the_command_line_refuses_it_in_one_line_without_the_key(elsewhere, tmp_path):
    other, reached = elsewhere
    doc = tmp_path / "doc.txt"
    doc.write_text("Neptune's Galle Ring lies 42,000 km from the centre.", encoding="utf-8")
    with serve(lambda h, stop: send(h, 302, headers=[("Location", f"{other}/v1/chat/completions")])) as (origin, seen):
        out = run_cli("ask", doc, "--question", "How far?", "--endpoint", f"{origin}/v1", "--model", "m", "--json",
                      cwd=CORE, env=cli_env(OPENAI_API_KEY=KEY))
    assert out.returncode == 2 and out.stdout == "" and reached == [] and len(seen) == 1
    assert out.stderr.startswith("ragsim ask: ") and out.stderr.count("\n") == 1, out.stderr
    assert "redirects to another origin" in out.stderr and KEY not in out.stderr


def same_origin(handler, stop):
    """/v1/... moves to /v2/... (a POST with 307, as its method and body); /v2/... answers; /loop loops."""
    if handler.path.startswith("/v1/models"):
        send(handler, 301, headers=[("Location", "/v2/models")])
    elif handler.path.startswith("/v1/"):
        send(handler, 307, headers=[("Location", handler.path.replace("/v1/", "/v2/", 1))])
    elif handler.path == "/v2/models":
        send(handler, 200, json.dumps({"data": [{"id": "m"}]}).encode())
    elif handler.path == "/v2/chat/completions" and handler.command == "POST":
        chat_reply(handler)
    else:
        send(handler, 302, headers=[("Location", handler.path)])


def test_a_redirect_within_the_origin_is_followed_with_the_key_the_method_and_the_body():
    with serve(same_origin) as (origin, seen):
        assert ask.complete(f"{origin}/v1", "m", HI, key=KEY, timeout=10) == "From the other server"
        assert ask.models(f"{origin}/v1", KEY) == ["m"]
        with pytest.raises(ask.AskError, match="redirected more than 5 times") as e:
            ask.models(f"{origin}/loop", KEY, timeout=10)
    one_sentence(str(e.value))
    first, second = seen[:2]
    assert (first["method"], first["path"], second["method"], second["path"]) == \
        ("POST", "/v1/chat/completions", "POST", "/v2/chat/completions")
    assert second["body"] == first["body"] and json.loads(second["body"])["messages"] == HI
    assert second["headers"]["Authorization"] == f"Bearer {KEY}"


def drip(where):
    """A server that sends the end of its headers, or its body, one byte every 0.5 s (a read never waits long)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\nX-Slow: " + b"a" * 20 + b"\r\n\r\n"
    whole = head + b'{"choices": []}     '
    at = len(head) - 15 if where == "headers" else len(head)

    def respond(handler, stop):
        handler.wfile.write(whole[:at])
        handler.wfile.flush()
        for byte in whole[at:]:
            if stop.wait(0.5):
                return
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
        handler.close_connection = True
    return respond


@pytest.mark.parametrize("where", ["headers", "body"])
def test_the_timeout_is_a_deadline_for_the_whole_request(where):
    with serve(drip(where)) as (origin, seen):
        started = time.monotonic()
        with pytest.raises(ask.AskError, match=r"did not answer within 1.5 s; a slow model needs a longer --timeout"):
            ask.complete(f"{origin}/v1", "m", HI, key=KEY, timeout=1.5)
        took = time.monotonic() - started
    assert 1.4 < took < 4, took


def test_a_server_that_quotes_the_key_back_does_not_get_it_printed():
    def echo(handler, stop):
        send(handler, 401, json.dumps({"error": {"message": f"Bad key {handler.headers['Authorization']}"}}).encode())
    with serve(echo) as (origin, seen):
        with pytest.raises(ask.AskError, match=r"HTTP 401 .*Bad key Bearer \*\*\*") as e:
            ask.complete(f"{origin}/v1", "m", HI, key=KEY, timeout=10)
    one_sentence(str(e.value))
