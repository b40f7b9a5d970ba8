"""The options every whole-corpus command shares: directories and `--glob`, where the
work runs (`--workers`, `--engine dask --scheduler`), what it writes (`--jsonl`/`-o`, `--resume`)
and what it says while it runs (`--quiet`); and `audit`'s run over them (`host.jobs.audit_run`)."""

import argparse
import os

from ragsim.errors import RequestError
from ragsim.host.commands import console
from ragsim.host.jobs import audit_run
from ragsim.host.corpus import jsonl_out, pool, sources
from ragsim.host.corpus.progress import Progress
from ragsim.host.corpus.refused import Refused
from ragsim.host.clients.embed_endpoint import EndpointError
from ragsim.host.clients.files import read_text_file, unreadable
from ragsim.wire.audit import read_overlaps

PROG = "ragsim audit"


def _go(prog, args, plan, job):
    """`job(engine, out, progress)` on the engine the options name, its output and progress set up:
    (exit status, its result or None); Ctrl-C, an engine that cannot run, an output that cannot be
    resumed each said in one sentence."""
    try:
        engine = pool.engine(args.engine, args.workers, args.scheduler)
    except Refused as e:
        console.say(f"{prog}: {str(e).rstrip('.')}.")
        return 2, None
    out = jsonl_out.Output(args.jsonl)
    progress = Progress(sum(s.size for s in plan.files), len(plan.files), quiet=args.quiet)
    try:
        return 0, job(engine, out, progress)
    except audit_run.Interrupted as e:
        progress.end()
        console.say(f"{prog}: {e}." if args.jsonl else f"{prog}: interrupted; nothing was kept (give --jsonl OUT.jsonl "
                    "to keep a run's output and go on from it with --resume).")
        return 130, None
    except KeyboardInterrupt:  # before any document was written: nothing to resume
        progress.end()
        console.say(f"{prog}: interrupted before any document was ranked; run the same command again.")
        return 130, None
    except Refused as e:
        progress.end()
        console.say(f"{prog}: {str(e).rstrip('.')}.")
        return 2, None
    except EndpointError as e:  # the user's embedding endpoint failed a batch: every batch would
        progress.end()
        console.say(f"{prog}: {e.message}")
        return 2, None
    except OSError as e:  # the output could not be written (a full disk, a file size limit)
        progress.end()
        reason = e.strerror or str(e)
        if e.filename not in (None, out.work, out.mark, out.mark + ".tmp"):
            console.say(f"{prog}: {e.filename}: {reason}.")
        elif out.temporary:
            console.say(f"{prog}: the run's temporary file {out.path} cannot be written ({reason}); free some space "
                        "there, or give --jsonl OUT.jsonl on another disk.")
        else:
            console.say(f"{prog}: {out.path} cannot be written ({reason}); it was left as it was.")
        return 1, None
    finally:
        progress.end()
        out.close()
        if isinstance(engine, pool.Dask):
            engine.close()


def check_output(args) -> None:
    """An existing output is replaced only when asked (`--force`) or gone on with (`--resume`); else
    ValueError with one sentence, before anything is read or written."""
    jsonl_out.refuse_existing(getattr(args, "jsonl", None), getattr(args, "force", False), bool(args.resume))


# What a run that is one request (hybrid retrieval, a page state file) says to --jsonl, which it cannot write.
NO_JSONL = ("this run is one request (hybrid retrieval needs every chunk's two ranks at once; a state file is one "
            "page's request), so it writes no --jsonl file; leave --jsonl out and send --json to a file instead.")


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a run's work goes, alike in every command that runs on an engine (audit, eval, inspect)."""
    parser.add_argument("--workers", type=int, default=None, help="Processes to run on (default: every core).")
    parser.add_argument("--engine", default="local", choices=("local", "dask"),
                        help="Local (a process pool, the default) or dask (an existing dask.distributed cluster).")
    parser.add_argument("--scheduler", default=None, help="With --engine dask, the scheduler's address, e.g. "
                        "tcp://127.0.0.1:8786.")


