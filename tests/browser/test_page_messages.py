"""The page's messages say what happened and what to do, and each panel speaks only when it has
something to say: a setting refused after a reload says what to change in the verdict box, the panels
stay quiet when there is nothing to explain, the dense notes name their job and go when BM25 is back,
and a tokenizer never downloaded is said once, offline, with what still works. Each test waits for the
page's own events, never for a fixed time."""

from __future__ import annotations

import re

import pytest

from a11y import at_laptop_size, restore, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/


@pytest.fixture(scope="module")
def page(booted_page):
    return at_laptop_size(booted_page)


def reload_page(page):
    """Reload, and wait until Python has answered (a result, or a refusal)."""
    page.reload()
    page.wait_for_function("() => ['ready', 'error'].includes(document.body.dataset.state) && window.ragsim"
                           " && (window.ragsim.shownRequest() !== null || !document.getElementById('message').hidden)",
                           timeout=120_000)


def test_a_refused_setting_after_a_reload_says_what_to_change_in_the_verdict_box(page):
    restore(page, "strategy=llamaindex-sentence&size=64&overlap=0")
    page.locator("#param-size").focus()
    hash_before = page.evaluate("location.hash")
    page.keyboard.press("Home")  # size 1: the metadata string's 6 tokens do not fit
    page.wait_for_function("() => document.body.dataset.state === 'error'")
    page.wait_for_function("(h) => location.hash !== h", arg=hash_before)  # the link follows (the reload reads it)
    page.evaluate("() => window.ragsim.stored()")
    reload_page(page)
    assert page.evaluate("document.body.dataset.state") == "error"
    headline = page.locator("#verdict-headline").inner_text()
    text = page.locator("#verdict-text").inner_text()
    assert "Waiting" not in headline and "Python" not in headline, headline
    assert "LlamaIndex refuses metadata this long" in text, text
    assert "Change" in text, text
    # Fixed from the controls: the verdict comes back.
    page.locator("#param-size").focus()
    page.keyboard.press("End")
    page.wait_for_function("() => window.ragsim.shownRequest() && window.ragsim.shownRequest().chunking.size === 8000")
    assert page.locator("#verdict").get_attribute("data-verdict") in ("intact", "ranked_out", "cut")
    restore(page, "size=24")
    page.locator("#param-k").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    settle(page)
    page.evaluate("() => window.ragsim.stored()")


def panels_drawn(page):
    page.wait_for_function("() => window.ragsim.panelsShown()")


def test_panels_speak_only_when_they_have_something_to_say(page):
    restore(page, "size=24&overlap=6")
    assert page.locator("#verdict").get_attribute("data-verdict") == "intact"
    panels_drawn(page)
    assert page.locator("#k-panel").is_hidden()  # sent whole: nothing to explain about more results
    restore(page, "size=25&overlap=6&k=10")
    assert page.locator("#verdict").get_attribute("data-verdict") == "cut"
    panels_drawn(page)
    page.wait_for_function("() => !document.getElementById('k-panel').hidden")
    assert page.locator("#k-heading").inner_text() == "Why more results don't help"
    # At overlap 0 one column of cuts, not two identical "At overlap 0" ones.
    restore(page, "size=25&overlap=0&k=10")
    panels_drawn(page)
    page.wait_for_function("() => document.querySelector('#cuts thead') !== null")
    heads = page.eval_on_selector_all("#cuts thead th", "ths => ths.map((t) => t.textContent)")
    assert heads == ["Cut", "At overlap 0"], heads
    # A question cut although every piece of it was sent (recall 1.00) says so.
    restore(page, "size=25&overlap=6&k=10")
    page.get_by_role("button", name="Add to question set").click()
    page.wait_for_function("() => document.querySelectorAll('#qs-table tbody tr').length === 1", timeout=60_000)
    row = page.eval_on_selector("#qs-table tbody tr", "tr => [...tr.children].map((c) => c.textContent)")
    assert row[3] == "1.00", row
    assert row[1].startswith("cut") and "pieces sent" in row[1], row
    assert "pieces sent" in page.locator("#qs-list .qs-verdict").inner_text()
    page.get_by_role("button", name="Remove all").click()
    page.wait_for_function("() => window.ragsim.questions().length === 0")


WATCH_NOTE = """() => {
  const note = document.querySelector('.control-method .needs-note');
  window.__notes = [];
  window.__noteObserver = new MutationObserver(() => { if (note.textContent) window.__notes.push(note.textContent); });
  window.__noteObserver.observe(note, {childList: true, characterData: true, subtree: true});
}"""
DENSE_DONE = """() => {
  const r = window.ragsim, res = r.response();
  return document.body.dataset.state === "ready" && res && res.dense && !res.dense.pending
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""


def test_the_dense_notes_name_their_job_and_go_when_bm25_is_back(page):
    pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
    restore(page, "size=24")
    page.evaluate(WATCH_NOTE)
    note = page.locator(".control-method .needs-note")
    page.get_by_label("Retriever", exact=True).select_option("dense")
    page.wait_for_function(DENSE_DONE, polling=100, timeout=180_000)
    page.get_by_label("Embedding model", exact=True).select_option("q8")
    page.wait_for_function("() => (document.querySelector('.control-method .needs-note').textContent || '').includes('int8')",
                           timeout=60_000)
    hash_before = page.evaluate("location.hash")
    page.get_by_label("Retriever", exact=True).select_option("bm25")
    settle(page)
    assert note.text_content() == ""
    page.wait_for_function("(h) => location.hash !== h", arg=hash_before)  # the link follows (the reload reads it)
    notes = page.evaluate("() => { window.__noteObserver.disconnect(); return window.__notes; }")
    # each note names its job ("Embedding this setting: 3 of 12 chunks…", "Overlap sweep: …")
    embedding = [n for n in notes if re.search(r"\d+ of \d+ chunks?", n)]
    assert embedding and all(re.match(r"(Embedding this setting|Question set|Overlap sweep|Corpus audit|Map): \d+ of \d+ chunks?…$"
                                      r"|Ahead: sizes? \d+(–\d+)?(, overlaps? \d+(–\d+)?)? \(\d+ of \d+ chunks?\)…$", n)
                                      for n in embedding), notes
    page.evaluate("() => window.ragsim.stored()")
    reload_page(page)
    settle(page)
    assert page.evaluate("window.ragsim.request().retrieval.method") is None
    assert note.text_content() == ""


def test_offline_a_tokenizer_never_downloaded_is_said_once_with_what_works(page, module_context):
    restore(page, "size=24")
    module_context.set_offline(True)
    try:
        page.get_by_label("Count tokens with", exact=True).select_option("o200k_base")
        page.wait_for_function("() => document.body.dataset.state === 'error' && !document.getElementById('message').hidden")
        message = page.locator("#message").inner_text()
        assert "offline" in message and "Everything else works offline" in message and "Count tokens with" in message
        everything = page.evaluate("document.body.innerText")
        assert everything.count("o200k_base tokenizer") == 1, everything  # once, not twice in two words
        assert "has not been loaded" not in everything and "Failed to fetch" not in everything
        page.get_by_label("Count tokens with", exact=True).select_option("")
        settle(page)
        assert page.locator("#message").is_hidden()
    finally:
        module_context.set_offline(False)
    # Online again: the same choice loads and counts.
    page.get_by_label("Count tokens with", exact=True).select_option("o200k_base")
    settle(page)
    assert page.evaluate("window.ragsim.shownRequest().tokenizer") == "o200k_base"
    page.get_by_label("Count tokens with", exact=True).select_option("")
    settle(page)
