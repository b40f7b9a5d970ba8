"""Whole knowledge bases: the streamed audit's throughput on 1 and 2 workers, a Dask
LocalCluster beside the process pool, peak memory, against the brute-force way (each document its
own `audit_json` request, nothing streamed).

The corpus is real text made on the fly: the docstrings and comments of the standard library's and
site-packages' .py files, permuted (a fixed seed) into documents of a few KB to a few hundred KB,
written to a temporary directory (`--size-mb`, default 1024).

    .venv/bin/python benchmarks/bench_scale.py --size-mb 20
"""

import argparse
import ast
import json
import os
import pathlib
import random
import re
import resource
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))
COMMENT = re.compile(r"^[ \t]*#[ \t]?(.{20,})$", re.M)
AUDIT = ["--size", "900", "--unit", "chars", "--overlaps", "0,25,50,100,150,300"]


def paragraphs(limit_bytes: int) -> list[str]:
    """Docstrings and comment blocks of the installed Python files, as paragraphs of text (kept in
    the temporary directory between runs: parsing them is most of a small run's time)."""
    kept = pathlib.Path(tempfile.gettempdir()) / f"ragsim-bench-paragraphs-{limit_bytes}.json"
    if kept.exists():
        return json.loads(kept.read_text(encoding="utf-8"))
    out = _harvest(limit_bytes)
    kept.write_text(json.dumps(out), encoding="utf-8")
    return out


def _harvest(limit_bytes: int) -> list[str]:
    out, size = [], 0
    roots = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]}
    for root in sorted(roots):
        for path in sorted(pathlib.Path(root).rglob("*.py")):
            try:
                source = path.read_text(encoding="utf-8")
                tree = ast.parse(source)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc and len(doc) > 40:
                        out.append(doc)
                        size += len(doc)
            comments = " ".join(m.group(1) for m in COMMENT.finditer(source))
            if len(comments) > 40:
                out.append(comments)
                size += len(comments)
            if size >= limit_bytes:
                return out
    return out


def make_corpus(directory: pathlib.Path, size_mb: int, seed: int = 26) -> tuple[int, int]:
    """Documents of 4 KB to 300 KB (log-uniform) of permuted paragraphs until `size_mb` MB are written."""
    rng = random.Random(seed)
    pool = paragraphs(8 * 2**20)  # 8 MB of distinct text, permuted into documents of any size
    target, written, n = size_mb * 2**20, 0, 0
    while written < target:
        want = int(4096 * (300 / 4) ** rng.random())
        parts, got = [], 0
        while got < want:
            p = pool[rng.randrange(len(pool))]
            parts.append(p)
            got += len(p) + 2
        text = "\n\n".join(parts)
        sub = directory / f"{n // 1000:03d}"
        sub.mkdir(exist_ok=True)
        data = text.encode("utf-8")
        (sub / f"doc{n:06d}.txt").write_bytes(data)
        written += len(data)
        n += 1
    return n, written


class PeakRSS:
    """The peak of the summed resident memory of a process tree and of the children of `extra`
    (the Dask cluster's nannies and workers, children of this benchmark), polled every 0.1 s."""

    def __init__(self, pid: int, extra=()):
        import psutil

        self.psutil, self.roots, self.peak, self.stop, self.tid = psutil, [pid, *extra], 0, False, None
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()

    def poll(self):
        self.tid = threading.get_native_id()  # its own CPU is not the cluster's
        while not self.stop:
            seen = {}
            for i, pid in enumerate(self.roots):
                try:
                    p = self.psutil.Process(pid)
                    procs = p.children(recursive=True) if i else [p, *p.children(recursive=True)]
                except self.psutil.Error:
                    continue
                for q in procs:  # each process once (the command is the bench's child too)
                    try:
                        seen.setdefault(q.pid, q.memory_info().rss)
                    except self.psutil.Error:
                        pass
            self.peak = max(self.peak, sum(seen.values()))
            time.sleep(0.1)

    def done(self) -> int:
        self.stop = True
        self.thread.join()
        return self.peak


def cpu_seconds(cluster_pids=()) -> float:
    """CPU time so far of this process's finished children (a run and the pool it waited for) and
    of the processes under `cluster_pids` (the Dask cluster's, alive across runs)."""
    import psutil

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = used.ru_utime + used.ru_stime
    for pid in cluster_pids:
        for q in psutil.Process(pid).children(recursive=True):
            try:
                t = q.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
    return total


def thread_cpu(pids) -> dict:
    """CPU seconds so far of each thread of each process under `pids` (the Dask cluster's workers)
    and of this process (the scheduler and the nannies), by (pid, thread id)."""
    import psutil

    procs = [psutil.Process()] + [q for pid in pids for q in psutil.Process(pid).children(recursive=True)]
    out = {}
    for q in procs:
        try:
            out.update({(q.pid, t.id): t.user_time + t.system_time for t in q.threads()})
        except psutil.Error:
            pass
    return out


def where_dask_time_goes(before, after, meter_tid) -> str:
    """The cluster's CPU in the run: each worker's busiest thread (its batches), its other threads
    (the event loop, the profiler), and this process's threads (the scheduler and the nannies)."""
    me, per = os.getpid(), {}
    for (pid, tid), t in after.items():
        if (pid, tid) == (me, meter_tid):
            continue
        per.setdefault(pid, []).append(t - before.get((pid, tid), 0))
    scheduler = sum(per.pop(me, []))
    workers = [sorted(ts, reverse=True) for ts in per.values() if sum(ts) > 1]
    return (f"batches' threads {sum(ts[0] for ts in workers):.1f} s, workers' other threads "
            f"{sum(sum(ts[1:]) for ts in workers):.1f} s, scheduler and nannies {scheduler:.1f} s")


