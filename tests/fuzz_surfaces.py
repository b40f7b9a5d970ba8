"""The fuzz beyond `simulate`: hostile chunk files, docstores, Parquet files, page state
files, `--chunking` objects, question files, model replies and the page's embedding vectors, each
through the entry points that read them, the command line's and the page's worker's.

`run(surface, seed)` builds one input from the seed (tests/fuzz_files.py builds the files), sends it
through its readers within a time limit and returns "response" or "error"; it raises `Malformed`
when an answer breaks the contract, `Hang` past the limit, and lets any other exception escape
(the failure the fuzz looks for). The standard is `simulate`'s: a refusal is a `RequestError` (or the
command's one-sentence error) whose message is one sentence within `errors.MAX_MESSAGE`, and an
answer keeps its shape (chunks with text and a document, extents inside their documents, one check
per sample). tests/property/test_fuzz_surfaces.py runs a bounded slice in CI, tests/fuzz_long.py the
long run (`--surface`).

    surface       entry points
    chunks        wire.chunk_files.parse, wire.inspect.inspect and inspect_json (the page's worker)
    docstore      the same, for LlamaIndex docstore.json files
    parquet       host.clients.store_files.read and .pages (the command line's reader), stores.read_store
    state         wire.state_file.is_state / to_request, then simulate and simulate_json
    chunking      cli_common.read_chunking (--chunking), inspect_compare.compare, audit, simulate
    questions     question_io.read_set, import_questions(_json), inspect's question_file
    replies       host.clients.ask.complete and models over a server's reply, ask_checks.page_call / page_json
    vectors       simulate with `semantic_vectors` for the keys `semantic_needs` named, bent
    cli           `python -m ragsim` itself: inspect, export, audit --chunking, eval --questions, a state file
"""

import argparse
import base64
import contextlib
import json
import os
import pathlib
import random
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fuzz_files as files
from fuzz_requests import LONG, PIECES, Hang, Malformed, _limit, any_json, check_error, check_response, chunking

from ragsim.errors import MAX_MESSAGE, RequestError
from ragsim.host.commands import cli_common
from ragsim.host.clients import ask, http_client, store_files, stores
from ragsim.split import semantic_split
from ragsim.judge.stored import align
from ragsim.wire import ask_checks, chunk_files, inspect_compare, jsonio, question_io, state_file
from ragsim.wire.api import simulate, simulate_json
from ragsim.wire.audit import audit
from ragsim.wire.inspect import inspect, inspect_json

ROOT = pathlib.Path(__file__).resolve().parent.parent
# A request the cost guard lets through may take its 30 s (an upper bound within about 2x): an input
# is a hang past twice that, in CPU seconds (the command line: on the clock).
LIMIT = 60.0


def refused(e: RequestError) -> str:
    """A RequestError checked as the page would show it."""
    check_error({"field": e.field, "message": e.message})
    return "error"


def answered(r: dict) -> str:
    """A `{"error": ...}` answer checked, or "response"."""
    if "error" in r:
        check_error(r["error"])
        return "error"
    return "response"


def same_through_json(request, direct: dict, entry) -> None:
    """The worker's string-to-string entry point `entry` answers `request` as the function did (`direct`).
    Where JSON text cannot carry the request as it is (a lone high surrogate next to a lone low one
    is one character once written as JSON, as in JavaScript's strings), only its text is checked."""
    text = jsonio.dumps(request)
    through = entry(text)
    through.encode("utf-8")  # lone surrogates escaped
    if json.loads(text) == request and json.loads(through) != json.loads(jsonio.dumps(direct)):
        raise Malformed("the JSON entry point's answer differs from the function's")


def check_chunks(chunks) -> None:
    for c in chunks:
        if not (isinstance(c, dict) and isinstance(c.get("text"), str) and isinstance(c.get("doc"), str)
                and isinstance(c.get("id"), str) and isinstance(c.get("metadata"), dict)):
            raise Malformed(f"a chunk read is not {{id, text, doc, metadata}}: {c!r:.200}")
        for key in ("start", "end"):
            if c.get(key) is not None and not (type(c[key]) is int and c[key] >= 0):
                raise Malformed(f"a chunk's {key} is {c[key]!r:.50}")


