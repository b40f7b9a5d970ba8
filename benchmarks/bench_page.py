"""The page in real Chromium: time from a slider's input event to the repainted verdict, and the time
until the controls are usable and until Python is ready, cold and warm cache.

A sample dispatches one `input` event on "Chunk size" (or "Overlap") and stops the clock at the
first animation frame after the page is back to `data-state="ready"` with the verdict drawn for that
value. Measured inside the page with performance.now(), so Playwright's own round trips do not count.

What a hand does: a drag through sizes never seen before (25, 26, 27, ... at overlap 6),
and separately through overlaps never seen before (7, 8, 9, ... 46 at most, at size 60): every move a
new split.
The cached alternation (24 <-> 25: after its warm-up every move finds its split in the worker's
session cache, a move a drag never makes) is reported apart, labelled as such.

Then the same drag on documents of 200,000 and 500,000 words of real English (CPython's help topics,
then the standard library's docstrings and comment paragraphs, each passage once: `real_text`).

A second number per document: input -> every panel repainted (the investigation panels ask their
own questions once the controls rest), timed from a quiet page (`--idle-samples`).

    python benchmarks/bench_page.py [--samples 40] [--words 200000 500000] [--idle-samples 10]
"""

import argparse
import ast
import contextlib
import os
import pathlib
import statistics
import sys
import threading

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import build  # noqa: E402
from bench_core import corpus  # noqa: E402

CHROMIUM = pathlib.Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

# One drag sample, in the page: input event -> ready again -> next frame.
SAMPLE = """async (arg) => {
  const [name, size] = typeof arg === "number" ? ["size", arg] : arg;
  const slider = document.querySelector('#param-' + name);
  const done = () => {
    const shown = window.ragsim.shownRequest();
    return document.body.dataset.state === "ready" && shown && shown.chunking[name] === size;
  };
  // Woken by the page itself: data-state on <body> turns "ready" when the verdict has been drawn.
  const ready = () => new Promise((resolve) => {
    const finish = () => requestAnimationFrame(() => resolve(performance.now()));
    const observer = new MutationObserver(() => {
      if (done()) { observer.disconnect(); finish(); }
    });
    observer.observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
    if (done()) { observer.disconnect(); finish(); }
  });
  const t0 = performance.now();
  slider.value = String(size);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  const t1 = await ready();
  return t1 - t0;
}"""

# The same move as a hand makes it: Chromium delivers a pointer drag's events at the start
# of a frame, so the input is dispatched from an animation callback. Returned: the move's work, input
# -> verdict drawn (data-state "ready"), plus the rendering of the frame that shows it (style, layout,
# paint, commit: until a message posted from its animation callback arrives): what must fit in one
# 16.7 ms frame for the verdict to follow the hand frame by frame. The display's wait for its next
# frame (which the clock of SAMPLE counts) is not in it. (`frames`, the animation callbacks until the
# verdict, is no measure of time: a busy main thread delays the next frame.)
ALIGNED_SAMPLE = """async ([name, size]) => {
  const slider = document.querySelector('#param-' + name);
  const done = () => {
    const shown = window.ragsim.shownRequest();
    return document.body.dataset.state === "ready" && shown && shown.chunking[name] === size;
  };
  await new Promise((resolve) => requestAnimationFrame(resolve));
  const t0 = performance.now();
  let drawn = null, frames = 0;
  const observer = new MutationObserver(() => { if (drawn === null && done()) drawn = performance.now(); });
  observer.observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
  slider.value = String(size);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  if (done()) drawn = performance.now();
  return await new Promise((resolve) => {
    const tick = () => {
      frames += 1;
      if (drawn === null) { requestAnimationFrame(tick); return; }
      observer.disconnect();
      const t = performance.now(), channel = new MessageChannel();
      channel.port1.onmessage = () => resolve({ frames, work: drawn - t0 + (performance.now() - t) });
      channel.port2.postMessage(0);
    };
    requestAnimationFrame(tick);
  });
}"""

