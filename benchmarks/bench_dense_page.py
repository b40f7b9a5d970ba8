"""A dense drag in the page, in real headless Chromium on dist/: the Apache License 2.0
text (11,357 characters, tests/browser/fixtures/apache-2.0.txt) pasted, then

1. the first dense ranking: Retriever set to dense, ms until the verdict ranked by dense is drawn
   (the model loaded from dist/, this setting's chunks embedded);
2. one-step drags: Chunk size one up from where it rests (25, 26, ...), each from a resting page
   (whatever the page embeds while the controls rest, it has finished or spent its budget), ms
   from the input event to the dense verdict for that size;
3. jumps: Chunk size to a setting far from any seen (40, 52, 64, ...), the same clock.

Medians and p95 (the machine is shared: other engineers' jobs run beside it, so the load average
is printed). Also the embedding backend the page reports, and the chunks it embedded.

    python benchmarks/bench_dense_page.py [--steps 6] [--jumps 4] [--rest 60]
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_page import paste, percentile, served_browser  # noqa: E402

LICENCE = ROOT / "tests" / "browser" / "fixtures" / "apache-2.0.txt"
QUESTION = "Can a contributor revoke the patent license after filing a lawsuit?"

DENSE_SHOWN = """(size) => {
  const r = window.ragsim, res = r.response(), shown = r.shownRequest();
  return !!(res && shown && shown.chunking.size === size && document.body.dataset.state === "ready"
    && res.dense && !res.dense.pending);
}"""

DRAG = """async (size) => {
  const input = document.querySelector("#param-size");
  const t = performance.now();
  input.value = String(size);
  input.dispatchEvent(new Event("input", { bubbles: true }));
  const shown = () => {
    const r = window.ragsim, res = r.response(), s = r.shownRequest();
    return res && s && s.chunking.size === size && document.body.dataset.state === "ready" && res.dense && !res.dense.pending;
  };
  while (!shown()) await new Promise((resolve) => requestAnimationFrame(resolve));
  return performance.now() - t;
}"""

CHOOSE = """async () => {
  const select = document.querySelector("#param-method");
  const t = performance.now();
  select.value = "dense";
  select.dispatchEvent(new Event("change", { bubbles: true }));
  const shown = () => {
    const res = window.ragsim.response();
    return res && res.dense && !res.dense.pending && document.body.dataset.state === "ready";
  };
  while (!shown()) await new Promise((resolve) => requestAnimationFrame(resolve));
  return performance.now() - t;
}"""

# The page at rest for the next step: the settings ahead planned and embedded (within their budget),
# nothing left for the setting on screen; the panels' own embedding (the overlap sweep) may go on.
RESTING = """() => { const d = window.ragsim.dense();
  return !d.aheadBusy && !d.jobs.some((j) => j.lane.startsWith('ahead') || j.lane === 'main'); }"""


def rest(page, seconds):
    """Leave the controls alone until the settings ahead are embedded (at most `seconds`)."""
    page.wait_for_timeout(600)
    started = time.monotonic()
    try:
        page.wait_for_function(RESTING, polling=100, timeout=seconds * 1000)
    except Exception:  # noqa: BLE001  (a page still embedding after the rest: measured as it is)
        pass
    return time.monotonic() - started


def stats(times):
    return f"median {statistics.median(times):7.0f} ms, p95 {percentile(times, 95):7.0f} ms ({len(times)} moves: " \
           + ", ".join(f"{t:.0f}" for t in times) + ")"


PAUSE_MS = 1000  # a person's time from pointing at the Retriever to choosing Dense in its list


def opened(where, url, text):
    """A tab of `where` (a browser or a context) on the page, the licence pasted with the question."""
    page = where.new_page()
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                           timeout=180_000)
    page.get_by_label("Question", exact=True).fill(QUESTION)
    paste(page, text)
    page.evaluate(DRAG.replace("res.dense && !res.dense.pending", "true"), 24)
    return page


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="one-step drags, each from a resting page")
    parser.add_argument("--jumps", type=int, default=4, help="jumps to a size far from any seen")
    parser.add_argument("--rest", type=float, default=60, help="seconds the controls rest at most between moves")
    args = parser.parse_args()
    text = LICENCE.read_text(encoding="utf-8")
    with served_browser() as (browser, url):
        # The first ranking, as a person reaches it: the pointer on the Retriever (which loads the
        # model), a pause to open it and find Dense, then Dense chosen. Its own context,
        # so nothing is cached from another run.
        context = browser.new_context()
        page = opened(context, url, text)
        page.get_by_label("Retriever", exact=True).hover()
        page.wait_for_timeout(PAUSE_MS)
        first_opened = page.evaluate(CHOOSE)
        context.close()
        page = opened(browser, url, text)
        print(f"text: {len(text):,} characters, {len(text.split()):,} words; question: {QUESTION!r}")
        first = page.evaluate(CHOOSE)
        info = page.evaluate("() => window.ragsim.dense()")
        print(f"first dense ranking (choose dense -> dense verdict, model loaded from dist/ then): {first:.0f} ms"
              f" (of it loading the model: {info.get('loadMs') or 0:.0f} ms; its steps: "
              + ", ".join(f"{k} {v:.0f} ms" for k, v in (info.get('loadPhases') or {}).items())
              + f"); backend: {info.get('backend')}")
        print(f"first dense ranking with the pointer on the Retriever {PAUSE_MS / 1000:.1f} s before choosing dense"
              f" (that loads the model): {first_opened:.0f} ms")
        steps, rested = [], []
        size = 24
        for _ in range(args.steps):
            rested.append(rest(page, args.rest))
            size += 1
            steps.append(page.evaluate(DRAG, size))
        print(f"one-step drags (size {25}..{size}, each after a rest): {stats(steps)}")
        print(f"  rests before them (s, until the settings ahead were embedded): " + ", ".join(f"{r:.1f}" for r in rested))
        jumps = []
        for i in range(args.jumps):
            rest(page, args.rest)
            jumps.append(page.evaluate(DRAG, 40 + 12 * i))
        print(f"jumps (size 40, 52, ...: nothing near them seen): {stats(jumps)}")
        info = page.evaluate("() => window.ragsim.dense()")
        print(f"page's dense stats: {json.dumps(info)}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
