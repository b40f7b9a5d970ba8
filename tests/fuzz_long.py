"""The long fuzz run: N seeded hostile requests (tests/fuzz_requests.py) through `simulate`,
the JSON boundary and `simulate_packed`, each within a time limit; prints the counts by kind and the
first few failures with their seeds (a failure is reproduced by `--seed S --count 1`).

Not collected by pytest (a script, like the benchmarks):

    python tests/fuzz_long.py [--count 50000] [--seed 0] [--limit 20] [--dense 0.15]

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

ragsim.host.register()  # CPython's hosts: rank files, the dense model


def campaign(count: int, seed: int, limit: float, dense: float = 0.15, report=print) -> collections.Counter:
    """Counts by kind: response, error, malformed, hang, and one per uncaught exception type."""
    counts: collections.Counter = collections.Counter()
    shown = 0
    fuzz_requests.warm()
    began = time.perf_counter()
    for i in range(seed, seed + count):
        request = fuzz_requests.make(random.Random(i), dense)
        try:
            kind = fuzz_requests.run(request, limit)
        except fuzz_requests.Malformed as e:
            kind, detail = "malformed", str(e)
        except fuzz_requests.Hang as e:
            kind, detail = "hang", str(e)
        except Exception as e:  # noqa: BLE001  (what the campaign is looking for)
            kind, detail = f"uncaught {type(e).__name__}", traceback.format_exc(limit=-3)
        counts[kind] += 1
        if kind not in ("response", "error") and shown < 10:
            shown += 1
            report(f"seed {i}: {kind}: {detail[:1500]}")
        if (i - seed + 1) % 5000 == 0:
            report(f"{i - seed + 1:,} requests in {time.perf_counter() - began:,.0f} s: {dict(counts)}")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=float, default=20.0, help="CPU seconds a request may take")
    parser.add_argument("--dense", type=float, default=0.15, help="the share of dense and hybrid requests")
    args = parser.parse_args()
    began = time.perf_counter()
    counts = campaign(args.count, args.seed, args.limit, args.dense)
    print(f"{args.count:,} requests (seeds {args.seed}..{args.seed + args.count - 1}) in "
          f"{time.perf_counter() - began:,.0f} s ({time.process_time():,.0f} s of CPU)")
    for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:<28} {n:>7,}")
    print(f"  the slowest request: {max(fuzz_requests.TIMES or [0]):.1f} s of CPU")
    bad = sum(n for kind, n in counts.items() if kind not in ("response", "error"))
    print(f"  uncaught, hangs and malformed: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
