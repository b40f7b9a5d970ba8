"""Where the milliseconds of one drag go, in real Chromium: the page's opt-in marks
(assets/js/drag-timing.js) for each step from the slider's input event to the repainted verdict,
the worker's own times on the same clock, and a Chromium trace (CDP Tracing) for the main thread's
style, layout, paint and garbage collection.

A sample is bench_page.py's drag (one `input` event on "Chunk size"; the clock stops at the first
animation frame after the page is ready with the verdict for that size), with `window.ragsimTiming`
set so the page records its marks. Medians per step over the samples. As a hand drags,
every move is a size never seen before (25, 26, 27, ...: a new split each time); `--alternate`
profiles the cached alternation between two sizes instead (each split found in the worker's cache).

    python benchmarks/drag_profile.py [--samples 30] [--words 500000] [--trace 10] [--alternate]
"""

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from bench_core import corpus  # noqa: E402
from bench_page import paste, real_text, served_browser  # noqa: E402

SAMPLE = """async (size) => {
  const slider = document.querySelector('#param-size');
  const done = () => {
    const shown = window.ragsim.shownRequest();
    return document.body.dataset.state === "ready" && shown && shown.chunking.size === size;
  };
  const ready = () => new Promise((resolve) => {
    // The frame's animation callback stops the clock; a message posted there arrives after the
    // frame's rendering work (style, layout, paint, commit), which the clock leaves out.
    const finish = () => requestAnimationFrame(() => {
      const t = performance.now(), channel = new MessageChannel();
      channel.port1.onmessage = () => resolve([t, performance.now() - t]);
      channel.port2.postMessage(0);
    });
    const observer = new MutationObserver(() => { if (done()) { observer.disconnect(); finish(); } });
    observer.observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
    if (done()) { observer.disconnect(); finish(); }
  });
  window.ragsimTiming = [];
  // Tasks of 50 ms or more on the page's thread while the drag is on (the Long Tasks API's floor).
  const long = [];
  const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) long.push(e.duration); });
  observer.observe({ type: "longtask" });
  const t0 = performance.now();
  slider.value = String(size);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  const [t1, frameWork] = await ready();
  for (const e of observer.takeRecords()) long.push(e.duration);
  observer.disconnect();
  const marks = window.ragsimTiming;
  window.ragsimTiming = null;
  // Every panel: wait for the page's "panels-done" mark, if it makes one, up to 3 s.
  let idle = null;
  for (let waited = 0; waited < 3000; waited += 10) {
    const seen = (window.ragsimIdle || []).find((m) => m.size === size && m.at >= t0);
    if (seen) { idle = seen.at - t0; break; }
    if (!window.ragsimIdle) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return { total: t1 - t0, marks: marks.map(([n, t]) => [n, t - t0]), idle, frameWork, long };
}"""

# The steps, in order: (label, from mark, to mark); "input" is the sample's start, "frame" its end.
STEPS = [
    ("main: input event -> compute() (parse, settle, sync controls)", "input", "compute"),
    ("main: dragRequests (requests.js) + snapshot", "compute", "request"),
    ("main: request message (JSON.stringify)", "request", "message"),
    ("main: gate (latest wins)", "message", "send"),
    ("main: texts the worker holds", "send", "texts"),
    ("main: postMessage (structured clone)", "texts", "posted"),
    ("post -> worker onmessage", "posted", "worker:arrived"),
    ("worker: before Python (texts, checks)", "worker:arrived", "worker:python"),
    ("worker: Python simulate_packed", "worker:python", "worker:pythonDone"),
    ("worker: results out of Python (get, toJs copy)", "worker:pythonDone", "worker:copied"),
    ("worker: reply built", "worker:copied", "worker:posting"),
    ("worker post -> page receives (transfer, queue)", "worker:posting", "received"),
    ("main: promise chain to compute()", "received", "replied"),
    ("main: JSON.parse response", "replied", "parsed"),
    ("main: withColumns", "parsed", "columns"),
    ("main: render verdict", "columns", "verdict"),
    ("main: render picture (setData + draw)", "verdict", "picture"),
    ("main: render stats", "picture", "stats"),
    ("main: render context", "stats", "context"),
    ("main: doc counts + lanes", "context", "lanes"),
    ("main: renderPanels (schedule)", "lanes", "panels"),
    ("main: code panel", "panels", "code"),
    ("main: onResult rest (question set, map)", "code", "rendered"),
    ("main: ready -> next frame (style, layout, paint)", "rendered", "frame"),
]

