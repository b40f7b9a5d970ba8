"""The boot bar while Python loads, in a fresh Chromium context (nothing cached, no snapshot): it
moves with the steps of the Pyodide load (the runtime's files arriving), not one value held for the
whole download, and the page under it does not move when it goes."""

import pytest

pytestmark = pytest.mark.slow  # a fresh context boots Pyodide from the files

# Every value and line the bar shows, and where the page's main content starts, from the first parse.
RECORD = """
window.__boot = [];
document.addEventListener("DOMContentLoaded", () => {
  const bar = document.getElementById("boot-progress"), text = document.getElementById("boot-text");
  const main = document.querySelector("main");
  const record = () => window.__boot.push({ value: bar.value, text: text.textContent,
    state: document.body.dataset.state, top: main.getBoundingClientRect().top + window.scrollY });
  record();
  new MutationObserver(record).observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
  new MutationObserver(record).observe(bar, { attributes: true });
  new MutationObserver(record).observe(text, { childList: true, characterData: true, subtree: true });
});
"""


@pytest.fixture(scope="module")
def steps(browser, server):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        tab = context.new_page()
        tab.add_init_script(RECORD)
        tab.goto(server.url("index.html"))
        tab.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)
        tab.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        after = tab.evaluate("document.querySelector('main').getBoundingClientRect().top + window.scrollY")
        yield tab.evaluate("window.__boot"), after
    finally:
        context.close()


def test_the_main_content_does_not_move_when_the_boot_bar_goes(steps):
    seen, after = steps
    loading = [s["top"] for s in seen if s["state"] == "loading"]
    assert loading and set(loading) == {after}, (loading, after)


def test_the_bar_moves_with_the_steps_of_the_pyodide_load(steps):
    seen, _ = steps
    values = [s["value"] for s in seen if s["state"] == "loading"]
    assert values == sorted(values), values  # never back
    # Between the start and the core's install: the runtime's script, its standard library and its
    # WebAssembly compiled, each a step of its own, each said in the line beside the bar.
    runtime = sorted({v for v in values if 5 < v < 85})
    assert len(runtime) >= 3, seen
    lines = {s["text"] for s in seen}
    assert any("WebAssembly is compiled" in line for line in lines), lines
    assert any("standard library has arrived" in line for line in lines), lines
