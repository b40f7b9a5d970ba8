"""`python -m ragsim inspect STORE [--collection C] [--text-field F] [--doc-field F] [--source FILE...]
[--phrase TEXT]... [--questions Q] [--method bm25|dense|hybrid] [--k N] [--json]` and
`python -m ragsim export STORE -o chunks.jsonl`.

Reads the chunks a real pipeline stored (STORE: chroma:DIR, qdrant:DIR, lancedb:DIR, llamaindex:DIR,
faiss:DIR, milvus:PATH.db, a postgresql:// connection string, chroma+http://HOST:PORT or a chunk file), places them in their source documents (given with --source, loaded as `eval` loads
them; else rebuilt from the chunks) and reports SPEC section 11's checks (`ragsim.wire.inspect`):
which splitter made them, the chunk sizes and overlaps, each phrase present or absent with the
boundaries that cut it, the facts this index destroyed, and a question set's verdicts and metrics.
For a Chroma collection with Chroma's default embedding function, `--method dense` also ranks by the
collection's own query, side by side. `export` writes the aligned chunks, one JSON object a line.
With a gate (--fail-on cut,ranked_out,absent, --min-recall X: ragsim.host.commands.gate, docs/ci.md) a summary
and the gate's verdict follow on stderr. Exit status 0; 1 when the gate failed; 2 for bad input (one
line); progress on stderr when it is a terminal or with --progress, none with --quiet. A store read a
page at a time is checked on every core (--workers N), or on a Dask cluster (--engine dask --scheduler
ADDRESS), as audit and eval run; with --jsonl an interrupted run goes on with --resume.
"""

import argparse
import contextlib
import os
import sys

from ragsim.errors import RequestError
from ragsim.host.commands import cli_rerank, cli_retrieval, console, gate, kb_cli
from ragsim.host.jobs.audit_run import Interrupted
from ragsim.host.corpus import sources as kb_sources
from ragsim.host.corpus.refused import Refused
from ragsim.host.clients import pdf, stored_vectors, stores
from ragsim.host.commands.cli_common import (
    Parser, add_chunking_arguments, read_chunking, read_documents)
from ragsim.host.clients.files import read_text_file, unreadable
from ragsim.wire import inspect as inspection
from ragsim.wire.jsonio import dumps

METHODS = ("bm25", "dense", "hybrid")
RESUME_NEEDS = "--resume goes on from an output file: give it with --jsonl OUT.jsonl."
RESUME_STREAMED = ("--resume goes on from a store checked a document at a time; a question set, --method hybrid "
                   "and --one-request read it as one request, which writes no --jsonl lines: leave --resume out.")


def _store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("store", help="chroma:DIR, qdrant:DIR, lancedb:DIR, llamaindex:DIR, faiss:DIR (LangChain's "
                        "FAISS.save_local), milvus:PATH.db (Milvus Lite), postgresql://USER@HOST:PORT/DB "
                        "(pgvector), chroma+http://HOST:PORT (a Chroma server), or a .jsonl, .json, .csv or "
                        ".parquet file of chunks")
    parser.add_argument("--collection", help="the Chroma, Qdrant or Milvus collection, LanceDB table, FAISS "
                        "index_name, or pgvector collection or table")
    parser.add_argument("--text-field", help="the field holding the chunk text")
    parser.add_argument("--doc-field", help="the metadata key naming each chunk's document")
    parser.add_argument("--source", nargs="+", action="extend", default=[], metavar="FILE",
                        help="the source documents (text, Markdown or PDF, as eval reads them), or directories "
                        "holding them (read recursively)")
    parser.add_argument("--glob", default=None, help="in --source directories, only the files matching this, e.g. '*.md'")
    parser.add_argument("--pdf-mode", default="page", choices=pdf.MODES, help="PyPDFLoader's mode for PDFs")
    parser.add_argument("--progress", action="store_true", help="show progress on stderr even when it is no terminal")
    parser.add_argument("--quiet", action="store_true", help=kb_cli.QUIET)


