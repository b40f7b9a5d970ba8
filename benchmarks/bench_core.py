"""One slider move through `ragsim.api.simulate` against the usual way of doing the same work.

Text: CPython's help topics (`pydoc_data.topics`, about 65,000 words), and for book length the same
followed by the docstrings of the standard library (modules, classes and functions, files in sorted
order) up to 200,000 and 500,000 words: real prose, not the help topics repeated. ragsim indexes the
text once (a Session), then each move re-splits at the new size/overlap and re-scores. The usual way
slices the chunks, tokenizes them and builds a `rank_bm25.BM25Okapi` or a `bm25s` index, then
scores. Every timed move really re-splits: the session keeps one split only and the moves
alternate between the measured setting and a neighbour, so no cache answers a measured move
(the correctly rounded logarithms of idf are forgotten too, as a drag to a new setting needs new ones).
Also the move with `"scores": "top"` (docs/wire.md): the top k and the ranked chunks' scores only,
scoring the chunks that can reach the top k; the page asks for it over 2,000 chunks.

What a hand does: a drag through sizes never seen before (size 25, 26, 27, ... at overlap
6), and separately through overlaps never seen before (overlap 7, 8, 9, ... at size 60), each move the
page's own request (the packed wire, the top k only over 2,000 chunks) through the page's own
`Session()` (its caches as the worker has them): median and p95. The cached alternation (24 <-> 25
through that session: after the first two moves each finds its split in the cache) is reported
apart, labelled as such; it is a move a drag never makes.

    python benchmarks/bench_core.py [--repeat 15] [--sizes 65000,200000,500000] [--walk 40] [--walk-only]
"""

import argparse
import ast
import json
import pathlib
import re
import statistics
import sys
import sysconfig
import time
import tracemalloc
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "py"))

from ragsim.rank import bm25  # noqa: E402
from ragsim.rank import ln as ln_mod
from ragsim.wire.api import Session, simulate, simulate_json, simulate_packed  # noqa: E402

PRUNE_CHUNKS = 2_000  # the page's threshold (assets/js/compute.js)
QUERY = "How does the with statement call __enter__ and __exit__ on the context manager?"
TERM = re.compile(r"\w+")


def corpus() -> str:
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k] for k in sorted(topics))


