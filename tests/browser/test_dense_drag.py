"""Dense drags, in real Chromium on dist/: the embedding worker's job queue, the page's
scheduling around it, and the notes that say which job is running.

The worker's own rules first, message by message (fixtures/embed-jobs.html drives the page's
embedding worker): the most urgent job goes first, a held job waits for the drag, a text is
embedded once by what the model reads. Then the page: the settings next to the one on screen are
embedded while the controls rest and the next step uses them; the dense map waits to be started with
its cost said, shows its progress, gives way to a drag and can be stopped; every note names its job."""

import json
import re

import pytest

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
from helpers import DENSE_LONG as LONG, DENSE_TEXTS  # noqa: E402
from test_page import INDEX, restore  # noqa: E402

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

TEXTS = [t for t in DENSE_TEXTS if t != LONG]  # each shorter than the model reads: distinct texts, distinct vectors

DENSE_DONE = """() => {
  const r = window.ragsim, res = r.response();
  return document.body.dataset.state === "ready" && res && res.dense && !res.dense.pending
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""
WATCH_NOTE = """() => {
  if (window.__notes) return;
  const note = document.querySelector('.control-method .needs-note');
  window.__notes = [];
  new MutationObserver(() => { if (note.textContent) window.__notes.push(note.textContent); })
    .observe(note, {childList: true, characterData: true, subtree: true});
}"""
RESTING = "() => document.body.dataset.dense === 'ready' && !window.ragsim.dense().held"
JOB_NOTES = [
    r"Embedding this setting: \d+ of [\d,]+ chunks?…",
    r"Question set: \d+ of [\d,]+ chunks?…",
    r"Overlap sweep: \d+ of [\d,]+ chunks?…",
    r"Ahead: sizes? \d+(–\d+)?(, overlaps? \d+(–\d+)?)? \(\d+ of [\d,]+ chunks?\)…",
    r"Map: [\d,]+ of [\d,]+ chunks?…",
    r"(One job waits|\d+ jobs wait) while you drag\.",
    r"Embedding on (WebGPU|WebAssembly, \d+ threads?( \(this page is not cross-origin isolated, so one\))?)\.",
    r"Loading the (int8 )?embedding model(…|: [\d.]+ of [\d.]+ MB)",
]


def lanes(page):
    return page.evaluate("window.ragsim.dense().lanes")


# --- the worker's queue --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jobs(module_context, server):
    """The page's embedding worker driven directly, the fp32 model loaded."""
    assets = json.loads((server.dist / "build.json").read_text())["assets"]
    tab = module_context.new_page()
    tab.goto(server.url(f"__tests__/embed-jobs.html?worker=/{assets['assets/embed-worker.js']}"))
    tab.wait_for_function("() => document.body.dataset.state === 'ready'")
    tab.evaluate("() => post({type: 'load', dtype: 'fp32'})")
    loaded = tab.evaluate("() => until((m) => m.type === 'loaded' || m.type === 'failed')", )
    assert loaded["type"] == "loaded", loaded
    assert loaded["backend"]["device"] in ("wasm", "webgpu")
    assert loaded["backend"]["isolated"] is True  # the server sends COOP and COEP
    yield tab
    tab.close()


def test_the_most_urgent_job_overtakes_a_queued_one_between_batches(jobs):
    many = [f"{t} (copy {i})" for i in range(6) for t in TEXTS]  # several batches of the map's size
    jobs.evaluate("""([many, texts]) => {
      post({type: 'embed', job: 1, lane: 'map', priority: 3, query: 'a question', texts: many});
      post({type: 'embed', job: 2, lane: 'main', priority: 0, query: 'another question', texts});
    }""", [many, [t + " (now)" for t in TEXTS]])
    urgent = jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 2)")
    bulk = jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 1)")
    assert urgent["at"] < bulk["at"]
    assert urgent["embedded"] == len(TEXTS) + 1 and bulk["embedded"] == len(many) + 1  # each query once too
    progress = [m["done"] for m in jobs.evaluate("() => seen.filter((m) => m.type === 'embedding' && m.job === 1)")]
    assert 0 < progress[1] < len(many)  # the map had begun before the drag's job took over


def test_a_held_job_waits_for_the_drag_and_resumes_after(jobs):
    jobs.evaluate("""(texts) => {
      post({type: 'hold', on: true});
      post({type: 'embed', job: 3, lane: 'ahead0', priority: 2, query: 'held', texts});
      post({type: 'embed', job: 4, lane: 'main', priority: 0, query: 'dragged', texts: texts.map((t) => t + ' (drag)')});
    }""", [t + " (held)" for t in TEXTS])
    jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 4)")
    # the drag's next job, sent once its first is answered, is answered too: the worker went on past
    # job 4 (where a hold that did not hold would have begun job 3) and job 3 has not moved
    jobs.evaluate("(texts) => post({type: 'embed', job: 40, lane: 'main', priority: 0, query: 'next', texts})",
                  [t + " (next)" for t in TEXTS])
    jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 40)")
    assert not jobs.evaluate("() => seen.some((m) => m.type === 'scores' && m.job === 3)")
    assert max(m["done"] for m in jobs.evaluate("() => seen.filter((m) => m.type === 'embedding' && m.job === 3)")) == 0
    jobs.evaluate("() => post({type: 'hold', on: false})")
    held = jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 3)")
    assert held["embedded"] == len(TEXTS) + 1