TRACE_CATEGORIES = ["devtools.timeline", "blink.user_timing", "v8", "disabled-by-default-devtools.timeline",
                    "disabled-by-default-devtools.timeline.stack"]
# Top-level main-thread events worth naming (nested ones are summed inside these).
TRACE_NAMES = {"FunctionCall": "script (FunctionCall)", "EventDispatch": "script (event)", "TimerFire": "script (timer)",
               "FireAnimationFrame": "script (animation frame)", "RunMicrotasks": "script (microtasks)",
               "UpdateLayoutTree": "style", "Layout": "layout", "PrePaint": "pre-paint", "Paint": "paint",
               "Layerize": "layerize", "UpdateLayer": "update layer", "Commit": "commit",
               "MinorGC": "GC (minor)", "MajorGC": "GC (major)", "V8.GC_SCAVENGER": "GC (scavenge)",
               "HitTest": "hit test", "ParseHTML": "parse HTML", "v8.callFunction": "script (v8 call)"}


def profile(page, samples, alternate=False):
    sizes = [(25, 24)[i % 2] for i in range(samples + 3)] if alternate else list(range(25, 25 + samples + 3))
    runs = [page.evaluate(SAMPLE, size) for size in sizes][3:]
    steps = defaultdict(list)
    for run in runs:
        at = dict(run["marks"])
        at["input"], at["frame"] = 0.0, run["total"]
        for label, a, b in STEPS:
            if a in at and b in at:
                steps[label].append(at[b] - at[a])
    steps["(after the clock) a frame's rendering work: style, layout, paint, commit"] = [r["frameWork"] for r in runs]
    totals = [r["total"] for r in runs]
    idles = [r["idle"] for r in runs if r["idle"] is not None]
    steps["long tasks (50 ms or more) on the page's thread during the drags"] = [sum(len(r["long"]) for r in runs)]
    return steps, totals, idles


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def traced(browser, page, samples, sizes=(25, 24), start=None):
    """Main-thread time by kind over `samples` drags (Chromium's trace), per drag: self time of each
    event name inside the drags' windows (input event -> frame) and outside them, and the script
    functions that forced a style or layout."""
    path = pathlib.Path(tempfile.mkdtemp()) / "trace.json"
    browser.start_tracing(page=page, path=str(path), categories=TRACE_CATEGORIES)
    windows = []
    for i in range(samples):
        page.evaluate("() => performance.mark('ragsim-drag-start')")
        page.evaluate(SAMPLE, sizes[i % 2] if start is None else start + i)
        page.evaluate("() => performance.mark('ragsim-drag-end')")
    browser.stop_tracing()
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    main = {k for k, v in names.items() if v == "CrRendererMain"}
    starts = sorted(e["ts"] for e in events if e.get("name") == "ragsim-drag-start")
    ends = sorted(e["ts"] for e in events if e.get("name") == "ragsim-drag-end")
    windows = list(zip(starts, ends))
    inside = lambda ts: any(a <= ts < b for a, b in windows)  # noqa: E731
    spans = sorted((e for e in events if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X" and "dur" in e),
                   key=lambda e: (e["ts"], -e["dur"]))
    # Self time: each event's duration less its children's (a stack per thread).
    selfs = defaultdict(float)
    forced = defaultdict(float)
    stack = []
    for e in spans:
        while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
            stack.pop()
        if stack:
            selfs[id(stack[-1])] -= e["dur"]
        selfs[id(e)] += e["dur"]
        if e["name"] in ("Layout", "UpdateLayoutTree") and any(s["name"] in ("FunctionCall", "EvaluateScript", "v8.callFunction", "TimerFire", "EventDispatch") for s in stack):
            frames = (e.get("args", {}).get("beginData", {}) or {}).get("stackTrace") or []
            where = " < ".join(f"{f.get('functionName') or '?'}@{f.get('url', '').split('/')[-1]}:{f.get('lineNumber')}" for f in frames[:3]) or "?"
            forced[f"{e['name']} forced by {where}"] += e["dur"] / 1000
        stack.append(e)
    # Tasks of 4 ms or more inside the drags, by what ran in them (the script function called, or the
    # longest piece of the rendering pipeline).
    slow = defaultdict(lambda: [0, 0.0])
    tasks = [e for e in spans if e["name"] == "RunTask" and e["dur"] >= 4000 and inside(e["ts"])]
    for t in tasks:
        inner = [e for e in spans if t["ts"] <= e["ts"] < t["ts"] + t["dur"] and e is not t]
        calls = [e for e in inner if e["name"] in ("FunctionCall", "TimerFire", "EventDispatch", "FireAnimationFrame")]
        if calls:
            data = calls[0].get("args", {}).get("data", {})
            what = f"{calls[0]['name']} {data.get('functionName') or data.get('type') or ''} {str(data.get('url', '')).split('/')[-1]}:{data.get('lineNumber', '')}"
        else:
            top = max(inner, key=lambda e: e["dur"], default=None)
            what = top["name"] if top else "?"
        slow[what][0] += 1
        slow[what][1] += t["dur"] / 1000
    per = defaultdict(float)
    for e in spans:
        where = "drag" if inside(e["ts"]) else "between drags"
        per[f"{where}: {TRACE_NAMES.get(e['name'], e['name'])}"] += selfs[id(e)] / 1000
    n = max(1, len(windows))
    return {"self": {k: v / n for k, v in per.items()}, "forced": {k: v / n for k, v in forced.items()}, "slow": dict(slow), "drags": n}


def report(label, steps, totals, idles, trace):
    print(f"\n## {label}: input -> repainted verdict median {statistics.median(totals):.1f} ms, "
          f"p95 {percentile(totals, 95):.1f} ms ({len(totals)} samples)"
          + (f"; input -> every panel median {statistics.median(idles):.1f}, p95 {percentile(idles, 95):.1f} ms" if idles else ""))
    print("| step | median ms | p95 ms |\n| --- | ---: | ---: |")
    for name in [name for name, _, _ in STEPS] + [k for k in steps if k.startswith("(after")]:
        if steps.get(name):
            print(f"| {name} | {statistics.median(steps[name]):.2f} | {percentile(steps[name], 95):.2f} |")
    for name in [k for k in steps if k.startswith("long tasks")]:
        print(f"\n{name}: {steps[name][0]} in {len(totals)} drags")
    if trace:
        print("\nMain thread per drag (Chromium trace, self time by event, ms):")
        for k, v in sorted(trace["self"].items(), key=lambda kv: -kv[1]):
            if v >= 0.1:
                print(f"  {k}: {v:.2f}")
        print(f"Tasks of 4 ms or more in {trace['drags']} drags (count, total ms):")
        for k, (count, ms) in sorted(trace["slow"].items(), key=lambda kv: -kv[1][1])[:8]:
            print(f"  {k}: {count}, {ms:.1f}")
        print("Style and layout forced by script, per drag (ms):")
        for k, v in sorted(trace["forced"].items(), key=lambda kv: -kv[1])[:8]:
            if v >= 0.05:
                print(f"  {k}: {v:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--words", type=int, nargs="*", default=[500_000])
    parser.add_argument("--trace", type=int, default=10, help="drags traced with CDP per document (0: none)")
    parser.add_argument("--skip-example", action="store_true")
    parser.add_argument("--alternate", action="store_true", help="the cached alternation 24 <-> 25, not new sizes")
    parser.add_argument("--css", default="", help="a style sheet added to the page first (to try a change without a build)")
    args = parser.parse_args()
    with served_browser() as (browser, url):
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=120_000)
        if args.css:
            page.evaluate("(css) => { const s = new CSSStyleSheet(); s.replaceSync(css); document.adoptedStyleSheets = [...document.adoptedStyleSheets, s]; }", args.css)
        texts = ([] if args.skip_example else [None]) + [corpus()] + [real_text(n) for n in args.words]
        for text in texts:
            if text is not None:
                paste(page, text)
            label = "example document" if text is None else f"{len(text.split()):,}-word document"
            steps, totals, idles = profile(page, args.samples, args.alternate)
            trace = traced(browser, page, args.trace, start=None if args.alternate else 200) if args.trace else None
            report(label + (" (cached alternation 24 <-> 25)" if args.alternate else " (new sizes 25, 26, ...)"),
                   steps, totals, idles, trace)


if __name__ == "__main__":
    main()
