"""Plain helpers shared by the test folders (fixtures live in conftest.py files)."""

import contextlib
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import zlib
from pathlib import Path

from ragsim.wire import api

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORE = ROOT / "py"


def harbour_questions(k: int = 5) -> dict:
    """examples/questions.json over examples/harbour.md as one request (chars 300, overlap 50, k), each
    reference naming the document "harbour" by its offsets."""
    text = (ROOT / "examples" / "harbour.md").read_text(encoding="utf-8")
    asked = json.loads((ROOT / "examples" / "questions.json").read_text(encoding="utf-8"))["questions"]
    for q in asked:
        for r in q["references"]:
            r["doc"] = "harbour"
            r.pop("content", None)
    return {"documents": [{"id": "harbour", "text": text}], "query": "", "questions": asked,
            "chunking": {"unit": "chars", "size": 300, "overlap": 50}, "retrieval": {"k": k}}


def make_request(text, query="", unit="words", size=24, overlap=6, k=2, span=None, fact=None, **extra):
    """A single-document request with the defaults the page opens with."""
    req = {
        "documents": [{"id": "d", "title": "doc", "text": text}],
        "query": query,
        "chunking": {"unit": unit, "size": size, "overlap": overlap},
        "retrieval": {"k": k},
        "span": None if span is None else {"doc": "d", "start": span[0], "end": span[1]},
        "fact": None if fact is None else {"doc": "d", "name": list(fact[0]), "value": list(fact[1])},
        "price_per_million": 3.0,
    }
    req.update(extra)
    return req


# The command line, as the README runs it: `python -m ragsim ...` with this Python (the project's .venv).

def ragsim_argv(*args) -> list[str]:
    """The argument list of `python -m ragsim ARGS` (each arg through str), for subprocess.run or Popen."""
    return [sys.executable, "-m", "ragsim", *map(str, args)]


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment with this checkout's core (py/) as PYTHONPATH, so the command runs the
    core under test whatever the venv has installed; `extra` variables added on top."""
    return {**os.environ, "PYTHONPATH": str(CORE), **extra}


def bare_env() -> dict[str, str]:
    """Only this checkout's core as PYTHONPATH and the system's PATH: the command as a stock machine runs
    it, with none of this process's variables."""
    return {"PYTHONPATH": str(CORE), "PATH": "/usr/bin:/bin"}


def run_cli(*args, stdin: str | bytes | None = None, cwd=ROOT, env: dict | None = None, timeout: float = 120,
            text: bool = True) -> subprocess.CompletedProcess:
    """Run `python -m ragsim ARGS` to the end and capture its output (a CompletedProcess).

    stdin: what the command reads (str when `text`, bytes when not); None leaves this process's stdin.
    cwd: where it runs, the repository root unless told (relative paths in ARGS are read from there).
    env: the whole environment; cli_env() unless told (cli_env(NAME=value) adds to it).
    text: False gives stdout and stderr as bytes (for tests of the exact bytes written)."""
    return subprocess.run(ragsim_argv(*args), input=stdin, capture_output=True, text=text, cwd=cwd,
                          env=cli_env() if env is None else env, timeout=timeout)


def one_line(stderr: str) -> str:
    """A refusal's stderr: one line, no traceback (asserted); returned for further checks."""
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    return stderr


# Texts for the dense model's tests (SPEC section 10): the sanity anchor (cosine 0.7553 with
# all-MiniLM-L6-v2), Unicode the tokenizer must normalise, and a text longer than its 256 pieces.
DENSE_ANCHOR = ("A man is eating food.", "A man is eating a piece of bread.")
DENSE_LONG = " ".join(f"Sentence {i} says that chunk boundaries matter for retrieval quality." for i in range(60))
DENSE_TEXTS = [
    *DENSE_ANCHOR,
    "Ünïcödé façade naïve café — 東京 and ΑΘΗΝΑ, emoji 🙂 and tabs\tand\nnewlines.",
    DENSE_LONG,
]


# Browser tests: what the page shows against CPython's core for the request the page sent.

def shown_stats(page):
    """The stats table's cells as {stat: value} (data-stat, data-value as JSON)."""
    cells = page.eval_on_selector_all("#stats [data-stat]", "els => els.map(e => [e.dataset.stat, e.dataset.value])")
    return {key: json.loads(value) for key, value in cells}


def assert_shows_the_core(page, overlap_and_code=False):
    """The picture's data and every stat shown are the core's for the request on screen (to the last
    bit: the core's ln is correctly rounded, so Pyodide and CPython agree). With `overlap_and_code`,
    also the overlap-that-happened stats and the "Equivalent code" panel. Returns (request, expected)."""
    request = page.evaluate("window.ragsim.request()")
    expected = api.simulate(request)
    assert "error" not in expected, expected
    assert page.evaluate("window.ragsim.response().chunks") == expected["chunks"]
    shown = shown_stats(page)
    for key, value in expected["stats"].items():
        if key in shown:
            assert shown[key] == value, key
    if overlap_and_code:
        for key in ["overlap_min", "overlap_median", "overlap_max", "boundaries_without_overlap"]:
            assert key in shown, key
        assert shown["overlap_asked"] == request["chunking"]["overlap"]
        assert shown["boundaries"] == sum(c["overlap_prev"] is not None for c in expected["chunks"])
        code = json.loads(api.equivalent_code_json(json.dumps(request)))["code"]
        page.wait_for_function("text => document.getElementById('code').textContent === text", arg=code)
    return request, expected


def hashed(text: str, dim: int = 64) -> list[float]:
    """A deterministic embedding for the semantic chunkers' tests (SPEC section 12): words hashed
    (crc32) into signed buckets, normalised (a text without words is the zero vector)."""
    v = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = zlib.crc32(word.encode())
        v[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n else v


def ctrl_c_as_a_terminal() -> None:
    """In a child process before it runs: Ctrl-C's default action, as a terminal gives it. A runner
    started in the background of a shell without job control ignores SIGINT, and a child inherits
    that, so Python would never raise KeyboardInterrupt and a Ctrl-C test could not send one."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def worker_prelude() -> str:
    """The page worker's Python prelude, as assets/worker.js gives it to Pyodide."""
    source = (Path(__file__).resolve().parents[1] / "assets" / "worker.js").read_text()
    found = re.search(r"^const PRELUDE = `\n(.*?)^`;", source, re.S | re.M)
    assert found, "assets/worker.js has no PRELUDE template"
    body = found.group(1)
    assert "\\" not in body and "${" not in body, "the prelude's text would change inside a JS template"
    return body


@contextlib.contextmanager
def rerank_server():
    """tests/fake_openai.py's server on 127.0.0.1 with ragsim's hosts registered (the reranker's client
    among them), this process's reranker clients forgotten after (a module fixture's body)."""
    from fake_openai import FakeOpenAI
    from ragsim import host
    from ragsim.host.clients import rerank_endpoint

    host.register()
    with FakeOpenAI() as s:
        yield s
    rerank_endpoint._ONE.clear()
