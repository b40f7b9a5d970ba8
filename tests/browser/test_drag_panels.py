"""A drag asks the worker only for what the verdict and the picture need; the investigation panels'
questions (find an exact phrase, the cuts at overlap 0, context expansion) are asked once the
controls rest, and a late answer never paints over a newer result.

The page's messages to the worker are recorded (and, in one test, the panels' request held back) by
wrapping Worker.prototype.postMessage before the page loads; every number shown is checked against
CPython's `ragsim.api.simulate` for the request the page describes."""

import json

import pytest

from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

SETTLED = """() => {
  const r = window.ragsim;
  return document.body.dataset.state === "ready" && r.shownRequest() !== null
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request()) && r.panelsShown();
}"""

# Every message type the page posts (`window.posted`), and every simulate request, as parsed JSON, in order; a request asking for the cuts is
# held back `window.holdPanels` ms when that is set, its worker and id kept in `window.held`; those of
# every answer a worker sends are kept in `window.answered` (heard before the page's own listener).
RECORD = """
(() => {
  const post = Worker.prototype.postMessage;
  window.simulations = [];
  window.holdPanels = 0;
  window.held = [];
  window.answered = [];
  window.posted = [];  // every message's type (simulate, call, install, ...)
  Worker.prototype.postMessage = function (message, transfer) {
    if (message && message.type) window.posted.push(message.type);
    if (message && message.type === "simulate" && typeof message.request === "string") {
      const request = JSON.parse(message.request);
      window.simulations.push(request);
      if (request.cuts && window.holdPanels) {
        window.held.push({ worker: this, id: message.id });
        setTimeout(() => post.call(this, message, transfer), window.holdPanels);
        return;
      }
    }
    return post.call(this, message, transfer);
  };
  const Native = window.Worker;
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => { if (e.data && e.data.id !== undefined) window.answered.push({ worker: this, id: e.data.id }); });
    }
  };
})();
"""

# Two frames after the page's own handlers: whatever an answer makes the page draw is drawn.
TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


@pytest.fixture(scope="module")
def page(module_page, booted_page):
    module_page.add_init_script(RECORD)
    return booted_page("index.html", reload=True)


def settle(page):
    page.wait_for_function(SETTLED, polling=100)
    return page


def set_size(page, size):
    page.get_by_label("Chunk size", exact=True).fill(str(size))


def cuts_total(page):
    return page.locator("#cuts .conclusion").inner_text()


def test_a_drag_asks_for_no_panel_questions_and_the_panels_then_show_the_current_result(page, page_errors):
    settle(page)
    page.evaluate("() => { window.simulations.length = 0; }")
    for size in (30, 31, 32):
        set_size(page, size)
    settle(page)
    sent = page.evaluate("window.simulations")
    drags = [r for r in sent if r.get("wire") == "binary" and "sweep" not in r and not r.get("cuts")]
    panels = [r for r in sent if r.get("cuts")]
    assert drags and all("find" not in r and "expand" not in r for r in drags)
    # The panels asked after the moves' results (how many of the moves rested long enough depends on
    # the machine), last for the size the controls came to rest at.
    assert panels and {r["chunking"]["size"] for r in panels} <= {30, 31, 32}
    assert panels[-1]["chunking"]["size"] == 32
    request = page.evaluate("window.ragsim.request()")
    assert request["cuts"] is True and request["find"]  # the example's marked answer is looked for
    expected = api.simulate(request)
    shown = page.evaluate("window.ragsim.response()")
    for key in ("found", "cuts"):
        assert shown[key] == expected[key]
    assert page.locator("#find-result").get_attribute("data-found") == expected["found"]["verdict"]
    assert f"of the {expected['cuts']['total_current']} cuts" in cuts_total(page)
    # The verdict and the picture's chunks are the drag's own, equal to CPython's.
    assert shown["verdict"] == expected["verdict"]
    assert [c["rank"] for c in shown["chunks"]] == [c["rank"] for c in expected["chunks"]]
    assert [e for e in page_errors if "favicon" not in e] == []


def test_a_late_panel_answer_never_paints_over_a_newer_result(page, page_errors):
    settle(page)
    set_size(page, 28)
    settle(page)
    at_28 = api.simulate(page.evaluate("window.ragsim.request()"))
    # The panels' request for size 40 is held back 1.5 s; meanwhile the size moves on to 20.
    page.evaluate("() => { window.holdPanels = 1500; window.simulations.length = 0; }")
    set_size(page, 40)
    page.wait_for_function("() => window.simulations.some((r) => r.cuts && r.chunking.size === 40)", timeout=10_000)
    page.evaluate("() => { window.holdPanels = 0; }")
    set_size(page, 20)
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 20 && document.body.dataset.state === 'ready'")
    request = page.evaluate("window.ragsim.request()")
    expected = api.simulate(request)
    at_40 = api.simulate({**request, "chunking": {**request["chunking"], "size": 40}})
    assert len({at_28["cuts"]["total_current"], at_40["cuts"]["total_current"], expected["cuts"]["total_current"]}) == 3
    # Size 40's answer arrives after size 20's result is on screen (the panels show size 28's until
    # size 20's own panels are drawn), and is not drawn.
    page.wait_for_function("() => window.simulations.filter((r) => r.cuts).length >= 2")
    settle(page)
    # the held request's own answer has come back (not a guess at how long it takes), and was handled
    page.wait_for_function("() => window.held.length > 0 && window.held.every((h) => window.answered.some("
                           "(a) => a.worker === h.worker && a.id === h.id))", timeout=30_000)
    page.evaluate(TWO_FRAMES)
    settle(page)
    assert page.evaluate("window.ragsim.shownRequest().chunking.size") == 20
    assert page.evaluate("window.ragsim.panelsShown()")
    text = cuts_total(page)
    assert f"of the {expected['cuts']['total_current']} cuts" in text
    assert f"of the {at_40['cuts']['total_current']} cuts" not in text
    assert page.evaluate("window.ragsim.response().cuts") == expected["cuts"]
    assert page.locator("#find-result").get_attribute("data-found") == expected["found"]["verdict"]
    assert json.dumps(page.evaluate("window.ragsim.response().verdict")) == json.dumps(expected["verdict"])
    assert [e for e in page_errors if "favicon" not in e] == []