def inspect_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m ragsim inspect", description="Your own index: its chunks placed in their "
                    "documents, the splitter that made them, each phrase present or cut, the facts it destroyed, "
                    "and a question set's verdicts over those chunks.")
    _store_arguments(parser)
    parser.add_argument("--phrase", action="append", default=[], help="a phrase to look for whole (repeatable)")
    parser.add_argument("--questions", help="a question set: .json (ours) or .csv (Chroma's chunking_evaluation), or "
                        "questions with their answers as text (RAGAS, LlamaIndex's dataset files, question,answer)")
    parser.add_argument("--every-occurrence", action="store_true", help="an answer given as text that occurs several "
                        "times counts at every occurrence (without this, give a hint or it is refused)")
    parser.add_argument("--method", default="bm25", choices=METHODS, help="the retriever (default bm25)")
    cli_retrieval.add_endpoint_arguments(parser)
    cli_rerank.add_arguments(parser)
    parser.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
    parser.add_argument("--tokenizer", default=None, help="count tokens with this tiktoken encoding (cl100k_base)")
    add_chunking_arguments(parser)  # a splitter to compare the stored chunks with (any, semantic ones too)
    parser.add_argument("--json", action="store_true", help="print SPEC section 11's object as JSON")
    parser.add_argument("--jsonl", "-o", dest="jsonl", metavar="OUT.jsonl", help="also write a line per document as "
                        "it is checked, then the summary (the object without its chunks)")
    parser.add_argument("--resume", action="store_true", help="go on from where an interrupted run's --jsonl output "
                        "stops (the documents it holds are not checked again)")
    parser.add_argument("--force", action="store_true", help="replace the --jsonl file when it exists already "
                        "(without it, an existing file is never overwritten)")
    kb_cli.add_engine_arguments(parser)  # the documents of a store read in pages, placed and checked there
    parser.add_argument("--one-request", action="store_true", help="read the whole store into one request, as "
                        "--questions and --method hybrid do (within the limits of one request)")
    gate.add_arguments(parser)
    return parser


def read_gate(args) -> gate.Gate:
    """The CI gate of --fail-on and --min-*; Refused when it has nothing to judge (a gate that checks
    nothing would pass a CI job silently)."""
    try:
        rules = gate.read(args)
    except ValueError as e:
        raise Refused(str(e)) from None
    if rules.needs_questions and not args.questions:
        asked = ", ".join([f"--fail-on {k}" for k in rules.fail_on if gate.KINDS[k] == "question"] +
                          [f"--min-{m}" for m, _ in rules.minimums])
        raise Refused(f"{asked} judges a question set: give it with --questions FILE.")
    if "absent" in rules.fail_on and not (args.phrase or args.questions):
        raise Refused("--fail-on absent judges phrases: give them with --phrase TEXT, or a question set with --questions.")
    return rules


def export_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m ragsim export",
                                     description="Write a store's chunks, placed in their documents, as JSON Lines.")
    _store_arguments(parser)
    parser.add_argument("-o", "--output", required=True, help="the .jsonl file to write (- for standard output)")
    parser.add_argument("--force", action="store_true", help="replace the -o file when it exists already "
                        "(without it, an existing file is never overwritten)")
    return parser


def _shows_progress(args) -> bool:
    return not getattr(args, "quiet", False) and (args.progress or sys.stderr.isatty())


def _progress(args):
    if not _shows_progress(args):
        return None

    def show(done, total):
        sys.stderr.write(f"\rread {done:,} of {total:,} chunks")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def read(args) -> tuple[dict, list[dict]]:
    """The store's chunks and the source documents (Refused or RequestError for bad input)."""
    store = stores.read_store(args.store, collection=args.collection, text_field=args.text_field,
                              doc_field=args.doc_field, progress=_progress(args))
    found, missing = kb_sources.walk(args.source, args.glob)
    if missing:
        raise Refused(f"--source {missing[0][0]} cannot be read: it {missing[0][1]}; give the source documents' paths.")
    try:
        sources = read_documents(argparse.Namespace(files=[s.path for s in found], pdf_mode=args.pdf_mode))
    except OSError as e:
        raise Refused(f"{e.filename} cannot be read ({e.strerror}): give the source documents' paths.") from None
    except ValueError as e:
        raise Refused(str(e).rstrip(".") + ".") from None
    return store, sources


