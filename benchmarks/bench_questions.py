"""A question set evaluated at one setting and over a 24-cell settings map, against the usual way.

Corpus: CPython's help topics (`pydoc_data.topics`, one document per topic) and the docstrings of
the standard library's top-level modules (read with `ast`, one document per module), taken in name
order until there is more than 1 MB of text. Questions: generated deterministically (a seeded
random): a sentence of a document is the reference (one question in ten needs two sentences), and
the query is a question made of some of its words. Nothing is downloaded.

The usual way, per setting: slice the chunks, tokenize them, index them with `bm25s` and
`retrieve` every question's top k (the metrics are not even computed, which favours it). ragsim
indexes each document once and, per setting, re-splits, ranks every question by exact top-k with
pruning and computes the full metrics (`questions.evaluate`, `settings_map.settings_map`).

Times are the median CPU time of this process (`time.process_time`), so that other work on a
shared machine does not skew the ratio.

    python benchmarks/bench_questions.py [--questions 400] [--repeat 3] [--write-set questions.json]
"""

import argparse
import ast
import json
import pathlib
import random
import re
import statistics
import sys
import sysconfig
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "py"))

import ragsim.host  # noqa: E402
from ragsim.wire import question_io
from ragsim.judge import questions as qs, settings_map  # noqa: E402
from ragsim.wire.api import Session  # noqa: E402
from ragsim.rank.queries import Setting, Words  # noqa: E402

ragsim.host.register()  # CPython's hosts: rank files, the model

TERM = re.compile(r"\w+")
SENTENCE = re.compile(r"[A-Z][^.!?\n]{30,240}[.!?]")
MIN_CHARS = 1_050_000
RETRIEVAL = {"variant": "lucene", "k1": 1.2, "b": 0.75, "delta": 0.5, "analyzer": None}
OPENERS = ("What does", "How does", "Why does", "When does", "Which", "What is the", "How do I use")


def corpus() -> list[dict]:
    """The help topics, then module docstrings, in name order, until MIN_CHARS characters."""
    from pydoc_data.topics import topics

    docs = [{"id": f"topics/{k}", "title": k, "text": topics[k]} for k in sorted(topics)]
    total = sum(len(d["text"]) for d in docs)
    for path in sorted(pathlib.Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        if total >= MIN_CHARS:
            break
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)))]
        parts = [doc for n in nodes if (doc := ast.get_docstring(n))]
        text = "\n\n".join(parts)
        if len(text) > 2000:
            docs.append({"id": f"stdlib/{path.name}", "title": path.stem, "text": text})
            total += len(text)
    return docs


def question_set(docs: list[dict], count: int, seed: int = 7) -> list[dict]:
    """`count` questions: one reference sentence (two for every tenth), the query made of its words."""
    rng = random.Random(seed)
    sentences = [[(m.start(), m.end()) for m in SENTENCE.finditer(d["text"])] for d in docs]
    usable = [i for i, s in enumerate(sentences) if len(s) >= 2]
    out = []
    while len(out) < count:
        d = rng.choice(usable)
        picked = rng.sample(sentences[d], 2 if len(out) % 10 == 9 else 1)
        words = []
        for a, b in picked:
            ws = [w for w in TERM.findall(docs[d]["text"][a:b]) if len(w) > 3]
            words += rng.sample(ws, min(len(ws), rng.randint(2, 4)))
        query = f"{rng.choice(OPENERS)} {' '.join(words)} do in the {rng.choice(['code', 'language', 'module'])}?"
        out.append({"id": f"q{len(out) + 1}", "query": query,
                    "references": [{"doc": docs[d]["id"], "start": a, "end": b} for a, b in sorted(picked)]})
    return out


def usual_way(docs, size, overlap, queries, k, refs=None):
    """Slice character windows, tokenize, index with bm25s, retrieve every question's top k; with
    `refs` (per question, `(doc position, start, end)` references) also score them as a notebook
    running Chroma's evaluation does: interval unions, and a pass over every chunk of the question's
    document for precision omega."""
    import bm25s

    step = size - overlap
    extents = [(d, i, min(i + size, len(doc["text"]))) for d, doc in enumerate(docs)
               for i in range(0, max(len(doc["text"]) - overlap, 1), step)]
    chunks = [docs[d]["text"][a:b] for d, a, b in extents]
    model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    model.index([TERM.findall(c.lower()) for c in chunks], show_progress=False)
    found, _ = model.retrieve([TERM.findall(q.lower()) or ["_"] for q in queries], k=k, show_progress=False, n_threads=1)
    if refs is not None:
        for row, rs in zip(found, refs):
            notebook_metrics([extents[c] for c in row], extents, rs)
    return len(chunks)


def _union(ranges):
    merged = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def notebook_metrics(retrieved, extents, refs):
    """recall, precision, iou and precision omega of one question (its references in one document,
    as in Chroma), the straightforward way."""
    covered = []
    for d, a, b in retrieved:
        for rd, ra, rb in refs:
            if rd == d and max(a, ra) <= min(b, rb):
                covered = _union(covered + [(max(a, ra), min(b, rb))])
    num = sum(b - a for a, b in covered)
    unused = sum(rb - ra for _, ra, rb in refs) - sum(max(0, min(rb, b) - max(ra, a)) for _, ra, rb in refs for a, b in covered)
    prec_den = sum(b - a for _, a, b in retrieved)
    touching = [(a, b) for d, a, b in extents if any(rd == d and max(a, ra) <= min(b, rb) for rd, ra, rb in refs)]
    within = sum(max(0, min(rb, b) - max(ra, a)) for a, b in _union(touching) for _, ra, rb in refs)
    omega_den = sum(b - a for a, b in _union(touching + [(ra, rb) for _, ra, rb in refs]))
    total = sum(rb - ra for _, ra, rb in refs)
    return (num / total, num / prec_den if prec_den else 0, num / (prec_den + unused) if prec_den + unused else 0,
            within / omega_den if within else 0)


