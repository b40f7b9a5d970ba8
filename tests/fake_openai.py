"""A local OpenAI-compatible server for the tests of "Ask your own model" (ragsim.host.clients.ask and the page's panel)
and of your own embedding model (ragsim.host.clients.embed_endpoint and the page's "Your model"); run as a
script it stands in for Ollama at http://127.0.0.1:11434/v1 (README, "Your own embedding model").

It listens on 127.0.0.1 at a free port, in a thread, and answers as the real API does in shape:
`GET /v1/models` -> `{"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}`,
`POST /v1/chat/completions` -> `{"id", "object": "chat.completion", "created", "model", "choices":
[{"index", "message": {"role": "assistant", "content"}, "finish_reason": "stop"}], "usage"}`, and
errors as `{"error": {"message", "type", "param", "code"}}` with the API's status codes. Every
reply carries CORS headers (as Ollama does for an allowed origin), so a page on another port may
read it. Every request is recorded (`requests`), preflights included.

The model's name says how it behaves:
    reader   answers "From the context: <answer>" when the configured answer is in the prompt, else
             NOT IN CONTEXT (a model that reads only its context, deterministically)
    slow     waits `slow_s` seconds, then answers as `reader` does
    html     answers HTML_REPLY, markup that must reach a page as text
    garbage  200 with an HTML page instead of JSON
    shape    200 with JSON of another shape ({"result": ...})
    broken   promises more bytes than it sends, then closes the connection
    crash    500 with the API's server_error body
    redirect 307 to http://example.com/v1/chat/completions (another host: the page's policy blocks it)
    other    404 model_not_found, as the API says for a model it does not have
With `key` set, a request without `Authorization: Bearer <key>` gets 401 invalid_api_key.

`POST /v1/embeddings` answers as the API does (`{"object": "list", "data": [{"object": "embedding",
"embedding", "index"}], "model", "usage"}`), the model's name saying which vectors:
    minilm   all-MiniLM-L6-v2's, from the project's own ONNX model (ragsim.host.clients.embed_onnx)
    hashed   a hashed bag of words (64 dimensions, counts, not normalised): another model entirely
    nan      a NaN in the first vector;   short  one vector fewer than texts;   ragged  dimensions vary
    busy     429 with Retry-After: 0 for the first two requests, then as `hashed`
    flood    429 always;   moved  302 to another host (127.0.0.2)
    slow     waits `slow_s` seconds, then as `hashed`;   shape  200 with {"embeddings": [...]} (Ollama's /api/embed)
Every embeddings reply, the 429s and the redirect included, carries the CORS headers, so a page reads them.

`POST /v1/rerank` (and `/rerank`) answers as Cohere, Jina and vLLM do (`{"model", "query",
"documents", "top_n"}` -> `{"results": [{"index", "relevance_score"}]}`, best first, top_n of them):
    reverse  scores the documents in reverse of the order given (the last sent is the most relevant)
    lexical  scores by the words a document shares with the query (ties by order given)
    tei      Hugging Face TEI's form: 422 without `texts`, then a bare list [{"index", "score"}]
    rnan     a NaN score;  rfew  one result fewer;  rrange  an index past the documents;
    rtwice   an index repeated;  rshape  {"data": [...]}, another shape;
    rflood   429 always;  rmoved  302 to another host (127.0.0.2);  rslow  waits `slow_s` seconds, then as `reverse`
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODELS = ("reader", "slow", "html", "garbage", "shape", "broken", "crash")
# What the `html` model says: markup a page must show as text (it would run a script as HTML).
HTML_REPLY = '<b>bold</b> <img src=x onerror="window.__ragsimPwned=1"> 42'



def error_body(message: str, kind: str, code: str | None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class FakeOpenAI:
    """`with FakeOpenAI(answer="42,000 km") as api:` ... `api.endpoint` is its /v1 base URL."""

    def __init__(self, answer: str = "", key: str | None = None, slow_s: float = 3.0, port: int = 0):
        self.answer, self.key, self.slow_s = answer, key, slow_s
        self.requests: list[dict] = []  # {"method", "path", "body"} in arrival order
        self.busy = 0  # requests the `busy` embedding model has had
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def chats(self) -> list[dict]:
        """The bodies of the chat-completions requests received so far."""
        with self.lock:
            return [r["body"] for r in self.requests if r["path"] == "/v1/chat/completions" and r["method"] == "POST"]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def reply_to(self, body: dict) -> str:
        """What the `reader` model says to a chat request."""
        prompt = "\n".join(m.get("content", "") for m in body.get("messages", []) if isinstance(m, dict))
        if self.answer and " ".join(self.answer.split()) in " ".join(prompt.split()):
            return f"From the context: {self.answer}"
        return "NOT IN CONTEXT"

    def _handler(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _cors(self):
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "authorization, content-type")
                self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")

            def _send(self, status: int, data: bytes, kind: str = "application/json", length: int | None = None):
                self.send_response(status)
                self._cors()
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _json(self, status: int, obj: dict):
                self._send(status, json.dumps(obj).encode())

            def _record(self, body):
                with api.lock:
                    api.requests.append({"method": self.command, "path": self.path, "body": body})

            def do_OPTIONS(self):
                self._record(None)
                self.send_response(204)
                self._cors()
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _authorised(self) -> bool:
                if api.key is None or self.headers.get("Authorization") == f"Bearer {api.key}":
                    return True
                self._json(401, error_body("Incorrect API key provided. You can find your API key in your "
                                           "account settings.", "invalid_request_error", "invalid_api_key"))
                return False

            def do_GET(self):
                self._record(None)
                if not self._authorised():
                    return
                if self.path != "/v1/models":
                    self._json(404, error_body(f"Unknown request URL: GET {self.path}.", "invalid_request_error", None))
                    return
                data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "ragsim-tests"} for m in MODELS]
                self._json(200, {"object": "list", "data": data})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                self._record(body)
                if not self._authorised():
                    return
                if self.path == "/v1/embeddings" and isinstance(body, dict):
                    self._embeddings(body)
                    return
                if self.path in ("/v1/rerank", "/rerank") and isinstance(body, dict):
                    if body.get("model") == "rmoved":
                        self._moved(self.path)
                        return
                    if body.get("model") == "rflood":
                        self._refuse()
                        return
                    if body.get("model") == "rslow":  # a slow reranker: waits, then reverses as `reverse` does
                        time.sleep(api.slow_s)
                        body = {**body, "model": "reverse"}
                    status, reply = rerank_reply(body)
                    self._json(status, reply)
                    return
                if self.path != "/v1/chat/completions" or not isinstance(body, dict):
                    self._json(404, error_body(f"Unknown request URL: POST {self.path}.", "invalid_request_error", None))
                    return
                self._chat(body)

            def _moved(self, path: str):
                """302 to the same path on another host (127.0.0.2)."""
                self.send_response(302)
                self._cors()
                self.send_header("Location", f"http://127.0.0.2:{self.server.server_address[1]}{path}")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _refuse(self):
                """429 with Retry-After: 0."""
                self.send_response(429)
                self._cors()
                self.send_header("Retry-After", "0")
                data = json.dumps(error_body("Rate limit reached.", "requests", "rate_limit_exceeded")).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _embeddings(self, body: dict):
                model, texts = body.get("model"), body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                if model == "moved":
                    self._moved("/v1/embeddings")
                    return
                if model in ("busy", "flood"):
                    with api.lock:
                        api.busy += 1
                        refuse = model == "flood" or api.busy <= 2
                    if refuse:
                        self._refuse()
                        return
                if model == "slow":
                    time.sleep(api.slow_s)
                if model == "shape":
                    self._json(200, {"embeddings": [hashed_vector(t) for t in texts]})  # Ollama's own /api/embed shape
                    return
                if model == "minilm":
                    vectors = [[float(x) for x in v] for v in minilm_vectors(texts)]
                elif model in ("hashed", "busy", "nan", "short", "ragged", "slow"):
                    vectors = [hashed_vector(t) for t in texts]
                else:
                    self._json(404, error_body(f"model '{model}' not found", "invalid_request_error", "model_not_found"))
                    return
                if model == "nan":
                    vectors[0][0] = float("nan")
                if model == "short":
                    vectors = vectors[:-1]
                if model == "ragged" and len(vectors) > 1:
                    vectors[1] = vectors[1][:10]
                data = [{"object": "embedding", "embedding": v, "index": i} for i, v in enumerate(vectors)]
                self._json(200, {"object": "list", "data": data[::-1], "model": model,  # out of order, as index allows
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})

            def _chat(self, body: dict):
                model = body.get("model")
                if model == "slow":
                    time.sleep(api.slow_s)
                if model == "garbage":
                    self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
                elif model == "shape":
                    self._json(200, {"result": "an answer, but not in the chat-completions shape"})
                elif model == "broken":
                    self._send(200, b'{"id": "chatcmpl-1", "choi', length=4096)
                    self.close_connection = True
                elif model == "redirect":
                    self.send_response(307)
                    self._cors()
                    self.send_header("Location", "http://example.com/v1/chat/completions")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif model == "crash":
                    self._json(500, error_body("The server had an error while processing your request. Sorry about that!",
                                               "server_error", None))
                elif model == "html":
                    self._json(200, completion(model, HTML_REPLY))
                elif model in ("reader", "slow"):
                    self._json(200, completion(model, api.reply_to(body)))
                else:
                    self._json(404, error_body(f"The model `{model}` does not exist or you do not have access to it.",
                                               "invalid_request_error", "model_not_found", "model"))

        return Handler


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then let go): a server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rerank_reply(body: dict) -> tuple[int, object]:
    """(status, JSON) for a /rerank request, by the model's name (see the module)."""
    model, query = body.get("model"), str(body.get("query", ""))
    docs = body.get("texts") if model == "tei" else body.get("documents")
    if model == "tei" and docs is None:
        return 422, {"error": "Failed to deserialize the JSON body into the target type: missing field `texts`",
                     "error_type": "Validation"}
    if not isinstance(docs, list) or model not in ("reverse", "lexical", "tei", "rnan", "rfew", "rrange", "rtwice", "rshape"):
        return 404, error_body(f"model '{model}' not found", "invalid_request_error", "model_not_found")
    words = set(re.findall(r"\w+", query.lower()))
    if model == "reverse":
        scores = [float(i) for i in range(len(docs))]
    else:
        scores = [float(len(words & set(re.findall(r"\w+", str(d).lower())))) for d in docs]
    results = [{"index": i, "relevance_score": scores[i]} for i in sorted(range(len(docs)), key=lambda i: (-scores[i], i))]
    results = results[: body.get("top_n") or len(results)]
    if model == "tei":
        return 200, [{"index": r["index"], "score": r["relevance_score"]} for r in results]
    if model == "rnan" and results:
        results[0]["relevance_score"] = float("nan")
    if model == "rfew":
        results = results[:-1]
    if model == "rrange" and results:
        results[0]["index"] = len(docs)
    if model == "rtwice" and len(results) > 1:
        results[1]["index"] = results[0]["index"]
    if model == "rshape":
        return 200, {"data": results}
    return 200, {"id": "rerank-test", "model": model, "results": results, "usage": {"total_tokens": 0}}