def _request(args, store: dict, sources: list[dict]) -> dict:
    request = {"chunks": store["chunks"], "phrases": args.phrase,
               "retrieval": {"k": args.k, **({} if args.method == "bm25" else {"method": args.method}),
                             **cli_rerank.fields(args)}}
    if sources:
        request["documents"] = sources
    if args.tokenizer:
        request["tokenizer"] = args.tokenizer
    try:
        chunking = read_chunking(args)
    except ValueError as e:
        raise Refused(str(e)) from None
    if chunking is not None:
        request["chunking"] = chunking
    if args.questions:
        try:
            request["question_file"] = {"name": args.questions, "text": read_text_file(args.questions),
                                        "every_occurrence": args.every_occurrence}
        except (OSError, ValueError) as e:
            raise Refused(f"{unreadable(e)}.") from None
    return request


def own_query(args, store: dict, result: dict, questions: list[dict]) -> dict | None:
    """The collection's own `query` (Chroma, all-MiniLM-L6-v2), for --method dense: per question its
    top-k ids and their verdict; None where it does not apply."""
    if args.method != "dense" or store["store"]["kind"] != "chroma" or not questions:
        return None
    queries = [q["query"] for q in questions]
    try:
        rankings = stores.chroma_query(args.store, store["store"]["collection"], queries, args.k)
    except RequestError as e:  # another embedding function, or the model cannot run: said, not fatal
        return {"note": e.message}
    by_id = {q["id"]: ids for q, ids in zip(questions, rankings)}
    verdicts = inspection.ranking_verdicts(result, by_id)
    return {qid: {"retrieved_ids": ids, "verdict": verdicts[qid]} for qid, ids in by_id.items()}


def streams(args) -> bool:
    """Whether inspect reads the store a page and a document at a time (`inspect_stream`; the facts
    ranked by BM25 or by cosine over every placed chunk, `inspect_facts`; a splitter to compare with
    run on each document in turn; a reranker's reorders each fact's first chunks after): unless a
    question set or a hybrid ranking of the facts (they rank over every document at once) or
    --one-request asks for one request."""
    return not (args.questions or args.one_request or args.method == "hybrid")


def _streamed(args) -> dict:
    from ragsim.host.jobs import inspect_stream
    from ragsim.host.corpus import jsonl_out, pool

    try:
        engine = pool.engine(args.engine, args.workers, args.scheduler)
    except Refused as e:  # said as audit and eval say it
        raise Refused(f"{str(e).rstrip('.')}.") from None
    out = jsonl_out.Output(args.jsonl) if args.jsonl else None
    show = _shows_progress(args)

    def document(entry, chunks, n, total):
        if show:
            sys.stderr.write(f"\rchecked {n:,} of {total:,} documents" + ("\n" if n == total else ""))
            sys.stderr.flush()

    try:
        try:
            chunking = read_chunking(args)
        except ValueError as e:  # both options, a file that cannot be read, not JSON: one sentence
            raise RequestError("chunking", str(e)) from None
        return inspect_stream.run(args, chunking, _progress(args), document, engine, out,
                                  cli_rerank.fields(args).get("rerank"))
    except Refused as e:
        raise Refused(f"{str(e).rstrip('.')}.") from None
    finally:
        if out is not None:
            out.close()
        if isinstance(engine, pool.Dask):
            engine.close()