QUIET = "No progress on stderr."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--glob", default=None, help="In directories, only the files whose name (or path below "
                        "the directory) matches this pattern, e.g. '*.md'.")
    add_engine_arguments(parser)
    parser.add_argument("--jsonl", "-o", dest="jsonl", default=None, metavar="OUT.jsonl",
                        help="Write the results as JSON Lines: a line per document, then per fact or question, "
                        "then the summary.")
    parser.add_argument("--resume", action="store_true", help="Go on from where an interrupted run's --jsonl "
                        "output stops (the documents it holds are not ranked again).")
    parser.add_argument("--force", action="store_true", help="Replace the --jsonl file when it exists already "
                        "(without it, an existing file is never overwritten).")
    parser.add_argument("--quiet", action="store_true", help=QUIET)
    parser.add_argument("--batch-kb", type=int, default=audit_run.BATCH_BYTES // 1024,
                        help=f"About how many KB of files a batch holds (default {audit_run.BATCH_BYTES // 1024}).")


def say_skipped(skipped: list, prog: str = PROG) -> None:
    """Each file skipped, with why, on stderr (one line each, at most 20; then how many more)."""
    for path, reason in skipped[:20]:
        console.say(f"{prog}: skipped {path}: {reason}.")
    if len(skipped) > 20:
        console.say(f"{prog}: and {len(skipped) - 20:,} more files skipped (the summary line lists them all).")


def _plan(args, chunking, overlaps) -> audit_run.Plan:
    from ragsim.host.commands import cli_retrieval

    files, skipped = sources.walk(args.files, args.glob)
    missing_named(skipped)
    try:
        overlaps = read_overlaps({"overlaps": overlaps})
    except RequestError as e:
        raise ValueError(f"--overlaps: {e.message}") from None
    if args.resume and not args.jsonl:
        raise ValueError("--resume goes on from an output file: give it with --jsonl OUT.jsonl.")
    check_output(args)
    if args.batch_kb < 1:
        raise ValueError(f"--batch-kb must be at least 1 (got {args.batch_kb}).")
    return audit_run.Plan(chunking=chunking, overlaps=overlaps, retrieval=cli_retrieval.retrieval_fields(args),
                          k=args.top, files=files, pdf_mode=args.pdf_mode, batch_bytes=args.batch_kb * 1024,
                          skipped=skipped)


def run_audit(args, chunking: dict, overlaps: list) -> tuple[int, dict | None]:
    """The streamed audit: (exit status, its summary with the facts when --json asks for them)."""
    try:
        plan = _plan(args, chunking, overlaps)
    except ValueError as e:
        console.say(f"{PROG}: {str(e).rstrip('.')}.")
        return 2, None
    if not plan.files:
        return nothing_read(plan.skipped), None
    facts = [] if args.json or getattr(args, "facts", False) else None

    def job(engine, out, progress):
        return audit_run.run(plan, engine, out, progress, resume=args.resume,
                             on_fact=facts.append if facts is not None else None)

    code, summary = _go(PROG, args, plan, job)
    if summary is None:
        return code, None
    return _status(plan, summary, facts)


