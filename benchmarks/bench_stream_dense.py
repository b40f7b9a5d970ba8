"""Streamed dense eval: chunks embedded per second on 1 and 2 worker processes.

    .venv/bin/python benchmarks/bench_stream_dense.py [--copies 8] [--workers 1,2]

The corpus is the collection's documents copied `--copies` times into a temporary directory; the
question set is the streamed eval tests' own. Reports the rank pass's chunks per second (every chunk
embedded once there; the referenced documents' chunks are embedded once more before it) and the whole run's wall time per worker count."""

import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT / "tests" / "unit"), str(ROOT / "tests")]

import ragsim.host  # noqa: E402
from ragsim.host import eval_run, jsonl_out, pool, sources  # noqa: E402
from ragsim.host.progress import Progress  # noqa: E402
from test_stream_eval import question_set  # noqa: E402

ragsim.host.register()  # CPython's hosts, as `python -m ragsim eval` registers them

CHUNKING = {"strategy": "window", "unit": "words", "size": 100, "overlap": 20}


class Timed(Progress):
    """Progress that records when each pass starts."""

    def __init__(self):
        super().__init__(1, 1, quiet=True)
        self.marks = []

    def start(self, phase):
        self.marks.append((phase, time.perf_counter()))
        super().start(phase)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-dense-"))
    for c in range(args.copies):
        for p in sorted((ROOT / "assets" / "collection").glob("*.md")):
            shutil.copyfile(p, tmp / f"{c:03d}-{p.name}")
    files, _ = sources.walk([str(tmp)])
    questions = question_set()
    by_name = {p.name: str(p) for p in tmp.iterdir()}
    for q in questions["questions"]:
        q["references"] = [{**r, "doc": by_name["000-" + r["doc"]]} for r in q["references"]]
    try:
        for workers in [int(w) for w in args.workers.split(",")]:
            plan = eval_run.Plan(chunking=CHUNKING, retrieval={"k": 5, "method": "dense"},
                                 questions_text=json.dumps(questions), questions_name="q.json", files=files,
                                 batch_bytes=16 * 1024)
            path = tmp / f"out-{workers}.jsonl"
            out, progress = jsonl_out.Output(str(path)), Timed()
            began = time.perf_counter()
            try:
                got = eval_run.run(plan, pool.Local(workers), out, progress)
            finally:
                out.close()
            end = time.perf_counter()
            rank_start = dict(progress.marks)["rank"]
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            chunks = sum(d["chunks"] for d in lines if d["type"] == "document")
            print(json.dumps({"workers": workers, "documents": got["documents"], "chunks": chunks,
                              "wall_s": round(end - began, 2), "rank_pass_s": round(end - rank_start, 2),
                              "rank_chunks_per_s": round(chunks / (end - rank_start), 1)}), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
