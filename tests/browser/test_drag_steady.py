"""Issue 23, the page items 1-12: a still layout while dragging, honest messages, each panel only
when it has something to say. One test per item; each waits for the page's own events (the shown
request, a text appearing), never for a fixed time."""

from __future__ import annotations

import json
import re

import pytest

from a11y import boxes, load_collection, settle

INDEX = "index.html"
FRAME = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


@pytest.fixture(scope="module")
def page(booted_page, module_context, server):
    module_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page = booted_page(INDEX)
    page.set_viewport_size({"width": 1366, "height": 768})
    yield page
    page.set_viewport_size({"width": 1280, "height": 720})


def restore(page, fragment: str):
    """The page at `fragment` (from a fresh hash change), settled. (The page rewrites its own hash
    300 ms after a change, so the wait is for the state the fragment sets, not for the hash.)"""
    size = re.search(r"(?:^|&)size=(\d+)", fragment)
    page.evaluate("(f) => { location.hash = 'size=25'; location.hash = f; }", fragment)
    if size:
        page.wait_for_function("(n) => window.ragsim.request().chunking.size === n", arg=int(size.group(1)))
    settle(page)
    page.evaluate(FRAME)


def step_to(page, key: str, size: int):
    page.keyboard.press(key)
    page.wait_for_function("(n) => { const r = window.ragsim.shownRequest(); return r && r.chunking.size === n; }",
                           arg=size, polling=20)
    settle(page)
    page.evaluate(FRAME)


def test_1_chunk_lists_read_as_ranges_and_nothing_moves_during_a_drag(page):
    # LangChain's recursive splitter at size 1 cut the answer into hundreds of chunks: ranges and a count.
    restore(page, "strategy=langchain-recursive&size=1&overlap=0")
    text = page.locator("#verdict-text").inner_text()
    assert re.search(r"chunks \d+–\d+, \d+ of them", text), text
    assert len(text) < 200, text
    assert len(re.findall(r"\d+", text)) <= 8, text
    for width, height in [(1366, 768), (390, 844)]:
        page.set_viewport_size({"width": width, "height": height})
        restore(page, "size=40")
        size = page.locator("#param-size")
        size.focus()
        page.evaluate("() => document.getElementById('param-size').scrollIntoView({block: 'center'})")
        page.evaluate(FRAME)
        watched = ["#verdict", "#picture", "#param-size", "#param-k"]
        first = boxes(page, watched)
        kinds = set()
        for n in range(39, 0, -1):
            step_to(page, "ArrowLeft", n)
            kinds.add(page.locator("#verdict").get_attribute("data-verdict"))
            assert boxes(page, watched) == first, (width, n)
        for n in range(2, 41):
            step_to(page, "ArrowRight", n)
            assert boxes(page, watched) == first, (width, n)
        assert {"intact", "cut"} <= kinds, kinds  # the verdict did change along the way
    page.set_viewport_size({"width": 1366, "height": 768})



def test_2_the_overlap_comes_back_once_the_size_allows_it(page):
    restore(page, "size=8&overlap=6")
    size = page.locator("#param-size")
    size.focus()
    for n in [7, 6, 5, 4]:
        step_to(page, "ArrowLeft", n)
    assert page.evaluate("window.ragsim.shownRequest().chunking.overlap") == 3
    note = page.locator("#held-note")
    assert note.is_visible()
    assert "held at 3 words for now" in note.inner_text() and "back to your 6 words" in note.inner_text()
    assert "held" in page.locator("#param-overlap-value").get_attribute("class")
    for n in [5, 6, 7, 8, 9]:
        step_to(page, "ArrowRight", n)
    assert page.evaluate("window.ragsim.shownRequest().chunking.overlap") == 6
    assert not note.is_visible()
    # The user's own overlap, set on its slider while held, is the one that comes back.
    for n in [8, 7, 6, 5, 4]:
        step_to(page, "ArrowLeft", n)
    overlap = page.locator("#param-overlap")
    overlap.focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.overlap === 2")
    size.focus()
    for n in [5, 6, 7]:
        step_to(page, "ArrowRight", n)
    assert page.evaluate("window.ragsim.shownRequest().chunking.overlap") == 2


def reload_page(page):
    """Reload, and wait until Python has answered (a result, or a refusal)."""
    page.reload()
    page.wait_for_function("() => ['ready', 'error'].includes(document.body.dataset.state) && window.ragsim"
                           " && (window.ragsim.shownRequest() !== null || !document.getElementById('message').hidden)",
                           timeout=120_000)


def test_3_a_refused_setting_after_a_reload_says_what_to_change_in_the_verdict_box(page):
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


