"""The page with a keyboard and a screen reader, and axe.

axe-core (tests/browser/a11y.py: npm's tarball, integrity checked, injected for the tests only)
finds nothing on the default page, with a collection and after the audit, light and dark.
Keyboard: a Tab walk from the Document box reaches every control, each with a visible ring of
3:1 drawn on it; focus stays where the person is when a document is selected, renamed or
removed; Enter on the picture's focused chunk marks its first sentence.
Screen readers: one announcement when a 60-step drag rests, slider values with units,
confirmations spoken, the picture as a captioned table, every table captioned.
Marking: a click marks the sentence across a hard line break; the hovered sentence is drawn."""

import re
from urllib.parse import quote

import pytest

from a11y import announcer_idle, axe_violations, load_collection, settle
from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

INDEX = "index.html"
# A hard-wrapped paragraph: the answer sentence runs over a line break.
WRAPPED = ("Backups\n\nThe nightly job copies every volume to the archive. Hourly snapshots are kept\n"
           "for 48 hours before compaction merges them. Daily ones stay for a month.\n\n"
           "Restores take minutes.\n")
WRAPPED_SENTENCE = "Hourly snapshots are kept\nfor 48 hours before compaction merges them."


@pytest.fixture(scope="module")
def page(booted_page, module_context, server):
    module_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page = booted_page(INDEX)
    yield page
    page.emulate_media(color_scheme="light")


def example(page):
    page.evaluate("() => { location.hash = 'size=25'; location.hash = ''; }")
    return settle(page)


def panels_drawn(page):
    page.wait_for_function("() => window.ragsim.panelsShown()")
    page.wait_for_function("() => !document.querySelector('#sweep[data-state=computing]')")


# Two frames after now: a layout the page owes (a new viewport, a drawn result) has been made.
TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
# The announcer holds the verdict on screen: it speaks once the results rest (announce.js), so this is
# the event a test waits for, not the 700 ms it takes.
SPOKEN = """() => {
  const said = document.getElementById("announcer").textContent;
  const verdict = `${document.getElementById("verdict-headline").innerText}. ${document.getElementById("verdict-text").innerText}`;
  return said.startsWith(verdict);
}"""


def quiet(page):
    """Settled, the panels drawn and the announcer done (so axe sees a page at rest)."""
    settle(page)
    panels_drawn(page)
    announcer_idle(page)  # with a collection loaded it may say nothing new: SPOKEN does not fit there


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_on_the_page_a_collection_and_the_audit(page, scheme):
    page.emulate_media(color_scheme=scheme)
    example(page)
    quiet(page)
    assert axe_violations(page) == [], "default page"
    page.set_viewport_size({"width": 390, "height": 844})  # on a phone, where wide tables scroll
    page.evaluate(TWO_FRAMES)
    assert axe_violations(page) == [], "default page, 390 px"
    load_collection(page)
    quiet(page)
    assert axe_violations(page) == [], "collection, 390 px"
    page.set_viewport_size({"width": 1280, "height": 720})
    page.evaluate(TWO_FRAMES)
    assert axe_violations(page) == [], "collection"
    page.get_by_role("button", name="Run the audit").click()
    page.wait_for_function("() => document.getElementById('audit').dataset.state === 'done'", timeout=90_000)
    quiet(page)
    assert axe_violations(page) == [], "after the audit"
    page.emulate_media(color_scheme="light")


# --- 3. Keyboard ------------------------------------------------------------------------------------

CONTROLS = """() => [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
  .filter((e) => !e.disabled && e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden'
    && !e.closest('details:not([open]) > :not(summary)'))
  .map((e) => e.id || e.getAttribute('aria-label') || e.textContent.trim().slice(0, 40))"""

