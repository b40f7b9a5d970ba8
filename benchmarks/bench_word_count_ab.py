"""The cost guard's word count kept per document: a drag through new sizes with the memo off (before)
and on (after) in one process, moves interleaved so both see the same machine load.

    python benchmarks/bench_word_count_ab.py
"""
import sys, time, statistics
import pathlib
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT / "py"))
from bench_core import corpus, book, page_request, percentile
from ragsim.wire.api import Session, simulate
from ragsim.wire import cost
for words in (65000, 500000):
    text = corpus() if words <= 65000 else book(words)
    s = Session()
    simulate(page_request(text, 24, 6, False), s)
    times = {"before": [], "after": []}
    for i in range(60):
        for label, start in (("before", 10**12), ("after", 20_000)):
            cost._WORDS_FROM = start
            size = 25 + 2 * i + (label == "after")
            t = time.perf_counter(); simulate(page_request(text, size, 6, True), s); times[label].append((time.perf_counter() - t) * 1000)
    print(f"{len(text.split()):,} words, new sizes, interleaved: " + "; ".join(
        f"{k} median {statistics.median(v):.2f} ms p95 {percentile(v, 95):.2f} ms" for k, v in times.items()), flush=True)