def check_inspected(request: dict, r: dict) -> str:
    kind = answered(r)
    if kind == "error":
        return kind
    texts = {d["id"]: d["text"] for d in request.get("documents") or []}
    texts.update({d["id"]: d["text"] for d in r["documents"] if isinstance(d.get("text"), str)})
    for c in r["chunks"]:
        if c["start"] is not None and not 0 <= c["start"] <= c["end"] <= len(texts.get(c["doc"], "")):
            raise Malformed(f"a placed chunk outside its document: {c['doc']!r:.40} {c['start']}-{c['end']}")
    if r["stats"]["chunks"] != len(r["chunks"]) if "chunks" in r.get("stats", {}) else False:
        raise Malformed("stats.chunks is not the number of chunks")
    return kind


@contextlib.contextmanager
def no_embedder():
    """Semantic splits pending instead of embedded on the CPU: the page's way, and fast."""
    saved = semantic_split.HOSTS[:]
    semantic_split.HOSTS[:] = []
    try:
        yield
    finally:
        semantic_split.HOSTS[:] = saved


# --- chunk files and docstores ----------------------------------------------------------------------

def inspect_request(rng: random.Random, docs: list[dict], name: str, text: str) -> dict:
    request = {"file": {"name": name, "text": text}}
    if rng.random() < 0.7:
        request["documents"] = docs
    if rng.random() < 0.3:
        request["file"][rng.choice(["text_field", "doc_field"])] = rng.choice(["text", "source", "body", "x"])
    if rng.random() < 0.3:
        request["phrases"] = [files.words(rng, 3) for _ in range(rng.randrange(3))]
    if rng.random() < 0.2:
        request["query"] = files.words(rng, 4)
        request["questions"] = [{"id": "q", "query": request["query"], "references": [files.reference(rng, docs)]}]
    if rng.random() < 0.15:
        request["chunking"] = chunking(rng)
    if rng.random() < 0.05:
        request[rng.choice(["span", "retrieval", "tokenizer", "documents", "phrases"])] = any_json(rng)
    return request


def read_file(rng: random.Random, kind: str) -> str:
    docs = files.documents(rng)
    name, text = files.chunk_file(rng, docs, kind)
    try:
        _, chunks = chunk_files.parse(name, text)
        check_chunks(chunks)
    except RequestError as e:
        refused(e)
    request = inspect_request(rng, docs, name, text)
    with no_embedder():
        r = inspect(request)
        kind = check_inspected(request, r)
        same_through_json(request, r, inspect_json)
    return kind


def surface_chunks(rng: random.Random) -> str:
    return read_file(rng, rng.choice(["jsonl", "json", "csv"]))


def surface_docstore(rng: random.Random) -> str:
    return read_file(rng, "docstore")


def surface_parquet(rng: random.Random) -> str:
    docs = files.documents(rng)
    data = files.parquet_bytes(rng, docs)
    if data is None:
        return "error"  # pyarrow missing: nothing to read
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / rng.choice(["chunks.parquet", "C.PARQUET"])
        path.write_bytes(data)
        options = {rng.choice(["text_field", "doc_field"]): rng.choice(["text", "source", "body"])} \
            if rng.random() < 0.2 else {}
        try:
            _, chunks = store_files.read("file", path, **options)
            check_chunks(chunks)
            _, pages = store_files.pages("file", path, page=rng.choice([1, 2, 1000]), **options)
            paged = [c for page in pages for c in page]
            if [c["id"] for c in paged] != [c["id"] for c in chunks]:
                raise Malformed("the paged reader's chunks are not the whole reader's")
            read = stores.read_store(str(path), **options)
            if read["store"]["chunks"] != len(chunks):
                raise Malformed("read_store counts other chunks")
            return "response"
        except RequestError as e:
            return refused(e)


# --- state files --------------------------------------------------------------------------------------

