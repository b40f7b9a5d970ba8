"""A PDF read in the page's worker leaves the semantic chunkers asking the page for their vectors
(SPEC section 12). The worker reads a PDF through a host module (`from ragsim.host.clients import pdf`);
importing it must not register CPython's onnxruntime embedder inside Pyodide, or every semantic
chunker after the first PDF is refused for want of the model's libraries (numpy, onnxruntime)
instead of naming the texts to embed. Run in real Pyodide under Node, through the worker's own prelude, against CPython's core
answering as the page's core does (no host embedder)."""

import base64
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import hashed, make_request, worker_prelude
from pdf_maker import make_pdf
from ragsim.host.clients import pdf
from ragsim.split import semantic_split
from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Pyodide under Node

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

SCRIPT = Path(__file__).with_name("run_core.mjs")
PAGES = [
    ["The harbour was dredged in 1887. Ships came in at high tide.", "Coal barges waited outside the wall.",
     "Cats sleep all day long. A cat purrs when it is happy. Kittens chase string!"],
    ["Rain fell on the town for a week. The river rose over its banks.", "Boats floated down the street.",
     "The harbour master counted the ships again when the water fell."],
]

# In Pyodide, after the worker's prelude: the PDF read as `_ragsim_pdf` reads it, then the request
# without vectors (the page's first request), then with the vectors of the texts it names.
ROUND_TRIP = """
import base64, json, math, re, zlib
with open("/tmp/upload-1.pdf", "wb") as f:
    f.write(base64.b64decode(PDF))
read = json.loads(_ragsim_pdf("/tmp/upload-1.pdf", "harbour.pdf", "page", lambda done, total: None))
request = json.loads(request_json)
first = json.loads(_ragsim_simulate(json.dumps(request)))
HASHED
request["semantic_vectors"] = [{"key": n["key"], "vectors": [hashed(t) for t in n["texts"]]}
                               for n in first.get("semantic_needs", [])]
second = json.loads(_ragsim_simulate(json.dumps(request)))
json.dumps({"read": read, "first": first, "second": second})
"""


@pytest.fixture(scope="module")
def dist():
    return build.ensure_fresh()


def test_after_a_pdf_a_semantic_chunker_asks_the_page_for_its_vectors(dist, monkeypatch):
    monkeypatch.setattr(semantic_split, "HOSTS", [])  # CPython's core as the page's: no host embeds
    data = make_pdf(PAGES)
    docs = pdf.read(data, "harbour.pdf")
    request = make_request("", query="when do the ships come in")
    request.update(documents=[{"id": f"p{i}", "title": d["title"], "text": d["text"]} for i, d in enumerate(docs)])
    request["chunking"] = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": 60}
    start = docs[0]["text"].index("Cats")
    request["span"] = {"doc": "p0", "start": start, "end": docs[0]["text"].index("Kittens")}
    code = worker_prelude() + ROUND_TRIP.replace("PDF", repr(base64.b64encode(data).decode())).replace(
        "HASHED", inspect.getsource(hashed))
    run = subprocess.run(["node", str(SCRIPT), str(dist), json.dumps(request)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "RAGSIM_PYTHON": code, "RAGSIM_PACKAGES": "pypdf"})
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout)
    assert got["read"] == {"documents": docs}
    first = got["first"]
    # with CPython's embedder registered by the import, refused: "Dense retrieval needs numpy in this Python"
    assert first.get("error") is None, first["error"]
    assert first["verdict"]["kind"] == "pending" and len(first["semantic_needs"]) == len(docs)
    assert first == api.simulate(request)
    second = got["second"]
    assert second["semantic_needs"] == [] and second["stats"]["chunks"] > len(docs)
    request["semantic_vectors"] = [{"key": n["key"], "vectors": [hashed(t) for t in n["texts"]]}
                                   for n in first["semantic_needs"]]
    assert second == api.simulate(request)
