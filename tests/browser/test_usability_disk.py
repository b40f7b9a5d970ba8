"""dist/index.html opened as a file says that it must be served, and how,
instead of "Loading Python…" for ever."""

import pytest

pytestmark = pytest.mark.slow  # real Chromium on the built dist/


def test_opened_from_disk_the_page_says_to_serve_it(browser, server):
    context = browser.new_context()  # no routing: a file:// page makes no requests to stop
    try:
        disk = context.new_page()
        disk.goto((server.dist / "index.html").as_uri())
        disk.wait_for_function("() => document.documentElement.classList.contains('from-disk')", timeout=10_000)
        note = disk.locator("#from-disk")
        assert note.is_visible()
        assert "must be served" in note.inner_text()
        assert disk.locator("#from-disk code").first.inner_text() == "python3 build.py serve"
        assert disk.locator("#boot").is_hidden()  # no "Loading Python…" for ever
        assert disk.locator("main").is_hidden()
    finally:
        context.close()
