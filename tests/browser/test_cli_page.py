"""From the page to the command line: "Copy as command line" gives a command that prints the page's
numbers, and the "Download state" file becomes, in the command line, the very request the page sends
(wire/state_file.py against requests.js pageRequest) for several splitters and retrievers."""

import json
import pathlib
import subprocess
import sys

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from a11y import settle
from helpers import cli_env, run_cli
from ragsim.wire import state_file
from ragsim.wire.api import simulate

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

ROOT = pathlib.Path(__file__).resolve().parents[2]
PANELS = ("cuts", "find", "expand")  # the investigation panels' questions: left out of the state's request


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page("index.html")


def restore(page, fragment):
    """The example with `fragment`'s settings, once the page has applied them."""
    for h, done in (("k=7", "=== 7"), (fragment, "!== 7")):
        for attempt in range(6):
            page.evaluate("h => { location.hash = h; }", h)
            try:
                page.wait_for_function(f"() => window.ragsim.request().retrieval.k {done}", timeout=5_000)
                break
            except PlaywrightTimeout:
                if attempt == 5:
                    raise
    return settle(page)


def test_copy_as_command_line_gives_the_pages_numbers(page, server):
    restore(page, "size=20&overlap=4&k=3")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page.get_by_role("button", name="Copy as command line").click()
    # the confirmation beside the button pressed (as every copy confirmation: test_copy_and_embed.py)
    page.wait_for_function("() => { const n = document.getElementById('copy-note'); return n && !n.hidden"
                           " && n.previousElementSibling && n.previousElementSibling.id === 'copy-command'"
                           " && n.textContent.startsWith('Command line copied'); }")
    text = page.evaluate("() => navigator.clipboard.readText()")
    first, body, end = text.rstrip("\n").split("\n")
    assert first == ".venv/bin/python -m ragsim <<'RAGSIM_REQUEST'" and end == "RAGSIM_REQUEST"
    # the command itself, as a shell runs it, from the checkout
    out = subprocess.run(["bash", "-c", text.replace(".venv/bin/python", sys.executable, 1)], capture_output=True,
                         text=True, cwd=ROOT, env=cli_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    response = json.loads(out.stdout)
    shown = page.evaluate("() => { const r = window.ragsim.response(); return {verdict: r.verdict, stats: r.stats}; }")
    assert response["verdict"] == shown["verdict"]
    assert response["stats"] == shown["stats"]
    assert json.loads(body)["chunking"] == {"strategy": "window", "unit": "words", "size": 20, "overlap": 4}


@pytest.mark.parametrize("fragment", [
    "size=20&overlap=4",
    "strategy=langchain-recursive&size=300&overlap=40&keep_separator=end",
    "strategy=haystack&split_by=period&size=2&overlap=1&variant=bm25l&delta=0.7&stopwords=1",
    "strategy=llamaindex-sentence&size=120&overlap=10&count=cl100k_base&price=2.5",
])
def test_the_state_file_is_the_request_the_page_sends(page, tmp_path, fragment):
    restore(page, fragment)
    with page.expect_download() as info:
        page.click("#download-state")
    path = tmp_path / "ragsim-state.json"
    info.value.save_as(path)
    sent = page.evaluate("() => window.ragsim.request()")
    for key in PANELS:
        sent.pop(key, None)
    assert state_file.to_request(json.loads(path.read_text(encoding="utf-8"))) == sent
    # and `python -m ragsim` takes the file as it is, with the page's numbers
    out = run_cli(stdin=path.read_bytes(), text=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["stats"] == json.loads(json.dumps(simulate(sent)))["stats"]


def test_no_errors_and_nothing_offsite(page, page_errors, offsite):
    assert page_errors == []
    assert offsite == []
