"""`python -m ragsim eval FILE... --questions Q.csv|Q.json [--strategy S] [--unit U] [--size N]
[--overlap N] [--k N] [--map-sizes a,b,c --map-overlaps x,y] [--json]`.

Scores a question set (our JSON, or the CSV of Chroma's chunking_evaluation, whose corpus_id names
a file by its stem, name or path) over text files at one setting, and optionally over a map of
settings. Plain output is a table; --json prints the response (questions in input order).
Exit status 0, 2 for input that breaks the contract (one line naming the row or field), 1 for files
that cannot be read.
"""

import argparse
import pathlib
import time
import sys

from ragsim.host import cli_retrieval, console, pdf
from ragsim.wire import cost
from ragsim.wire.api import simulate
from ragsim.host.audit_cli import read_text_file
from ragsim.errors import RequestError
from ragsim.wire.question_io import read_set, to_request
from ragsim.fields import shown

PROG = "ragsim eval"


class _Refused(Exception):
    """Bad input, said in one line (exit 2)."""


def _numbers(text: str, option: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise _Refused(f"{option} takes whole numbers separated by commas (got {shown(text)}).") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ragsim eval", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="text or Markdown files, one document each; a .pdf as PyPDFLoader "
                        "reads it (ids path#page=N, or path with --pdf-mode single)")
    parser.add_argument("--pdf-mode", default="page", choices=pdf.MODES, help="PyPDFLoader's mode for PDFs")
    parser.add_argument("--questions", required=True, help="the question set: .json (ours) or .csv (Chroma's)")
    parser.add_argument("--strategy", default="window", help="splitter (default: window)")
    parser.add_argument("--unit", default=None, help="words or chars (window and sentences; default words)")
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--overlap", type=int, default=0)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--map-sizes", help="comma-separated sizes for the settings map, e.g. 100,200,400")
    parser.add_argument("--map-overlaps", help="comma-separated overlaps for the settings map, e.g. 0,50")
    parser.add_argument("--json", action="store_true", help="print the response as JSON")
    cli_retrieval.add_arguments(parser)
    return parser


def build_request(args, documents: list[dict], questions_text: str, questions_path: str) -> dict:
    """The simulate request of the command line's arguments (raises _Refused for bad input)."""
    fmt = {".json": "json", ".csv": "csv"}.get(pathlib.Path(questions_path).suffix.lower(), "auto")
    try:
        questions, _ = read_set(questions_text, documents, fmt, "strict")
    except RequestError as e:
        raise _Refused(f"{questions_path}: {e.message}") from None
    chunking = {"strategy": args.strategy, "size": args.size, "overlap": args.overlap}
    if args.unit is not None:
        chunking["unit"] = args.unit
    request = {"documents": documents, "query": "", "chunking": chunking, "retrieval": {"k": args.k, **cli_retrieval.retrieval_fields(args)},
               "questions": to_request(questions, documents), "wire": "columns"}
    if (args.map_sizes is None) != (args.map_overlaps is None):
        raise _Refused("Give --map-sizes and --map-overlaps together.")
    if args.map_sizes is not None:
        request["map"] = {"sizes": _numbers(args.map_sizes, "--map-sizes"),
                          "overlaps": _numbers(args.map_overlaps, "--map-overlaps")}
    return request


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def table(response: dict, args) -> str:
    """The per-question table, the summary and (when asked) the map, as fixed-width text."""
    st = response["question_stats"]
    lines = [f"{'question':<12} {'verdict':<10} {'needed_k':>8} {'recall':>7} {'precision':>9} {'iou':>6} "
             f"{'prec_omega':>10}  retrieved"]
    for q in response["questions"]:
        lines.append(f"{q['id'][:12]:<12} {q['verdict']:<10} {q['needed_k'] if q['needed_k'] is not None else '-':>8} "
                     f"{_f(q['recall']):>7} {_f(q['precision']):>9} {_f(q['iou']):>6} {_f(q['precision_omega']):>10}  "
                     f"{' '.join(map(str, q['retrieved']))}")
    lines.append("")
    lines.append(f"{st['count']} questions at {args.strategy} size {args.size} overlap {args.overlap}, k {args.k}: "
                 f"{st['intact']} intact, {st['ranked_out']} ranked out, {st['cut']} cut")
    lines.append(f"recall {_f(st['recall_mean'])} ± {_f(st['recall_std'])}, precision {_f(st['precision_mean'])} ± "
                 f"{_f(st['precision_std'])}, IoU {_f(st['iou_mean'])} ± {_f(st['iou_std'])}, precision Ω "
                 f"{_f(st['precision_omega_mean'])}; {st['context_tokens_mean']:.0f} tokens and "
                 f"${st['cost_mean']:.6f} per query")
    grid = response.get("map")
    if grid:
        lines += ["", "map: intact answers (mean tokens per query); '-' where size and overlap do not fit",
                  f"{'size':>8} | " + " | ".join(f"{'overlap ' + str(o):>16}" for o in grid["overlaps"])]
        for size, row in zip(grid["sizes"], grid["cells"]):
            cells = ["-" if c is None else f"{c['intact']} ({c['context_tokens_mean']:.0f} tok)" for c in row]
            lines.append(f"{size:>8} | " + " | ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


def main(argv) -> int:
    args = _parser().parse_args(argv)
    documents = []
    try:
        for path in args.files:
            if pdf.is_pdf(path):
                documents.extend(pdf.load(path, args.pdf_mode))
                continue
            documents.append({"id": path, "title": pathlib.Path(path).name, "text": read_text_file(path)})
        questions_text = read_text_file(args.questions)
    except (OSError, ValueError) as e:
        console.say(f"{PROG}: {e}")
        return 1
    try:
        request = build_request(args, documents, questions_text, args.questions)
    except _Refused as e:
        console.say(f"{PROG}: {e}")
        return 2
    estimate = cost.estimate(request, documents)
    show = estimate.seconds >= console.SHOW_AFTER
    if show:
        console.say(f"{PROG}: estimated {estimate.sentence()}")
    began = time.perf_counter()
    response = simulate(request, budget=cost.BATCH)  # issue 22: refused only what could not finish in memory
    if show and "error" not in response:
        console.say(f"{PROG}: done in {time.perf_counter() - began:.1f} s")
    if "error" in response:
        console.say(f"{PROG}: {response['error']['field']}: {response['error']['message']}")
        return 2
    response.pop("chunk_columns", None)  # the chunks themselves: ask `python -m ragsim` for them
    try:
        if args.json:
            console.out_json(response, indent=1)
        else:
            console.out(table(response, args))
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of ours
        sys.stderr.close()
    return 0
