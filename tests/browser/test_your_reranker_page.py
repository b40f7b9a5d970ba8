"""Your own reranker in the page ("Rerank with your reranker (an endpoint on this computer)"), in
Chromium, against the `/rerank` endpoint of tests/fake_openai.py started on 127.0.0.1 by this module.

- Nothing reaches the server until "Use this reranker" is pressed.
- The reversing reranker (`reverse`) at k = 1 and depth 3 puts the answer's chunk, ranked first,
  third: the page says "Ranked out after reranking", and its verdict and ranks equal the command
  line's (`python -m ragsim`, one request naming the same reranker).
- A step of a slider is ranked at once without the reranker (the verdict says so), and reranked at rest.
- The `lexical` reranker's order of the first chunks equals an independent sort of its scores, and
  TEI's request and reply form (`tei`) gives the same order.
- Each bad reply is one sentence; the built-in ranking goes on and nothing typed is lost.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from urllib.parse import quote

import pytest

from fake_openai import FakeOpenAI
from ragsim.wire import api
from test_page import INDEX, restore, settle
from test_ask_panel import module_context  # noqa: F401  (the shared context with the model server's origin allowed)

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

# the example at k = 1 with the answer's own words as the question: its chunk ranks first
AT_ONE = "k=1&q=" + quote("Hourly snapshots are kept for 48 hours, then merged by the nightly compaction job")
DONE = """(model) => {
  const res = window.ragsim.response();
  return document.body.dataset.state === "ready" && res && res.rerank && res.rerank.model === model
    && !res.rerank.pending && !(res.dense && res.dense.pending);
}"""


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def reranks(fake) -> int:
    return sum(1 for r in fake.requests if r["path"].endswith("/rerank") and r["method"] == "POST")


def choose(page, endpoint: str, model: str, depth: int):
    """The reranker box ticked, its endpoint, name and depth typed, "Use this reranker" pressed."""
    if not page.locator("#reranker-on").is_checked():
        page.locator("#reranker-on").check()
    page.get_by_label("Your reranker's base URL").fill(endpoint)
    page.get_by_label("Your reranker's name").fill(model)
    page.get_by_label("Chunks to rerank").fill(str(depth))
    page.get_by_role("button", name="Use this reranker").click()


def reranked(page, model: str) -> dict:
    page.wait_for_function(DONE, arg=model, polling=100, timeout=60_000)
    return page.evaluate("window.ragsim.response()")


def order(response: dict) -> list[int]:
    return [c["number"] for c in sorted(response["chunks"], key=lambda c: c["rank"])]


def off(page):
    """The reranker box unticked (the page ranks without it)."""
    if page.locator("#reranker-on").is_checked():
        page.locator("#reranker-on").uncheck()
    settle(page)


def test_nothing_is_sent_before_use_and_the_verdict_is_the_command_lines(page, fake, server):
    restore(page, AT_ONE)
    before = page.evaluate("window.ragsim.response()")
    assert before["verdict"]["kind"] == "intact" and before["verdict"]["best_rank"] == 1
    sent = reranks(fake)
    page.locator("#reranker-on").check()
    page.get_by_label("Your reranker's base URL").fill(fake.endpoint)
    page.get_by_label("Your reranker's name").fill("reverse")
    page.get_by_label("Chunks to rerank").fill("3")
    page.wait_for_timeout(500)
    settle(page)
    assert reranks(fake) == sent  # ticked and typed, not yet asked
    assert "rerank" not in page.evaluate("window.ragsim.response()")
    page.get_by_role("button", name="Use this reranker").click()
    shown = reranked(page, "reverse")
    assert reranks(fake) > sent
    assert page.locator("#verdict-headline").inner_text() == "Ranked out after reranking"
    assert "your reranker reverse put it at #3" in page.locator("#verdict-text").inner_text()
    assert "rerank" not in page.evaluate("window.ragsim.request()")["retrieval"]  # never in a link or an embed
    # Copy as command line names the reranker (not the page's scores): the core asks the endpoint itself
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page.get_by_role("button", name="Copy as command line").click()
    page.wait_for_function("() => (document.getElementById('copy-note') || {}).textContent?.startsWith('Command line copied')")
    request = json.loads(page.evaluate("() => navigator.clipboard.readText()").split("\n")[1])
    assert request["retrieval"]["rerank"] == {"endpoint": fake.endpoint, "model": "reverse", "depth": 3}
    cli_from = len(fake.requests)
    cli = subprocess.run([sys.executable, "-m", "ragsim"], input=json.dumps(request), capture_output=True,
                         text=True, timeout=120, check=True)
    cli_asked = range(cli_from, len(fake.requests))  # the command line's own request
    expected = json.loads(cli.stdout)
    assert "error" not in expected, expected
    assert shown["verdict"] == expected["verdict"] and shown["verdict"]["after_reranking"] is True
    assert order(shown) == order(expected) == order(before)[:3][::-1] + order(before)[3:]
    page.evaluate("window.ragsim.quiet()")  # the overlap sweep's lists are reranked at rest too
    asked = reranks(fake)
    page.evaluate("window.ragsim.quiet()")
    assert reranks(fake) == asked  # the scores are kept: nothing asked twice
    # a step of the chunk size: ranked at once without the reranker (said), reranked once at rest
    page.evaluate("""() => { window.seen = []; const box = document.querySelector('#verdict-text');
      new MutationObserver(() => window.seen.push(box.textContent)).observe(box, { childList: true, characterData: true, subtree: true }); }""")
    size = page.evaluate("window.ragsim.request().chunking.size")
    page.evaluate("""(size) => { const input = document.querySelector('#param-size');
      input.value = String(size); input.dispatchEvent(new Event('input', { bubbles: true })); }""", size + 1)
    page.wait_for_function("(size) => window.ragsim.shownRequest().chunking.size === size", arg=size + 1)
    reranked(page, "reverse")
    seen = page.evaluate("window.seen")
    assert any("Ranked without your reranker reverse for now" in t for t in seen), seen
    assert "The first 3 chunks were reordered by your reranker reverse" in seen[-1]
    page.evaluate("window.ragsim.quiet()")
    lists = [json.dumps([r["body"]["query"], r["body"]["documents"]]) for i, r in enumerate(fake.requests)
             if r["path"].endswith("/rerank") and r["method"] == "POST" and r["body"]["model"] == "reverse" and i not in cli_asked]
    assert reranks(fake) > asked and len(lists) == len(set(lists))  # the new setting's lists, each asked once
    off(page)
    plain = page.evaluate("window.ragsim.response()")
    assert "rerank" not in plain and "after_reranking" not in plain["verdict"]


def test_a_lexical_reranker_orders_by_its_scores(page, fake):
    restore(page, "k=2")
    plain = page.evaluate("window.ragsim.response()")
    choose(page, fake.endpoint, "lexical", 6)
    shown = reranked(page, "lexical")
    request = page.evaluate("window.ragsim.request()")
    text, query = request["documents"][0]["text"], request["query"]
    words = set(re.findall(r"\w+", query.lower()))
    head = [c for c in sorted(plain["chunks"], key=lambda c: c["rank"])][:6]
    scores = [len(words & set(re.findall(r"\w+", text[c["start"]:c["end"]].lower()))) for c in head]
    want = [head[i]["number"] for i in sorted(range(len(head)), key=lambda i: (-scores[i], i))]
    assert order(shown)[:6] == want
    assert order(shown)[6:] == order(plain)[6:]
    assert shown["verdict"] == api.simulate({**request, "retrieval": {**request["retrieval"], "rerank": {
        "model": "lexical", "depth": 6, "scores": [{"query": query, "texts": [text[c["start"]:c["end"]] for c in head],
                                                   "scores": scores}]}}})["verdict"]
    # the equivalent code reranks with it too (tests/conformance/test_rerank_codegen.py runs such code)
    mine = f"YourReranker(url={fake.endpoint + '/rerank'!r}, model='lexical', top_n=2)"
    page.wait_for_function("(s) => document.querySelector('#code').textContent.includes(s)", arg=mine, timeout=30_000)
    off(page)
    page.wait_for_function("() => !document.querySelector('#code').textContent.includes('YourReranker')", timeout=30_000)


def test_teis_form_is_taken(page, fake):
    restore(page, "k=2")
    choose(page, fake.endpoint, "lexical", 6)
    lexical = order(reranked(page, "lexical"))
    choose(page, fake.endpoint, "tei", 6)  # 422 about `texts`, asked again as {"query", "texts"}: a bare list
    assert order(reranked(page, "tei")) == lexical
    off(page)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BAD = [
    ("rnan", "NaN"), ("rfew", "results for"), ("rrange", "an index names a text sent"), ("rtwice", "twice; each text needs one score"),
    ("rshape", "did not answer with rerank results"), ("rflood", "HTTP 429"), ("rmoved", "redirected"),
    ("nosuchmodel", "HTTP 404"), ("down", "Nothing answered"),
]


@pytest.mark.parametrize("model,words", BAD)
def test_a_bad_reply_is_one_sentence_and_the_built_in_ranking_goes_on(page, fake, model, words):
    restore(page, AT_ONE)
    plain = page.evaluate("window.ragsim.response()")
    endpoint = f"http://127.0.0.1:{free_port()}/v1" if model == "down" else fake.endpoint
    choose(page, endpoint, model, 3)
    page.wait_for_function("(w) => document.querySelector('#reranker-status').textContent.includes(w)",
                           arg=words, timeout=30_000)
    status = page.locator("#reranker-status").inner_text()
    assert status.count(". ") <= 2 and "\n" not in status, status  # the reason, and that the built-in ranking goes on
    settle(page)
    shown = page.evaluate("window.ragsim.response()")
    assert "rerank" not in shown, (shown.get("rerank"), status, page.evaluate("window.ragsim.request().retrieval"))
    assert shown["verdict"] == plain["verdict"] and order(shown) == order(plain)
    assert page.get_by_label("Your reranker's base URL").input_value() == endpoint  # nothing typed is lost
    assert page.get_by_label("Your reranker's name").input_value() == model
    off(page)


def test_a_remote_reranker_is_refused_before_any_request(page, fake, offsite):
    restore(page)
    choose(page, "http://example.com", "reverse", 3)
    assert "on this computer only" in page.locator("#reranker-status").inner_text()
    assert not [u for u in offsite if "example.com" in u]
    off(page)
