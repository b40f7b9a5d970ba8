"""Your own reranker over the question set, the panels below the picture and the settings map, in
Chromium, against the `/rerank` endpoint of tests/fake_openai.py started on 127.0.0.1 by this module.

- The reversing reranker (`reverse`) at k = 1 and depth 3: the set's scores follow it (each
  question whose chunk ranked first is ranked out after reranking, said in the list, the table and
  the summary with the reranker's name), and equal the command line's `eval --rerank-endpoint` on
  the page's own state file (the peer check); the sweep's rows and the map say it too.
- A slow reranker (`rslow`) over a set of many questions: progress ("3 of 24 lists reranked") and
  Stop, which stops asking the endpoint and leaves the built-in ranking's scores standing, said;
  Resume reranks the rest. Nothing typed is lost.
- A bad endpoint (another shape, 429, a redirect to another host, down): one sentence, the set's
  scores the built-in ranking's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from fake_openai import FakeOpenAI, closed_port
from test_page import restore as restore_page, settle
from test_ask_panel import module_context  # noqa: F401  (the shared context with the model server's origin allowed)
from test_your_reranker_page import choose, off, page, reranks  # noqa: F401  (page: the module's booted page)

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

SET_DONE = """(model) => {
  const q = window.ragsim.questionScores(), res = q && q.response;
  return document.body.dataset.state === "ready" && q.state === "fresh" && res && res.rerank
    && res.rerank.model === model && !res.rerank.pending;
}"""
MAP_DONE = "() => { const m = window.ragsim.map(); return m && m.state === 'done'; }"
PLAIN_DONE = """() => {
  const q = window.ragsim.questionScores(), res = q && q.response;
  return document.body.dataset.state === "ready" && q.state === "fresh" && res && !res.rerank;
}"""


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI(slow_s=0.4) as s:
        yield s


def sentences(text: str, count: int) -> list[tuple[int, int]]:
    """The first `count` sentences of eight words or more, as (start, end) in `text`."""
    out = []
    for m in re.finditer(r"[A-Z][^.!?\n]{30,}[.!?]", text):
        if len(m.group().split()) >= 8:
            out.append((m.start(), m.end()))
    return out[:count]


def load_set(page, count: int) -> list[dict]:
    """A set of `count` questions, each a sentence of the example asked in its own words."""  # noqa: D401
    req = page.evaluate("window.ragsim.request()")
    text, doc = req["documents"][0]["text"], req["documents"][0]["id"]
    spans = sentences(text, count)
    assert len(spans) >= min(count, 6), len(spans)
    # more questions than sentences: a sentence asked again, numbered (another query, another list)
    questions = [{"id": str(i + 1), "query": text[a:b] + (f" ({i // len(spans)})" if i >= len(spans) else ""),
                  "references": [{"doc": doc, "start": a, "end": b}]}
                 for i, (a, b) in ((i, spans[i % len(spans)]) for i in range(count))]
    page.locator("#import-questions").set_input_files({"name": "set.json", "mimeType": "application/json",
                                                       "buffer": json.dumps({"questions": questions}).encode()})
    page.wait_for_function("(n) => window.ragsim.questions().length === n", arg=count)
    settle(page)
    page.wait_for_function(PLAIN_DONE, polling=100, timeout=60_000)
    return questions


def set_response(page) -> dict:
    return page.evaluate("window.ragsim.questionScores().response")


def verdicts(response: dict) -> list:
    return [(q["id"], q["verdict"], q["needed_k"], q.get("after_reranking")) for q in response["questions"]]


def restore(page, fragment=""):
    restore_page(page, fragment)
    page.wait_for_function("() => !(window.ragsim.questions() || []).length")


def test_the_sets_scores_follow_the_reranker_and_equal_the_command_lines(page, fake, tmp_path):
    restore(page, "k=1")
    load_set(page, 6)
    plain = set_response(page)
    choose(page, fake.endpoint, "reverse", 3)
    page.wait_for_function(SET_DONE, arg="reverse", polling=100, timeout=120_000)
    shown = set_response(page)
    # The reversing reranker: a question whose best chunk was first is now third, ranked out at k = 1.
    was_first = [q["id"] for q in plain["questions"] if q["verdict"] == "intact" and q["needed_k"] == 1]
    assert was_first, plain["questions"]
    after = {q["id"]: q for q in shown["questions"]}
    for i in was_first:
        assert after[i]["verdict"] == "ranked_out" and after[i]["after_reranking"] is True, after[i]
    assert page.locator(f"#qs-list li[data-id='{was_first[0]}'] .qs-verdict").inner_text().startswith("ranked out after reranking")
    summary = page.locator("#qs-summary").inner_text()
    assert "after reranking the first 3 chunks with your reranker reverse" in summary, summary
    # The peer check: the command line's eval over the page's own state file, with the same reranker.
    with page.expect_download() as info:
        page.click("#download-state")
    state = tmp_path / "state.json"
    info.value.save_as(state)
    cli_from = len(fake.requests)
    cli = subprocess.run([sys.executable, "-m", "ragsim", "eval", str(state), "--rerank-endpoint", fake.endpoint,
                          "--rerank-model", "reverse", "--rerank-depth", "3", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode in (0, 1), cli.stderr
    expected = json.loads(cli.stdout)
    cli_asked = range(cli_from, len(fake.requests))  # the command line's own requests
    assert verdicts(shown) == verdicts(expected), (verdicts(shown), verdicts(expected))
    for a, b in zip(shown["questions"], expected["questions"]):
        assert [a[f] for f in ("recall", "precision", "iou", "retrieved")] == [b[f] for f in ("recall", "precision", "iou", "retrieved")]
    # The overlap sweep's rows are reranked too (each says whether it was ranked out after reranking).
    page.evaluate("window.ragsim.quiet()")  # the sweep and the map (shown with a set) reranked at rest
    rows = page.evaluate("window.ragsim.sweep()")
    assert rows and all("after_reranking" in r for r in rows if not r["error"]), rows
    assert "after reranking the first 3 chunks with your reranker reverse" in page.locator("#sweep-rerank").inner_text()
    # Every list kept: k = 2 and back to 1 asks again for no list (the same first 3 chunks), and no
    # list was ever asked twice (the set, the sweep, the map and the verdict share what is kept).
    for k in (2, 1):
        page.evaluate("""(k) => { const input = document.querySelector('#param-k');
          input.value = String(k); input.dispatchEvent(new Event('input', { bubbles: true })); }""", k)
        page.wait_for_function("(k) => window.ragsim.shownRequest().retrieval.k === k", arg=k)
        page.wait_for_function(SET_DONE, arg="reverse", polling=100, timeout=60_000)
        page.evaluate("window.ragsim.quiet()")
    lists = [json.dumps([r["body"]["model"], r["body"]["query"], r["body"]["documents"]]) for i, r in enumerate(fake.requests)
             if r["path"].endswith("/rerank") and r["method"] == "POST" and i not in cli_asked]
    assert len(lists) == len(set(lists))
    assert verdicts(set_response(page)) == verdicts(shown)
    off(page)
    page.wait_for_function(PLAIN_DONE, polling=100, timeout=60_000)
    assert verdicts(set_response(page)) == verdicts(plain)
    restore(page)


def test_the_map_is_reranked_says_so_and_equals_the_command_lines(page, fake, tmp_path):
    restore(page, "k=1")
    load_set(page, 2)
    done = MAP_DONE
    page.wait_for_function(done, timeout=60_000)
    plain = page.evaluate("window.ragsim.map()")
    page.evaluate("""() => { window.mapSeen = []; new MutationObserver(() => { const e = document.getElementById('map-rerank');
      if (e && window.mapSeen.at(-1) !== e.textContent) window.mapSeen.push(e.textContent); })
      .observe(document.body, { childList: true, characterData: true, subtree: true }); }""")
    choose(page, fake.endpoint, "reverse", 4)  # depth 4: lists the first test did not ask
    page.wait_for_function("() => (document.getElementById('map-rerank') || {}).textContent?.includes('cells are after reranking')",
                           timeout=180_000)
    page.wait_for_function(done, timeout=60_000)
    page.evaluate("window.ragsim.quiet()")
    shown = page.evaluate("window.ragsim.map()")
    grid = shown["grid"]
    assert grid == plain["grid"]
    assert "with your reranker reverse" in page.locator("#map-rerank").inner_text()
    seen = page.evaluate("window.mapSeen")  # each row's lists, and the map's so far
    assert any(re.search(r"this row of the settings map with your reranker reverse: \d+ of \d+ lists reranked; [\d,]+ for the map so far", t)
               for t in seen), seen
    intact = lambda cells: sum(c["intact"] for row in cells for c in row if c)  # noqa: E731
    assert intact(shown["cells"]) < intact(plain["cells"])  # k = 1: the reversed first chunks lose answers
    # The peer check: eval's map over the page's state file with the same reranker.
    with page.expect_download() as info:
        page.click("#download-state")
    state = tmp_path / "state.json"
    info.value.save_as(state)
    cli = subprocess.run([sys.executable, "-m", "ragsim", "eval", str(state), "--map-sizes", ",".join(map(str, grid["sizes"])),
                          "--map-overlaps", ",".join(map(str, grid["overlaps"])), "--rerank-endpoint", fake.endpoint,
                          "--rerank-model", "reverse", "--rerank-depth", "4", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode in (0, 1), cli.stderr
    assert shown["cells"] == json.loads(cli.stdout)["map"]["cells"]
    off(page)
    restore(page)


def test_stop_leaves_the_built_in_scores_and_resume_goes_on(page, fake):
    restore(page, "k=1")
    count = 24
    load_set(page, count)
    plain = set_response(page)
    page.wait_for_function(MAP_DONE, timeout=60_000)
    plain_map = page.evaluate("window.ragsim.map().cells")
    choose(page, fake.endpoint, "rslow", 3)
    line = page.locator("#questions-rerank")
    page.wait_for_function("() => /[1-9] of 24 lists reranked/.test(document.getElementById('questions-rerank')?.textContent || '')",
                           timeout=60_000)
    assert "Reranking the question set with your reranker rslow" in line.inner_text()
    page.get_by_role("button", name="Stop reranking (the question set").click()
    page.wait_for_function("() => document.getElementById('questions-rerank').textContent.startsWith('Reranking was stopped at')")
    said = line.inner_text()
    assert re.search(r"stopped at \d+ of 24 lists: these are the built-in ranking's results", said), said
    page.wait_for_timeout(1000)  # the request in flight ends; nothing more is asked
    asked = reranks(fake)
    page.wait_for_timeout(1500)
    assert reranks(fake) == asked
    assert page.evaluate("window.ragsim.questionScores().state") == "fresh"
    assert verdicts(set_response(page)) == verdicts(plain)  # the built-in ranking's scores stand
    page.wait_for_function(MAP_DONE, timeout=60_000)
    assert page.evaluate("window.ragsim.map().cells") == plain_map  # the map too: no row reranked, none not
    assert page.get_by_label("Your reranker's name").input_value() == "rslow"  # nothing typed is lost
    page.get_by_role("button", name="Resume reranking (the question set").click()
    page.wait_for_function(SET_DONE, arg="rslow", polling=100, timeout=120_000)
    assert reranks(fake) > asked
    assert line.is_hidden()
    off(page)
    restore(page)


@pytest.mark.parametrize("model,words", [("rshape", "did not answer with rerank results"), ("rflood", "HTTP 429"),
                                         ("rmoved", "redirected"), ("down", "Nothing answered")])
def test_a_bad_endpoint_is_one_sentence_and_the_set_keeps_the_built_in_scores(page, fake, model, words):
    restore(page, "k=1")
    load_set(page, 4)
    plain = set_response(page)
    endpoint = f"http://127.0.0.1:{closed_port()}/v1" if model == "down" else fake.endpoint
    choose(page, endpoint, model, 3)
    page.wait_for_function("(w) => document.querySelector('#reranker-status').textContent.includes(w)",
                           arg=words, timeout=30_000)
    status = page.locator("#reranker-status").inner_text()
    assert status.count(". ") <= 2 and "\n" not in status, status
    page.wait_for_function(PLAIN_DONE, polling=100, timeout=60_000)
    page.evaluate("window.ragsim.quiet()")
    assert verdicts(set_response(page)) == verdicts(plain)
    assert "rerank" not in page.evaluate("window.ragsim.response()")
    assert page.get_by_label("Your reranker's base URL").input_value() == endpoint  # nothing typed is lost
    off(page)
    restore(page)
