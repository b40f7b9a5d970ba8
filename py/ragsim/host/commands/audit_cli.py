"""`python -m ragsim audit FILE|DIR... --unit chars --size 900 --overlaps 0,25,50,100,150,300 [--json]`.

Runs the corpus audit over text files and prints the table (or, with --json, the data), then the
corpus in the study's words. With BM25 (the default) or dense retrieval the files are streamed (issue
26, docs/cli.md "Whole knowledge bases": directories, --glob, --workers, --engine dask, --jsonl,
--resume), so a knowledge base of any size gives one request's numbers; hybrid runs as one request. A .pdf
is read as LangChain's PyPDFLoader reads it (ragsim.pdf; needs pypdf): a document per page, or one
for the file with --pdf-mode single.
Exit status 0, 2 for settings that break the contract (one line on stderr), 1 when no file can be
read as text (a file that cannot be, or is over 40 MB, is skipped and listed; with hybrid
retrieval it is refused, and so are more than 10 million characters in all: ragsim.limits); a file
is read no further than its limit, so /dev/zero is refused at once. Ctrl-C: 130, the output kept.
"""

import argparse
import pathlib
import sys
import textwrap
import time

from ragsim.host.commands.cli_common import DEFAULT_SIZE, DEFAULT_UNIT, Parser, add_chunking_arguments, chunking_for, picks_unit, \
    read_chunking
from ragsim.host.clients.files import read_text_file, unreadable
from ragsim.host.commands.console import marked_fact, printable
from ragsim.host.commands import cli_rerank, cli_retrieval, console, kb_cli
from ragsim.host.clients import pdf
from ragsim.host.clients.embed_onnx import MODEL_ID
from ragsim.wire import jsonio, keys
from ragsim import limits, split as splitters
from ragsim.wire import cost
from ragsim.wire.audit import DEFAULT_OVERLAPS, audit, corpus_sentence, estimate
from ragsim.errors import RequestError
from ragsim.rank.dense import read_options
from ragsim.text.index import DocIndex
from ragsim.split import registry
from ragsim.split.windows import UNITS
from ragsim.fields import shown


DESCRIPTION = ("Run the corpus audit over text files: every name-value fact the core detects, checked at each "
               "overlap (is it destroyed, is it found in the top k when its name is asked?).")


def check_settings(args) -> str | None:
    """What is wrong with the splitter settings, in one sentence, or None; checked before any file is
    read. Fills `args.chunking_object`: --chunking's object, or the one --strategy, --size and --unit make."""
    if args.top < 1:
        return f"--top must be at least 1 (got {args.top})."
    try:
        given = read_chunking(args)
    except ValueError as e:
        return str(e)
    if given is not None:
        named = [f"--{n}" for n in ("strategy", "size", "unit") if getattr(args, n) is not None]
        if named:
            return f"Give the whole setting in --chunking, or {', '.join(named)} without it, not both."
        args.chunking_object = given
    else:
        args.strategy, args.unit = args.strategy or "window", args.unit or DEFAULT_UNIT
        args.size = DEFAULT_SIZE if args.size is None else args.size
        if args.size < 1:
            return f"--size must be at least 1 (got {args.size})."
        if args.strategy not in splitters.STRATEGIES:
            return f"--strategy must be one of {splitters.listed()} (got {shown(args.strategy)})."
        if picks_unit(args.strategy) and args.unit not in UNITS:
            return f"--unit must be one of {', '.join(UNITS)} (got {shown(args.unit)})."
        args.chunking_object = _chunking(args)
    try:  # anything else the splitter itself refuses, on an empty text at overlap 0
        keys.check({"chunking": args.chunking_object}, keys.AUDIT_REQUEST)
        splitters.split(DocIndex.build(""), {**args.chunking_object, "overlap": 0})
    except RequestError as e:
        return f"{e.field}: {e.message}"
    return None


def _chunking(args) -> dict:
    chunking = chunking_for(args.strategy, args.size)
    chunking.pop("overlap", None)  # each row sets its own
    if picks_unit(args.strategy):
        chunking["unit"] = args.unit
    return chunking