def run_eval(args, chunking: dict, table, grid=None, finish=None) -> int:
    """The streamed question set over files and directories, and over the map's settings when `grid`
    (sizes, overlaps) asks: the table (or --json), exit status (`finish(result)`'s once it is shown:
    a CI gate's, `host.commands.gate`)."""
    from ragsim.host.commands import cli_retrieval
    from ragsim.host.jobs import eval_run

    prog = "ragsim eval"
    files, skipped = sources.walk(args.files, args.glob)
    try:
        if args.questions is None:
            raise ValueError("give the question set with --questions FILE (.json or .csv)")
        if args.resume and not args.jsonl:
            raise ValueError("--resume goes on from an output file: give it with --jsonl OUT.jsonl")
        check_output(args)
        missing_named(skipped)
        text = read_text_file(args.questions)
    except (OSError, ValueError) as e:
        console.say(f"{prog}: {unreadable(e)}.")
        return 2 if isinstance(e, ValueError) and args.questions is None else 1
    retrieval = {"k": args.k if args.k is not None else 5, **cli_retrieval.retrieval_fields(args)}
    problem = eval_run.check_setting(chunking, retrieval)
    if problem:
        console.say(f"{prog}: {problem}")
        return 2
    plan = eval_run.Plan(chunking=chunking, retrieval=retrieval, questions_text=text, questions_name=args.questions,
                         every_occurrence=args.every_occurrence,
                         files=files, pdf_mode=args.pdf_mode, batch_bytes=args.batch_kb * 1024, skipped=skipped)
    if not files:
        return nothing_read(skipped, prog)
    asker = _asker(args, prog)
    if asker is False:
        return 2

    def job(engine, out, progress):
        result = eval_run.run(plan, engine, out, progress, resume=args.resume)
        if grid is not None:  # each cell a streamed run of its own
            def say(message):
                progress.end()
                console.say(f"{prog}: {message}")

            result["map"] = eval_run.map_cells(plan, engine, progress, *grid, known=result,
                                               say=say if progress.on else None)
        return result

    try:
        code, result = _go(prog, args, plan, job)
    except eval_run.NothingRead:
        return nothing_read(plan.skipped, prog)
    except RequestError as e:  # the question set names no document, or misplaces a reference
        console.say(f"{prog}: {args.questions}: {e.message}")
        return 2
    except ValueError as e:
        console.say(f"{prog}: {str(e).rstrip('.')}.")
        return 2
    say_skipped(plan.skipped, prog)
    if result is None:
        return code
    code = _show_eval(args, result, asker, table, {"chunking": chunking, "retrieval": retrieval})
    return code or (finish(result) if finish is not None else 0)


def _show_eval(args, result: dict, asker, table, request: dict) -> int:
    """The streamed run's answer: the table or --json, and with --ask each question asked."""
    from ragsim.host.jobs import eval_run

    shown = {k: result[k] for k in ("questions", "question_stats", "map", "skipped", "rerank") if k in result}
    if asker is not None:  # each question's context read from its chunks' files, then the model asked
        from ragsim.host.commands import ask_cli

        return ask_cli.ask_each(asker, eval_run.contexts(result, request["chunking"]), shown,
                                None if args.json else table(result, request))
    if args.json:
        console.out_json(shown, indent=1)
    elif "questions" in result:
        console.out(table(result, request))
    return 0


def _asker(args, prog: str):
    """With --ask, the model to ask each question, checked before the corpus is read (False, said in
    one sentence, when it cannot be asked); None without --ask."""
    if not getattr(args, "ask", False):
        return None
    from ragsim.host.commands import ask_cli

    if not (args.endpoint and args.model):
        console.say(f"{prog}: --ask needs --endpoint URL and --model NAME (the model to ask each question).")
        return False
    try:
        return ask_cli.Asker(args)
    except ask_cli.AskError as e:
        console.say(f"{prog}: {e}")
        return False


def missing_named(skipped: list) -> None:
    """A file named on the command line that does not exist is a mistake to say, not a file to skip
    (a batch job would pass with the typo listed); ValueError with one sentence."""
    gone = [path for path, reason in skipped if reason == "does not exist"]
    if gone:
        raise ValueError(f"{gone[0]} does not exist{f' (nor {len(gone) - 1} more)' if len(gone) > 1 else ''}; "
                         "check the name: no file was read")


def nothing_read(skipped: list, prog: str = PROG) -> int:
    """No file gave a document: why, in one sentence for one file (else each listed first); exit 1."""
    if len(skipped) == 1:
        path, reason = skipped[0]
        named = path in reason or os.path.basename(path) in reason  # the reason names the file already
        console.say(f"{prog}: {reason.rstrip('.') if named else f'{path}: ' + reason.rstrip('.')}.")
        return 1
    say_skipped(skipped, prog)
    console.say(f"{prog}: no document could be read; give text or Markdown files, or directories holding them.")
    return 1


def _status(plan, summary, facts) -> tuple[int, dict | None]:
    if summary["documents"] == 0:
        return nothing_read(plan.skipped), None
    say_skipped(plan.skipped)
    if summary.get("failed"):
        console.say(f"{PROG}: {len(summary['failed']):,} files were not judged (a worker died on their batch twice); "
                    "the numbers leave their facts out.")
    if all(row.get("error") for row in summary["rows"]):
        console.say(f"{PROG}: every overlap was refused; the first: {summary['rows'][0]['error']}")
        return 2, None
    if facts is not None:
        summary = {**summary, "facts": facts}
    return 0, summary


