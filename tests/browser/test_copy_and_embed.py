"""Copying and embedding: every "copied" confirmation shows beside its button, on screen, on a laptop
and a phone; in a collection the embed and a reload show the document holding the answer; the embed
on a phone stays inside its right edge and says "tap", not "hover"."""

from __future__ import annotations

import json
import re

import pytest

from a11y import FRAME, at_laptop_size, boxes, load_collection, restore, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/


@pytest.fixture(scope="module")
def page(booted_page, module_context, server):
    module_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    return at_laptop_size(booted_page)


def near(a: dict, b: dict, gap: float = 24) -> bool:
    """Boxes a and b touch or lie within `gap` px of each other, in both directions."""
    dx = max(0, b["left"] - a["right"], a["left"] - b["right"])
    dy = max(0, b["top"] - a["bottom"], a["top"] - b["bottom"])
    return dx <= gap and dy <= gap


@pytest.mark.parametrize("width,height", [(1366, 768), (390, 844)])
def test_every_copy_confirmation_is_beside_its_button_on_screen(page, width, height):
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


def test_a_refused_copy_reads_as_a_problem_and_leaves_the_text_selected(page):
    restore(page, "size=24")
    page.evaluate("""() => { const c = navigator.clipboard; window.__clipboard = [c.write, c.writeText];
      c.write = c.writeText = () => Promise.reject(new DOMException("refused", "NotAllowedError")); }""")
    try:
        page.click("#copy-link")
        page.wait_for_function("() => (document.getElementById('copy-note')?.textContent || '')"
                               ".startsWith('Your browser did not allow copying')")
        got = page.evaluate("""() => {
          const colour = (v) => { const s = document.createElement("span"); s.style.color = `var(${v})`;
            document.body.append(s); const c = getComputedStyle(s).color; s.remove(); return c; };
          const note = document.getElementById("copy-note"), out = document.getElementById("share-output");
          return { kind: note.dataset.kind, color: getComputedStyle(note).color, cut: colour("--cut"),
            intact: colour("--intact"), box: !out.hidden && out.value === location.href.split("#")[0] + "#" + out.value.split("#")[1],
            selected: out.selectionEnd - out.selectionStart === out.value.length && document.activeElement === out }; }""")
        assert got["kind"] == "problem" and got["color"] == got["cut"] != got["intact"], got
        assert got["box"] and got["selected"], got
    finally:
        page.evaluate("() => { const c = navigator.clipboard; [c.write, c.writeText] = window.__clipboard; }")
        page.evaluate("() => { document.getElementById('share-output').hidden = true; }")


def pick_document(page, n: int):
    page.get_by_role("button", name=f"Show document {n} in the Document box", exact=True).click()
    page.wait_for_function("(n) => document.getElementById('doc-list').dataset.sel === String(n - 1)", arg=n)


def test_in_a_collection_the_embed_and_a_reload_show_the_answer_s_document(page):
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


def test_the_embed_on_a_phone_keeps_inside_its_right_edge_and_says_tap(page, browser, server):
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