def near(a: dict, b: dict, gap: float = 24) -> bool:
    """Boxes a and b touch or lie within `gap` px of each other, in both directions."""
    dx = max(0, b["left"] - a["right"], a["left"] - b["right"])
    dy = max(0, b["top"] - a["bottom"], a["top"] - b["bottom"])
    return dx <= gap and dy <= gap


@pytest.mark.parametrize("width,height", [(1366, 768), (390, 844)])
def test_4_every_copy_confirmation_is_beside_its_button_on_screen(page, width, height):
    page.set_viewport_size({"width": width, "height": height})
    restore(page, "size=24")
    for button, note, words in [("#copy-link", "#copy-note", "Link copied."),
                                ("#copy-embed", "#copy-note", "Embed code copied."),
                                ("#copy-code", "#code-status", "Code copied.")]:
        page.locator(button).scroll_into_view_if_needed()
        page.click(button)
        # The note is made by the first copy, after the clipboard's promise: absent until then.
        page.wait_for_function("([sel, w]) => (document.querySelector(sel)?.textContent || '').startsWith(w)",
                               arg=[note, words])
        got = boxes(page, [button, note])
        assert got[note] is not None, button
        assert near(got[button], got[note]), (button, got)
        assert got[note]["left"] >= 0 and got[note]["right"] <= width and got[note]["top"] >= 0 \
            and got[note]["bottom"] <= height, (button, got)
        assert "copied" not in page.locator("#mark-info").inner_text()
    page.set_viewport_size({"width": 1366, "height": 768})


def pick_document(page, n: int):
    page.get_by_role("button", name=f"Show document {n} in the Document box", exact=True).click()
    page.wait_for_function("(n) => document.getElementById('doc-list').dataset.sel === String(n - 1)", arg=n)


def test_5_in_a_collection_the_embed_and_a_reload_show_the_answer_s_document(page):
    load_collection(page)
    page.click("#clear-mark")
    pick_document(page, 1)
    answer = page.evaluate("""() => { const t = document.getElementById('param-doc');
      const end = t.value.indexOf('.', 40) + 1; t.focus(); t.setSelectionRange(0, end); return t.value.slice(0, end); }""")
    page.click("#mark-selection")
    pick_document(page, 3)
    settle(page)
    first = page.evaluate("() => window.ragsim.request().documents[0].id")
    assert page.evaluate("() => window.ragsim.request().span.doc") == first
    assert page.evaluate("() => window.ragsim.bands().length") == 0  # the full page shows document 3, as chosen
    page.click("#copy-embed")
    page.wait_for_function("() => { const n = document.getElementById('copy-note'); return n && n.textContent.startsWith('Embed code'); }")
    snippet = page.evaluate("() => navigator.clipboard.readText()")
    src = json.loads('"' + re.search(r'<iframe src="([^"]+)"', snippet).group(1).replace("&amp;", "&") + '"')
    page.evaluate("() => window.ragsim.stored()")
    page.goto("about:blank")
    page.goto(src)
    page.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                           timeout=120_000)
    settle(page)
    assert page.evaluate("() => document.body.classList.contains('embed')")
    assert page.evaluate("() => window.ragsim.bands().length") >= 1  # the answer's band: its document is drawn
    assert answer.strip()[:40] in page.locator("#embed-question").inner_text()
    # The full page, reloaded: the answer's document is the one shown.
    base = page.url.split("#")[0]
    page.goto("about:blank")
    page.goto(base)
    page.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                           timeout=120_000)
    settle(page)
    assert page.evaluate("() => document.getElementById('doc-list').dataset.sel") == "0"
    assert page.evaluate("() => window.ragsim.bands().length") >= 1
    restore(page, "size=24")


WATCH_LIVE = """() => {
  const live = (el) => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (!(e instanceof Element)) continue;
      const a = e.getAttribute('aria-live');
      if (a === 'off') return null;
      if (a === 'polite' || a === 'assertive' || ['status', 'alert', 'log'].includes(e.getAttribute('role'))) return e;
    }
    return null;
  };
  const said = [];
  const last = new Map();
  window.__said = said;
  window.__liveObserver = new MutationObserver((records) => {
    const regions = new Set();
    for (const r of records) { const reg = live(r.target.nodeType === 1 ? r.target : r.target.parentElement); if (reg) regions.add(reg); }
    for (const reg of regions) {
      const text = reg.textContent.trim();
      if (!text || reg.hidden || last.get(reg) === text) continue;
      last.set(reg, text);
      said.push((reg.id || reg.className) + ': ' + text.slice(0, 80));
    }
  });
  window.__liveObserver.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['hidden']});
}"""


