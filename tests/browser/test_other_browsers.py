"""The main flow in Firefox and WebKit (Safari's engine), not only Chromium: paste a text, type a
question, mark its answer, drag the size, and the verdict shown is CPython's for the request the
page sent; then dense retrieval, ranked as CPython ranks it. Debian's firefox-esr over WebDriver
BiDi and WebKitGTK through WebKitWebDriver under Xvfb (other_browsers.py); the page is dist/ on
the test's own server."""

import json
import os
import threading

import pytest
import build

from other_browsers import open_browser, webkit_console
from ragsim.wire import api

pytestmark = pytest.mark.slow  # two more browsers boot Pyodide

ENGINES = ["firefox", "webkit"]
BOOT_S = 180
TEXT = ("Harbour rules\n\nThe north quay opens at six. Ships longer than 120 metres berth at the outer pier, "
        "where the water is deepest. Pilots board at the fairway buoy two miles out.\n\nFees\n\n"
        "Berthing costs 40 euros a metre a day, paid to the harbour office before departure. "
        "Fishing boats under 12 metres pay half. The office closes at eight in the evening.")
QUESTION = "Where do long ships berth?"
ANSWER = "Ships longer than 120 metres berth at the outer pier, where the water is deepest."
SETTLED = """(() => { const r = window.ragsim;
  return document.body.dataset.state === "ready" && r.shownRequest() !== null
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request()); })()"""
DENSE_DONE = """(() => { const r = window.ragsim, res = r.response();
  return Boolean(res && res.dense && !res.dense.pending) && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request()); })()"""
# A person's paste, question and selection, then the Mark button.
PASTE_AND_MARK = """(() => {
  const set = (id, value) => { const e = document.getElementById(id); e.focus(); e.value = value;
    e.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste", data: value })); return e; };
  const doc = set("param-doc", %s);
  set("param-q", %s);
  const at = doc.value.indexOf(%s);
  doc.focus();
  doc.setSelectionRange(at, at + %d);
  document.getElementById("mark-selection").click();
  return at;
})()"""
DRAG = """(() => { const s = document.getElementById("param-size"); s.value = String(%d);
  s.dispatchEvent(new Event("input", { bubbles: true })); s.dispatchEvent(new Event("change", { bubbles: true }));
  return s.value; })()"""


def js(value) -> str:
    return json.dumps(value)


@pytest.fixture(scope="module", params=ENGINES)
def tab(request, server):
    tab = open_browser(request.param)
    try:
        tab.goto(server.url("index.html"))
        state = tab.wait_for("['ready', 'error'].includes(document.body && document.body.dataset.state) "
                             "&& document.body.dataset.state", BOOT_S, "the page to boot")
        assert state == "ready", tab.evaluate("document.body.innerText.slice(0, 500)")
        yield tab
    finally:
        tab.close()


def shown(tab):
    tab.wait_for(SETTLED, 120, "the page to show the result of its controls")
    return tab.evaluate("window.ragsim.shownRequest()"), tab.evaluate("window.ragsim.response()")


def test_paste_mark_and_drag_give_the_cores_verdicts(tab):
    at = tab.evaluate(PASTE_AND_MARK % (js(TEXT), js(QUESTION), js(ANSWER), len(ANSWER)))
    assert at == TEXT.index(ANSWER)
    request, response = shown(tab)
    assert request["documents"][0]["text"] == TEXT and request["query"] == QUESTION
    assert (request["span"]["start"], request["span"]["end"]) == (at, at + len(ANSWER))
    verdicts = set()
    for size in (request["chunking"]["size"], 9, 30, 14):
        assert tab.evaluate(DRAG % size) == str(size)
        request, response = shown(tab)
        assert request["chunking"]["size"] == size
        expected = api.simulate(request)
        assert response["verdict"] == expected["verdict"], (tab.name, size)
        assert tab.evaluate("document.getElementById('verdict').dataset.verdict") == expected["verdict"]["kind"]
        verdicts.add(expected["verdict"]["kind"])
    assert len(verdicts) >= 2  # the drags crossed from one verdict to another


def test_dense_ranks_as_cpython(tab):
    pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
    tab.evaluate("""(() => { const s = document.getElementById("param-method"); s.value = "dense";
      s.dispatchEvent(new Event("change", { bubbles: true })); return s.value; })()""")
    tab.wait_for(DENSE_DONE, 300, "the dense ranking")
    request, response = shown(tab)
    assert request["retrieval"]["method"] == "dense"
    expected = api.simulate(request)
    ranks = [(c["start"], c["end"], c["rank"]) for c in response["chunks"]]
    assert ranks == [(c["start"], c["end"], c["rank"]) for c in expected["chunks"]], tab.name
    assert response["verdict"] == expected["verdict"]
    # The model's threads: no more than this machine's cores (WebKit reports 4 on a 2-core machine).
    backend = tab.evaluate("window.ragsim.dense().backend")
    assert backend["isolated"] and 1 <= backend["threads"] <= max(2, os.cpu_count() or 1), (tab.name, backend)


def test_webkit_understands_every_directive_of_the_content_security_policy(dist_dir):
    """WebKit logs "Unrecognized Content-Security-Policy directive" for one it does not know (manifest-src)."""
    seen = []
    httpd = build.make_server(dist_dir, 0, quiet=True)
    httpd.RequestHandlerClass.func.log_request = lambda handler, *args: seen.append(handler.path)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
        # The worker is asked for once the page's module runs: the policy was read long before.
        console = webkit_console(url, lambda: any("worker" in path for path in seen))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert any("worker" in path for path in seen), (seen, console[-2000:])
    assert "Content-Security-Policy" not in console, console[-2000:]


COPIED = """(() => { const n = document.getElementById("copy-note");
  return n && !n.hidden && n.textContent && [n.textContent, n.dataset.kind, document.getElementById("share-output").hidden]; })()"""


def test_copy_link_and_embed_code_are_copied_in_a_persons_click(tab):
    """Safari refuses a clipboard write made after an await (outside the click): the page asks at once."""
    for button, words in [("#copy-link", "Link copied."), ("#copy-embed", "Embed code copied.")]:
        tab.evaluate("(() => { const n = document.getElementById('copy-note'); if (n) n.hidden = true; return true; })()")
        tab.click(button)
        text, kind, box_hidden = tab.wait_for(COPIED, 20, f"the note beside {button}")
        assert (text, kind, box_hidden) == (words, "done", True), (tab.name, button)