def timed(fn, repeat):
    """Median CPU time of this process (the build machine is shared: wall time swings with others' load)."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        result = fn()
        times.append(time.process_time() - t)
    return statistics.median(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-set", help="also write the documents' ids and the question set as JSON here")
    args = parser.parse_args()
    docs = corpus()
    chars = sum(len(d["text"]) for d in docs)
    raw = question_set(docs, args.questions)
    questions = qs.read_question_set(raw, docs)
    queries = [q.query for q in questions]
    refs = [q.refs for q in questions]
    print(f"corpus: {len(docs)} documents, {chars:,} characters, {sum(len(d['text'].split()) for d in docs):,} words;"
          f" {len(questions)} questions ({sum(len(q.refs) > 1 for q in questions)} with two references)")
    if args.write_set:
        pathlib.Path(args.write_set).write_text(question_io.write_json(questions, docs))

    session = Session()
    t = time.perf_counter()
    session.hold(len(docs))
    indexes = [session.index(d["text"]) for d in docs]
    words = Words(indexes)
    print(f"ragsim indexes each document once: {(time.perf_counter() - t) * 1000:.0f} ms (not in the per-setting times"
          " below; the usual way tokenizes and indexes the chunks again at every setting, and that is in its times)")
    k = 5

    print("\none setting, all questions (chars windows, k=5):")
    print(f"  {'setting':>10}  {'chunks':>6}  {'ragsim':>8}  {'bm25s way':>9}  ratio  {'+metrics':>8}  ratio"
          "   intact ranked_out cut  recall  iou    prec   prec_Ω  tokens")
    for size, overlap in ((500, 100), (1000, 200), (2000, 0)):
        chunking = {"unit": "chars", "size": size, "overlap": overlap}

        def ours():
            setting = Setting(words, chunking, Session(), RETRIEVAL)  # a fresh split every time
            return qs.evaluate(questions, setting, k, 3.0)

        ours_s, (_, stats) = timed(ours, args.repeat)
        theirs_s, n = timed(lambda: usual_way(docs, size, overlap, queries, k), args.repeat)
        metrics_s, _ = timed(lambda: usual_way(docs, size, overlap, queries, k, refs), 1)
        print(f"  {size:>5}/{overlap:<4}  {n:>6}  {ours_s * 1000:6.0f}ms  {theirs_s * 1000:7.0f}ms  {theirs_s / ours_s:4.1f}x"
              f"  {metrics_s * 1000:7.0f}ms  {metrics_s / ours_s:4.1f}x"
              f"   {stats['intact']:>6} {stats['ranked_out']:>10} {stats['cut']:>3}  {stats['recall_mean']:.3f}  "
              f"{stats['iou_mean']:.3f}  {stats['precision_mean']:.3f}  {stats['precision_omega_mean']:.3f}"
              f"  {stats['context_tokens_mean']:.0f}")

    print("\nhow the ratio depends on the number of questions (chars 1000/200, k=5):")
    chunking = {"unit": "chars", "size": 1000, "overlap": 200}
    for n in sorted({10, 40, len(questions)}):
        part = questions[:n]
        ours_s, _ = timed(lambda: qs.evaluate(part, Setting(words, chunking, Session(), RETRIEVAL), k, 3.0), args.repeat)
        theirs_s, _ = timed(lambda: usual_way(docs, 1000, 200, queries[:n], k), args.repeat)
        print(f"  {n:>4} questions: ragsim {ours_s * 1000:5.0f} ms, bm25s way {theirs_s * 1000:5.0f} ms, "
              f"ratio {theirs_s / ours_s:.1f}x")

    sizes, overlaps = [300, 500, 800, 1200, 1600, 2000], [0, 50, 100, 200]
    print(f"\nthe map: {len(sizes)} sizes x {len(overlaps)} overlaps = {len(sizes) * len(overlaps)} cells, k={k}")
    ours_s, grid = timed(lambda: settings_map.settings_map(words, {"unit": "chars"}, RETRIEVAL, k, questions, 3.0,
                                                           sizes, overlaps, Session(splits=1)), 1)

    def theirs():
        for s in sizes:
            for o in overlaps:
                usual_way(docs, s, o, queries, k)

    theirs_s, _ = timed(theirs, 1)
    print(f"  ragsim map {ours_s:.2f} s; 24 bm25s runs {theirs_s:.2f} s; ratio {theirs_s / ours_s:.1f}x")
    few = questions[:10]  # the page's case: a person's ten hardest questions
    few_s, _ = timed(lambda: settings_map.settings_map(words, {"unit": "chars"}, RETRIEVAL, k, few, 3.0, sizes,
                                                       overlaps, Session(splits=1)), 1)
    few_theirs_s, _ = timed(lambda: [usual_way(docs, s, o, queries[:10], k) for s in sizes for o in overlaps], 1)
    print(f"  the same map for the first 10 questions: ragsim {few_s:.2f} s; 24 bm25s runs {few_theirs_s:.2f} s;"
          f" ratio {few_theirs_s / few_s:.1f}x")
    best = min(((c["context_tokens_mean"], s, o, c) for s, row in zip(sizes, grid["cells"])
                for o, c in zip(overlaps, row) if c), key=lambda x: x[0])
    most = max((c["intact"] for row in grid["cells"] for c in row if c))
    print(f"  most answers intact in a cell: {most} of {len(questions)}; cheapest cell: size {best[1]}, overlap {best[2]}"
          f" ({best[3]['intact']} intact, {best[0]:.0f} tokens per query)")


if __name__ == "__main__":
    main()
