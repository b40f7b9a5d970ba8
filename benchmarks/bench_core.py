"""One slider move through `ragsim.api.simulate` against the usual way of doing the same work.

Text: CPython's help topics (`pydoc_data.topics`, about 65,000 words). ragsim indexes the text
once (a Session), then each move re-splits at the new size/overlap and re-scores. The usual way
slices the chunks, tokenizes them and builds a `rank_bm25.BM25Okapi` or a `bm25s` index, then
scores. Every timed move really re-splits: the session keeps one split only and the moves
alternate between the measured setting and a neighbour, so no cache answers a measured move.

    python benchmarks/bench_core.py [--repeat 15]
"""

import argparse
import json
import pathlib
import re
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "py"))

from ragsim.api import Session, simulate, simulate_json  # noqa: E402

QUERY = "How does the with statement call __enter__ and __exit__ on the context manager?"
TERM = re.compile(r"\w+")


def corpus() -> str:
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k] for k in sorted(topics))


def request(text, unit, size, overlap, k):
    return {
        "documents": [{"id": "topics", "title": "Python help topics", "text": text}],
        "query": QUERY,
        "chunking": {"unit": unit, "size": size, "overlap": overlap},
        "retrieval": {"k": k},
        "span": None,
        "price_per_million": 3.0,
    }


def usual_chunks(text, unit, size, overlap):
    """Slice the chunks the way a notebook does: word windows re-joined, or character windows."""
    step = size - overlap
    if unit == "words":
        words = text.split()
        return [" ".join(words[i : i + size]) for i in range(0, max(len(words) - overlap, 1), step)]
    return [text[i : i + size] for i in range(0, max(len(text) - overlap, 1), step)]


def usual_rank_bm25(text, unit, size, overlap, k):
    from rank_bm25 import BM25Okapi

    tokenized = [TERM.findall(c.lower()) for c in usual_chunks(text, unit, size, overlap)]
    scores = BM25Okapi(tokenized).get_scores(TERM.findall(QUERY.lower()))
    return sorted(range(len(scores)), key=lambda i: -scores[i])[:k]


def usual_bm25s(text, unit, size, overlap, k):
    import bm25s

    tokenized = [TERM.findall(c.lower()) for c in usual_chunks(text, unit, size, overlap)]
    model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    model.index(tokenized, show_progress=False)
    scores = model.get_scores(TERM.findall(QUERY.lower()))
    return sorted(range(len(scores)), key=lambda i: -scores[i])[:k]


def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def bench(text, unit, size, overlap, k, repeat):
    session = Session(splits=1)
    measured = request(text, unit, size, overlap, k)
    neighbour = request(text, unit, size - 1, overlap - 1, k + 1)
    simulate(measured, session)  # index the text once, as the page does when the document is pasted

    def move():
        simulate(neighbour, session)  # evicts the measured split
        t = time.perf_counter()
        simulate(measured, session)
        return (time.perf_counter() - t) * 1000

    def move_json():
        simulate_json(json.dumps(neighbour), session)
        wire = json.dumps(measured)
        t = time.perf_counter()
        simulate_json(wire, session)
        return (time.perf_counter() - t) * 1000

    def move_columns():  # the page's own path: JSON in, the chunks as columns out
        simulate_json(json.dumps({**neighbour, "wire": "columns"}), session)
        wire = json.dumps({**measured, "wire": "columns"})
        t = time.perf_counter()
        simulate_json(wire, session)
        return (time.perf_counter() - t) * 1000

    ours = statistics.median(move() for _ in range(repeat))
    ours_json = statistics.median(move_json() for _ in range(repeat))
    ours_columns = statistics.median(move_columns() for _ in range(repeat))
    rb = median_ms(lambda: usual_rank_bm25(text, unit, size, overlap, k), max(3, repeat // 3))
    bs = median_ms(lambda: usual_bm25s(text, unit, size, overlap, k), max(3, repeat // 3))
    chunks = simulate(measured, session)["stats"]["chunks"]
    print(f"{unit} {size}/{overlap}, k={k}: {chunks} chunks")
    print(f"  ragsim simulate (indexed once)      {ours:8.2f} ms   (with JSON in and out: {ours_json:.2f} ms;"
          f" the page's path, chunks as columns: {ours_columns:.2f} ms)")
    print(f"  usual way, rank_bm25.BM25Okapi      {rb:8.2f} ms   ratio {rb / ours:6.1f}x")
    print(f"  usual way, bm25s lucene             {bs:8.2f} ms   ratio {bs / ours:6.1f}x")
    return ours, rb / ours, bs / ours


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    text = corpus()
    print(f"corpus: pydoc_data.topics, {len(text.split()):,} words, {len(text):,} characters")
    t = time.perf_counter()
    Session().index(text)
    print(f"indexing once: {(time.perf_counter() - t) * 1000:.1f} ms")
    bench(text, "words", 24, 6, 3, args.repeat)
    bench(text, "chars", 900, 150, 3, args.repeat)


if __name__ == "__main__":
    main()