FOCUS_RING = """() => {
  const e = document.activeElement;
  const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  // The ring is drawn on the focused element itself, or (a visually hidden file input) on its label.
  const drawn = e.matches('.visually-hidden') ? document.querySelector(`label[for="${e.id}"]`) : e;
  const s = getComputedStyle(drawn);
  return {id: e.id || e.getAttribute('aria-label') || e.textContent.trim().slice(0, 40), tag: e.tagName,
          style: s.outlineStyle, width: parseFloat(s.outlineWidth),
          contrast: ratio(s.outlineColor, getComputedStyle(document.body).backgroundColor)};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_tab_walk_from_the_document_box_reaches_every_control_with_a_ring(page, scheme):
    page.emulate_media(color_scheme=scheme)
    load_collection(page)
    panels_drawn(page)
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    wanted = set(page.evaluate(CONTROLS))
    seen, rings = [], []
    for direction in ["Tab", "Shift+Tab"]:
        page.get_by_label("Document", exact=True).focus()
        for _ in range(len(wanted) + 10):
            page.keyboard.press(direction)
            ring = page.evaluate(FOCUS_RING)
            if ring["tag"] == "BODY":
                break  # past the last (or first) control: the walk is over
            seen.append(ring["id"])
            rings.append(ring)
    assert wanted - set(seen) == set()
    bad = [r for r in rings if r["style"] == "none" or r["width"] < 3 or r["contrast"] < 3]
    assert bad == []
    page.emulate_media(color_scheme="light")


def active(page):
    return page.evaluate("() => { const e = document.activeElement; return [e.tagName, e.id, e.className, e.getAttribute('aria-label')]; }")


def test_selecting_renaming_and_removing_documents_keep_focus_with_the_person(page):
    load_collection(page)
    # Selecting a document with its number keeps focus on that button.
    page.get_by_role("button", name="Show document 2 in the Document box").click()
    settle(page)
    assert page.locator("#doc-list li").nth(1).get_attribute("aria-current") == "true"
    assert active(page)[3] == "Show document 2 in the Document box"
    # Clicking a title edits it at once: the click selects its document and the caret stays there.
    title = page.get_by_label("Title of document 3")
    title.click()
    settle(page)
    assert active(page)[3] == "Title of document 3"
    assert page.locator("#doc-list li").nth(2).get_attribute("aria-current") == "true"
    page.keyboard.press("End")
    page.keyboard.type(" (renamed)")
    page.keyboard.press("Enter")
    settle(page)
    assert page.evaluate("() => window.ragsim.request().documents[2].title").endswith(" (renamed)")
    # Tab from a title goes on to its row's Remove button, never back to the top of the list.
    page.keyboard.press("Tab")
    assert active(page)[3] == "Remove document 3"
    # Removing a document puts focus on the next row's Remove button, not on <body>.
    page.keyboard.press("Enter")
    settle(page)
    assert page.locator("#doc-list li").count() == 5
    assert active(page)[3] == "Remove document 3"
    # Marking from the buttons leaves focus on the button pressed.
    page.get_by_role("button", name="Clear mark").click()
    settle(page)
    assert active(page)[1] == "clear-mark"


def test_enter_on_the_focused_chunk_marks_its_first_sentence(page):
    example(page)
    page.locator("#picture").focus()
    page.keyboard.press("Home")  # chunk 1
    page.keyboard.press("ArrowRight")  # chunk 2
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('announcer').textContent.startsWith('Marked “')")
    settle(page)
    req = page.evaluate("() => window.ragsim.request()")
    text = req["documents"][0]["text"]
    chunk2 = next(c for c in api.simulate(req)["chunks"] if c["number"] == 2)
    marked = text[req["span"]["start"]:req["span"]["end"]]
    # The first sentence that starts inside chunk 2, whole.
    starts = [m.end() for m in re.finditer(r"[.!?]\s+", text)]
    first = min(s for s in starts if s >= chunk2["start"])
    assert req["span"]["start"] == first
    assert marked.endswith(".") and "." not in marked[:-1]
    assert active(page)[1] == "picture"
    assert page.locator("#mark-info").inner_text().startswith(f"Marked “{marked[:60]}")  # quoted, shortened past 90


# --- 4. Screen readers ------------------------------------------------------------------------------

COUNT_LIVE = """() => {
  window.__live = [];
  const live = '[aria-live]:not([aria-live=off]), [role=status]:not([aria-live=off]), [role=alert], [role=log], output:not([aria-live=off])';
  const seen = new Map();
  const note = (el) => { const t = el.textContent.trim(); if (t && t !== seen.get(el)) window.__live.push([el.id, t]); seen.set(el, t); };
  const regions = [...document.querySelectorAll(live)];
  regions.forEach((el) => seen.set(el, el.textContent.trim()));
  window.__liveObserver = new MutationObserver((records) => {
    for (const r of records) { const el = (r.target.nodeType === 1 ? r.target : r.target.parentElement).closest(live); if (el) note(el); }
  });
  for (const el of regions) window.__liveObserver.observe(el, {childList: true, characterData: true, subtree: true});
}"""


def test_a_60_step_drag_is_announced_once_when_it_rests(page):
    example(page)
    page.mouse.move(0, 0)  # nothing hovered or focused before the drag
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    quiet(page)
    page.evaluate(COUNT_LIVE)
    slider = page.get_by_label("Chunk size", exact=True)
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 8, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=60)
    page.mouse.up()
    settle(page)
    panels_drawn(page)
    page.wait_for_function(SPOKEN)  # the verdict where the drag came to rest has been spoken
    page.evaluate(TWO_FRAMES)
    spoken = page.evaluate("() => { window.__liveObserver.disconnect(); return window.__live; }")
    size = page.evaluate("() => window.ragsim.request().chunking.size")
    assert size > 60  # the drag really moved the slider a long way
    headline = page.locator("#verdict-headline").inner_text()
    # Once: the verdict where the drag came to rest (the panels' own lines may follow once).
    verdicts = [t for i, t in spoken if i == "announcer"]
    assert verdicts == [f"{headline}. {page.locator('#verdict-text').inner_text()}"]
    assert len(spoken) <= 4, "\n".join(f"{i}: {t[:80]}" for i, t in spoken)


def test_slider_values_carry_their_units(page):
    example(page)
    assert page.get_by_label("Chunk size", exact=True).get_attribute("aria-valuetext") == "24 words"
    assert page.get_by_label("Overlap", exact=True).get_attribute("aria-valuetext") == "6 words"
    assert page.get_by_label("Top k", exact=True).get_attribute("aria-valuetext") == "top 2 chunks"
    page.get_by_label("Unit", exact=True).select_option("chars")
    settle(page)
    assert page.get_by_label("Chunk size", exact=True).get_attribute("aria-valuetext").endswith(" characters")
    example(page)


def announced(page, text):
    page.wait_for_function("(t) => document.getElementById('announcer').textContent.startsWith(t)", arg=text)


def test_confirmations_are_announced(page, tmp_path):
    example(page)
    page.get_by_role("button", name="Copy link").click()
    announced(page, "Link copied.")
    page.evaluate("""() => { const t = document.getElementById('param-doc'); const at = t.value.indexOf('Hourly');
                             t.focus(); t.setSelectionRange(at, at + 30); }""")
    page.get_by_role("button", name="Mark selection as answer").click()
    announced(page, "Marked the selection as the answer.")
    files = [tmp_path / "a.txt", tmp_path / "b.md"]
    for f in files:
        f.write_text(f"Document {f.stem}. It says something.\n", encoding="utf-8")
    page.get_by_label("Question", exact=True).fill("What do they say?")  # one's own (the example's would go)
    page.locator("#add-files").set_input_files([str(f) for f in files])
    announced(page, "Added 2 documents")
    settle(page)


def test_the_picture_has_a_table_of_chunks_and_every_table_a_caption(page):
    example(page)
    panels_drawn(page)
    page.get_by_text("The chunks as a table").click()
    page.wait_for_function("() => document.querySelectorAll('#chunk-table tbody tr').length > 0")
    req = page.evaluate("() => window.ragsim.request()")
    chunks = api.simulate(req)["chunks"]
    rows = page.eval_on_selector_all("#chunk-table tbody tr", "trs => trs.map(t => [...t.children].map(c => c.textContent))")
    holds = {"whole": "whole", "part": "part", None: "no"}
    assert rows == [[str(c["number"]), f"{c['start']:,}–{c['end']:,}", f"#{c['rank']}", "yes" if c["retrieved"] else "no",
                     holds[c["holds"]]] for c in chunks]
    assert page.eval_on_selector_all("#chunk-table thead th", "ths => ths.map(t => t.textContent)") == \
        ["Chunk", "Extent", "Rank", "Retrieved", "Holds the answer"]
    caption = page.locator("#chunk-table caption").text_content()
    assert caption.startswith("The 12 chunks of “Document” in document order"), caption
    uncaptioned = page.eval_on_selector_all("table", "ts => ts.filter(t => t.rows.length && !t.caption?.textContent.trim()).map(t => t.id || t.className)")
    assert uncaptioned == []
    page.get_by_text("The chunks as a table").click()


# --- 5. Marking -------------------------------------------------------------------------------------

def strip_point(page, text, offset):
    box = page.locator("#picture").bounding_box()
    return {"x": 8 + offset / len(text) * (box["width"] - 16), "y": box["height"] - 16 - 4 - 9}


def test_a_click_marks_the_sentence_across_a_hard_line_break_and_hovering_shows_it(page):
    page.evaluate("(h) => { location.hash = h; }", f"doc={quote(WRAPPED)}&q={quote('How long are hourly snapshots kept?')}")
    settle(page)
    start = WRAPPED.index(WRAPPED_SENTENCE)
    # Aim at the first line's part of the sentence, before the line break.
    at = strip_point(page, WRAPPED, start + 8)
    canvas = page.locator("#picture")
    page.mouse.move(0, 0)
    before = canvas.screenshot()
    canvas.hover(position=at)
    assert page.locator("#detail-head").inner_text() == "Click to mark this sentence as the answer:"
    assert page.locator("#detail-text").inner_text() == WRAPPED_SENTENCE
    # The hover cue: the picture changes where the sentence is (its edges drawn through the rows).
    assert canvas.screenshot() != before
    canvas.click(position=at)
    settle(page)
    span = page.evaluate("() => window.ragsim.request().span")
    assert (span["start"], span["end"]) == (start, start + len(WRAPPED_SENTENCE))
    # A blank line still ends a paragraph, and a heading line is a sentence of its own.
    canvas.click(position=strip_point(page, WRAPPED, 2))
    settle(page)
    span = page.evaluate("() => window.ragsim.request().span")
    assert WRAPPED[span["start"]:span["end"]] == "Backups"
    example(page)