def unreachable(e: OSError, outputs) -> Refused:
    """An OSError as one sentence: a file of `outputs` (or one the error does not name: a write)
    cannot be written and was left as it was, any other cannot be read."""
    reason = e.strerror or str(e)
    files = [o for o in outputs if o and o != "-"]
    if e.filename is None or any(e.filename in (o, f"{o}.part", f"{o}.resume") for o in files):
        if not files:
            return Refused(f"The output cannot be written ({reason}).")
        return Refused(f"{files[0]} cannot be written ({reason}); it was left as it was.")
    return Refused(f"{unreadable(e)}; check its permissions, or give a copy you can read.")


def _resumable(args) -> bool | None:
    """--resume for the output check: None (its refusal as before inspect had --resume) unless asked,
    or an interrupted run's checkpoint is there to be gone on with rather than started over."""
    if args.resume or (args.jsonl and os.path.exists(f"{args.jsonl}.resume")):
        return bool(args.resume)
    return None


def refuse_existing(path, force: bool, resume: bool | None = None) -> None:
    """Refused when `path` exists and neither --force says to replace it nor --resume (`resume` None:
    the command has none) to go on from it."""
    from ragsim.host.corpus.jsonl_out import refuse_existing as check

    try:
        check(path, force, resume)
    except ValueError as e:
        raise Refused(f"{e}.") from None


def run_inspect(argv) -> int:
    args = inspect_parser().parse_args(argv)
    if cli_retrieval.refused_endpoint(args, "ragsim inspect"):
        return 2
    try:
        rules = read_gate(args)
        refuse_existing(args.jsonl, args.force, _resumable(args))
        if args.k < 1:
            raise Refused(f"--k must be at least 1 (got {args.k}).")
        if args.resume and not (args.jsonl and streams(args)):
            raise Refused(RESUME_NEEDS if not args.jsonl else RESUME_STREAMED)
        if streams(args):
            result = _streamed(args)
            return _print(result, args) or gate.finish(rules, "ragsim inspect", result)
        store, sources = read(args)
        request = _request(args, store, sources)
        result = stored_vectors.inspected(args, store, request)  # over the index's own vectors where it keeps them
        if "error" in result:
            raise RequestError(result["error"]["field"], result["error"]["message"])
        result = {"store": store["store"], **result}
        chroma = own_query(args, store, result, result["questions"] or [])
        if chroma is not None and "note" in chroma:
            result["chroma_query_note"] = chroma["note"]
        elif chroma is not None:
            result["chroma_query"] = chroma
    except (Refused, RequestError) as e:
        return refuse("inspect", e)
    except OSError as e:
        return refuse("inspect", unreachable(e, [args.jsonl]))
    except Interrupted as e:
        console.say(f"ragsim inspect: {e}.")
        return 130
    return _print(result, args) or gate.finish(rules, "ragsim inspect", result)


def _print(result: dict, args) -> int:
    from ragsim.host.commands import inspect_report

    try:
        if args.json:
            console.out_json(result, indent=1)
        else:  # a lone surrogate in a name or an id written as its backslash escape
            console.out(inspect_report.report(result, args))
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of ours
        sys.stderr.close()
    return 0


def run_export(argv) -> int:
    from ragsim.host.corpus.jsonl_out import replaced

    args = export_parser().parse_args(argv)
    try:
        refuse_existing(args.output, args.force)
        store, sources = read(args)
        request = {"chunks": store["chunks"], **({"documents": sources} if sources else {})}
        records = inspection.export_records(request)
        with (contextlib.nullcontext(sys.stdout) if args.output == "-" else replaced(args.output)) as out:
            for r in records:
                out.write(console.json_safe(dumps(r)) + "\n")
    except (Refused, RequestError) as e:
        return refuse("export", e)
    except OSError as e:
        return refuse("export", unreachable(e, [args.output]))
    placed = sum(r["start"] is not None for r in records)
    console.say(f"wrote {len(records):,} chunks ({placed:,} placed) to {args.output}")
    return 0


def refuse(command: str, e) -> int:
    message = e.message if isinstance(e, RequestError) else str(e)
    console.say(f"ragsim {command}: {message}")
    return 2

