"""Dense retrieval in CPython: how fast the model embeds chunks, and what a dense drag costs.

1. Chunks embedded per second by all-MiniLM-L6-v2 through onnxruntime (ragsim.embed_onnx), on
   24-word and 200-word chunks of CPython's help topics (`pydoc_data.topics`), with onnxruntime's
   default threads and with one (the browser runs one), batches of 16, nothing cached.
2. The core's own share: where the model stops reading a chunk (`wordpiece.read_end`, pure Python),
   per chunk, with its caches cleared.
3. A drag on the page's example document (words, size 24 -> 30, overlap 6, k 2) through
   `api.simulate`: BM25, dense with every chunk already embedded (a warm cache), and dense from
   an empty cache (every chunk of each new size embedded).

5. With --page: the page itself (Chromium, dist/): ms from a Chunk size drag on the example to its
   verdict, BM25 and dense with a warm cache and a cold one, and what choosing dense costs on a
   first visit (the model downloaded) and a later one (the browser's cache).

4. With --browser: chunks embedded per second in Chromium (transformers.js and onnxruntime-web's
   CPU wasm, one thread, from the built dist/, through the test page tests/browser/fixtures/dense.html
   that embeds as notes for the worker say), fp32 and the int8 approximation.

6. With --cli: the command line's dense `eval` throughput: chunks per second on the Apache
   2.0 text's 24-word chunks through `embed_onnx.Embedder.embed` (batches sorted by length), against
   onnxruntime run the usual per-chunk way (one `session.run` per chunk, as a notebook loops), same
   threads. sentence-transformers' `encode` is the reference the issue names; it needs torch, which
   this machine's environment does not have, so the per-chunk loop stands in for it.

    python benchmarks/bench_dense.py [--repeat 3] [--browser] [--page] [--cli]

Needs the `dense` extra (onnxruntime, numpy, tokenizers) and the model (built on first use).
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

import ragsim.host  # noqa: E402
from ragsim.wire import api
from ragsim.host import embed_onnx
from ragsim.text import wordpiece  # noqa: E402

ragsim.host.register()  # CPython's hosts: rank files, the model


def topics_chunks(words_per_chunk: int, count: int) -> list[str]:
    from pydoc_data.topics import topics

    words = "\n\n".join(topics[k] for k in sorted(topics)).split()
    return [" ".join(words[i : i + words_per_chunk]) for i in range(0, words_per_chunk * count, words_per_chunk)]


def example() -> tuple[str, str]:
    """The page's example document and question, read from assets/js/examples.js."""
    source = (ROOT / "assets" / "js" / "examples.js").read_text(encoding="utf-8")
    text = re.search(r"text: `(.*?)`", source, re.S).group(1)
    question = re.search(r'question: "(.*?)"', source).group(1)
    return text, question


def embed_rate(embedder, chunks: list[str], repeat: int) -> float:
    """Chunks per second, median over `repeat` runs from an empty cache."""
    rates = []
    for _ in range(repeat):
        embedder.cache.clear()
        started = time.perf_counter()
        embedder.embed(chunks)
        rates.append(len(chunks) / (time.perf_counter() - started))
    return statistics.median(rates)


def read_end_us(chunks: list[str]) -> float:
    vocab = wordpiece.model_vocab()
    vocab.read.clear()
    vocab.known.clear()
    started = time.perf_counter()
    for chunk in chunks:
        wordpiece.read_end(chunk, vocab)
    return (time.perf_counter() - started) / len(chunks) * 1e6


def drag_ms(text: str, question: str, method: str, embedder, cold: bool) -> list[float]:
    """Milliseconds per move of a drag of the size slider from 24 to 30 words."""
    session = api.Session()
    session.dense = embedder
    times = []
    for size in range(24, 31):
        if cold:
            embedder.cache.clear()
        req = {"documents": [{"id": "ex", "text": text}], "query": question,
               "chunking": {"unit": "words", "size": size, "overlap": 6}, "retrieval": {"k": 2, "method": method}}
        started = time.perf_counter()
        out = api.simulate(req, session)
        times.append((time.perf_counter() - started) * 1e3)
        assert "error" not in out, out
    return times