def table(result: dict) -> str:
    """The audit as a fixed-width table, one row per overlap, and what its columns count."""
    k = result["precision_k"]
    head = ("overlap", "chunks", "stored", "facts", "destroyed", "destroyed<=overlap", f"found top {k}", f"dropped top {k}")
    lines = ["  ".join(f"{h:>{max(len(h), 8)}}" for h in head)]
    for row in result["rows"]:
        if row.get("error"):
            lines.append(f"{row['overlap']:>8}  skipped: {row['error']}")
            continue
        cells = (row["overlap"], row["chunks"], row["units_stored"], row["facts"], row["destroyed"],
                 row["destroyed_within_overlap"], row["found_top_k"], row["dropped_top_k"])
        lines.append("  ".join(f"{c:>{max(len(h), 8)}}" for c, h in zip(cells, head)))
    lines += ["", *textwrap.wrap(f"destroyed: no chunk holds the fact's name and value together; destroyed<=overlap: of those, "
                  f"the ones no longer than the overlap; found top {k}: asking the fact's name, a chunk holding "
                  f"the fact ranks in the top {k}; dropped top {k}: facts found in the top {k} at the first "
                  f"overlap that are still whole here but no longer ranked in the top {k}.", 100)]
    return "\n".join(lines)


LISTED = 50  # destroyed facts named in the text output; --json has them all


def destroyed_facts(result: dict) -> str:
    """Which facts are destroyed, and at which overlaps: one line a fact."""
    gone = [f for f in result["facts"] if f["destroyed_at"]]
    if not gone:
        return "No fact is destroyed at any of these overlaps."
    lines = [f"Destroyed facts ({len(gone)}): the name, the value, the document and the overlaps where no chunk holds both."]
    for f in gone[:LISTED]:
        at = ", ".join(map(str, f["destroyed_at"]))
        lines.append(f"  {_short(f['name_text'])} = {_short(f['value_text'])}  ({printable(f['doc'])}; overlap {at})")
        lines.append(f"    {marked_fact(f)}")
    if len(gone) > LISTED:
        lines.append(f"  and {len(gone) - LISTED} more (--json lists every fact).")
    return "\n".join(lines)


def every_fact(result: dict) -> str:
    """Every fact counted, with the sentence it came from and its name and value marked (`--facts`)."""
    if not result["facts"]:
        return "No facts of this shape found."
    lines = [f"Every fact counted ({len(result['facts']):,}): the name, the value and the sentence they came from."]
    for f in result["facts"]:
        lines.append(f"  {_short(f['name_text'])} = {_short(f['value_text'])}  ({printable(f['doc'])})")
        lines.append(f"    {marked_fact(f)}")
    return "\n".join(lines)


