"""Your own embedding model in the page ("Your model (an endpoint on this computer)"), in Chromium,
against an OpenAI-compatible server this module starts on 127.0.0.1 (tests/fake_openai.py: CORS
headers, every request counted).

- Nothing reaches the server until "Use this model" is pressed; the cost is said first.
- Served all-MiniLM-L6-v2's vectors (`minilm`), every rank, score and verdict on the page equals the
  built-in dense path's (CPython's onnxruntime host, which the page's own model equals:
  test_dense_page.py); the model's name is on the verdict and in the equivalent code.
- Served a hashed bag of words (`hashed`), the ranks equal a numpy cosine ranking of those vectors.
- Each bad reply is one sentence, the fields keep what was typed, BM25 ranks meanwhile.
- A one-step drag on the Apache License text (11,357 characters) with its chunks embedded ahead
  stays under a second; the figure is printed.
"""

from __future__ import annotations

import pathlib
import socket
import time

import numpy as np
import pytest

from fake_openai import FakeOpenAI, hashed_vector
from ragsim.wire import api
from test_page import INDEX, restore, settle
from test_ask_panel import module_context  # noqa: F401  (the shared context with the model server's origin allowed)

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

LICENCE = pathlib.Path(__file__).with_name("fixtures") / "apache-2.0.txt"
DONE = """(model) => {
  const r = window.ragsim, res = r.response();
  return document.body.dataset.state === "ready" && res && res.dense && !res.dense.pending && res.dense.model === model
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""
NOTE = ".control-method .needs-note"


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI(slow_s=3.0) as s:
        yield s


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def embeddings(fake) -> int:
    return sum(1 for r in fake.requests if r["path"] == "/v1/embeddings" and r["method"] == "POST")


def choose(page, endpoint: str, model: str, method: str = "dense"):
    """Your model chosen for `method`, its endpoint and name typed, "Use this model" pressed."""
    if page.get_by_label("Retriever", exact=True).input_value() != method:
        page.get_by_label("Retriever", exact=True).select_option(method)
    if page.get_by_label("Embedding model", exact=True).input_value() != "yours":
        page.get_by_label("Embedding model", exact=True).select_option("yours")
    page.get_by_label("Your model's base URL").fill(endpoint)
    page.get_by_label("Your model's name").fill(model)
    page.get_by_role("button", name="Use this model").click()


def ranked(page, model: str, timeout: int = 120_000):
    page.wait_for_function(DONE, arg=model, polling=100, timeout=timeout)
    return page.evaluate("window.ragsim.response()")


def test_nothing_is_sent_before_use_and_minilm_served_equals_the_built_in_path(page, fake):
    restore(page)
    before = embeddings(fake)
    page.get_by_label("Retriever", exact=True).select_option("dense")
    page.get_by_label("Embedding model", exact=True).select_option("yours")
    settle(page)
    page.get_by_label("Your model's base URL").fill(fake.endpoint)
    page.get_by_label("Your model's name").fill("minilm")
    page.wait_for_timeout(500)
    assert embeddings(fake) == before  # chosen and typed, not yet asked
    assert "Use this model" in page.locator("#yours-status").inner_text()
    page.get_by_role("button", name="Use this model").click()
    page.wait_for_function("() => /\\d+ chunks? to embed with minilm|already/.test(document.querySelector('#yours-status').textContent)")
    shown = ranked(page, "minilm")
    assert embeddings(fake) > before
    request = page.evaluate("window.ragsim.request()")
    assert request["retrieval"]["embedding"] == {"endpoint": fake.endpoint, "model": "minilm"}
    built_in = {**request, "retrieval": {k: v for k, v in request["retrieval"].items() if k != "embedding"}}
    expected = api.simulate(built_in)  # all-MiniLM-L6-v2 through onnxruntime, the built-in dense path
    assert "error" not in expected, expected
    assert [(c["start"], c["end"], c["rank"]) for c in shown["chunks"]] == \
        [(c["start"], c["end"], c["rank"]) for c in expected["chunks"]]
    for a, b in zip(shown["chunks"], expected["chunks"]):
        assert abs(a["score"] - b["score"]) < 1e-5, (a, b)
    assert shown["verdict"] == expected["verdict"]
    assert "your model minilm" in page.locator("#verdict-text").inner_text()
    page.wait_for_function("() => document.querySelector('#code').textContent.includes(\"model='minilm'\")", timeout=60_000)
    assert f"OpenAIEmbeddings(base_url={fake.endpoint!r}, model='minilm'" in page.locator("#code").text_content()
    assert not page.evaluate("Object.keys(window.ragsim.request()).includes('yourModel')")


def test_another_model_ranks_by_its_own_vectors(page, fake):
    restore(page)
    choose(page, fake.endpoint, "hashed")
    shown = ranked(page, "hashed")
    request = page.evaluate("window.ragsim.request()")
    text = request["documents"][0]["text"]
    # the page's chunk offsets are code points, as Python's string indexes
    texts = [text[c["start"]:c["end"]] for c in shown["chunks"]]
    v = np.array([hashed_vector(t) for t in texts])
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q = np.array(hashed_vector(request["query"]))
    cosines = v @ (q / np.linalg.norm(q))
    want = sorted(range(len(texts)), key=lambda i: (-cosines[i], i))
    assert [c["number"] - 1 for c in sorted(shown["chunks"], key=lambda c: c["rank"])] == want
    assert [c["score"] for c in shown["chunks"]] == pytest.approx(cosines.tolist(), abs=1e-5)
    assert "your model hashed" in page.locator("#verdict-text").inner_text()
    # hybrid: BM25 fused with the same vectors, as the core ranks them served by the endpoint itself
    page.get_by_label("Retriever", exact=True).select_option("hybrid")
    shown = ranked(page, "hashed")
    expected = api.simulate(page.evaluate("window.ragsim.request()"))
    assert [c["rank"] for c in shown["chunks"]] == [c["rank"] for c in expected["chunks"]]
    assert shown["verdict"] == expected["verdict"]
    assert "by BM25 fused with your model hashed" in page.locator("#verdict-text").inner_text()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BAD = [
    ("nan", "NaN"), ("short", "vectors for"), ("ragged", "dimensions"), ("flood", "HTTP 429"),
    ("moved", "redirected"), ("shape", "did not answer with embeddings"), ("slow", "did not answer within 1 s"),
    ("nosuchmodel", "HTTP 404"), ("down", "Nothing answered"),
]


@pytest.mark.parametrize("model,words", BAD)
def test_a_bad_reply_is_one_sentence_and_nothing_is_lost(page, fake, model, words):
    restore(page)
    page.evaluate("window.ragsim.setEmbedTimeout(1)")
    endpoint = f"http://127.0.0.1:{free_port()}/v1" if model == "down" else fake.endpoint
    choose(page, endpoint, model)
    page.wait_for_function("(w) => document.querySelector('.control-method .needs-note').textContent.includes(w)",
                           arg=words, timeout=30_000)
    note = page.locator(NOTE).inner_text()
    assert note.count(". ") <= 2 and "\n" not in note, note  # the reason, and that BM25 ranks instead
    assert page.get_by_label("Retriever", exact=True).input_value() == "bm25"  # the built-in retrievers go on
    settle(page)
    assert page.evaluate("window.ragsim.response().verdict") is not None
    assert page.get_by_label("Your model's base URL").input_value() == endpoint  # nothing typed is lost
    assert page.get_by_label("Your model's name").input_value() == model
    assert page.evaluate("window.ragsim.request().retrieval.embedding") is None
    page.evaluate("window.ragsim.setEmbedTimeout(120)")


def test_a_remote_endpoint_is_refused_before_any_request(page, fake, offsite):
    restore(page)
    choose(page, "http://example.com/v1", "hashed")
    assert "on this computer only" in page.locator("#yours-status").inner_text()
    assert not [u for u in offsite if "example.com" in u]


def test_stop_ends_a_long_run_and_keeps_what_came_back(page, fake):
    restore(page)
    choose(page, fake.endpoint, "slow")  # 3 s a request
    page.wait_for_function("() => !document.querySelector('#yours-stop').disabled", timeout=30_000)
    page.get_by_role("button", name="Stop").click()
    assert "Stopped" in page.locator("#yours-status").inner_text()
    settle(page)
    assert page.evaluate("window.ragsim.response().dense.pending") is True  # BM25 ranks what was not embedded
    assert page.get_by_label("Retriever", exact=True).input_value() == "dense"


def test_a_drag_with_its_chunks_embedded_ahead_stays_under_a_second(page, fake):
    restore(page)
    if page.locator("#map-on").is_checked():
        page.locator("#map-on").uncheck()
    text = LICENCE.read_text(encoding="utf-8")
    page.get_by_label("Question", exact=True).fill("Can a contributor revoke the patent license after filing a lawsuit?")
    page.evaluate("""(text) => { const area = document.querySelector('#param-doc');
      area.value = text; area.dispatchEvent(new Event('input', { bubbles: true })); }""", text)
    page.wait_for_function("(n) => window.ragsim.shownRequest() && window.ragsim.shownRequest().documents[0].text.length === n",
                           arg=len(text), timeout=60_000)
    choose(page, fake.endpoint, "minilm")
    ranked(page, "minilm", timeout=300_000)
    page.wait_for_timeout(600)
    page.wait_for_function("""() => { const d = window.ragsim.dense();
      return !d.aheadBusy && !d.jobs.some((j) => j.lane.startsWith('ahead') || j.lane === 'main'); }""", timeout=300_000)
    size = page.evaluate("window.ragsim.shownRequest().chunking.size")
    main = page.evaluate("window.ragsim.dense().lanes.main || 0")
    started = time.monotonic()
    ms = page.evaluate("""async (size) => {
      const input = document.querySelector("#param-size"), t = performance.now();
      input.value = String(size);
      input.dispatchEvent(new Event("input", { bubbles: true }));
      const shown = () => { const r = window.ragsim, res = r.response(), s = r.shownRequest();
        return res && s && s.chunking.size === size && document.body.dataset.state === "ready" && res.dense && !res.dense.pending; };
      while (!shown()) await new Promise((resolve) => requestAnimationFrame(resolve));
      return performance.now() - t;
    }""", size + 1)
    print(f"\none-step drag with your model (minilm at {fake.endpoint}), Apache text {len(text):,} characters: "
          f"{ms:.0f} ms (wall {1000 * (time.monotonic() - started):.0f} ms)")
    assert ms <= 1000
    assert page.evaluate("window.ragsim.dense().lanes.main || 0") == main  # every chunk of the step was embedded ahead
