"""The corpus audit in the core against brute force, in one process.

Collections: the built-in one (assets/collection, about 36,000 characters) and a 500,000-character
one made from it: copies of the articles whose capitalised words get a per-copy suffix, so every
copy has facts of its own. Six overlaps (0, 25, 50, 100, 150, 300) at 900 characters.

Brute force does what a script over the public API would: for every overlap and every fact, look at
every chunk for one holding the fact whole, and rank the chunks for the fact's name with one full
`simulate` call (documents indexed once in a Session). On the large collection the brute-force
ranking is timed on a sample of facts and scaled to all of them (said so in the output).

    python benchmarks/bench_audit.py
"""

import pathlib
import random
import re
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

from ragsim.wire.api import Session, simulate  # noqa: E402
from ragsim.wire.audit import audit  # noqa: E402

OVERLAPS = [0, 25, 50, 100, 150, 300]
CHUNKING = {"unit": "chars", "size": 900}
SUFFIXES = ["", "a", "e", "o", "u", "y", "is", "an", "or", "el", "um", "ix", "at", "en", "ok", "ar"]


def built_in():
    return [{"id": p.name, "title": p.name, "text": p.read_text(encoding="utf-8")}
            for p in sorted((ROOT / "assets" / "collection").glob("*.md"))]


def large(target=500_000):
    base = built_in()
    docs, copy = [], 0
    while sum(len(d["text"]) for d in docs) < target:
        suffix = SUFFIXES[copy % len(SUFFIXES)] + ("" if copy < len(SUFFIXES) else str(copy))
        for d in base:
            text = re.sub(r"\b([A-Z][a-z]+)", lambda m: m.group(1) + suffix, d["text"])
            docs.append({"id": f"{copy}-{d['id']}", "title": d["title"], "text": text})
        copy += 1
    return docs


def brute(docs, facts, sample=None):
    """Every fact against every chunk, and one ranking per fact; returns (seconds, scaled)."""
    session = Session(documents=len(docs) + 1, splits=len(docs) * 2)
    chosen = facts if sample is None else random.Random(7).sample(facts, sample)
    t = time.perf_counter()
    destroyed_total = 0
    for o in OVERLAPS:
        base = {"documents": docs, "query": "", "chunking": dict(CHUNKING, overlap=o), "retrieval": {"k": 3}}
        chunks = simulate(base, session)["chunks"]
        for f in facts:  # containment: every fact, every chunk
            a, z = f["stretch"]
            if not any(c["doc"] == f["doc"] and c["start"] <= a and z <= c["end"] for c in chunks):
                destroyed_total += 1
    containment = time.perf_counter() - t
    t = time.perf_counter()
    for o in OVERLAPS:
        for f in chosen:  # ranking: one full simulation per fact
            simulate({"documents": docs, "query": f["name_text"], "chunking": dict(CHUNKING, overlap=o),
                      "retrieval": {"k": 3}, "fact": {"doc": f["doc"], "name": f["name"], "value": f["value"]}},
                     session)
    ranking = (time.perf_counter() - t) * (len(facts) / len(chosen))
    return containment + ranking, destroyed_total


def run(label, docs, sample=None, repeat=3):
    chars = sum(len(d["text"]) for d in docs)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = audit({"documents": docs, "chunking": CHUNKING, "overlaps": OVERLAPS})
        times.append(time.perf_counter() - t)
    ours = statistics.median(times)
    facts = result["facts"]
    brute_s, destroyed = brute(docs, facts, sample)
    assert destroyed == sum(row["destroyed"] for row in result["rows"])  # the same answer
    note = f" (ranking timed on {sample} facts, scaled to {len(facts)})" if sample else ""
    print(f"{label}: {len(docs)} documents, {chars:,} characters, {len(facts)} facts, 6 overlaps")
    print(f"  ragsim audit (cold: indexes, splits, facts) {ours * 1000:9.1f} ms")
    print(f"  brute force{note} {brute_s * 1000:9.1f} ms   ratio {brute_s / ours:6.1f}x")


def main():
    run("built-in collection", built_in())
    run("500,000-character collection", large(), sample=150, repeat=1)


if __name__ == "__main__":
    main()