def book(words: int) -> str:
    """At least `words` words of real text: the help topics, then the standard library's docstrings
    (each module's, class's and function's, files in sorted order), then, if still short, its
    comments; cut after the piece that reaches the count. The same text on every run of one Python."""
    parts = [corpus()]
    count = len(parts[0].split())
    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in sorted(root.rglob("*.py")) if "site-packages" not in p.parts]

    def add(piece: str) -> bool:
        nonlocal count
        parts.append(piece)
        count += len(piece.split())
        return count >= words

    for path in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and add(doc):
                    return "\n\n".join(parts)
    for path in files:  # the comments, a file's comment lines as one piece
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        comments = [line.strip().lstrip("#").strip() for line in lines if line.strip().startswith("#")]
        if comments and add("\n".join(c for c in comments if c)):
            break
    return "\n\n".join(parts)


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

    def timed(run_neighbour, run_measured):
        run_neighbour()  # evicts the measured split
        ln_mod.ln.cache_clear()  # a new setting needs new logarithms
        t = time.perf_counter()
        run_measured()
        return (time.perf_counter() - t) * 1000

    def move():  # every chunk as SPEC's JSON objects (ranks for all)
        return timed(lambda: simulate(neighbour, session), lambda: simulate(measured, session))

    def move_core():  # the core's move as the page asks for it: the per-chunk numbers as packed bytes
        n_req, m_req = {**neighbour, "wire": "binary"}, {**measured, "wire": "binary"}
        return timed(lambda: simulate(n_req, session), lambda: simulate(m_req, session))

    def move_top():  # the page's drag over PRUNE_CHUNKS chunks: the top k without every score
        n_req, m_req = {**neighbour, "wire": "binary", "scores": "top"}, {**measured, "wire": "binary", "scores": "top"}
        return timed(lambda: simulate(n_req, session), lambda: simulate(m_req, session))

    def move_page():  # the worker's path: the request as JSON text (the document in it) in, JSON and bytes out
        n_wire, m_wire = json.dumps({**neighbour, "wire": "binary"}), json.dumps({**measured, "wire": "binary"})
        return timed(lambda: simulate_packed(n_wire, session), lambda: simulate_packed(m_wire, session))

    ours = statistics.median(move_core() for _ in range(repeat))
    ours_objects = statistics.median(move() for _ in range(repeat))
    ours_page = statistics.median(move_page() for _ in range(repeat))
    ours_top = statistics.median(move_top() for _ in range(repeat))
    slow = max(3, repeat // 3)
    rb = median_ms(lambda: usual_rank_bm25(text, unit, size, overlap, k), slow)
    bs = median_ms(lambda: usual_bm25s(text, unit, size, overlap, k), slow)
    chunks = simulate(measured, session)["stats"]["chunks"]
    pruned = chunks > PRUNE_CHUNKS  # the page's drag asks for the top k only
    page = ours_top if pruned else ours
    print(f"{unit} {size}/{overlap}, k={k}: {chunks} chunks")
    print(f"  ragsim move as the page asks     {page:8.2f} ms   ("
          + (f"\"scores\": \"top\": pruned, over {PRUNE_CHUNKS:,} chunks; every score: {ours:.2f} ms"
             if pruned else f"every score, {PRUNE_CHUNKS:,} chunks or fewer; the top k only: {ours_top:.2f} ms")
          + f"; the request as JSON: {ours_page:.2f} ms; every chunk as JSON objects: {ours_objects:.2f} ms)")
    print(f"  usual way, rank_bm25.BM25Okapi   {rb:8.2f} ms   ratio {rb / page:6.1f}x")
    print(f"  usual way, bm25s lucene          {bs:8.2f} ms   ratio {bs / page:6.1f}x")
    ours = page
    return ours, rb / ours, bs / ours


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def page_request(text, size, overlap, pruned):
    req = {**request(text, "words", size, overlap, 3), "wire": "binary"}
    return {**req, "scores": "top"} if pruned else req


def walk(text, moves) -> None:
    """A hand's drag: every move a setting never seen, through the page's own Session(); then the
    cached alternation, apart."""
    session = Session()
    t = time.perf_counter()
    first = simulate(page_request(text, 24, 6, False), session)  # the document pasted: indexed once
    pruned = first["stats"]["chunks"] > PRUNE_CHUNKS
    print(f"  words 24/6: {first['stats']['chunks']} chunks; pasted and ranked in {(time.perf_counter() - t) * 1000:.0f} ms;"
          f" the page's drag {'asks for the top k only' if pruned else 'asks for every score'}")

    def timed(settings):
        times = []
        for size, overlap in settings:
            t = time.perf_counter()
            out = simulate(page_request(text, size, overlap, pruned), session)
            times.append((time.perf_counter() - t) * 1000)
            assert "error" not in out, out
        return times

    for label, settings in (("new sizes    (25, 26, ... at overlap 6)", [(25 + i, 6) for i in range(moves)]),
                            ("new overlaps (7, 8, ... at size 60)", [(60, 7 + i) for i in range(moves)])):
        times = timed(settings)
        print(f"  drag through {label}: median {statistics.median(times):7.2f} ms, p95 {percentile(times, 95):7.2f} ms"
              f" ({len(times)} moves)")
    times = timed([(24 + i % 2, 6) for i in range(moves + 2)])[2:]
    print(f"  cached alternation 24 <-> 25 (each split found in the session's cache; not a drag):"
          f" median {statistics.median(times):7.2f} ms, p95 {percentile(times, 95):7.2f} ms")


def memory(text) -> None:
    """The core's own memory for a document, without a worker: the traced peak of indexing it and one
    move (Python allocations, as tracemalloc counts them), and what the index keeps afterwards."""
    tracemalloc.start()
    session = Session(splits=1)
    simulate({**request(text, "words", 24, 6, 3), "wire": "binary"}, session)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"  memory: index + one move peak {peak / 2**20:.0f} MiB, held after it {held / 2**20:.0f} MiB"
          " (tracemalloc, the core alone)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sizes", default="65000,200000,500000",
                        help="document sizes in words; 65000 is the help topics alone")
    parser.add_argument("--walk", type=int, default=40, help="moves of each drag through settings never seen")
    parser.add_argument("--walk-only", action="store_true", help="only the drags through new settings")
    args = parser.parse_args()
    for words in map(int, args.sizes.split(",")):
        text = corpus() if words <= 65_000 else book(words)
        print(f"\ncorpus: {len(text.split()):,} words, {len(text):,} characters"
              f" ({'pydoc_data.topics' if words <= 65_000 else 'help topics + standard library docstrings'})")
        t = time.perf_counter()
        Session().index(text)
        print(f"indexing once: {(time.perf_counter() - t) * 1000:.1f} ms")
        walk(text, args.walk)
        if args.walk_only:
            continue
        repeat = args.repeat if words <= 65_000 else max(3, args.repeat * 65_000 // words)
        bench(text, "words", 24, 6, 3, repeat)
        bench(text, "chars", 900, 150, 3, repeat)
        if words >= 500_000:
            memory(text)


if __name__ == "__main__":
    main()
