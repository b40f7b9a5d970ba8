"""The page says what it did and what it could not know, in Chromium: a reading of chunks without
their source is called a reading of rebuilt text (its splitter a guess), a pasted text drops a closed
chunk file's document name, a find hit marked is said to be the hit (with "Extend to the sentence"),
the fix for a cut answer and a held overlap fill a line under the sliders that moves nothing, the
sweep compares only overlaps the size can take, an index holding no chunk of the answer's document
says so, and a skip link reaches the settings. Each test waits for the page's own events."""

from __future__ import annotations

import json
import pathlib

import pytest

from a11y import FRAME, boxes, restore, settle
from ragsim.wire.calls import call_json

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHUNKS = ROOT / "examples" / "chunks.jsonl"  # LangChain's chunks of examples/harbour.md
HARBOUR = ROOT / "examples" / "harbour.md"
STORED = """() => { const r = window.ragsim.shownRequest(), i = window.ragsim.index();
  return Boolean(i && r && r.chunking.strategy === "stored"); }"""
ANSWER = "Hourly snapshots are kept for 48 hours, after which the nightly compaction job merges them into a single daily snapshot."
MINE = "My own notes. The pump house at Lower Barrow lifts 40 litres a second."
# Below the sliders: what a line filled at rest or during a drag must not move.
STEADY = ["#verdict", "#picture", "#param-size", "#param-k", "#chunk-detail"]


@pytest.fixture(scope="module")
def page(booted_page):
    page = booted_page("index.html", reload=True)
    page.set_viewport_size({"width": 1366, "height": 768})
    return page


def open_chunks(page, path=CHUNKS):
    page.locator("#open-chunks").set_input_files(str(path))
    page.wait_for_function(f"() => ({STORED})() || !document.getElementById('index-problem').hidden", polling=100)
    assert page.locator("#index-problem").is_hidden(), page.locator("#index-problem").inner_text()
    return settle(page)


def pasted(page, text):
    """`text` pasted over the whole Document box, as the browser reports a paste."""
    page.evaluate("""(t) => { const box = document.getElementById('param-doc'); box.focus(); box.value = t;
        box.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste', data: t})); }""", text)
    page.wait_for_function("(t) => window.ragsim.request().documents.some((d) => d.text === t)", arg=text)


def select_text(page, text):
    page.evaluate("""(text) => { const t = document.getElementById("param-doc"); const at = t.value.indexOf(text);
      if (at < 0) throw new Error("not in the document: " + text); t.focus(); t.setSelectionRange(at, at + text.length); }""", text)


def verdict_text(page):
    return page.locator("#verdict-text").inner_text()


def test_chunks_without_their_source_are_read_as_rebuilt_text(page, page_errors):
    restore(page, "")
    open_chunks(page)
    source = page.locator("#index-source").inner_text()
    assert "a reading of a document rebuilt from your chunks, not of your source" in source
    assert "Add the source document (Add document), then open the chunks again, for an exact reading." in source
    splitter = page.locator("#index-splitter").inner_text()
    assert splitter.startswith("A guess from the rebuilt text, not a finding: no mirrored splitter"), splitter
    assert "for an exact reading" in page.locator("#mark-info").inner_text()
    assert not page_errors


def test_a_paste_after_closing_the_chunks_drops_their_document_name(page, page_errors):
    restore(page, "")
    open_chunks(page)
    page.get_by_role("button", name="Close your chunks").click()
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.strategy !== 'stored'")
    assert "harbour.md" in json.dumps(page.evaluate("window.ragsim.request().documents.map((d) => [d.id, d.title])"))
    pasted(page, MINE)
    docs = page.evaluate("window.ragsim.request().documents.map((d) => [d.id, d.title])")
    assert docs == [["doc", "Document"]]
    assert "harbour" not in page.locator("#doc-list").inner_text()
    assert not page_errors


def test_a_find_hit_marked_is_said_to_be_the_hit(page, page_errors):
    restore(page, "")
    page.locator("#doc-find").fill("kept for 48 hours")
    page.get_by_role("button", name="Mark as answer").click()
    page.wait_for_function("() => document.getElementById('verdict-text').textContent.includes('marked hit')")
    settle(page)
    assert "holds the whole of the marked hit (17 characters, not its sentence)" in verdict_text(page)
    assert "whole sentence" not in verdict_text(page)
    assert "only the hit, 17 characters" in page.locator("#mark-info").inner_text()
    page.get_by_role("button", name="Extend to the sentence").click()
    page.wait_for_function("() => document.getElementById('verdict-text').textContent.includes('the whole sentence')")
    settle(page)
    req = page.evaluate("window.ragsim.request()")
    text = req["documents"][0]["text"]
    assert text[req["span"]["start"]:req["span"]["end"]] == ANSWER
    assert page.locator("#extend-mark").is_hidden()
    assert not page_errors


