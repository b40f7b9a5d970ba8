"""Sharing and embedding.

When the clipboard is refused, the link shows in a visible box, selected and focused. "Copy
embed code" copies the iframe with the listener that sizes it; a post built from that snippet
shows the whole embed (sliders included). The embed shows the question and the marked
sentence, keeps its height while the pointer moves over the picture, and axe finds nothing in
it, light and dark. (The page opened from disk: test_usability_disk.py.)"""

import threading

import pytest

import build
from a11y import FRAME, announcer_idle, axe_violations, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

INDEX = "index.html"
EMBED = "__tests__/embed.html"


@pytest.fixture(scope="module")
def page(booted_page):
    page = booted_page(INDEX)
    yield page
    page.emulate_media(color_scheme="light")


def test_a_refused_clipboard_shows_the_link_selected_in_a_visible_box(page):
    announcer_idle(settle(page))  # the verdict has been spoken: the announcer is free
    page.evaluate("""() => { navigator.clipboard.write = navigator.clipboard.writeText = () =>
                               Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError')); }""")
    box = page.locator("#share-output")
    assert box.is_hidden()
    page.get_by_role("button", name="Copy link").click()
    page.wait_for_function("() => !document.getElementById('share-output').hidden")
    assert box.is_visible()
    link = box.input_value()
    assert link.startswith(page.url.split("#")[0] + "#")
    # Selected whole, with focus, so Ctrl+C copies it; and it is on screen, wide enough to see.
    assert page.evaluate("""() => { const b = document.getElementById('share-output');
      return [document.activeElement === b, b.selectionStart, b.selectionEnd]; }""") == [True, 0, len(link)]
    rect = box.bounding_box()
    assert rect["width"] > 200 and rect["height"] >= 30
    assert "did not allow copying" in page.locator("#copy-note").inner_text()
    page.wait_for_function("() => document.getElementById('announcer').textContent.startsWith('Your browser did not allow copying')")
    # The link opens the same state.
    assert "size=24" in link or "z=" in link or link.endswith("#")


def test_copy_embed_code_gives_a_frame_that_sizes_itself(page, module_context, server):
    module_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page.reload()
    page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)
    settle(page)
    page.get_by_role("button", name="Copy embed code").click()
    page.wait_for_function("() => { const n = document.getElementById('copy-note'); return n && n.textContent.startsWith('Embed code copied'); }")
    snippet = page.evaluate("() => navigator.clipboard.readText()")
    assert snippet.startswith("<iframe src=\"") and "embed=1" in snippet
    assert "ragsim:resize" in snippet and "<script>" in snippet and snippet.rstrip().endswith("</script>")
    # A post made of the snippet alone: the frame grows from 560 px to what it needs, and every
    # slider in it is inside the frame's box.
    # The post replaces a test page of the same server: a local page with no Content-Security-Policy
    # of its own (the simulator's would refuse the frame and the script; about:blank counts as a
    # public page, from which Chromium refuses frames on 127.0.0.1).
    page.goto(server.url(EMBED))
    page.set_content(f"<!doctype html><html lang='en'><title>post</title><body style='margin:0'>"
                     f"<h1>A post</h1>{snippet}<p>After.</p></body></html>")
    frame_el = page.locator("iframe")
    inner = page.frame_locator("iframe")
    inner.locator("body[data-state=ready]").wait_for(timeout=120_000)
    page.wait_for_function("() => parseFloat(document.querySelector('iframe').style.height) > 0")
    frame_box = frame_el.bounding_box()
    for label in ["Chunk size", "Overlap", "Top k"]:
        b = inner.get_by_label(label, exact=True).bounding_box()
        assert frame_box["y"] <= b["y"] and b["y"] + b["height"] <= frame_box["y"] + frame_box["height"], label
    link = inner.get_by_role("link", name="Open the full simulator").bounding_box()
    assert link["y"] + link["height"] <= frame_box["y"] + frame_box["height"]
    page.goto(server.url(INDEX))
    page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)