def test_a_text_is_embedded_once_by_what_the_model_reads(jobs):
    """Past 256 word pieces the model reads nothing more: a longer text with the same first 256 is
    not embedded again, and gets the same cosine; a newer job in a lane replaces the older."""
    jobs.evaluate("(t) => post({type: 'embed', job: 5, lane: 'main', priority: 0, query: 'q', texts: [t]})", LONG)
    first = jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 5)")
    jobs.evaluate("(t) => post({type: 'embed', job: 6, lane: 'main', priority: 0, query: 'q', texts: [t]})", LONG + " and more words after")
    second = jobs.evaluate("() => until((m) => m.type === 'scores' && m.job === 6)")
    assert first["embedded"] == 2 and second["embedded"] == 0 and second["scores"] == first["scores"]
    jobs.evaluate("""(texts) => {
      post({type: 'embed', job: 7, lane: 'sweep', priority: 1, query: 'r', texts: texts.flatMap((t) => [1, 2, 3, 4, 5, 6].map((i) => `${t} (7.${i})`))});
      post({type: 'embed', job: 8, lane: 'sweep', priority: 1, query: 'r', texts});
    }""", TEXTS)
    assert jobs.evaluate("() => until((m) => m.job === 7 && ['scores', 'cancelled'].includes(m.type))")["type"] == "cancelled"
    assert jobs.evaluate("() => until((m) => m.job === 8 && m.type === 'scores')")["scores"]


# --- the page -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def page(booted_page):
    p = booted_page(INDEX)
    p.evaluate(WATCH_NOTE)
    return p


def dense_at(page, size):
    page.get_by_label("Chunk size", exact=True).fill(str(size))
    page.wait_for_function(DENSE_DONE, polling=100, timeout=180_000)
    assert page.evaluate("window.ragsim.shownRequest().chunking.size") == size


def test_the_next_step_is_embedded_ahead_while_the_controls_rest(page):
    restore(page, "size=24")
    if page.locator("#map-on").is_checked():
        page.locator("#map-on").uncheck()
    page.get_by_label("Retriever", exact=True).select_option("dense")
    page.wait_for_function(DENSE_DONE, polling=100, timeout=180_000)
    assert page.evaluate("window.ragsim.dense().backend.isolated") is True
    page.wait_for_function("() => (window.ragsim.dense().lanes.ahead || 0) > 0", timeout=120_000)
    page.wait_for_function(RESTING, timeout=120_000)
    main = lanes(page)["main"]
    dense_at(page, 25)  # one step up: embedded while the controls rested
    assert lanes(page)["main"] == main
    dense_at(page, 23)  # and one down
    assert lanes(page)["main"] == main
    assert any(re.fullmatch(JOB_NOTES[3], n) for n in page.evaluate("window.__notes"))


def test_the_dense_map_says_its_cost_waits_for_start_gives_way_to_a_drag_and_stops(page):
    page.wait_for_function(RESTING, timeout=120_000)
    page.locator("#map-on").check()
    start = page.locator("#map-start")
    start.wait_for(state="visible", timeout=60_000)
    status = page.locator("#map-status")
    first = re.search(r"about \d+ (s|min): ([\d,]+) chunks? to embed", status.text_content())
    assert first, status.text_content()
    assert page.evaluate("window.ragsim.map().state") == "waiting" and "map" not in lanes(page)
    start.click()
    page.wait_for_function("() => /^Map: [\\d,]+ of [\\d,]+ chunks embedded/.test(document.querySelector('#map-status').textContent)")
    # the map's own batches, once the settings ahead (more urgent) are embedded
    page.wait_for_function("() => window.ragsim.dense().jobs.some((j) => j.lane === 'map' && j.embedded > 0)", timeout=180_000)
    main = lanes(page).get("main", 0)
    dense_at(page, 41)  # a drag while the map embeds: this setting first
    assert lanes(page)["main"] > main
    assert page.evaluate("window.ragsim.map().state") == "running"  # the map is still at it
    page.locator("#map-stop").click()
    assert page.evaluate("window.ragsim.map().state") == "stopped"
    assert "what was embedded is kept" in status.text_content()
    page.wait_for_function(RESTING, timeout=120_000)
    kept = lanes(page).get("map", 0)
    assert kept > 0
    dense_at(page, 40)  # the next result offers the map again, with fewer chunks left to embed
    start.wait_for(state="visible", timeout=120_000)
    again = re.search(r"([\d,]+) chunks? to embed", status.text_content())
    assert int(again.group(1).replace(",", "")) < int(first.group(2).replace(",", ""))


def test_the_map_once_started_fills_every_cell(page):
    page.locator("details.map-grid-edit summary").click()
    page.locator("#map-sizes").fill("16, 24")
    page.locator("#map-sizes").press("Enter")
    page.locator("#map-overlaps").fill("0, 6")
    page.locator("#map-overlaps").press("Enter")
    page.locator("#map-start").wait_for(state="visible", timeout=120_000)
    page.locator("#map-start").click()
    page.wait_for_function("() => window.ragsim.map().state === 'done'", timeout=180_000)
    assert all(row and all(row) for row in page.evaluate("window.ragsim.map().cells"))


def test_every_dense_note_names_its_job(page):
    notes = page.evaluate("window.__notes")
    assert any(n.startswith("Embedding this setting") for n in notes), notes
    assert any(n.startswith("Map: ") for n in notes), notes
    odd = [n for n in notes if not any(re.fullmatch(p, n) for p in JOB_NOTES)]
    assert odd == [], odd