# The same move, timed until every panel below the picture shows its result too (the investigation
# panels ask the worker their own questions once the controls rest, ~120 ms after the result): the
# first animation frame at which the page reports them drawn for this size. Then the page is left
# until its background work (the overlap sweep) is done, so the next sample starts from quiet.
IDLE_SAMPLE = """async (size) => {
  const slider = document.querySelector('#param-size');
  const done = () => {
    const shown = window.ragsim.shownRequest();
    return document.body.dataset.state === "ready" && shown && shown.chunking.size === size && window.ragsim.panelsShown();
  };
  const t0 = performance.now();
  slider.value = String(size);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  const t1 = await new Promise((resolve) => {
    const tick = () => (done() ? resolve(performance.now()) : requestAnimationFrame(tick));
    requestAnimationFrame(tick);
  });
  return t1 - t0;
}"""

QUIET = "() => !document.querySelector('#sweep[data-state=computing]')"

BOOT = """() => new Promise((resolve) => {
  const usable = () => !!document.querySelector('#param-size') && !document.querySelector('#param-size').disabled;
  const out = {};
  const tick = () => {
    const t = performance.now();
    if (out.controls === undefined && usable()) out.controls = t;
    if (document.body.dataset.state === "ready") { out.python = t; resolve(out); return; }
    setTimeout(tick, 5);
  };
  tick();
})"""


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def quiet(page):
    """Wait until the page's background work for what is shown (the panels' questions, the overlap
    sweep) is done, so a drag does not queue behind it in the worker."""
    page.wait_for_function("() => window.ragsim.panelsShown()", timeout=300_000)
    page.wait_for_timeout(400)  # the sweep is asked for 300 ms after the panels are drawn
    page.wait_for_function(QUIET, timeout=300_000)


def drag(page, samples, sizes):
    quiet(page)
    times = []
    for i in range(samples + 3):
        t = page.evaluate(SAMPLE, sizes[i % 2])
        if i >= 3:  # the first moves warm the caches
            times.append(t)
    return statistics.median(times), percentile(times, 95)


def walk(page, samples, name, values, prepare=None):
    """A hand's drag: one input event per value, each a setting never seen before (median, p95)."""
    if prepare is not None:
        page.evaluate(SAMPLE, list(prepare))
    quiet(page)
    times = [page.evaluate(SAMPLE, [name, v]) for v in values[:samples]]
    return statistics.median(times), percentile(times, 95)


def aligned_walk(page, samples, name, values, prepare):
    """A hand's drag with each input at a frame's start (ALIGNED_SAMPLE): the work per move (median, p95)."""
    page.evaluate(SAMPLE, list(prepare))
    quiet(page)
    runs = [page.evaluate(ALIGNED_SAMPLE, [name, v]) for v in values[:samples]]
    work = [r["work"] for r in runs]
    return statistics.median(work), percentile(work, 95)


def hand_drags(page, label, samples):
    """The drags through new sizes and new overlaps, printed; the cached alternation apart."""
    median, p95 = walk(page, samples, "size", list(range(25, 25 + samples)))
    print(f"{label}: drag through new sizes (25, 26, ... overlap 6), input -> repainted verdict  "
          f"median {median:.1f} ms, p95 {p95:.1f} ms", flush=True)
    median, p95 = aligned_walk(page, samples, "size", list(range(25, 25 + samples)), prepare=("overlap", 5))
    page.evaluate(SAMPLE, ["overlap", 6])
    print(f"{label}: a drag with each input at a frame's start (new sizes 25, 26, ... overlap 5): work per move"
          f" (input -> verdict drawn + that frame's style, layout, paint)"
          f" median {median:.1f} ms, p95 {p95:.1f} ms (one frame: 16.7)", flush=True)
    moves = min(samples, 40)  # overlaps 7 .. 46 under size 60 (an overlap at the size never computes)
    median, p95 = walk(page, moves, "overlap", list(range(7, 7 + moves)), prepare=("size", 60))
    print(f"{label}: drag through new overlaps (7, 8, ... {6 + moves}, size 60), input -> repainted verdict  "
          f"median {median:.1f} ms, p95 {p95:.1f} ms", flush=True)
    page.evaluate(SAMPLE, ["overlap", 6])
    page.evaluate(SAMPLE, ["size", 24])


def idle(page, samples, sizes):
    """Input -> every panel repainted: median and p95 over `samples` moves, each from a quiet page."""
    times = []
    for i in range(samples + 1):
        page.wait_for_function(QUIET, timeout=120_000)
        page.wait_for_timeout(50)
        t = page.evaluate(IDLE_SAMPLE, sizes[i % 2])
        if i >= 1:
            times.append(t)
    page.wait_for_function(QUIET, timeout=120_000)
    return statistics.median(times), percentile(times, 95)