def test_12_a_30_step_keyboard_drag_makes_at_most_5_announcements_and_then_the_verdict(page):
    restore(page, "size=24")
    # The verdict at size 10 spoken first (or already), so the drag starts from rest.
    page.wait_for_function("""() => document.getElementById('announcer').textContent.startsWith(
      document.getElementById('verdict-headline').textContent + '. ' + document.getElementById('verdict-text').textContent)""")
    page.locator("#param-size").focus()
    page.evaluate(WATCH_LIVE)
    # There and back (30 steps): the drag ends on the verdict it started from, and that is said again.
    for key in ["ArrowRight"] * 15 + ["ArrowLeft"] * 15:
        page.keyboard.press(key)
    page.wait_for_function("() => window.ragsim.request().chunking.size === 24")
    settle(page)
    headline = page.locator("#verdict-headline").inner_text()
    page.wait_for_function("(h) => window.__said.some((t) => t.startsWith('announcer: ' + h))", arg=headline,
                           timeout=10_000)
    said = page.evaluate("() => { window.__liveObserver.disconnect(); return window.__said; }")
    assert len(said) <= 5, said
    spoken = [t for t in said if t.startswith("announcer: ")]
    assert len(spoken) == 1 and spoken[0].startswith("announcer: " + headline), said  # the final verdict, once


def panels_drawn(page):
    page.wait_for_function("() => window.ragsim.panelsShown()")


def test_8_panels_speak_only_when_they_have_something_to_say(page):
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


def test_9_the_dense_notes_name_their_job_and_go_when_bm25_is_back(page):
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
    # issue 24: each note names its job ("Embedding this setting: 3 of 12 chunks…", "Overlap sweep: …")
    embedding = [n for n in notes if re.search(r"\d+ of \d+ chunks?", n)]
    assert embedding and all(re.match(r"(Embedding this setting|Question set|Overlap sweep|Corpus audit|Map): \d+ of \d+ chunks?…$"
                                      r"|Ahead: sizes? \d+(–\d+)?(, overlaps? \d+(–\d+)?)? \(\d+ of \d+ chunks?\)…$", n)
                                      for n in embedding), notes
    page.evaluate("() => window.ragsim.stored()")
    reload_page(page)
    settle(page)
    assert page.evaluate("window.ragsim.request().retrieval.method") is None
    assert note.text_content() == ""


CUT_LABELS = """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const sel of document.querySelectorAll('select')) {
    if (!sel.getClientRects().length || sel.closest('[hidden], details:not([open])')) continue;
    const cs = getComputedStyle(sel);
    ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20; // the arrow
    for (const o of sel.options) {
      const w = ctx.measureText(o.text).width;
      if (w > room) out.push(`${sel.id}: "${o.text}" needs ${Math.round(w)} px of ${Math.round(room)}`);
    }
  }
  for (const o of document.querySelectorAll('.slider output')) {
    if (!o.getClientRects().length) continue;
    const line = parseFloat(getComputedStyle(o).lineHeight);
    if (o.getBoundingClientRect().height > 1.5 * line) out.push(`${o.id} wraps: ${o.textContent}`);
  }
  return out;
}"""


def test_7_at_1366_px_no_drop_down_cuts_its_labels_and_no_slider_value_wraps(page):
    page.set_viewport_size({"width": 1366, "height": 768})
    page.evaluate("() => { const d = document.querySelector('details.advanced'); if (d) d.open = true; }")
    for fragment in ["size=24", "strategy=llamaindex-sentence&size=1024&overlap=200",
                     "strategy=langchain-recursive&size=4000&overlap=200&length=tokens", "strategy=haystack&size=200"]:
        restore(page, fragment)
        assert page.evaluate(CUT_LABELS) == [], fragment
    page.evaluate("() => { const d = document.querySelector('details.advanced'); if (d) d.open = false; }")


RECORD_CANVAS_TEXT = """(() => {
  window.__pastEdge = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
    const w = this.canvas.getBoundingClientRect().width || this.canvas.width;
    const right = x + this.measureText(text).width;
    if (text && right > w + 0.5) window.__pastEdge.push(`${this.canvas.id}: ${text} (${Math.round(right)} > ${Math.round(w)})`);
    return fill.call(this, text, x, y, ...rest);
  };
})()"""


