"""The long fuzz run: N seeded hostile inputs, each within a time limit; prints the counts by kind and
the first few failures with their seeds (a failure is reproduced by `--surface S --seed N --count 1`).

`--surface requests` (the default): requests (tests/fuzz_requests.py) through `simulate`, the JSON
boundary and `simulate_packed`. `--surface files`: the surfaces around the core (tests/fuzz_surfaces.py:
chunk files, docstores, Parquet, state files, --chunking objects, question files, model replies and
embedding vectors) in turn, input N going to surface N mod 8 with seed N, and every 100th input a run
of `python -m ragsim` itself; or one of those surfaces by name (`chunks`, ..., `cli`).

Not collected by pytest (a script, like the benchmarks):

    python tests/fuzz_long.py [--surface requests] [--count 50000] [--seed 0] [--limit S] [--dense 0.15]

Exit status 0 when there were no uncaught exceptions, hangs or malformed answers, else 1.
"""

import argparse
import collections
import pathlib
import random
import sys
import time
import traceback

TESTS = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS.parent / "py"), str(TESTS)]

import ragsim.host  # noqa: E402
import fuzz_requests  # noqa: E402
import fuzz_surfaces  # noqa: E402

ragsim.host.register()  # CPython's hosts: rank files, the dense model


def surface_of(surface: str, i: int) -> str:
    """The surface input `i` goes to: `files` takes each in turn, and the command line every 100th."""
    if surface != "files":
        return surface
    return "cli" if i % 100 == 99 else fuzz_surfaces.IN_PROCESS[i % len(fuzz_surfaces.IN_PROCESS)]


def one(surface: str, i: int, limit: float | None, dense: float) -> str:
    if surface == "requests":
        return fuzz_requests.run(fuzz_requests.make(random.Random(i), dense), limit or 20.0)
    return fuzz_surfaces.run(surface, i, limit or fuzz_surfaces.LIMIT)


def campaign(count: int, seed: int, limit: float | None, dense: float = 0.15, report=print,
             surface: str = "requests") -> collections.Counter:
    """Counts by kind: response, error, malformed, hang, and one per uncaught exception type (by
    surface, where there are several)."""
    counts: collections.Counter = collections.Counter()
    shown = 0
    if surface == "requests":
        fuzz_requests.warm()
    began = time.perf_counter()
    for i in range(seed, seed + count):
        where = surface_of(surface, i)
        try:
            kind = one(where, i, limit, dense)
        except fuzz_requests.Malformed as e:
            kind, detail = "malformed", str(e)
        except fuzz_requests.Hang as e:
            kind, detail = "hang", str(e)
        except Exception as e:  # noqa: BLE001  (what the campaign is looking for)
            kind, detail = f"uncaught {type(e).__name__}", traceback.format_exc(limit=-3)
        counts[kind if surface in ("requests", where) else f"{where} {kind}"] += 1
        if kind not in ("response", "error") and shown < 10:
            shown += 1
            report(f"--surface {where} --seed {i}: {kind}: {detail[:1500]}")
        if (i - seed + 1) % 5000 == 0:
            report(f"{i - seed + 1:,} inputs in {time.perf_counter() - began:,.0f} s: {dict(counts)}")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surface", default="requests", choices=["requests", "files", *fuzz_surfaces.SURFACES])
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=float, default=None,
                        help="CPU seconds an input may take (20 for requests, 60 for the files' surfaces)")
    parser.add_argument("--dense", type=float, default=0.15, help="the share of dense and hybrid requests")
    args = parser.parse_args()
    began = time.perf_counter()
    counts = campaign(args.count, args.seed, args.limit, args.dense, surface=args.surface)
    print(f"{args.count:,} inputs of {args.surface} (seeds {args.seed}..{args.seed + args.count - 1}) in "
          f"{time.perf_counter() - began:,.0f} s ({time.process_time():,.0f} s of CPU in this process)")
    for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:<28} {n:>7,}")
    if args.surface == "requests":
        print(f"  the slowest request: {max(fuzz_requests.TIMES or [0]):.1f} s of CPU")
    bad = sum(n for kind, n in counts.items() if kind.rsplit(" ", 1)[-1] not in ("response", "error"))
    print(f"  uncaught, hangs and malformed: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