@contextlib.contextmanager
def served_browser():
    """dist/ (built when stale) served on 127.0.0.1, and Chromium: yields (browser, URL of the page).
    Shared by the page benchmarks."""
    from playwright.sync_api import sync_playwright

    # RAGSIM_BENCH_DIST: another build's dist/ (an older commit's, for before/after in the same run)
    dist = pathlib.Path(os.environ["RAGSIM_BENCH_DIST"]) if os.environ.get("RAGSIM_BENCH_DIST") else build.ensure_fresh()
    httpd = build.make_server(dist, 0, quiet=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            launch = {"args": ARGS}
            if CHROMIUM.exists():
                launch["executable_path"] = str(CHROMIUM)
            browser = p.chromium.launch(**launch)
            yield browser, f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
            browser.close()
    finally:
        httpd.shutdown()


def _stdlib_passages():
    """The standard library's docstrings, then its comment paragraphs (consecutive `# ...` lines),
    each once, in file order: real English prose about code, not one text repeated."""
    import sysconfig

    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    files = [f for f in sorted(root.rglob("*.py")) if "site-packages" not in f.parts]
    seen = set()
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                d = ast.get_docstring(node)
                if d and len(d.split()) >= 8 and d not in seen:
                    seen.add(d)
                    yield d
    for f in files:
        block = []
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines() + [""]:
            s = line.strip()
            if s.startswith("# "):
                block.append(s[2:])
                continue
            para = " ".join(block)
            block = []
            if len(para.split()) >= 8 and para not in seen:
                seen.add(para)
                yield para


def real_text(words: int) -> str:
    """About `words` words of real text: the help topics, then the standard library's passages."""
    try:  # the core benchmark's builder, when it has one
        from bench_core import real_text as core_real_text

        return core_real_text(words)
    except ImportError:
        pass
    cache = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"ragsim-bench-text-{words}.txt"
    if cache.exists():
        return cache.read_text(encoding="utf-8")
    parts, n = [corpus()], len(corpus().split())
    for passage in _stdlib_passages():
        if n >= words:
            break
        parts.append(passage)
        n += len(passage.split())
    if n < words:
        raise SystemExit(f"only {n:,} words of real text found, {words:,} asked")
    text = "\n\n".join(parts)
    cache.write_text(text, encoding="utf-8")
    return text


def paste(page, text):
    """Put `text` in the Document box as a paste would, and wait until its result is on screen."""
    page.evaluate("""(text) => {
        const area = document.querySelector('textarea');
        area.value = text;
        area.dispatchEvent(new Event('input', { bubbles: true }));
    }""", text)
    page.wait_for_function("(n) => window.ragsim.shownRequest() && document.body.dataset.state === 'ready' && "
                           "window.ragsim.shownRequest().documents[0].text.length === n", arg=len(text),
                           timeout=300_000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--words", type=int, nargs="*", default=[200_000, 500_000],
                        help="sizes of the real-text documents, in words")
    parser.add_argument("--idle-samples", type=int, default=10,
                        help="moves timed until every panel is repainted, each from a quiet page (0: none)")
    args = parser.parse_args()
    with served_browser() as (browser, url):
        context = browser.new_context()
        for label in ("cold cache", "warm cache"):
            page = context.new_page()
            page.goto(url)
            t = page.evaluate(BOOT)
            print(f"{label}: controls usable at {t['controls']:.0f} ms, Python ready at {t['python']:.0f} ms")
            if label == "cold cache":
                page.close()
        for text in [None, corpus()] + [real_text(n) for n in args.words]:
            if text is not None:
                paste(page, text)
            label = "example document" if text is None else f"{len(text.split()):,}-word document ({len(text):,} characters)"
            if text is not None:  # the example is too short for 40 new sizes to differ
                hand_drags(page, label, args.samples)
            median, p95 = drag(page, args.samples, (25, 24))
            print(f"{label}: cached alternation 24 <-> 25 (each split found in the worker's cache; not a drag)"
                  f"  median {median:.1f} ms, p95 {p95:.1f} ms", flush=True)
            if args.idle_samples:
                median, p95 = idle(page, args.idle_samples, (25, 24))
                print(f"{label}: slider input -> every panel repainted  median {median:.1f} ms, p95 {p95:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