STRATEGIES = ["window", "sentences", "langchain-character", "langchain-recursive", "haystack", "langchain-token",
              "llamaindex-sentence", "llamaindex-token", "llamaindex-markdown", "langchain-semantic",
              "llamaindex-semantic", "chroma-cluster", "chroma-kamradt", "nope"]


def u16(text: str, cp: int) -> int:
    """A code-point offset as the page's UTF-16 one."""
    return len(text[:cp].encode("utf-16-le", "surrogatepass")) // 2


def mark(rng: random.Random, docs: list[dict]) -> dict:
    d = rng.choice(docs)
    n = len(d["text"])
    a = rng.randrange(n + 1)
    b = min(n, a + rng.randrange(1, 20))
    out = {"doc": files.odd(rng, d["id"]), "start": files.odd(rng, u16(d["text"], a)),
           "end": files.odd(rng, u16(d["text"], b) + rng.choice([0, 0, 0, 1, 50]))}
    return out


def state(rng: random.Random) -> dict:
    """The page's "Download state" file, as persist.js writes it, bent."""
    docs = files.documents(rng)
    settings = {"strategy": rng.choice(STRATEGIES), "q": files.odd(rng, files.words(rng, 4))}
    for name, _, default, by_strategy, *_ in state_file.ROWS:
        if rng.random() < 0.3:
            settings[name] = files.odd(rng, by_strategy.get(settings["strategy"], default))
    if rng.random() < 0.2:
        settings[rng.choice(["separators", "separator", "backup_separators", "metadata", "secondary_chunking_regex"])] = \
            rng.choice(["[", "\"\\n\"", "[\"a\", 1]", "null", "{}", "\"" + "x" * 600 + "\"", "[" * 3000])
    for name in ("count", "price"):
        if rng.random() < 0.1:
            settings[name] = any_json(rng)
    s = {"ragsim": "state", "version": files.odd(rng, 1), "docs": files.odd(rng, docs), "sel": files.odd(rng, 0),
         "settings": files.odd(rng, settings)}
    if rng.random() < 0.4:
        s["span"] = mark(rng, docs)
    if rng.random() < 0.3:
        s["fact"] = {"doc": docs[0]["id"], "name": mark(rng, docs[:1]), "value": mark(rng, docs[:1])}
    if rng.random() < 0.4:
        s["questions"] = [files.odd(rng, {"id": files.odd(rng, f"q{i}"), "query": files.odd(rng, files.words(rng, 3)),
                                          "refs": files.odd(rng, [mark(rng, docs) for _ in range(rng.randrange(3))])})
                          for i in range(rng.randrange(4))]
    if rng.random() < 0.1:
        s["index"] = {"result": {"phrases": [None, 1, {"text": "x"}]}}  # the page's saved index, ignored here
    return s


def surface_state(rng: random.Random) -> str:
    s = state(rng)
    if not state_file.is_state(s):
        raise Malformed("a state file is not recognised as one")
    try:
        request = state_file.to_request(s)
    except RequestError as e:
        return refused(e)
    with no_embedder():
        r = simulate(request)
        kind = answered(r)
        if kind == "response":
            check_response(request, r)
        same_through_json(request, r, simulate_json)
    return kind


# --- --chunking objects -------------------------------------------------------------------------------