def test_the_fix_for_a_cut_answer_fills_a_line_that_moves_nothing(page, page_errors):
    restore(page, "size=10&overlap=0")
    assert page.locator("#verdict").get_attribute("data-verdict") == "cut"
    before = boxes(page, STEADY)
    page.wait_for_function("() => !document.getElementById('fix-note').hidden")
    page.evaluate(FRAME)
    assert boxes(page, STEADY) == before
    req = page.evaluate("() => window.ragsim.shownRequest()")
    doc = next(d for d in req["documents"] if d["id"] == req["span"]["doc"])
    want = json.loads(call_json("fix", json.dumps({"documents": [doc], "query": req["query"], "chunking": req["chunking"],
                                                   "retrieval": {"k": req["retrieval"]["k"]}, "span": req["span"]})))
    assert page.locator("#fix-note").inner_text() == want["fix"]["sentence"]
    restore(page, "size=300&overlap=0")  # the whole document in one chunk: nothing to fix
    assert page.locator("#verdict").get_attribute("data-verdict") != "cut"
    page.evaluate("() => window.ragsim.quiet()")
    assert page.locator("#fix-note").is_hidden()
    assert not page_errors


def test_a_held_overlap_is_said_with_its_storage_and_moves_nothing(page, page_errors):
    restore(page, "size=8&overlap=6")
    size = page.locator("#param-size")
    size.focus()
    page.evaluate("() => window.ragsim.quiet()")
    before = boxes(page, STEADY)
    for n in [7, 6, 5]:
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("(n) => window.ragsim.shownRequest().chunking.size === n", arg=n)
        settle(page)
        page.evaluate(FRAME)
        assert boxes(page, STEADY) == before, n
    note = page.locator("#held-note")
    assert note.is_visible()
    assert "Overlap lowered to 4 words to stay below the size (5 words): about 5.0× the text stored." in note.inner_text()
    assert page.evaluate("window.ragsim.shownRequest().chunking.overlap") == 4
    assert not page_errors


def test_the_sweep_compares_only_overlaps_the_size_can_take(page, page_errors):
    restore(page, "")
    page.wait_for_function("() => window.ragsim.sweep() && window.ragsim.panelsShown()")
    page.evaluate("() => window.ragsim.quiet()")
    rows = page.evaluate("window.ragsim.sweep()")
    assert [r["overlap"] for r in rows] == [0, 4, 8, 17] and not any(r.get("error") for r in rows)
    box = page.locator("#sweep-overlaps")
    assert box.input_value() == "0, 4, 8, 17"
    box.fill("0, 10, 30")
    box.press("Enter")
    page.wait_for_function("() => (window.ragsim.sweep() || []).map((r) => r.overlap).join() === '0,10'")
    assert "Left out 30 words: the chunk size (24 words) cannot take that much overlap" in page.locator("#sweep-note").inner_text()
    unit = page.locator("#param-unit")
    unit.focus()
    unit.select_option("chars")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.unit === 'chars'")
    settle(page)
    page.evaluate("() => window.ragsim.quiet()")
    page.wait_for_function("() => window.ragsim.panelsShown()")
    listed = [int(x) for x in box.input_value().split(",")]
    assert listed[0] == 0 and listed[1] > 10 and len(listed) in (2, 3), listed  # converted, not the words' values
    assert [r["overlap"] for r in page.evaluate("window.ragsim.sweep()")] == listed
    unit.select_option("words")
    assert not page_errors


def test_an_index_without_the_answers_document_says_so(page, tmp_path, page_errors):
    restore(page, "")
    locks = tmp_path / "locks.md"
    locks.write_text("# Locks\n\nThe Harrow Lock is 120 metres long and lifts boats four metres. It opens at dawn.\n",
                     encoding="utf-8")
    page.locator("#add-files").set_input_files([str(HARBOUR), str(locks)])
    page.wait_for_function("() => window.ragsim.request().documents.length === 2")
    page.get_by_label("Question", exact=True).fill("How long is the Harrow Lock?")
    settle(page)
    open_chunks(page)  # LangChain's chunks of harbour.md only
    page.wait_for_function(STORED)
    page.locator("#doc-list li").nth(1).locator("button").first.click()
    page.wait_for_function("() => document.getElementById('param-doc').value.startsWith('# Locks')")
    select_text(page, "The Harrow Lock is 120 metres long")
    page.get_by_role("button", name="Mark selection as answer").click()
    page.wait_for_function(f"() => ({STORED})() && window.ragsim.shownRequest().span && window.ragsim.shownRequest().span.doc === 'locks.md'")
    settle(page)
    assert page.locator("#verdict-headline").inner_text() == "Your index: Document not indexed"
    assert "holds no chunk of “locks.md”" in verdict_text(page) or "holds no chunk of “Locks”" in verdict_text(page)
    page.wait_for_function("() => document.getElementById('index-phrases').textContent.includes('Harrow Lock')")
    panel = page.locator("#your-index").inner_text()
    assert "split across no chunk" not in panel and "overlap of" not in panel, panel
    assert "your index holds no chunk of" in page.locator("#index-phrases").inner_text()
    assert not page_errors


def test_a_skip_link_reaches_the_settings(page, page_errors):
    restore(page, "")
    page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
    page.keyboard.press("Tab")
    link = page.locator(":focus")
    assert link.inner_text() == "Skip to the settings" and link.is_visible()
    hash_before = page.evaluate("location.hash")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "param-size"
    assert page.evaluate("location.hash") == hash_before  # the page's fragment is its state: not followed
    assert not page_errors
