"""The settings map in the page, in real Chromium: how long the heatmap takes to fill for 10 questions
on the 65,501-word Python help topics (20 sizes x 6 overlaps, words), and what a drag costs while it
fills.

The document is pasted into the Document box as benchmarks/bench_page.py does; the 10 questions are
made by benchmarks/bench_questions.py's generator (a sentence of the text is the answer, one in ten
needs two sentences, the query made of some of its words) and imported as a JSON file through the
page's "Import" control. Each run restarts the map by changing Top k (the map depends on k, not on
size and overlap) and reads the time the page measured itself: from the map's start to its last row
(`data-seconds` on #map-section, performance.now() in the page), and the worker's Python time.

    python benchmarks/bench_map_page.py [--runs 5]
"""

import argparse
import json
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_core import corpus  # noqa: E402
from bench_page import SAMPLE, served_browser  # noqa: E402
from bench_questions import question_set  # noqa: E402

MAP_DONE = "() => { const m = window.ragsim.map(); return m && m.state === 'done'; }"
MAP_RUNNING = "() => { const m = window.ragsim.map(); return m && m.state === 'running' && m.done >= 1; }"


# Several drag steps in one go inside the page, each as bench_page.SAMPLE measures it, the next
# starting as soon as the last is drawn (as a hand dragging on), with no Playwright round trip between.
DRAG = "async (sizes) => { const sample = (%s); const out = []; for (const s of sizes) out.push(await sample(s)); return out; }" % SAMPLE


def paste(page, text):
    page.evaluate("""(text) => {
        const area = document.querySelector('#param-doc');
        area.value = text;
        area.dispatchEvent(new Event('input', { bubbles: true }));
    }""", text)
    page.wait_for_function("(n) => window.ragsim.shownRequest() && window.ragsim.shownRequest().documents[0].text.length === n",
                           arg=len(text), timeout=120_000)


def one_map(page, k):
    """Restart the map with Top k = k; its fill time (s, the page's own clock) and Python time (s)."""
    page.evaluate("""(k) => { const s = document.querySelector('#param-k'); s.value = String(k);
        s.dispatchEvent(new Event('input', { bubbles: true })); }""", k)
    page.wait_for_function("(k) => { const m = window.ragsim.map(); const r = window.ragsim.shownRequest();"
                           " return r && r.retrieval.k === k && m && m.state === 'done'; }", arg=k, timeout=120_000)
    seconds = float(page.get_attribute("#map-section", "data-seconds"))
    status = page.inner_text("#map-status")
    python = float(status.split("(")[-1].split(" s in Python")[0])
    return seconds, python, status


def cpython_reference(text, questions, grid, k):
    """The same map in CPython, one request per size as the page sends them (the request's own
    setting that row's largest size, no overlap): (wall s, CPU s), the index built beforehand."""
    import time

    sys.path.insert(0, str(ROOT / "py"))
    from ragsim.wire import api

    base = {"documents": [{"id": "doc", "title": "Document", "text": text}], "query": "", "span": None,
            "retrieval": {"k": k}, "price_per_million": 3, "questions": questions, "wire": "columns"}
    session = api.Session()
    api.simulate_json(json.dumps({**base, "chunking": {"unit": "words", "size": 24, "overlap": 6}}), session)
    wall, cpu = time.perf_counter(), time.process_time()
    for size in grid["sizes"]:
        api.simulate_json(json.dumps({**base, "chunking": {"unit": "words", "size": size, "overlap": 0},
                                      "map": {"sizes": [size], "overlaps": grid["overlaps"]}}), session)
    return time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    text = corpus()
    docs = [{"id": "doc", "title": "Document", "text": text}]
    questions = question_set(docs, 10)
    with served_browser() as (browser, url):
        page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
        page.goto(url)
        page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)
        paste(page, text)
        page.set_input_files("#import-questions", {"name": "ten.json", "mimeType": "application/json",
                                                   "buffer": json.dumps({"questions": questions}).encode()})
        page.wait_for_function("() => window.ragsim.questions().length === 10")
        page.wait_for_function(MAP_DONE, timeout=120_000)
        grid = page.evaluate("() => window.ragsim.map().grid")
        cells = len(grid["sizes"]) * len(grid["overlaps"])
        print(f"{len(text.split()):,}-word document, {len(questions)} questions, map {len(grid['sizes'])} sizes x "
              f"{len(grid['overlaps'])} overlaps ({cells} cells, words)")
        print("first fill:", page.inner_text("#map-status"))
        fills, pythons = [], []
        for i in range(args.runs):
            seconds, python, _ = one_map(page, 3 + i % 2)
            fills.append(seconds)
            pythons.append(python)
        print(f"map fill (page clock, start to last row) over {args.runs} runs: median {statistics.median(fills):.2f} s, "
              f"max {max(fills):.2f} s; Python in the worker {statistics.median(pythons):.2f} s median (aim: within 3 s)")
        wall, cpu = cpython_reference(text, questions, grid, 3)
        ratio = statistics.median(pythons) / wall
        print(f"the same map in CPython, now: {wall:.2f} s wall, {cpu:.2f} s CPU; Pyodide / CPython (wall) {ratio:.1f}x, "
              f"so on an idle machine the page's Python would take about {cpu * ratio:.2f} s "
              f"and the fill about {cpu * ratio * statistics.median(fills) / statistics.median(pythons):.2f} s")
        # A drag while the map fills: the map yields to it (its rows wait for the gate to be idle).
        idle = page.evaluate(DRAG, [200 + i % 2 for i in range(8)])[2:]
        page.evaluate("() => { const s = document.querySelector('#param-k'); s.value = '2'; s.dispatchEvent(new Event('input', { bubbles: true })); }")
        page.wait_for_function(MAP_RUNNING, timeout=60_000)
        busy = page.evaluate(DRAG, [210 + i % 2 for i in range(8)])[1:]
        running = page.evaluate("() => window.ragsim.map().state")
        print(f"drag (size slider, input -> repainted verdict): median {statistics.median(idle):.0f} ms with the map done, "
              f"{statistics.median(busy):.0f} ms while it fills (max {max(busy):.0f} ms; map still {running})")


if __name__ == "__main__":
    main()