def test_6_the_embed_on_a_phone_keeps_inside_its_right_edge_and_says_tap(page, browser, server):
    load_collection(page)
    page.click("#copy-embed")
    page.wait_for_function("() => { const n = document.getElementById('copy-note'); return n && n.textContent.startsWith('Embed code'); }")
    snippet = page.evaluate("() => navigator.clipboard.readText()")
    src = re.search(r'<iframe src="([^"]+)"', snippet).group(1).replace("&amp;", "&")
    restore(page, "size=24")
    phone = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    try:
        tab = phone.new_page()
        tab.add_init_script(RECORD_CANVAS_TEXT)
        tab.goto(src)
        tab.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                              timeout=120_000)
        settle(tab)
        tab.evaluate(FRAME)
        assert tab.evaluate("() => document.body.classList.contains('embed')")
        assert tab.evaluate("() => !document.querySelector('.lanes-wrap').hidden")  # the collection's lanes
        words = tab.locator("#detail-head").inner_text() + " " + tab.locator("#verdict-text").inner_text()
        assert "Hover" not in words and "hover" not in words, words
        assert "Tap a chunk" in tab.locator("#detail-head").inner_text()
        assert tab.evaluate("() => window.__pastEdge") == []
        assert tab.evaluate("document.documentElement.scrollWidth") <= 360
        wide = tab.evaluate("""() => [...document.querySelectorAll('body *')].filter((e) => {
            const r = e.getBoundingClientRect(); return r.width && r.right > 360.5 && !e.closest('.table-scroll'); })
            .map((e) => e.tagName + '#' + e.id)""")
        assert wide == []
        head = tab.evaluate("() => { const h = document.getElementById('detail-head'); return [h.scrollHeight, h.clientHeight]; }")
        assert head[0] <= head[1] + 1, head  # the sentence is not cut off at the box's bottom either
        # A tapped chunk: its detail, still no hover words.
        box = tab.locator("#picture").bounding_box()
        tab.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + 30)
        tab.wait_for_function("() => document.getElementById('detail-head').textContent.startsWith('Chunk')")
        assert tab.evaluate("() => window.__pastEdge") == []
    finally:
        phone.close()


def test_10_offline_a_tokenizer_never_downloaded_is_said_once_with_what_works(page, module_context):
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


BIG_DOC = """() => {
  let text = '';
  const filler = 'The vault keeps its ledgers in order and nothing much happens here. ';
  while (text.length < 1_100_000) text += filler;
  text += 'The quartz beacon flashes twice per minute. ';
  text += filler.repeat(200) + 'Again the quartz beacon shows. ' + filler.repeat(50) + 'A QUARTZ BEACON at the end.';
  window.__clip = new DataTransfer(); window.__clip.setData('text/plain', text);
  return text;
}"""


def test_11_find_searches_the_whole_big_document_steps_through_hits_and_marks_one(page):
    restore(page, "size=24")
    # The example, small: a hit is selected in the Document box itself.
    find = page.locator("#doc-find")
    find.fill("compaction")
    page.wait_for_function("() => document.querySelector('#doc-find-status mark')?.textContent.toLowerCase() === 'compaction'")
    doc = page.evaluate("document.getElementById('param-doc').value")
    assert page.evaluate("() => { const t = document.getElementById('param-doc'); return [t.selectionStart, t.selectionEnd]; }") \
        == [doc.lower().index("compaction"), doc.lower().index("compaction") + len("compaction")]
    # A document over a million characters: the box shows its start only, the find box searches all of it.
    text = page.evaluate(BIG_DOC)
    page.locator("#param-doc").evaluate("ta => ta.select()")
    page.evaluate("""() => document.getElementById("param-doc").dispatchEvent(
      new ClipboardEvent("paste", { clipboardData: window.__clip, bubbles: true, cancelable: true }))""")
    page.wait_for_function("(n) => window.ragsim.request().documents[0].text.length === n", arg=len(text))
    page.wait_for_function("() => document.getElementById('param-doc').value.length < 100000")
    find.fill("quartz beacon")
    page.wait_for_function("() => document.querySelector('#doc-find-status mark')?.textContent === 'quartz beacon'")
    assert page.locator("#doc-find-status").inner_text().startswith("Hit 1 of 3,")
    status = page.locator("#doc-find-status")
    assert "beyond the part the box shows" in status.inner_text()
    assert page.locator("#doc-find-status mark").inner_text() == "quartz beacon"
    first = text.index("quartz beacon")
    page.click("#find-next")
    page.wait_for_function("() => document.getElementById('doc-find-status').dataset.hit === '2'")
    find.press("Enter")
    page.wait_for_function("() => document.getElementById('doc-find-status').dataset.hit === '3'")
    assert page.locator("#doc-find-status mark").inner_text() == "QUARTZ BEACON"
    find.press("Enter")  # round the end
    page.wait_for_function("() => document.getElementById('doc-find-status').dataset.hit === '1'")
    page.click("#find-mark")
    page.wait_for_function("(a) => { const s = window.ragsim.request().span; return s && s.start === a; }", arg=first)
    assert page.evaluate("window.ragsim.request().span.end") == first + len("quartz beacon")
    page.wait_for_function("(a) => { const r = window.ragsim.shownRequest(); return r && r.span && r.span.start === a; }",
                           arg=first, timeout=240_000)
    assert page.evaluate("() => window.ragsim.bands().length") == 1  # the picture marks it
    find.fill("")
    restore(page, "size=24")
