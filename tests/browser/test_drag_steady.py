"""A still page while the controls move: during a drag nothing on screen moves (chunk lists read as
ranges, so the verdict keeps its size), an overlap the size cannot hold is held and comes back, a
30-step keyboard drag makes at most five announcements, and at 1366 px no drop-down cuts its labels
and no slider value wraps. Each test waits for the page's own events (the shown request, a text
appearing), never for a fixed time."""

from __future__ import annotations

import re

import pytest

from a11y import FRAME, at_laptop_size, boxes, restore, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/


@pytest.fixture(scope="module")
def page(booted_page):
    return at_laptop_size(booted_page)


def step_to(page, key: str, size: int):
    page.keyboard.press(key)
    page.wait_for_function("(n) => { const r = window.ragsim.shownRequest(); return r && r.chunking.size === n; }",
                           arg=size, polling=20)
    settle(page)
    page.evaluate(FRAME)


def test_chunk_lists_read_as_ranges_and_nothing_moves_during_a_drag(page):
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


def test_the_overlap_comes_back_once_the_size_allows_it(page):
    restore(page, "size=8&overlap=6")
    size = page.locator("#param-size")
    size.focus()
    for n in [7, 6, 5, 4]:
        step_to(page, "ArrowLeft", n)
    assert page.evaluate("window.ragsim.shownRequest().chunking.overlap") == 3
    note = page.locator("#held-note")
    assert note.is_visible()
    said = note.inner_text()
    assert "Overlap lowered to 3 words to stay below the size (4 words)" in said and "Back to your 6 words" in said
    assert "about 4.0× the text stored" in said  # the storage a near-size overlap costs is said with it
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


def test_a_30_step_keyboard_drag_makes_at_most_5_announcements_and_then_the_verdict(page):
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


def test_at_1366_px_no_drop_down_cuts_its_labels_and_no_slider_value_wraps(page):
    page.set_viewport_size({"width": 1366, "height": 768})
    page.evaluate("() => { const d = document.querySelector('details.advanced'); if (d) d.open = true; }")
    for fragment in ["size=24", "strategy=llamaindex-sentence&size=1024&overlap=200",
                     "strategy=langchain-recursive&size=4000&overlap=200&length=tokens", "strategy=haystack&size=200"]:
        restore(page, fragment)
        assert page.evaluate(CUT_LABELS) == [], fragment
    page.evaluate("() => { const d = document.querySelector('details.advanced'); if (d) d.open = false; }")