@pytest.mark.parametrize("width", [1000, 420])
def test_the_snippet_s_own_height_shows_the_sliders_where_a_host_strips_its_script(page, server, width):
    """A blog that keeps the iframe but drops the <script>: the frame stays at the snippet's height."""
    page.goto(server.url(INDEX))
    page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)
    settle(page)
    page.evaluate("""() => { navigator.clipboard.write = (items) => items[0].getType("text/plain")
      .then((blob) => blob.text()).then((text) => { window.__copied = text; }); }""")
    page.get_by_role("button", name="Copy embed code").click()
    snippet = page.wait_for_function("() => window.__copied").json_value()
    frame = snippet.split("<script>")[0]
    page.goto(server.url(EMBED))
    page.set_viewport_size({"width": width + 40, "height": 1200})
    page.set_content(f"<!doctype html><html lang='en'><title>post</title><body style='margin:0'>"
                     f"<div style='width:{width}px'>{frame}</div></body></html>")
    inner = page.frame_locator("iframe")
    inner.locator("body[data-state=ready]").wait_for(timeout=120_000)
    frame_box = page.locator("iframe").bounding_box()
    needed = page.frames[1].evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
    for label in ["Chunk size", "Overlap", "Top k"]:
        b = inner.get_by_label(label, exact=True).bounding_box()
        assert b["y"] + b["height"] <= frame_box["y"] + frame_box["height"], (label, width, frame_box, needed)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(server.url(INDEX))
    page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)


def test_the_embed_shows_inside_a_host_page_that_is_itself_cross_origin_isolated(browser, server, tmp_path):
    """A host page sent with COEP require-corp (build.py's own server sends it) on another origin
    frames the simulator only when the simulator's files say Cross-Origin-Resource-Policy: cross-origin."""
    (tmp_path / "post.html").write_text(
        f"<!doctype html><html lang='en'><title>post</title><h1>A post</h1>"
        f"<iframe src='{server.url(INDEX)}#embed=1' title='ragsim' width='100%' height='800'></iframe>",
        encoding="utf-8")
    host = build.make_server(tmp_path, 0, quiet=True)
    threading.Thread(target=host.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.goto(f"http://127.0.0.1:{host.server_address[1]}/post.html")
        assert tab.evaluate("crossOriginIsolated")  # the host page is isolated, as the was
        tab.wait_for_function("() => window.frames.length === 1")
        sim = tab.frame(url=lambda u: u.startswith(server.url(INDEX)))
        assert sim is not None, [f.url for f in tab.frames]
        sim.wait_for_function("() => document.body && document.body.dataset.state === 'ready'", timeout=120_000)
        assert sim.locator("#param-k").is_visible()
    finally:
        context.close()
        host.shutdown()
        host.server_close()


def frame_of(page):
    return page.frame(url=lambda u: "index.html" in u)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_embed_shows_the_question_keeps_its_height_and_passes_axe(page, server, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(server.url(EMBED))
    page.wait_for_function(
        "() => { const d = document.getElementById('sim').contentDocument; return d && d.body && d.body.dataset.state === 'ready'; }",
        timeout=120_000)
    sim = frame_of(page)
    settle(sim)
    question = sim.locator("#embed-question")
    assert question.is_visible()
    text = question.inner_text()
    # (the quotation marks are the <q> elements' own)
    assert text.startswith("Question: How long do hourly snapshots last?\nMarked answer: Hourly snapshots are kept for 48 hours")
    assert question.locator("q").count() == 2
    announcer_idle(sim)
    assert axe_violations(sim) == []
    # The pointer over the picture: the detail box fills in, the frame's height stays.
    page.wait_for_function("window.heights.length > 0")
    count = page.evaluate("window.heights.length")
    height = page.evaluate("document.getElementById('sim').getBoundingClientRect().height")
    canvas = page.frame_locator("#sim").locator("#picture")
    box = canvas.bounding_box()
    for i in range(12):
        canvas.hover(position={"x": 10 + i * (box["width"] - 20) / 11, "y": 24 + (i % 2) * 26})
    canvas.hover(position={"x": box["width"] / 2, "y": box["height"] - 29})
    assert sim.locator("#detail-head").inner_text() == "Click to mark this sentence as the answer:"
    page.mouse.move(1, 1)
    sim.evaluate(FRAME)  # the frame drawn without the pointer (and any new height posted) ...
    page.evaluate(FRAME)  # ... and the page's frames since, which would have taken that message
    assert page.evaluate("window.heights.length") == count
    assert page.evaluate("document.getElementById('sim').getBoundingClientRect().height") == height
    page.emulate_media(color_scheme="light")
