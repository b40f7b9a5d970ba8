"""Dense retrieval in CPython: how fast the model embeds chunks, and what a dense drag costs.

1. Chunks embedded per second by all-MiniLM-L6-v2 through onnxruntime (ragsim.embed_onnx), on
   24-word and 200-word chunks of CPython's help topics (`pydoc_data.topics`), with onnxruntime's
   default threads and with one (the browser runs one), batches of 16, nothing cached.
2. The core's own share: where the model stops reading a chunk (`wordpiece.read_end`, pure Python),
   per chunk, with its caches cleared.
3. A drag on the page's example document (words, size 24 -> 30, overlap 6, k 2) through
   `api.simulate`: BM25, dense with every chunk already embedded (a warm cache), and dense from
   an empty cache (every chunk of each new size embedded).

    python benchmarks/bench_dense.py [--repeat 3]

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

from ragsim import api, embed_onnx, wordpiece  # noqa: E402


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results = {}
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
    results["load average (1 min) at the end"] = round(os.getloadavg()[0], 2)  # a busy machine slows the model
    width = max(map(len, results))
    for name, value in results.items():
        print(f"{name:<{width}}  {value}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
