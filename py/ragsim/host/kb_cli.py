"""The options every whole-corpus command shares (issue 26): directories and `--glob`, where the
work runs (`--workers`, `--engine dask --scheduler`), what it writes (`--jsonl`/`-o`, `--resume`)
and what it says while it runs (`--quiet`); and `audit`'s run over them (`host.audit_run`)."""

import argparse

from ragsim.errors import RequestError
from ragsim.host import audit_run, console, jsonl_out, pool, sources
from ragsim.host.progress import Progress
from ragsim.wire.audit import read_overlaps

PROG = "ragsim audit"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--glob", default=None, help="in directories, only the files whose name (or path below "
                        "the directory) matches this pattern, e.g. '*.md'")
    parser.add_argument("--workers", type=int, default=None, help="processes to run on (default: every core)")
    parser.add_argument("--engine", default="local", choices=("local", "dask"),
                        help="local (a process pool, the default) or dask (an existing dask.distributed cluster)")
    parser.add_argument("--scheduler", default=None, help="with --engine dask, the scheduler's address, e.g. "
                        "tcp://127.0.0.1:8786")
    parser.add_argument("--jsonl", "-o", dest="jsonl", default=None, metavar="OUT.jsonl",
                        help="write the results as JSON Lines: a line per document, per fact, then the summary")
    parser.add_argument("--resume", action="store_true", help="go on from where an interrupted run's --jsonl "
                        "output stops (the documents it holds are not judged again)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--batch-kb", type=int, default=audit_run.BATCH_BYTES // 1024,
                        help=argparse.SUPPRESS)  # the size of a batch of files (tests make it small)


def say_skipped(skipped: list) -> None:
    """Each file skipped, with why, on stderr (one line each, at most 20; then how many more)."""
    for path, reason in skipped[:20]:
        console.say(f"{PROG}: skipped {path}: {reason}.")
    if len(skipped) > 20:
        console.say(f"{PROG}: and {len(skipped) - 20:,} more files skipped (the summary line lists them all).")


def _plan(args, chunking, overlaps) -> audit_run.Plan:
    from ragsim.host import cli_retrieval

    files, skipped = sources.walk(args.files, args.glob)
    try:
        overlaps = read_overlaps({"overlaps": overlaps})
    except RequestError as e:
        raise ValueError(f"--overlaps: {e.message}") from None
    if args.resume and not args.jsonl:
        raise ValueError("--resume goes on from an output file: give it with --jsonl OUT.jsonl.")
    if args.batch_kb < 1:
        raise ValueError(f"--batch-kb must be at least 1 (got {args.batch_kb}).")
    return audit_run.Plan(chunking=chunking, overlaps=overlaps, retrieval=cli_retrieval.retrieval_fields(args),
                          k=args.top, files=files, pdf_mode=args.pdf_mode, batch_bytes=args.batch_kb * 1024,
                          skipped=skipped)


def run_audit(args, chunking: dict, overlaps: list) -> tuple[int, dict | None]:
    """The streamed audit: (exit status, its summary with the facts when --json asks for them)."""
    try:
        plan = _plan(args, chunking, overlaps)
        engine = pool.engine(args.engine, args.workers, args.scheduler)
    except (ValueError, pool.EngineError) as e:
        console.say(f"{PROG}: {str(e).rstrip('.')}.")
        return 2, None
    if not plan.files:
        say_skipped(plan.skipped)
        console.say(f"{PROG}: no file to read; give text or Markdown files or directories holding them.")
        return 1, None
    out = jsonl_out.Output(args.jsonl)
    progress = Progress(sum(s.size for s in plan.files), len(plan.files), quiet=args.quiet)
    facts = [] if args.json else None
    try:
        summary = audit_run.run(plan, engine, out, progress, resume=args.resume,
                                on_fact=facts.append if facts is not None else None)
    except audit_run.Interrupted as e:
        progress.end()
        console.say(f"{PROG}: {e}.")
        return 130, None
    except (jsonl_out.ResumeError, pool.EngineError) as e:
        progress.end()
        console.say(f"{PROG}: {str(e).rstrip('.')}.")
        return 2, None
    finally:
        out.close()
        if isinstance(engine, pool.Dask):
            engine.close()
    progress.end()
    return _status(plan, summary, facts)


def _status(plan, summary, facts) -> tuple[int, dict | None]:
    say_skipped(plan.skipped)
    if summary.get("failed"):
        console.say(f"{PROG}: {len(summary['failed']):,} files were not judged (a worker died on their batch twice); "
                    "the numbers leave their facts out.")
    if summary["documents"] == 0:
        first = plan.skipped[0] if plan.skipped else ("the files", "no text")
        console.say(f"{PROG}: no document could be read ({first[0]}: {first[1]}); give text files.")
        return 1, None
    if all(row.get("error") for row in summary["rows"]):
        console.say(f"{PROG}: every overlap was refused; the first: {summary['rows'][0]['error']}")
        return 2, None
    if facts is not None:
        summary = {**summary, "facts": facts}
    return 0, summary