def browser_rates(repeat: int) -> dict:
    """Chunks per second in Chromium, by model and chunk length."""
    import threading

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    import build

    dist = build.ensure_fresh()
    config = json.loads((dist / "build.json").read_text())["assets"]["assets/build-config.js"]
    server = build.make_server(dist, 0, mounts={"/__tests__/": ROOT / "tests" / "browser" / "fixtures"}, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    out = {}
    with sync_playwright() as p:
        chromium = pathlib.Path("/usr/bin/chromium")
        browser = p.chromium.launch(executable_path=str(chromium) if chromium.exists() else None,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        for dtype, threads in (("fp32", 1), ("q8", 1), ("fp32", 2)):
            page.goto(f"{origin}/__tests__/dense.html?config=/{config}&dtype={dtype}&threads={threads}")
            page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=180_000)
            for words, count in ((24, 64), (200, 16)):
                chunks = topics_chunks(words, count)
                page.evaluate("(t) => embed(t)", chunks[:4])  # warm up
                rates = []
                for _ in range(repeat):
                    ms = page.evaluate("""async (chunks) => {
                        const t = performance.now();
                        for (let i = 0; i < chunks.length; i += 16) await embed(chunks.slice(i, i + 16));
                        return performance.now() - t; }""", chunks)
                    rates.append(len(chunks) / ms * 1e3)
                out[f"Chromium {dtype}: embed {words}-word chunks, {threads} thread(s), isolated "
                    f"{page.evaluate('crossOriginIsolated')} (chunks/s)"] = round(
                    statistics.median(rates), 1)
        browser.close()
    server.shutdown()
    return out


DRAG = """async ({ size, dense }) => {
  // one drag step of the Chunk size slider, timed in the page until its verdict is on screen
  // (for dense: the dense one, not BM25's answer that comes first)
  const input = document.querySelector(".control-size input");
  const t = performance.now();
  input.value = String(size);
  input.dispatchEvent(new Event("input", { bubbles: true }));
  for (;;) {
    const r = window.ragsim, res = r.response(), shown = r.shownRequest();
    if (res && shown && shown.chunking.size === size && document.body.dataset.state === "ready"
        && (!dense || (res.dense && !res.dense.pending))) return performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}"""
CHOOSE = """async (method) => {
  // choose a retriever and time until the verdict ranked by it is on screen
  const select = document.querySelector(".control-method select");
  const t = performance.now();
  select.value = method;
  select.dispatchEvent(new Event("change", { bubbles: true }));
  for (;;) {
    const res = window.ragsim.response();
    if (res && res.dense && !res.dense.pending && document.body.dataset.state === "ready") return performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}"""


def idle(page) -> None:
    """Until the page rests: its overlap sweep (asked for 300 ms after a drag) and any embedding done."""
    page.wait_for_timeout(400)
    page.wait_for_function("""() => !['embedding', 'loading'].includes(document.body.dataset.dense)
      && !document.querySelector('#sweep[data-state=computing]')""", timeout=300_000)


def page_drags(repeat: int) -> dict:
    """The page itself (dist/, the Pyodide worker and the embedding worker): ms from a drag of the
    Chunk size slider (the example, 24 <-> 30 words) to its verdict, BM25 and dense; and what
    choosing dense costs the first time (the model downloaded) and on a later visit (the browser's
    cache)."""
    import threading

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    import build

    dist = build.ensure_fresh()
    server = build.make_server(dist, 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    out = {}
    steps = 6 * repeat
    with sync_playwright() as p:
        chromium = pathlib.Path("/usr/bin/chromium")
        browser = p.chromium.launch(executable_path=str(chromium) if chromium.exists() else None,
                                    args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context()
        page = context.new_page()
        boot = "() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null"
        page.goto(url)
        page.wait_for_function(boot, timeout=180_000)
        page.evaluate(DRAG, {"size": 30, "dense": False})
        idle(page)
        bm25 = [page.evaluate(DRAG, {"size": 30 if i % 2 else 24, "dense": False}) for i in range(steps)]
        out["page drag 24<->30, BM25 (ms, median)"] = round(statistics.median(bm25), 1)
        out["page: choose dense, first visit (model downloaded, ms)"] = round(page.evaluate(CHOOSE, "dense"))
        page.evaluate(DRAG, {"size": 30, "dense": True})  # both sizes' chunks embedded
        page.evaluate(DRAG, {"size": 24, "dense": True})
        idle(page)  # the overlap sweep's own embedding (after the controls rest) is not a drag's cost
        warm = [page.evaluate(DRAG, {"size": 30 if i % 2 else 24, "dense": True}) for i in range(steps)]
        out["page drag 24<->30, dense, warm cache (ms, median)"] = round(statistics.median(warm), 1)
        cold = []
        for size in range(40, 40 + 2 * repeat):
            idle(page)
            cold.append(page.evaluate(DRAG, {"size": size, "dense": True}))
        out["page drag to a new size, dense, cold cache: every chunk embedded (ms, median)"] = round(statistics.median(cold), 1)
        idle(page)
        second = context.new_page()  # a later visit: the model from the browser's cache
        second.goto(url)
        second.wait_for_function(boot, timeout=180_000)
        out["page: choose dense, later visit (model from the browser's cache, ms)"] = round(second.evaluate(CHOOSE, "dense"))
        browser.close()
    server.shutdown()
    return out


def cli_rates(repeat: int) -> dict:
    """Chunks per second: the CLI's batched embedding against one onnxruntime run per chunk."""
    words = (ROOT / "tests" / "browser" / "fixtures" / "apache-2.0.txt").read_text(encoding="utf-8").split()
    chunks = [" ".join(words[i : i + 24]) for i in range(0, len(words), 18)]
    out = {}
    for threads in (1, os.cpu_count()):
        embedder = embed_onnx.Embedder(embed_onnx.model_dir(), threads=threads)
        embedder.embed(chunks[:4])  # warm up
        batched = embed_rate(embedder, chunks, repeat)
        for size in (8, 32, 64):  # the batch size the CLI uses, against others
            kept, embed_onnx.BATCH = embed_onnx.BATCH, size
            out[f"  batches of {size}, {threads} thread(s) (chunks/s)"] = round(embed_rate(embedder, chunks, repeat), 1)
            embed_onnx.BATCH = kept
        rates = []
        for _ in range(repeat):
            started = time.perf_counter()
            for c in chunks:
                embedder._run([c])
            rates.append(len(chunks) / (time.perf_counter() - started))
        label = f"{threads} thread{'s' if threads > 1 else ''}"
        out[f"CLI eval embedding, batches of {embed_onnx.BATCH}, {label} (chunks/s, {len(chunks)} 24-word chunks)"] = round(batched, 1)
        out[f"onnxruntime one chunk per run, {label} (chunks/s)"] = round(statistics.median(rates), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also measure Chromium (needs a built dist/)")
    parser.add_argument("--page", action="store_true", help="only the page: drag to dense verdict, warm and cold")
    parser.add_argument("--cli", action="store_true", help="only the command line's batched throughput against per-chunk runs")
    args = parser.parse_args()
    results = {}
    if args.cli:
        results.update(cli_rates(args.repeat))
        results["load average (1 min) at the end"] = round(os.getloadavg()[0], 2)
        for name, value in results.items():
            print(f"{name}  {value}")
        return
    if args.page:
        results.update(page_drags(args.repeat))
        results["load average (1 min) at the end"] = round(os.getloadavg()[0], 2)
        width = max(map(len, results))
        for name, value in results.items():
            print(f"{name:<{width}}  {value}")
        print(json.dumps(results))
        return
    directory = embed_onnx.model_dir()
    for threads, label in ((None, "default threads"), (1, "1 thread")):
        embedder = embed_onnx.Embedder(directory, threads=threads)
        for words, count in ((24, 256), (200, 64)):
            rate = embed_rate(embedder, topics_chunks(words, count), args.repeat)
            results[f"embed {words}-word chunks, {label} (chunks/s)"] = round(rate, 1)
    for words, count in ((24, 2000), (200, 500)):
        results[f"read_end per {words}-word chunk (us)"] = round(read_end_us(topics_chunks(words, count)), 1)

    text, question = example()
    embedder = embed_onnx.Embedder(directory, threads=1)
    drag_ms(text, question, "dense", embedder, cold=False)  # warm every size's chunks
    for method, cold in (("bm25", False), ("dense", False), ("hybrid", False), ("dense", True)):
        runs = [statistics.median(drag_ms(text, question, method, embedder, cold)) for _ in range(args.repeat)]
        label = f"example drag, {method}{', cold cache' if cold else ', warm cache' if method != 'bm25' else ''} (ms, median)"
        results[label] = round(statistics.median(runs), 2)
    if args.browser:
        results.update(browser_rates(args.repeat))
    results["load average (1 min) at the end"] = round(os.getloadavg()[0], 2)  # a busy machine slows the model
    width = max(map(len, results))
    for name, value in results.items():
        print(f"{name:<{width}}  {value}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