def test_a_page_row_sends_nothing_and_an_ask_row_no_drag_request(page, page_errors):
    """The parameter table's phases (params.js): the PDF mode is a "page" row (no request holds it),
    so changing it sends the worker nothing; context expansion is an "ask" row, so under BM25 the
    drag's request on screen stands and only the panels' request (with the expansion) is sent."""
    errors = len(page_errors)
    settle(page)
    page.evaluate("window.ragsim.quiet()")
    page.evaluate("() => { window.simulations.length = 0; window.posted.length = 0; }")
    page.evaluate("""() => { const box = document.getElementById("param-pdf_mode");
      box.value = "single"; box.dispatchEvent(new Event("change", { bubbles: true })); }""")
    page.evaluate("window.ragsim.quiet()")
    page.evaluate(TWO_FRAMES)
    assert page.evaluate("window.posted") == []
    page.get_by_label("Context expansion").select_option("1")
    settle(page)
    page.evaluate("window.ragsim.quiet()")
    sent = page.evaluate("window.simulations")
    assert [r for r in sent if not r.get("cuts") and "sweep" not in r and "map" not in r] == []  # no drag request
    assert [r.get("expand") for r in sent if r.get("cuts")] == [{"neighbours": 1}]
    request = page.evaluate("window.ragsim.request()")
    assert page.evaluate("window.ragsim.response().expanded") == api.simulate(request)["expanded"]
    page.get_by_label("Context expansion").select_option("none")
    page.evaluate("""() => { const box = document.getElementById("param-pdf_mode");
      box.value = "page"; box.dispatchEvent(new Event("change", { bubbles: true })); }""")
    settle(page)
    assert page_errors[errors:] == []


def test_after_a_pruned_drag_the_panels_request_brings_every_score(page, page_errors):
    """A drag over a book asks for the top k only (compute.js); once it rests, the panels' request
    (asked with every score) completes the scores too: the worker moves once at rest, not twice."""
    errors = len(page_errors)
    page.evaluate("""() => {
      const words = "ledger quorum replica shard lease journal archive restore budget clause tenant".split(" ");
      const out = [];
      for (let i = 0; i < 13000; i++) out.push(`Entry ${i}: the ${words[i % 11]} ${words[(i * 7) % 11]} of part ${i % 97} ` +
        `holds ${words[(i * 3) % 11]}.`);
      const box = document.getElementById("param-doc");  // typed in (under a million characters: no preview)
      box.value = out.join(" ");
      box.dispatchEvent(new Event("input", { bubbles: true })); }""")
    page.get_by_label("Question", exact=True).fill("Which entry is part 42?")
    page.get_by_label("Overlap", exact=True).fill("0")
    set_size(page, 5)
    page.wait_for_function(SETTLED, polling=200, timeout=120_000)
    page.wait_for_function("() => window.ragsim.scoresComplete()", timeout=120_000)
    assert page.evaluate("window.ragsim.response().stats.chunks") > 20_000
    pruned = page.evaluate("window.ragsim.prunedDrags()")
    page.evaluate("() => { window.simulations.length = 0; }")
    set_size(page, 6)
    # The drag's result knows the top k's scores only, until the panels' reply completes them.
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 6", polling="raf", timeout=120_000)
    assert not page.evaluate("window.ragsim.scoresComplete()")
    page.wait_for_function(SETTLED, polling=200, timeout=120_000)
    page.wait_for_function("() => window.ragsim.scoresComplete()", timeout=120_000)
    assert page.evaluate("window.ragsim.prunedDrags()") == pruned + 1
    at_6 = [r for r in page.evaluate("window.simulations") if r["chunking"]["size"] == 6 and "sweep" not in r]
    assert [r.get("scores") for r in at_6 if not r.get("cuts")] == ["top"]  # the drag, and no second move
    assert len([r for r in at_6 if r.get("cuts") and "scores" not in r]) == 1  # the panels', with every score
    request = page.evaluate("window.ragsim.request()")
    expected = api.simulate(request)
    shown = page.evaluate("() => { const r = window.ragsim.response(); return { chunks: r.chunks, cuts: r.cuts }; }")
    assert shown["cuts"] == expected["cuts"]
    assert shown["chunks"] == expected["chunks"]  # every score and rank, completed from the panels' reply
    assert page_errors[errors:] == []