def _short(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return printable(repr(text if len(text) <= n else text[: n - 1] + "…"))


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def heading(documents: list, result: dict, args, chunking: dict) -> str:
    """The first line: how many documents and facts, at which setting."""
    sp = registry.of(chunking)
    if sp is not None and (sp.embeds or sp.field("size") is None):  # a semantic chunker: its library call
        setting = sp.describe(chunking)
    else:
        unit = f" {chunking['unit']}" if "unit" in chunking else ""
        setting = f"{chunking.get('strategy', 'window')}{unit} size {chunking.get('size', '-')}"
    method = getattr(args, "method", "bm25")
    ranked = {"bm25": "", "dense": f", each name ranked by dense ({MODEL_ID})",
              "hybrid": f", each name ranked by hybrid (BM25 and {MODEL_ID}, reciprocal rank fusion)"}.get(method, "")
    return f"{plural(len(documents), 'document')}, {plural(len(result['facts']), 'fact')}, {setting}{ranked}"


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m ragsim audit", description=DESCRIPTION)
    parser.add_argument("files", nargs="+", help="text or Markdown files, one document each, or directories (their "
                        "files, recursively; --glob to choose); PDFs as PyPDFLoader reads them")
    parser.add_argument("--strategy", default=None, help="splitter (default: window)")
    parser.add_argument("--unit", default=None, help=f"{', '.join(UNITS[:-1])} or {UNITS[-1]} (window and sentences; default chars)")
    parser.add_argument("--pdf-mode", default="page", choices=pdf.MODES, help="PyPDFLoader's mode: a document per page (default) or per file")
    parser.add_argument("--size", type=int, default=None, help="the chunk size (default 900)")
    add_chunking_arguments(parser)
    parser.add_argument("--overlaps", default=",".join(map(str, DEFAULT_OVERLAPS)),
                        help="comma-separated overlaps, e.g. 0,25,50")
    parser.add_argument("--top", type=int, default=3, help="the k of the precision check (default 3)")
    parser.add_argument("--json", action="store_true", help="print the data as JSON")
    parser.add_argument("--facts", action="store_true", help="list every fact counted with the sentence it came from, "
                        "its name and value marked, to check the pairs")
    cli_retrieval.add_arguments(parser)
    cli_rerank.add_arguments(parser)
    kb_cli.add_arguments(parser)
    return parser


def main(argv) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    problem = cli_retrieval.endpoint_problem(args) or check_settings(args)
    if problem:
        console.say(f"ragsim audit: {problem}")
        return 2
    try:
        overlaps = [int(o) for o in args.overlaps.split(",") if o.strip()]
    except ValueError:
        console.say(f"ragsim audit: --overlaps takes whole numbers separated by commas (got {shown(args.overlaps)}).")
        return 2
    if args.method == "hybrid":  # every chunk's ranks at once: one request
        if args.jsonl:  # a file asked for and never written would be lost output
            console.say(f"ragsim audit: {kb_cli.NO_JSONL}")
            return 2
        return _one_request(args, overlaps)
    try:  # the retriever's fields, as one request reads them, before any file is read
        read_options(cli_retrieval.retrieval_fields(args))
    except RequestError as e:
        console.say(f"ragsim audit: {e.field}: {e.message}")
        return 2
    sp = registry.of(args.chunking_object)
    if sp is not None and sp.embeds:  # a semantic chunker has no overlap: one row, as one request gives
        overlaps = overlaps[:1]
    code, result = kb_cli.run_audit(args, args.chunking_object, overlaps)
    if result is not None:
        show_streamed(args, result)
    return code


def show_streamed(args, result: dict) -> None:
    """A streamed audit's summary: the table, the corpus sentence, the destroyed facts listed."""
    if args.json:
        console.out_json({k: result[k] for k in ("facts", "rows", "precision_k", "overlaps", "sentence", "skipped",
                                                 "rerank") if k in result}, indent=1)
        return
    count = result["facts"] if isinstance(result["facts"], int) else len(result["facts"])
    console.out(heading([None] * result["documents"], {"facts": [None] * count}, args, args.chunking_object))
    console.out(table(result))
    console.out("")
    console.out(result["sentence"] + ".")
    console.out("")
    if result.get("rerank"):
        console.out(cli_rerank.summary(result) + ".")
        console.out("")
    if args.facts and result.get("facts") is not None:
        console.out(every_fact(result))
        console.out("")
    listed = result.get("destroyed_listed")
    if listed is None:  # a finished run resumed: its fact lines hold the facts
        return
    console.out(destroyed_facts({"facts": listed}).replace(f"({len(listed)})", f"({result['destroyed_facts']:,})", 1))
    if result["destroyed_facts"] > len(listed) and len(listed) == LISTED:
        console.out(f"  and {result['destroyed_facts'] - LISTED:,} more (the fact lines of --jsonl list every fact).")


def _one_request(args, overlaps) -> int:
    """Hybrid: the audit as one request (the core's limits), the model's cosines in memory."""
    documents, total = [], 0
    for path in args.files:
        try:
            docs = (pdf.load(path, args.pdf_mode, limits.MAX_FILE_BYTES) if pdf.is_pdf(path)
                    else [{"id": path, "title": pathlib.Path(path).name, "text": read_text_file(path)}])
        except (OSError, ValueError) as e:
            console.say(f"ragsim audit: {unreadable(e)}.")
            return 1
        total += sum(len(d["text"]) for d in docs)
        if total > limits.MAX_CHARS:
            console.say(f"ragsim audit: the files hold more than {limits.MAX_CHARS:,} characters together, the most "
                        "one audit takes; audit fewer files at a time.")
            return 1
        documents.extend(docs)
    chunking = args.chunking_object
    request = {"documents": documents, "chunking": chunking, "overlaps": overlaps, "precision_k": args.top,
               "retrieval": cli_retrieval.retrieval_fields(args)}
    cost_of = estimate(request, documents)
    show = cost_of.seconds >= console.SHOW_AFTER
    if show:
        console.say(f"ragsim audit: estimated {cost_of.sentence()}")

    def progress(done: int, total: int, row: dict) -> None:
        console.say(f"ragsim audit: overlap {row['overlap']} done ({done} of {total}, {time.perf_counter() - began:.1f} s)")

    began = time.perf_counter()
    result = audit(request, budget=cost.BATCH, progress=progress if show else None)
    if "error" in result:
        console.say(f"ragsim audit: {result['error']['field']}: {result['error']['message']}")
        return 2
    if all(row.get("error") for row in result["rows"]):  # nothing audited: say why, as a refusal
        console.say(f"ragsim audit: every overlap was refused; the first: {result['rows'][0]['error']}")
        return 2
    if args.json:
        console.out_json(result, indent=1)
    else:
        console.out(heading(documents, result, args, chunking))
        console.out(table(result))
        console.out("")
        console.out(corpus_sentence(result["rows"], len(result["facts"]), len(documents), None, None) + ".")
        console.out("")
        if result.get("rerank"):
            console.out(cli_rerank.summary(result) + ".")
            console.out("")
        if args.facts:
            console.out(every_fact(result))
            console.out("")
        console.out(destroyed_facts(result))
    return 0