def run_cli(directory, out, extra, cluster_pids=()):
    """(wall seconds, CPU seconds, peak RSS, summary) of one streamed audit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "py")}
    threads = thread_cpu(cluster_pids) if cluster_pids else None
    cpu = cpu_seconds(cluster_pids)
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ragsim", "audit", str(directory), *AUDIT, "--quiet",
                             "--jsonl", str(out), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    meter = PeakRSS(proc.pid, cluster_pids)
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - began
    peak = meter.done()
    if proc.returncode != 0:
        raise SystemExit(f"audit {' '.join(extra)} failed ({proc.returncode}): {stderr}")
    cpu = cpu_seconds(cluster_pids) - cpu
    if threads is not None:
        print(f"  Dask's CPU: {where_dask_time_goes(threads, thread_cpu(cluster_pids), meter.tid)}; the client and "
              "the rest in the table's CPU s", flush=True)
    summary = json.loads(pathlib.Path(out).read_text(encoding="utf-8").splitlines()[-1])
    return seconds, cpu, peak, summary


def brute_force(directory, seconds_cap: float) -> tuple[float, float, int]:
    """Each document its own request (`audit_json`), nothing streamed: MB/s over as many as fit in
    the cap, by the clock and per CPU second."""
    from ragsim.wire.audit import audit_json

    files = sorted(p for p in pathlib.Path(directory).rglob("*.txt"))
    began, cpu, done = time.perf_counter(), time.process_time(), 0
    for p in files:
        text = p.read_text(encoding="utf-8")
        request = {"documents": [{"id": str(p), "text": text}], "chunking": {"unit": "chars", "size": 900},
                   "overlaps": [0, 25, 50, 100, 150, 300], "precision_k": 3}
        audit_json(json.dumps(request))
        done += len(text.encode("utf-8"))
        if time.perf_counter() - began > seconds_cap:
            break
    return done / 1e6 / (time.perf_counter() - began), done / 1e6 / (time.process_time() - cpu), done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--brute-seconds", type=float, default=60, help="how long the brute-force way runs")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--runs", default="1,2,dask",
                        help="which streamed runs: 1 and 2 (pool workers), dask (default: all three); a 1 GB "
                             "corpus at 1 worker takes over an hour here")
    args = parser.parse_args()
    runs = set(args.runs.split(",")) - ({"dask"} if args.no_dask else set())
    with tempfile.TemporaryDirectory(prefix="ragsim-kb-") as tmp:
        corpus = pathlib.Path(tmp) / "kb"
        corpus.mkdir()
        t = time.perf_counter()
        n, size = make_corpus(corpus, args.size_mb)
        mb = size / 1e6
        print(f"corpus: {n:,} documents, {mb:,.1f} MB, made in {time.perf_counter() - t:.1f} s", flush=True)
        rows = {}
        for workers in (w for w in (1, 2) if str(w) in runs):
            name = f"pool, {workers} worker{'s' if workers > 1 else ''}"
            rows[name] = run_cli(corpus, pathlib.Path(tmp) / f"w{workers}.jsonl", ["--workers", str(workers)])
            print(f"  {name}: {mb / rows[name][0]:.3g} MB/s, {mb / rows[name][1]:.3g} MB per CPU second", flush=True)
        if "dask" in runs:
            from dask.distributed import LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                              silence_logs=40) as cluster:
                rows["dask LocalCluster, 2 workers"] = run_cli(
                    corpus, pathlib.Path(tmp) / "dask.jsonl", ["--engine", "dask", "--scheduler", cluster.scheduler_address],
                    [os.getpid()])
        brute_rate, brute_cpu, brute_bytes = brute_force(corpus, args.brute_seconds)
    load = os.getloadavg()[0]
    print(f"\n{'run':<32} {'seconds':>9} {'MB/s':>7} {'CPU s':>7} {'MB/CPU s':>9} {'peak RSS MB':>12}")
    for name, (seconds, cpu, peak, _) in rows.items():
        print(f"{name:<32} {seconds:>9.1f} {mb / seconds:>7.3g} {cpu:>7.1f} {mb / cpu:>9.3g} {peak / 2**20:>12.0f}")
    print(f"{'brute force, one request a doc':<32} {'':>9} {brute_rate:>7.3g} {'':>7} {brute_cpu:>9.3g} {'':>12}  "
          f"({brute_bytes / 1e6:.1f} MB in {args.brute_seconds:.0f} s)")
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} cores (MB/CPU s is the fairer figure when shared)")
    one, two = rows.get("pool, 1 worker", [None])[0], rows.get("pool, 2 workers", [None])[0]
    if one and two:
        print(f"\nscaling 1 -> 2 workers: {one / two:.2f}x")
    if "dask LocalCluster, 2 workers" in rows and two:
        print(f"dask / pool (2 workers), time: {rows['dask LocalCluster, 2 workers'][0] / two:.2f}")
    same = len({json.dumps(r[3]['rows']) for r in rows.values()}) == 1
    print(f"every run's table the same: {same}")
    for r in list(rows.values())[:1]:
        print(f"\n{r[3]['sentence']}.")
        print(json.dumps(r[3]["rows"], indent=1))


if __name__ == "__main__":
    main()
