"""The page at the sizes people use, light and dark.

Drag and see: with the sliders in view, the verdict and the picture are in view too, at
1366x768, 1440x900, a 768 px tablet and 390 and 320 px phones, before and after a drag step.
Phones: no horizontal scrolling at 320 and 390 px (code, tables and stats stay inside the
screen), every control a tap target of at least 44 px.
Dark mode: the page follows prefers-color-scheme, the picture included."""

import pytest

from a11y import boxes, load_collection, off_screen, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

INDEX = "index.html"
SIZES = [(1366, 768), (1440, 900), (768, 1024), (390, 844), (320, 640), (320, 568)]
STAGE = ["#verdict", "#picture"]
SLIDERS = ["#param-size", "#param-overlap", "#param-k"]
# What a finger can tap on a phone (visible ones only); a checkbox counts with its label.
TAPPABLE = ("button, select, summary, input:not([type=checkbox]):not([type=file]), textarea, "
            "label.button, .control.check, a[href]")


@pytest.fixture(scope="module")
def page(booted_page):
    page = booted_page(INDEX)
    yield page
    page.set_viewport_size({"width": 1280, "height": 720})
    page.emulate_media(color_scheme="light")


def at_size(page, width, height):
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


@pytest.mark.parametrize("width,height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_sliders_the_verdict_and_the_picture_are_on_screen_together(page, width, height):
    settle(page)
    at_size(page, width, height)
    page.evaluate("() => window.scrollTo(0, 0)")
    # Bring the sliders into view as a person would (the last one at the bottom edge at worst).
    page.evaluate("() => document.getElementById('param-k').scrollIntoView({block: 'nearest'})")
    assert off_screen(page, STAGE + SLIDERS) == {}
    before = boxes(page, STAGE + SLIDERS)
    # A drag step: the verdict changes, nothing moves out of view.
    size = page.get_by_label("Chunk size", exact=True)
    size.focus()
    size.press("ArrowRight")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 25")
    settle(page)
    assert page.locator("#verdict").get_attribute("data-verdict") == "cut"
    assert off_screen(page, STAGE + SLIDERS) == {}
    assert boxes(page, ["#verdict"])["#verdict"]["top"] == before["#verdict"]["top"]
    size.press("ArrowLeft")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 24")
    settle(page)


def test_with_a_collection_the_sliders_and_both_verdicts_are_on_screen_together(page):
    load_collection(page)
    for width, height in [(1366, 768), (390, 844)]:
        at_size(page, width, height)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.evaluate("() => document.getElementById('param-k').scrollIntoView({block: 'nearest'})")
        assert off_screen(page, ["#fact-verdict", "#picture"] + SLIDERS) == {}, (width, height)


def wide_things(page):
    """Elements that reach past the right edge of the screen."""
    return page.evaluate("""() => {
      const w = document.documentElement.clientWidth;
      return [...document.querySelectorAll('body *')].filter((e) => {
        const r = e.getBoundingClientRect();
        return r.width && r.right > w + 0.5 && !e.closest('.table-scroll, .code-block, .doc-list');
      }).slice(0, 8).map((e) => e.tagName + '#' + e.id + '.' + e.className);
    }""")


@pytest.mark.parametrize("width", [320, 390])
def test_phones_scroll_only_downwards_and_every_tap_target_is_44_px(page, width):
    at_size(page, width, 740)
    for state in ["example", "collection"]:
        if state == "collection":
            load_collection(page)
        else:
            page.evaluate("() => { location.hash = 'size=25'; location.hash = ''; }")
            settle(page)
        # Open what is folded, so its contents are measured too.
        page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        at_size(page, width, 740)
        assert page.evaluate("document.documentElement.scrollWidth") == width, (state, wide_things(page))
        assert wide_things(page) == [], state
        small = page.evaluate("""(sel) => [...document.querySelectorAll(sel)].filter((e) => {
            if (!e.getClientRects().length || e.closest('[hidden], .visually-hidden')) return false;
            if (e.matches('a[href]') && e.closest('p, li') && !e.closest('.full-link')) return false; // inline links (WCAG 2.5.8 exception)
            const r = e.getBoundingClientRect();
            return r.height < 44 || r.width < 44;
          }).map((e) => `${e.tagName}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().width)}x${Math.round(e.getBoundingClientRect().height)}`)""",
                              TAPPABLE)
        assert small == [], state
    # The picture stays readable: as wide as the screen allows, and its rows tall enough to tap.
    picture = boxes(page, ["#picture"])["#picture"]
    assert picture["right"] - picture["left"] >= width - 40
    assert picture["bottom"] - picture["top"] >= 80


def test_dark_mode_follows_the_system_and_keeps_the_picture_readable(page):
    at_size(page, 1366, 768)
    page.evaluate("() => { location.hash = 'size=25'; location.hash = ''; }")
    settle(page)
    colours = "() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
    light = page.evaluate(colours)
    page.emulate_media(color_scheme="dark")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    dark = page.evaluate(colours)
    assert light == ["rgb(255, 255, 255)", "rgb(29, 35, 43)"]
    assert dark != light
    luminance = page.evaluate("""(c) => { const [r, g, b] = c.match(/\\d+/g).map(Number); return (r + g + b) / 3; }""",
                              dark[0])
    assert luminance < 40
    # The canvas repaints with the dark palette: a retrieved bar's pixels are the dark scheme's
    # --pic-retrieved (#4a8ad6), and back to the light one (#1f5fa8) with the light scheme.
    assert retrieved_pixel(page) == [0x4a, 0x8a, 0xd6]
    page.emulate_media(color_scheme="light")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert retrieved_pixel(page) == [0x1f, 0x5f, 0xa8]


def retrieved_pixel(page):
    """The colour in the middle of the rank-1 bar's first pixel column with no label over it."""
    return page.evaluate("""() => {
      const c = document.getElementById('picture');
      const ctx = c.getContext('2d');
      const data = ctx.getImageData(0, 0, c.width, c.height).data;
      const counts = new Map();
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] !== 255) continue;
        const key = `${data[i]},${data[i + 1]},${data[i + 2]}`;
        counts.set(key, (counts.get(key) || 0) + 1);
      }
      // The most frequent opaque colour that is not grey: the retrieved bars.
      const [best] = [...counts].filter(([k]) => { const [r, g, b] = k.split(',').map(Number); return Math.max(r, g, b) - Math.min(r, g, b) > 60; })
        .sort((a, b) => b[1] - a[1]);
      return best[0].split(',').map(Number);
    }""")
