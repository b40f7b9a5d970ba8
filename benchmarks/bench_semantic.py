"""A threshold move under `langchain-semantic`: ragsim re-cutting from kept distances against re-running
LangChain's `SemanticChunker` with its embeddings cached (aim >= 20x); and, first, the
embedding of the document's sentence windows in CPython.

Text: the real texts of tests/conformance/texts/, each copy headed "Part i.", repeated to about 65,000
words. Embedding (`--embedding model`, the default): all-MiniLM-L6-v2 through onnxruntime, as
ragsim's CPython host embeds (`ragsim.host.register()`): the first request of the simulation embeds every
sentence window (timed: windows per second) and keeps the distances in its session. With
`--embedding hashed`, the conformance tests' hashed bag of words instead (no model, seconds).
Either way the vectors are then looked up, so neither side pays for a model on a move.

ragsim, per move: `semantic.recut` from the kept distances, the whole simulation request
(`api.simulate` through the session: re-cut, chunks laid out and ranked, verdict, response), and
the page's request (`api.simulate_packed`, JSON in and out as the worker calls it, with
`semantic_have` naming the key, so the curve is not sent again).
LangChain, per move: `SemanticChunker(...).split_text(text)`, its `embed_documents` a dictionary
lookup (it still splits, re-joins the windows and takes every cosine again: that is what it does per
call). Moves alternate over percentiles 90, 91, ..., so each is a real re-cut; each side's chunks are
checked equal at every move.

    python benchmarks/bench_semantic.py [--repeat 9] [--words 65000] [--embedding model|hashed]
"""

import argparse
import json
import pathlib
import statistics
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import hashed  # noqa: E402  (the conformance tests' deterministic embedding)
from ragsim.split import semantic, semantic_split  # noqa: E402
from ragsim.wire import api  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "langchain-experimental is being sunset"
    from langchain_core.embeddings import Embeddings
    from langchain_experimental.text_splitter import SemanticChunker


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


class Recording:
    """The registered host's embedder, keeping every vector it made (LangChain then looks them up)."""

    def __init__(self, embed):
        self.embed_batch, self.vectors = embed, {}

    def embed(self, texts):
        out = self.embed_batch(texts)
        out = out.tolist() if hasattr(out, "tolist") else out
        self.vectors.update(zip(texts, out))
        return out


def first_request(text: str, chunking: dict, embedding: str):
    """The simulation's first request, embedding every window through the registered host."""
    if embedding == "model":
        from ragsim.host import embed_onnx

        model = embed_onnx.default_embedder()
        recording = Recording(model.embed)
        model.embed(["warm up"])  # the model's load is not the embedding's time
    else:
        recording = Recording(lambda texts: [hashed(t) for t in texts])
    semantic_split.register_host(lambda: recording)
    session = api.Session()
    request = {"documents": [{"id": "d", "text": text}], "query": "harbour pilot", "chunking": chunking,
               "retrieval": {"k": 5}, "wire": "binary", "scores": "top"}
    t = time.perf_counter()
    out = api.simulate(request, session)
    first_s = time.perf_counter() - t
    assert "error" not in out and out["semantic_needs"] == [], out.get("error")
    return session, request, recording.vectors, first_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--words", type=int, default=65_000)
    parser.add_argument("--embedding", choices=("model", "hashed"), default="model")
    args = parser.parse_args()

    text = document(args.words)
    chunking = {"strategy": "langchain-semantic"}
    windows = semantic.texts_to_embed(text, chunking)
    session, request, vectors, first_s = first_request(text, chunking, args.embedding)
    what = "all-MiniLM-L6-v2 (onnxruntime)" if args.embedding == "model" else "hashed bag of words"
    print(f"document: {len(text.split()):,} words, {len(windows):,} sentence windows")
    print(f"first request, CPython, {what}: {first_s:.1f} s, {len(windows) / first_s:,.0f} windows/s "
          f"(embedding every window, then the distances kept in the session)")
    kept = session.semantic.kept[semantic_split.key(text, chunking)]

    def amount(i: int) -> int:
        return 90 + i % 9

    embeddings = Cached(vectors)
    mismatches = []

    def ours(i: int):
        return semantic.recut(text, {**chunking, "breakpoint_threshold_amount": amount(i)}, kept)[0]

    def request_move(i: int):
        out = api.simulate({**request, "chunking": {**chunking, "breakpoint_threshold_amount": amount(i)}}, session)
        assert "error" not in out and out["semantic_needs"] == []
        return out

    held = [semantic_split.key(text, chunking)]

    def page_move(i: int):  # as the page's worker asks: JSON in and out, the text kept, the curve held
        moved = {**request, "documents": [{"id": "d", "text": ""}], "semantic_have": held,
                 "chunking": {**chunking, "breakpoint_threshold_amount": amount(i) + 0.5}}  # not a kept split
        out, _ = api.simulate_packed(json.dumps(moved), session, [text])
        assert '"distances"' not in out
        return out

    def langchain(i: int):
        return SemanticChunker(embeddings, breakpoint_threshold_amount=amount(i)).split_text(text)

    for i in range(9):  # every measured setting, once, both ways
        if [c[3] for c in ours(i)] != langchain(i):
            mismatches.append(amount(i))
    embedded = session.semantic.embedded
    ours_ms = median_ms(ours, args.repeat)
    request_ms = median_ms(request_move, args.repeat)
    page_ms = median_ms(page_move, args.repeat)
    assert session.semantic.embedded == embedded  # no move embedded anything
    lc_ms = median_ms(langchain, max(3, args.repeat // 3))
    print(f"threshold move, median: ragsim recut {ours_ms:.1f} ms, ragsim whole request {request_ms:.1f} ms, "
          f"LangChain SemanticChunker (embeddings cached) {lc_ms:.0f} ms")
    print(f"the page's move (simulate_packed, JSON both ways, semantic_have: only threshold and cuts back): "
          f"{page_ms:.1f} ms median")
    print(f"ratios: LangChain / recut {lc_ms / ours_ms:.0f}x, LangChain / whole request {lc_ms / request_ms:.0f}x "
          f"(aim >= 20x)")
    print("same chunks at every percentile 90..98:", "yes" if not mismatches else f"NO at {mismatches}")


if __name__ == "__main__":
    main()