HASHED_DIM = 64


def hashed_vector(text: str) -> list[float]:
    """A hashed bag of words: each lower-case word adds 1 to the dimension its SHA-1 names."""
    v = [0.0] * HASHED_DIM
    for word in re.findall(r"\w+", text.lower()):
        v[int(hashlib.sha1(word.encode()).hexdigest(), 16) % HASHED_DIM] += 1.0
    if not any(v):
        v[0] = 1.0  # an empty text still has a direction
    return v


def minilm_vectors(texts: list[str]):
    """all-MiniLM-L6-v2's unit vectors, as ragsim's own host computes them."""
    from ragsim.host.clients.embed_onnx import default_embedder

    return default_embedder().embed(list(texts))


def completion(model: str, content: str) -> dict:
    """A chat-completions reply of the real API's shape."""
    return {
        "id": "chatcmpl-ragsim-test", "object": "chat.completion", "created": int(time.time()), "model": model,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "logprobs": None,
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": len(content.split()), "total_tokens": 10 + len(content.split())},
    }


if __name__ == "__main__":  # `python3 tests/fake_openai.py --port 11434`: a stand-in for `ollama serve` (README)
    import argparse
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))  # ragsim, for the minilm model's vectors
    parser = argparse.ArgumentParser(description="A local OpenAI-compatible server (the tests' stand-in).")
    parser.add_argument("--port", type=int, default=11434, help="the port on 127.0.0.1 (Ollama's by default)")
    with FakeOpenAI(port=parser.parse_args().port) as api:
        print(f"serving {api.endpoint} (embedding models: minilm, hashed); Ctrl-C stops it", flush=True)
        try:
            api.thread.join()
        except KeyboardInterrupt:
            pass
