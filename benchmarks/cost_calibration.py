"""Measures the constants of ragsim.wire.cost on this machine.

Each kind of work runs at two sizes, each in a fresh process (so its peak memory is its own); the
constant is the difference in seconds (and in peak resident bytes) over the difference in units, so
the fixed costs of starting cancel out. Seconds are the process's CPU time, so other work on a shared
machine does not inflate them. Corpus: CPython's help topics (`pydoc_data.topics`), repeated
to the length asked for; queries and questions are words of it. Nothing is downloaded.

    python benchmarks/cost_calibration.py [KIND...]   # prints each constant beside the one in cost.py

(`sentence` measures S_SENTENCE and S_TOKEN together: the splitter counts every piece's tokens.)
"""

import json
import pathlib
import random
import re
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

# kind -> (the constant it measures, how a size becomes a request spec, the two sizes, units of a size)
WORDS = re.compile(r"[a-z]{4,}")


def corpus(chars: int) -> str:
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[k] for k in sorted(topics))
    return (text * (chars // len(text) + 1))[:chars]


def request(spec: dict) -> dict:
    text = corpus(spec["chars"])
    rng = random.Random(7)
    words = WORDS.findall(text[:200_000])
    req = {"documents": [{"id": "d", "title": "", "text": text}], "query": "the index of a module",
           "chunking": spec["chunking"], "retrieval": {"k": spec.get("k", 3), **spec.get("retrieval", {})}}
    if spec.get("map"):
        req["map"] = spec["map"]
    if spec.get("sweep"):
        req["sweep"] = spec["sweep"]
    if spec.get("questions"):
        refs = [{"doc": "d", "start": s, "end": s + 40} for s in (rng.randrange(0, len(text) - 50)
                                                                for _ in range(spec["questions"]))]
        req["questions"] = [{"id": f"q{i}", "query": " ".join(rng.sample(words, 4)), "references": [r]}
                            for i, r in enumerate(refs)]
    return req


def child(spec: dict) -> dict:
    import ragsim.host
    from ragsim.wire import cost
    from ragsim.wire.api import simulate

    ragsim.host.register()  # the rank files
    req = request(spec)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.process_time()  # CPU time: other work on a shared machine does not count
    out = simulate(req, budget=cost.Budget(None, float("inf")))
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert "error" not in out, out["error"]
    return {"seconds": seconds, "bytes": max(0, peak - before), "chunks": out["stats"]["chunks"],
            "units": out["stats"]["units_in_documents"]}


def measure(spec: dict) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def window(words: int) -> dict:
    return {"unit": "words", "size": words, "overlap": 0}


# name: (constant, spec at a size, sizes, units of the work at a size (given the measured result))
KINDS = {
    "index": ("S_INDEX", lambda n: {"chars": n, "chunking": window(20_000)}, (1_000_000, 4_000_000),
              lambda n, r: n),
    "chunks": ("S_CHUNK", lambda n: {"chars": 2_000_000, "chunking": {"unit": "chars", "size": n, "overlap": 0}},
               (200, 12), lambda n, r: r["chunks"]),
    "questions": ("S_QUESTION", lambda n: {"chars": 1_000_000, "chunking": window(50), "questions": n}, (20, 200),
                  lambda n, r: n * r["chunks"]),
    "tokens": ("S_TOKEN", lambda n: {"chars": n, "chunking": {"unit": "tokens", "size": 5_000, "overlap": 0}},
               (50_000, 250_000), lambda n, r: n),
    "sentence": ("S_SENTENCE", lambda n: {"chars": n, "chunking": {"strategy": "llamaindex-sentence", "size": 1024,
                                                                   "overlap": 200}},
                 (50_000, 250_000), lambda n, r: n),
    "separators": ("S_SEPARATOR", lambda n: {"chars": n, "chunking": {"strategy": "langchain-recursive", "size": 4000,
                                                                      "overlap": 0}},
                   (500_000, 2_000_000), lambda n, r: n * 8),  # 4 separators, each with its width + 1
    # each overlap of a sweep (and each map cell) splits and lays out every document again
    "resplit": ("S_LAYOUT", lambda n: {"chars": 2_000_000, "chunking": window(400), "sweep": list(range(0, 10 * n, 10))},
                (1, 11), lambda n, r: n * r["units"]),
    "map": ("S_CELL", lambda n: {"chars": 1_000_000, "chunking": window(200), "questions": 5,
                                 "map": {"sizes": list(range(100, 100 + 20 * n, 20)), "overlaps": [0, 10]}},
            (1, 11), lambda n, r: 2 * n * r["units"]),
    "context": ("S_CONTEXT", lambda n: {"chars": 2_000_000, "k": n,
                                        "chunking": {"unit": "chars", "size": 2_000, "overlap": 1_900}},
                (10, 4_000), lambda n, r: n * 2_000),
}


def main() -> None:
    from ragsim.wire import cost

    only = sys.argv[1:] or list(KINDS)
    for kind, (name, spec, sizes, units) in KINDS.items():
        if kind not in only:
            continue
        (a, ra), (b, rb) = [(n, measure(spec(n))) for n in sizes]
        du = units(b, rb) - units(a, ra)
        per_s = (rb["seconds"] - ra["seconds"]) / du
        per_b = (rb["bytes"] - ra["bytes"]) / du
        print(f"{kind:<11} {name:<12} measured {per_s:.2e} s and {per_b:,.0f} B per unit; cost.py has "
              f"{getattr(cost, name):.2e} s   ({ra['seconds']:.2f} s -> {rb['seconds']:.2f} s)")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child(json.loads(sys.argv[2]))))
    else:
        main()
