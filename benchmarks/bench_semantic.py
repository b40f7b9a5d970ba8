"""A threshold move under `langchain-semantic`: ragsim re-cutting from kept distances against re-running
LangChain's `SemanticChunker` with its embeddings cached (issue 25, aim >= 20x).

Text: the real texts of tests/conformance/texts/, each copy headed "Part i.", repeated to about 65,000
words. Embedding: the conformance tests' deterministic hashed bag of words (64 dimensions), computed
once for every window and then looked up, so neither side pays for a model. ragsim: `semantic.prepare`
once (sentences and distances kept, as a session keeps them), then `semantic.recut` per move.
LangChain: `SemanticChunker(...).split_text(text)` per move, its `embed_documents` a dictionary lookup
(it still splits, re-joins the windows and takes every cosine again: that is what it does per call).
Moves alternate over percentiles 90, 91, ..., so each is a real re-cut; each side's chunks are checked
equal at every move.

    python benchmarks/bench_semantic.py [--repeat 9] [--words 65000]
"""

import argparse
import math
import pathlib
import re
import statistics
import sys
import time
import warnings
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

from ragsim.split import semantic  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "langchain-experimental is being sunset"
    from langchain_core.embeddings import Embeddings
    from langchain_experimental.text_splitter import SemanticChunker


def hashed(text: str, dim: int = 64) -> list[float]:
    """tests/conformance/test_semantic_conformance.py's deterministic embedding."""
    v = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = zlib.crc32(word.encode())
        v[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n else v


class Cached(Embeddings):
    """Embeddings already computed: LangChain's call costs a lookup per window."""

    def __init__(self, vectors: dict):
        self.vectors = vectors

    def embed_documents(self, texts):
        return [self.vectors[t] for t in texts]

    def embed_query(self, text):
        return self.vectors[text]


def document(words: int) -> str:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests/conformance/texts").iterdir())
             if p.is_file() and p.name[0] != "."]
    base = "\n\n".join(texts)
    copies = max(1, round(words / len(base.split())))
    return "\n\n".join(f"Part {i}. {base}" for i in range(copies))


def median_ms(fn, repeat: int) -> float:
    times = []
    for i in range(repeat):
        t = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--words", type=int, default=65_000)
    args = parser.parse_args()

    text = document(args.words)
    chunking = {"strategy": "langchain-semantic"}
    t = time.perf_counter()
    windows = semantic.texts_to_embed(text, chunking)
    vectors = {w: hashed(w) for w in windows}
    embed_s = time.perf_counter() - t
    print(f"document: {len(text.split()):,} words, {len(windows):,} sentence windows "
          f"(hashed embedding of all of them: {embed_s:.2f} s, paid once, outside both timings)")

    t = time.perf_counter()
    kept = semantic.prepare(text, chunking, [vectors[w] for w in windows])
    prepare_ms = (time.perf_counter() - t) * 1000
    print(f"ragsim prepare (sentences, {len(kept.distances):,} cosines, kept): {prepare_ms:.0f} ms, once")

    def amount(i: int) -> int:
        return 90 + i % 9

    embeddings = Cached(vectors)
    mismatches = []

    def ours(i: int):
        return semantic.recut(text, {**chunking, "breakpoint_threshold_amount": amount(i)}, kept)[0]

    def langchain(i: int):
        return SemanticChunker(embeddings, breakpoint_threshold_amount=amount(i)).split_text(text)

    for i in range(9):  # every measured setting, once, both ways
        if [c[3] for c in ours(i)] != langchain(i):
            mismatches.append(amount(i))
    ours_ms = median_ms(ours, args.repeat)
    lc_ms = median_ms(langchain, max(3, args.repeat // 3))
    print(f"threshold move, median: ragsim recut {ours_ms:.1f} ms, LangChain SemanticChunker "
          f"(embeddings cached) {lc_ms:.0f} ms: {lc_ms / ours_ms:.0f}x")
    print("same chunks at every percentile 90..98:", "yes" if not mismatches else f"NO at {mismatches}")


if __name__ == "__main__":
    main()
