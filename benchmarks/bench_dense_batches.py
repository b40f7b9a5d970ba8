"""The embedding model in Chromium: chunks per second on 1 and 2 threads, in batches of
8, 16, 32 and 64, in interleaved rounds (96 chunks of 24 words of the help topics, fp32, the page
cross-origin isolated; the fixture page tests/browser/fixtures/dense.html runs the worker's model).
Nothing is cached between rounds but the model.

    python benchmarks/bench_dense_batches.py [rounds]
"""

import json
import os
import pathlib
import statistics
import sys
import threading

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import build  # noqa: E402
from bench_dense import topics_chunks  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

dist = build.ensure_fresh()
config = json.loads((dist / "build.json").read_text())["assets"]["assets/build-config.js"]
server = build.make_server(dist, 0, mounts={"/__tests__/": ROOT / "tests" / "browser" / "fixtures"}, quiet=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
origin = f"http://127.0.0.1:{server.server_address[1]}"
chunks = topics_chunks(24, 96)
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
res = {}
with sync_playwright() as p:
    chromium = pathlib.Path("/usr/bin/chromium")
    b = p.chromium.launch(executable_path=str(chromium) if chromium.exists() else None, args=["--no-sandbox", "--disable-gpu"])
    pages = {}
    for threads in (1, 2):
        pg = b.new_page(); pg.goto(f"{origin}/__tests__/dense.html?config=/{config}&dtype=fp32&threads={threads}")
        pg.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=180_000)
        pg.evaluate("(t) => embed(t)", chunks[:4]); pages[threads] = pg
    for r in range(rounds):
        for threads, pg in pages.items():
            for batch in (8, 16, 32, 64):
                ms = pg.evaluate("""async ([chunks, n]) => { const t = performance.now();
                    for (let i = 0; i < chunks.length; i += n) await embed(chunks.slice(i, i + n));
                    return performance.now() - t; }""", [chunks, batch])
                res.setdefault((threads, batch), []).append(len(chunks) / ms * 1e3)
    b.close()
server.shutdown()
for k, v in sorted(res.items()):
    print(f"threads {k[0]} batch {k[1]:3d}: median {statistics.median(v):5.1f} chunks/s  ({', '.join(f'{x:.1f}' for x in v)})")
print("load", os.getloadavg())
