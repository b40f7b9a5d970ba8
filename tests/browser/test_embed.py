"""The simulator embedded in another page (tests/browser/fixtures/embed.html) with `embed=1`:
the frame loads the compact layout, tells its parent its height, and reacts to its sliders."""

import pytest

from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

EMBED = "__tests__/embed.html"


@pytest.fixture(scope="module")
def post(module_page, server):
    module_page.goto(server.url(EMBED))
    frame = module_page.frame_locator("#sim")
    module_page.wait_for_function(
        "() => { const d = document.getElementById('sim').contentDocument; return d && d.body && d.body.dataset.state === 'ready'; }",
        timeout=120_000)
    return module_page, frame


def inner(page):
    return page.frame(url=lambda u: "index.html" in u)


def test_the_frame_loads_compact_with_no_offsite_requests(post, offsite, page_errors):
    page, frame = post
    assert inner(page).evaluate("document.body.classList.contains('embed')")
    assert frame.locator("[role=status][data-verdict]").get_attribute("data-verdict") == "intact"
    assert frame.locator("#verdict-headline").inner_text() == "Present and intact"
    assert frame.locator("#picture").is_visible()
    for label in ["Chunk size", "Overlap", "Top k"]:
        assert frame.get_by_label(label, exact=True).is_visible()
    # The rest of the simulator stays behind the link.
    for hidden in ["#param-doc", "#stats", "#context", "#copy-link"]:
        assert frame.locator(hidden).is_hidden(), hidden
    link = frame.get_by_role("link", name="Open the full simulator")
    assert link.is_visible()
    href = link.get_attribute("href")
    assert "embed=1" not in href and "/index.html#" in href
    assert offsite == []
    assert page_errors == []


def test_the_frame_reports_its_height_and_follows_resizes(post):
    page, _ = post
    page.wait_for_function("window.heights.length > 0")
    body = inner(page).evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
    assert page.evaluate("window.heights.at(-1)") == body
    assert page.evaluate("document.getElementById('sim').getBoundingClientRect().height") == body
    # A narrower post makes the frame's content taller, and the frame says so.
    count = page.evaluate("window.heights.length")
    page.set_viewport_size({"width": 420, "height": 800})
    page.wait_for_function(f"window.heights.length > {count}")
    assert page.evaluate("window.heights.at(-1)") > body
    page.set_viewport_size({"width": 1280, "height": 720})


def test_the_frame_reacts_to_its_sliders(post):
    page, frame = post
    size = frame.get_by_label("Chunk size", exact=True)
    size.focus()
    size.press("ArrowRight")
    sim = inner(page)
    sim.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.request().chunking.size === 25"
                          " && JSON.stringify(window.ragsim.shownRequest()) === JSON.stringify(window.ragsim.request())")
    assert frame.locator("[data-verdict]").get_attribute("data-verdict") == "cut"
    assert api.simulate(sim.evaluate("window.ragsim.request()"))["verdict"]["kind"] == "cut"
    assert frame.locator("#param-size-value").inner_text() == "25 words"
    size.press("ArrowLeft")
    sim.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest().chunking.size === 24")
    assert frame.locator("[data-verdict]").get_attribute("data-verdict") == "intact"
    # The link out carries the new state (written after the last change).
    sim.wait_for_function("() => document.getElementById('open-full').href.includes('#z=')")
