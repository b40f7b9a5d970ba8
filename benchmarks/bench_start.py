"""The page's start in real Chromium, cold and warm, and the worker's memory.

Each run opens the page in a new browser profile (cold: nothing of the site in the browser), waits
until the page has kept its offline copy (the service worker's files, Python's memory snapshot),
closes the browser, and opens the page again from the same profile: a real second visit, with a new
browser process and the profile's disk (HTTP cache, code cache, Cache Storage) kept. Timed inside the
page from the navigation's start: controls usable, and Python ready with the first result drawn
(`<body data-state="ready">`). Prints the medians, the ratio, how Python started on each visit,
and the load average.

Then, unless --no-memory, the worker's memory: the WebAssembly heap (Python's whole memory; it grows
and never shrinks, so it is the peak) after the page has computed a 500,000-word real-text document
(bench_page.real_text) and after a drag through eight chunk sizes (each split kept by the session),
asked of the worker with window.ragsim.memory().

    python benchmarks/bench_start.py [--runs 3] [--words 500000] [--no-memory] [--dist DIR]
"""

import argparse
import contextlib
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import build  # noqa: E402
from bench_page import ARGS, BOOT, CHROMIUM, SAMPLE, paste, real_text  # noqa: E402

# Resolves once this visit has left its offline copy: the service worker active with every file kept,
# and Python's snapshot stored (the worker stores it just after "ready").
KEPT = """async () => {
  const reg = await navigator.serviceWorker.ready;
  for (;;) {
    const names = await caches.keys();
    const sw = names.find((n) => n.startsWith("ragsim-sw-"));
    const py = names.includes("ragsim-python") ? await (await caches.open("ragsim-python")).keys() : [];
    if (reg.active && reg.active.state === "activated" && sw && py.length === 1) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
}"""


@contextlib.contextmanager
def opened(playwright, profile: str, url: str):
    """A browser on `profile` with the page opened at `url`: yields (page, its boot times); the
    browser is closed afterwards."""
    launch = {"args": ARGS, "headless": True}
    if CHROMIUM.exists():
        launch["executable_path"] = str(CHROMIUM)
    context = playwright.chromium.launch_persistent_context(profile, **launch)
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(url)
        yield page, page.evaluate(BOOT)
    finally:
        context.close()


def visit(playwright, profile: str, url: str, *, keep: bool) -> dict:
    """One visit: the boot times, how Python started, and (keep) the wait for the offline copy."""
    with opened(playwright, profile, url) as (page, times):
        times["boot"] = page.evaluate("() => window.ragsim.memory()")["boot"]
        if keep:
            page.evaluate(KEPT)
        return times


# Chunk sizes (words, overlap 6) the memory run drags through: each split is kept by the session.
MEMORY_SIZES = (16, 20, 32, 48, 64, 100, 200, 25)


def memory(playwright, profile: str, url: str, words: int) -> tuple[int, int, int, int]:
    """The worker's heap (bytes) right after start, after computing a `words`-word document, and after
    dragging the chunk size through MEMORY_SIZES; and the document's word count."""
    text = real_text(words)
    heap = "async () => (await window.ragsim.memory()).heap"
    with opened(playwright, profile, url) as (page, _):
        start = page.evaluate(heap)
        paste(page, text)
        pasted = page.evaluate(heap)
        for size in MEMORY_SIZES:
            page.evaluate(SAMPLE, size)
        return start, pasted, page.evaluate(heap), len(text.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold/warm pairs (0: memory only)")
    parser.add_argument("--words", type=int, default=500_000)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--dist", type=pathlib.Path, help="a built site to serve (default: dist/, built when stale)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    dist = args.dist or build.ensure_fresh()
    httpd = build.make_server(dist, 0, quiet=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    cold, warm = [], []
    try:
        with sync_playwright() as p:
            for run in range(args.runs):
                profile = tempfile.mkdtemp(prefix="ragsim-start-")
                try:
                    first = visit(p, profile, url, keep=True)
                    second = visit(p, profile, url, keep=False)
                finally:
                    shutil.rmtree(profile, ignore_errors=True)
                cold.append(first)
                warm.append(second)
                print(f"run {run + 1}: cold  controls {first['controls']:.0f} ms, Python ready {first['python']:.0f} ms "
                      f"(started from {first['boot']['path']}, {first['boot']['ms']:.0f} ms in the worker); "
                      f"warm  controls {second['controls']:.0f} ms, Python ready {second['python']:.0f} ms "
                      f"(started from {second['boot']['path']}, {second['boot']['ms']:.0f} ms in the worker)", flush=True)
            if args.runs:
                med = {k: {m: statistics.median(v[m] for v in runs) for m in ("controls", "python")}
                       for k, runs in (("cold", cold), ("warm", warm))}
                print(f"median of {args.runs}: controls usable  cold {med['cold']['controls']:.0f} ms, "
                      f"warm {med['warm']['controls']:.0f} ms")
                print(f"median of {args.runs}: Python ready     cold {med['cold']['python']:.0f} ms, "
                      f"warm {med['warm']['python']:.0f} ms ({med['cold']['python'] / med['warm']['python']:.1f}x faster warm)")
            if not args.no_memory:
                profile = tempfile.mkdtemp(prefix="ragsim-memory-")
                try:
                    start, pasted, dragged, n = memory(p, profile, url, args.words)
                finally:
                    shutil.rmtree(profile, ignore_errors=True)
                mib = 1 << 20
                print(f"worker memory (WebAssembly heap): {start / mib:.0f} MiB after start, {pasted / mib:.0f} MiB "
                      f"after a {n:,}-word document, {dragged / mib:.0f} MiB after dragging the chunk size through "
                      f"{len(MEMORY_SIZES)} sizes (limit 1,024 MiB)")
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    finally:
        httpd.shutdown()


if __name__ == "__main__":
    main()