def chunking_text(rng: random.Random) -> str:
    """A --chunking argument: a splitter's object, bent, as the text a shell passes."""
    c = chunking(rng)
    r = rng.random()
    if r < 0.1:
        c = {"strategy": rng.choice(STRATEGIES[9:]), **{k: files.odd(rng, v) for k, v in
                                                        (("buffer_size", 1), ("min_chunk_size", 20),
                                                         ("breakpoint_threshold_type", "percentile")) if rng.random() < 0.5}}
    elif r < 0.2:
        c[rng.choice(["chunk_size", "Size", "overlap ", "separatorz", "strategy"])] = any_json(rng)
    elif r < 0.25:
        c = rng.choice([files.deep(rng.choice([100, 900, 3000])), {"strategy": files.deep(950)}, any_json(rng)])
    text = files.dumps(rng, c)
    if rng.random() < 0.05:
        text = rng.choice([text[: len(text) // 2], "", "{", "'size': 3", "[" * 5000, "{\"a\":" * 2000 + "1"])
    return text


def surface_chunking(rng: random.Random) -> str:
    text = chunking_text(rng)
    try:
        value = cli_common.read_chunking(argparse.Namespace(chunking=text, chunking_file=None))
    except ValueError as e:
        check_error({"field": "--chunking", "message": str(e)})
        return "error"
    docs = files.documents(rng)
    with no_embedder():
        kinds = [answered(simulate({"documents": docs, "query": "cat", "chunking": value, "retrieval": {"k": 2}})),
                 answered(audit({"documents": docs, "chunking": value, "overlaps": [0, rng.randrange(4)]}))]
        d = docs[0]
        stored = [{"id": str(i), "text": d["text"][i:i + 9], "doc": d["id"]} for i in range(0, len(d["text"]), 7)]
        try:
            inspect_compare.compare(value, align(stored, {d["id"]: d["text"]}))
            kinds.append("response")
        except RequestError as e:
            kinds.append(refused(e))
    return "response" if "response" in kinds else "error"


# --- question files -----------------------------------------------------------------------------------

def surface_questions(rng: random.Random) -> str:
    docs = files.documents(rng)
    name, text = files.question_file(rng, docs)
    fmt = question_io.format_of(name) if rng.random() < 0.9 else rng.choice(["auto", "json", "jsonl", "csv", "xml"])
    every = rng.random() < 0.2
    kind = "error"
    try:
        questions, problems = question_io.read_set(text, docs, fmt, rng.choice(["strict", "skip"]), every)
        for p in problems:
            check_error({"field": p["field"], "message": p["message"]})
        for q in questions:
            if not all(0 <= a < b <= len(docs[d]["text"]) for d, a, b in q.refs):
                raise Malformed(f"a question's reference outside its document: {q.refs!r:.100}")
        kind = "response"
    except RequestError as e:
        refused(e)
    payload = {"text": text, "documents": docs, "format": fmt, "every_occurrence": every}
    r = question_io.import_questions(payload)
    answered(r)
    same_through_json(payload, r, question_io.import_questions_json)
    if rng.random() < 0.2:
        request = {"chunks": [{"id": "0", "text": docs[0]["text"][:20], "doc": docs[0]["id"]}], "documents": docs,
                   "question_file": {"name": name, "text": text}}
        check_inspected(request, inspect(request))
    return kind


# --- model replies ------------------------------------------------------------------------------------

KEY = "sk-fuzz-0123456789"


def reply_body(rng: random.Random) -> bytes:
    """What a server sends back for a chat completion or a model list."""
    content = rng.choice(["The fee is 40 dollars.", "NOT IN CONTEXT", "", "Straße", "\ud800".encode("utf-8",
                          "surrogatepass").decode("utf-8", "replace"), "\x1b[2J\x1b]0;t\x07", LONG, None, 42,
                          ["a"], {"text": "a"}, f"echo {KEY}"])
    message = files.odd(rng, {"role": "assistant", "content": content})
    choice = files.odd(rng, {"index": 0, "message": message, "finish_reason": "stop"})
    r = rng.random()
    if r < 0.6:
        value = {"id": "x", "object": "chat.completion", "choices": files.odd(rng, [choice] * rng.randrange(0, 3))}
    elif r < 0.7:
        value = {"data": files.odd(rng, [{"id": files.odd(rng, "llama3.2")} for _ in range(rng.randrange(3))])}
    elif r < 0.8:
        value = {"error": files.odd(rng, {"message": files.odd(rng, rng.choice(["model not found", LONG, "",
                                                                                 f"bad key {KEY}", "a\nb\x1b[31m"]))})}
    elif r < 0.85:
        value = files.deep(rng.choice([500, 5000, 100_000]))
    else:
        value = any_json(rng)
    body = files.dumps(rng, value).encode("utf-8", "surrogatepass")
    r = rng.random()
    if r < 0.05:
        return body[: rng.randrange(len(body) + 1)]
    if r < 0.08:
        return rng.choice([b"\xff\xfe\x00", b"<html>502 Bad Gateway</html>", b"", b"data: {}\n\n", b"\x00" * 100])
    if r < 0.09:
        return b" " * (ask.MAX_REPLY_BYTES + 1)
    return body


@contextlib.contextmanager
def server(reply):
    """http_client.fetch answering with `reply` instead of the network."""
    saved = http_client.fetch
    http_client.fetch = reply
    try:
        yield
    finally:
        http_client.fetch = saved


def check_said(sentence: str, key: str | None) -> None:
    """An ask failure as the command prints it: one line within the bound, the key sent never in it."""
    if not sentence.strip() or len(sentence) > MAX_MESSAGE or "\n" in sentence or (key and key in sentence):
        raise Malformed(f"bad ask message {sentence!r:.300}")


def surface_replies(rng: random.Random) -> str:
    status = rng.choice([200] * 8 + [401, 404, 500, 302, 204, 429])
    bodies = [reply_body(rng) for _ in range(3)]

    def fetch(url, *, method="GET", headers=None, body=None, timeout, max_bytes):
        if rng.random() < 0.05:
            raise http_client.HTTPFailure(f"{url} did not answer within {timeout:g} s; is the server running?")
        return http_client.Reply(status, "Reason", None, bodies.pop(0) if bodies else b"{}")

    key = KEY if rng.random() < 0.5 else None
    samples = []
    with server(fetch):
        try:
            if rng.random() < 0.2:
                names = ask.models("http://127.0.0.1:9/v1", key, timeout=5)
                if not all(isinstance(n, str) for n in names):
                    raise Malformed("a model name that is not text")
            else:
                reply = ask.complete("http://127.0.0.1:9/v1/", "m", [{"role": "user", "content": "q"}], key=key,
                                     timeout=5)
                if not isinstance(reply, str):
                    raise Malformed("a reply that is not text")
                samples.append(reply)
            kind = "response"
        except ask.AskError as e:
            check_said(str(e), key)
            kind = "error"
    page = {"template": files.odd(rng, ask_checks.DEFAULT_PROMPT), "context": files.odd(rng, files.words(rng, 20)),
            "question": files.odd(rng, "what is the fee"), "answers": files.odd(rng, ["STRASSE", "40 dollars"]),
            "samples": files.odd(rng, samples + [rng.choice(PIECES) for _ in range(rng.randrange(3))])}
    r = ask_checks.page_call(page)
    if answered(r) == "response" and len(r["checks"]) != len(page["samples"]):
        raise Malformed("not one check per sample")
    same_through_json(page, r, ask_checks.page_json)
    return kind


# --- the page's embedding vectors ---------------------------------------------------------------------

def vectors_for(rng: random.Random, need: dict) -> dict:
    """`semantic_vectors` for one key that `semantic_needs` named: right, or bent."""
    n, dim = need["count"], rng.choice([1, 2, 3, 384])
    rows = [[rng.uniform(-1, 1) for _ in range(dim)] for _ in range(n)]
    r = rng.random()
    if r < 0.1:
        rows = rows[: rng.randrange(n)] if n else [[1.0]]  # fewer vectors than texts
    elif r < 0.15:
        rows = rows + [[0.5] * dim]  # more
    elif r < 0.25:
        rows = [[0.0] * dim for _ in range(n)]  # no direction at all
    elif r < 0.3 and rows:
        rows[0] = rng.choice([[float("nan")] * dim, [float("inf")] * dim, [], ["1"] * dim, [1] * (dim + 1), None,
                              [1e308] * dim, [5e-324] * dim])
    elif r < 0.35:
        rows = [list(v) for v in [rows[0]] * n] if rows else rows  # every text the same
    if rng.random() < 0.4:
        flat = [x for v in rows if isinstance(v, list) for x in v if type(x) in (int, float)]
        data = struct.pack(f"<{len(flat)}f", *flat) if all(abs(x) < 3e38 for x in flat) else b"\x00\x00\xc0\x7f"
        entry = {"key": need["key"], "dimension": files.odd(rng, dim), "f32": base64.b64encode(data).decode()}
        if rng.random() < 0.1:
            entry["f32"] = rng.choice(["!!", "AAAA=", "", base64.b64encode(b"\x00\x00\xc0\x7f" * dim).decode()])
        return entry
    return {"key": files.odd(rng, need["key"]), "vectors": files.odd(rng, rows)}


def surface_vectors(rng: random.Random) -> str:
    docs = files.documents(rng)
    strategy = rng.choice(STRATEGIES[9:13])
    c = {"strategy": strategy}
    for name, good in (("buffer_size", rng.randrange(0, 4)), ("min_chunk_size", rng.randrange(1, 60)),
                       ("breakpoint_threshold_type", rng.choice(["percentile", "standard_deviation", "interquartile",
                                                                 "gradient"])),
                       ("breakpoint_percentile_threshold", rng.choice([0, 50, 95, 100])), ("size", rng.randrange(1, 80))):
        if rng.random() < 0.3:
            c[name] = files.odd(rng, good)
    request = {"documents": docs, "query": "cat", "chunking": c, "retrieval": {"k": 2}}
    with no_embedder():
        first = simulate(request)
        if answered(first) == "error":
            return "error"
        needs = first.get("semantic_needs") or []
        request["semantic_vectors"] = [vectors_for(rng, need) for need in needs]
        if rng.random() < 0.1:
            request["semantic_vectors"].append(files.odd(rng, {"key": "0" * 40, "vectors": [[1.0]]}))
        r = simulate(request)
        kind = answered(r)
        if kind == "response":
            check_response(request, r)
        if all(_finite(v) for v in request["semantic_vectors"]):  # JSON has no NaN: the worker never sends one
            same_through_json(request, r, simulate_json)
    return kind


def _finite(value) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except ValueError:
        return False


# --- the command line itself --------------------------------------------------------------------------

def utf8(rng: random.Random, text: str) -> bytes:
    """A file's bytes: UTF-8 (a lone surrogate as "?"), now and then with the surrogate's bytes kept."""
    return text.encode("utf-8", "surrogatepass" if rng.random() < 0.05 else "replace")


def embed_body(rng: random.Random) -> bytes:
    """What an embeddings endpoint sends back: the right shape bent (counts, dimensions, numbers), or any JSON."""
    if rng.random() < 0.3:
        return files.dumps(rng, any_json(rng)).encode("utf-8", "surrogatepass")
    dim = rng.choice([1, 3, 8])
    rows = [{"object": "embedding", "index": i, "embedding": files.odd(rng, [rng.choice([0.5, -1.0, 2, 0, 1e308,
                                                                                       float("nan")]) for _ in range(dim)])}
            for i in range(rng.randrange(0, 40))]
    return files.dumps(rng, {"object": "list", "data": files.odd(rng, rows), "model": "m"}).encode("utf-8", "surrogatepass")


@contextlib.contextmanager
def local_server(status: int, body: bytes):
    """A server on 127.0.0.1 answering every request with `status` and `body`, for a command run against it."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = answer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def cli_case(rng: random.Random, folder: pathlib.Path) -> tuple[list[str], bytes, tuple | None]:
    """(arguments, stdin, served) of one command over hostile files written in `folder`; `served` is the
    (status, body) a local server answers with, for a command that asks a model or an embedding endpoint
    ("ENDPOINT" in the arguments stands for its address)."""
    docs = files.documents(rng)
    source = folder / "doc.md"
    source.write_bytes(utf8(rng, docs[0]["text"] or "a"))
    status = rng.choice([200] * 8 + [401, 404, 500, 429, 204])
    which = rng.choice(["inspect", "export", "audit", "eval", "state", "parquet", "ask", "embed"])
    if which == "ask":
        return (["ask", str(source), "--question", "what is the fee", "--endpoint", "ENDPOINT", "--model", "m",
                 "--samples", "1", "--timeout", "10"], b"", (status, reply_body(rng)))
    if which == "embed":
        return (["audit", str(source), "--size", "40", "--overlaps", "0", "--embed-endpoint", "ENDPOINT", "--embed-model",
                 "m", "--quiet", "--workers", "1"], b"", (status, embed_body(rng)))
    if which in ("inspect", "export"):
        docs[0]["id"] = "doc.md"
        name, text = files.chunk_file(rng, docs, rng.choice(["jsonl", "json", "csv", "docstore"]))
        name = pathlib.PurePosixPath(name.replace("\\", "/")).name or "x.jsonl"
        (folder / name).write_bytes(utf8(rng, text))
        argv = [which, str(folder / name)] + (["--source", str(source)] if rng.random() < 0.6 else [])
        return argv + (["-o", "-"] if which == "export" else []), b"", None
    if which == "parquet":
        data = files.parquet_bytes(rng, docs) or b""
        (folder / "c.parquet").write_bytes(data)
        which = rng.choice(["inspect", "export"])
        return [which, str(folder / "c.parquet")] + (["-o", "-"] if which == "export" else []), b"", None
    if which == "audit":
        argument = chunking_text(rng).encode("utf-8", "replace").decode("utf-8")  # an argument is no lone surrogate
        return ["audit", str(source), "--chunking", argument, "--overlaps", "0,1"], b"", None
    if which == "eval":
        name, text = files.question_file(rng, [{"id": "doc.md", "title": "", "text": docs[0]["text"]}])
        q = folder / (pathlib.PurePosixPath(name).name or "q.json")
        q.write_bytes(utf8(rng, text))
        return ["eval", str(source), "--questions", str(q), "--size", "20"], b"", None
    return [], json.dumps(state(rng)).encode("utf-8", "surrogatepass"), None


def surface_cli(rng: random.Random, seconds: float = LIMIT) -> str:
    with tempfile.TemporaryDirectory() as folder:
        argv, stdin, served = cli_case(rng, pathlib.Path(folder))
        env = {**os.environ, "PYTHONPATH": str(ROOT / "py")}
        env.pop("RAGSIM_EMBED_API_KEY", None)
        with local_server(*served) if served else contextlib.nullcontext("") as endpoint:
            argv = [endpoint if a == "ENDPOINT" else a for a in argv]
            try:
                done = subprocess.run([sys.executable, "-m", "ragsim", *argv], input=stdin, capture_output=True,
                                      timeout=seconds, cwd=folder, env=env)
            except subprocess.TimeoutExpired:
                raise Hang(f"python -m ragsim {argv[:1]} over {seconds:g} s") from None
    err = done.stderr.decode("utf-8", "replace").strip()
    said = err.splitlines()[-1] if err else ""  # the refusal: one line, one sentence
    if done.returncode not in (0, 1, 2) or "Traceback" in err or (done.returncode and not (
            said.endswith((".", ")", "!", "?", "…")) and len(said) <= 2 * MAX_MESSAGE)):  # a server's words may end ours
        raise Malformed(f"python -m ragsim {' '.join(argv[:1])} exited {done.returncode}: {err[-1500:]}")
    return "response" if done.returncode == 0 else "error"


# --- running one -------------------------------------------------------------------------------------

SURFACES = {"chunks": surface_chunks, "docstore": surface_docstore, "parquet": surface_parquet,
            "state": surface_state, "chunking": surface_chunking, "questions": surface_questions,
            "replies": surface_replies, "vectors": surface_vectors, "cli": surface_cli}
IN_PROCESS = [s for s in SURFACES if s != "cli"]


def run(surface: str, seed: int, seconds: float = LIMIT) -> str:
    """"response" or "error" for input `seed` of `surface`, within `seconds`, or Malformed / Hang /
    whatever escaped. The seed's stream is the surface's own, so `--surface S --seed N --count 1`
    makes the same input again."""
    rng = random.Random(f"{surface}:{seed}")
    if surface == "cli":
        return surface_cli(rng, seconds)
    _limit(seconds)
    try:
        return SURFACES[surface](rng)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
