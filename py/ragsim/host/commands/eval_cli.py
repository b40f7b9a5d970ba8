"""`python -m ragsim eval FILE... --questions Q.csv|Q.json [--strategy S] [--unit U] [--size N]
[--overlap N] [--k N] [--map-sizes a,b,c --map-overlaps x,y] [--json]`.

Scores a question set (our JSON, or the CSV of Chroma's chunking_evaluation, whose corpus_id names
a file by its stem, name or path) over text files at one setting, and optionally over a map of
settings. The page's "Download state" file may stand for the files: its documents, its settings and
its question set are used as they are (an option given here overrides its setting). Plain output is
a table, the questions numbered 1, 2, 3 as the page numbers them; --json prints the response
(questions in input order). With --ask, each question's own context is also sent to a model
(ragsim.host.commands.ask_cli, the `ask` command's way). With a gate (--fail-on cut,ranked_out, --min-recall X:
ragsim.host.commands.gate, docs/ci.md) a summary and the gate's verdict follow on stderr. Exit status 0, 2 for
input that breaks the contract (one line naming the question or field), 1 for files that cannot be
read or a gate that failed.
"""

import argparse
import json
import pathlib
import time
import sys

from ragsim.host.commands import ask_cli, cli_rerank, cli_retrieval, console, gate, kb_cli
from ragsim.host.clients import pdf
from ragsim.host.commands.cli_common import DEFAULT_SIZE, DEFAULT_UNIT, Parser, add_chunking_arguments, chunking_for, picks_unit, \
    read_chunking
from ragsim.host.clients.files import read_text_file, unreadable
from ragsim.host.corpus.refused import Refused
from ragsim.split import registry
from ragsim.wire import cost, state_file
from ragsim.wire.api import estimate as api_estimate, simulate
from ragsim.errors import RequestError
from ragsim.wire.question_io import format_of, read_set, to_request
from ragsim.fields import shown
from ragsim.judge.settings_map import read_map

PROG = "ragsim eval"
DESCRIPTION = ("Score a question set over text files at one setting (and, with --map-sizes and --map-overlaps, "
               "over a map of settings): each question's verdict, recall, precision and IoU, and their means.")
DEFAULTS = {"strategy": "window", "size": DEFAULT_SIZE, "overlap": 0, "k": 5}  # without a state file: audit's
EVAL_KINDS = ("cut", "ranked_out")  # what --fail-on judges here: the questions' verdicts (no phrases)


def _number(x: str):
    try:
        return int(x)
    except ValueError:
        return float(x)  # a semantic chunker's threshold axis takes real numbers (the core checks)


def _numbers(text: str, option: str) -> list:
    try:
        return [_number(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise Refused(f"{option} takes whole numbers (a semantic chunker's threshold: any numbers) separated by "
                       f"commas (got {shown(text)}).") from None


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m ragsim eval", description=DESCRIPTION)
    parser.add_argument("files", nargs="+", help="Text or Markdown files, one document each; a .pdf is read as "
                        "PyPDFLoader reads it (ids path#page=N, or path with --pdf-mode single). Or the page's "
                        "state file (ragsim-state.json), alone: its documents, settings and questions.")
    parser.add_argument("--pdf-mode", default="page", choices=pdf.MODES, help="PyPDFLoader's mode for PDFs: a "
                        "document per page (the default) or one per file.")
    parser.add_argument("--questions", help="The question set: .json (ours) or .csv (Chroma's), or questions with "
                        "their answers as text (RAGAS .json/.jsonl/.csv, LlamaIndex's dataset files, a CSV of "
                        "question,answer). Needed unless the state file holds questions.")
    parser.add_argument("--every-occurrence", action="store_true", help="An answer given as text that occurs several "
                        "times counts at every occurrence (without this, give a hint or it is refused).")
    parser.add_argument("--strategy", help="The splitter (default: window).")
    parser.add_argument("--unit", help="The unit of window and sentences: words, chars or tokens (default chars, "
                        "as audit).")
    parser.add_argument("--size", type=int, help="The chunk size, in the splitter's unit (default 900, as audit).")
    parser.add_argument("--overlap", type=int, help="The overlap, in the splitter's unit (default 0).")
    add_chunking_arguments(parser)
    parser.add_argument("--k", type=int, help="How many chunks are retrieved per question (default 5).")
    parser.add_argument("--map-sizes", help="Comma-separated sizes for the settings map, e.g. 100,200,400 (the "
                        "splitter's first grid field: a semantic chunker's threshold, Chroma's size).")
    parser.add_argument("--map-overlaps", help="Comma-separated overlaps for the settings map, e.g. 0,50 (the second "
                        "grid field: LangChain SemanticChunker's min_chunk_size; 0 where there is none).")
    parser.add_argument("--json", action="store_true", help="Print the response as JSON instead of the table.")
    cli_retrieval.add_arguments(parser)
    cli_rerank.add_arguments(parser)
    kb_cli.add_arguments(parser)
    parser.add_argument("--ask", action="store_true", help="Also ask a model every question, with the context it "
                        "retrieves (needs --endpoint and --model).")
    ask_cli.add_model_arguments(parser, required=False)
    gate.add_arguments(parser)
    return parser


def build_request(args, documents: list[dict], questions_text: str | None, questions_path: str | None,
                  base: dict | None = None) -> dict:
    """The simulate request of the command line's arguments over `base` (a state file's request, or
    None); raises Refused for bad input."""
    base = base or {}
    if questions_text is not None:
        try:
            questions, _ = read_set(questions_text, documents, format_of(questions_path), "strict",
                                    getattr(args, "every_occurrence", False))
        except RequestError as e:
            raise Refused(f"{questions_path}: {e.message}") from None
        asked = to_request(questions, documents)
    elif base.get("questions"):
        asked = base["questions"]
    else:
        raise Refused("Give the question set with --questions FILE (.json or .csv).")
    chunking = _chunking(args, base.get("chunking"))
    retrieval = {**(base.get("retrieval") or {"k": DEFAULTS["k"]}), **cli_retrieval.retrieval_fields(args)}
    if args.k is not None:
        retrieval["k"] = args.k
    retrieval.pop("similarities", None)
    request = {"documents": documents, "query": "", "chunking": chunking, "retrieval": retrieval,
               "questions": asked, "wire": "columns"}
    for field in ("price_per_million", "tokenizer"):
        if field in base:
            request[field] = base[field]
    if (args.map_sizes is None) != (args.map_overlaps is None):
        raise Refused("Give --map-sizes and --map-overlaps together.")
    if args.map_sizes is not None:
        request["map"] = {"sizes": _numbers(args.map_sizes, "--map-sizes"),
                          "overlaps": _numbers(args.map_overlaps, "--map-overlaps")}
    return request


def _chunking(args, base: dict | None) -> dict:
    """--chunking (or --chunking-file), else the state's chunking, with the options given on top; a
    different --strategy starts afresh."""
    try:
        given = read_chunking(args)
    except ValueError as e:
        raise Refused(str(e)) from None
    if given is not None:
        if args.strategy is not None and args.strategy != given.get("strategy", "window"):
            raise Refused(f"--strategy {args.strategy} differs from the strategy of --chunking; give one of them.")
        base = given
    elif base is None or (args.strategy is not None and args.strategy != base.get("strategy", "window")):
        base = chunking_for(args.strategy or DEFAULTS["strategy"], DEFAULTS["size"], DEFAULTS["overlap"])
        if picks_unit(base["strategy"]):
            base["unit"] = DEFAULT_UNIT
    chunking = dict(base)
    for name in ("size", "overlap", "unit"):
        if getattr(args, name) is not None:
            chunking[name] = getattr(args, name)
    return chunking


def setting_words(c: dict) -> str:
    """`window size 900 chars overlap 0`, or a splitter without a size by its library call."""
    sp = registry.of(c)
    if sp is not None and (sp.embeds or sp.field("size") is None):
        return sp.describe(c)
    unit = f" {c['unit']}" if "unit" in c else ""
    return f"{c.get('strategy', 'window')} size {c.get('size', '-')}{unit} overlap {c.get('overlap', 0)}"


QUESTION_WIDTH = 40  # characters of each question the table shows ("…" where it goes on)


def _clip(text: str, width: int) -> str:
    """Text as one line of a table column: white space and control characters made printable, cut to
    `width` with "…" where it goes on."""
    text = console.printable(str(text)).strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def table(response: dict, request: dict) -> str:
    """The per-question table, the summary and (when asked) the map, as fixed-width text."""
    st = response["question_stats"]
    if "questions" in request:
        asked = {q["id"]: q.get("query", "") for q in request["questions"]}
    else:  # a streamed run's questions, in order (`eval_run` keeps each one's query in `asked`)
        asked = {q["id"]: query for q, (query, _) in zip(response["questions"], response.get("asked", []))}
    lines = [f"{'id':<8} {'question':<{QUESTION_WIDTH}} {'verdict':<10} {'needed_k':>8} {'recall':>7} {'precision':>9} "
             f"{'iou':>6} {'prec_omega':>10}  retrieved"]
    for q in response["questions"]:
        lines.append(f"{_clip(q['id'], 8):<8} {_clip(asked.get(q['id'], ''), QUESTION_WIDTH):<{QUESTION_WIDTH}} "
                     f"{q['verdict']:<10} {q['needed_k'] if q['needed_k'] is not None else '-':>8} "
                     f"{_f(q['recall']):>7} {_f(q['precision']):>9} {_f(q['iou']):>6} {_f(q['precision_omega']):>10}  "
                     f"{' '.join(map(str, q['retrieved']))}")
    lines.append("")
    setting = setting_words(request["chunking"])
    lines.append(f"{st['count']} questions at {setting}, k {request['retrieval']['k']}: "
                 f"{st['intact']} intact, {st['ranked_out']} ranked out, {st['cut']} cut")
    lines.append(f"recall {_f(st['recall_mean'])} ± {_f(st['recall_std'])}, precision {_f(st['precision_mean'])} ± "
                 f"{_f(st['precision_std'])}, IoU {_f(st['iou_mean'])} ± {_f(st['iou_std'])}, precision Ω "
                 f"{_f(st['precision_omega_mean'])}; {st['context_tokens_mean']:.0f} tokens and "
                 f"${st['cost_mean']:.6f} per query")
    reranked = cli_rerank.summary(response)
    if reranked:
        lines.append(reranked)
    grid = response.get("map")
    if grid:
        axes = registry.grid_fields(request["chunking"]) or ("size", "overlap")
        if axes == ("size", "overlap"):
            lines += ["", "map: intact answers (mean tokens per query); '-' where size and overlap do not fit",
                      f"{'size':>8} | " + " | ".join(f"{'overlap ' + str(o):>16}" for o in grid["overlaps"])]
        else:  # a semantic chunker's own axes (one or two)
            columns = f", columns {axes[1]}" if len(axes) > 1 else ""
            lines += ["", f"map: intact answers (mean tokens per query); rows {axes[0]}{columns}; '-' where refused",
                      f"{'':>8} | " + " | ".join(f"{o if len(axes) > 1 else '':>16}" for o in grid["overlaps"])]
        for size, row in zip(grid["sizes"], grid["cells"]):
            cells = ["-" if c is None else f"{c['intact']} ({c['context_tokens_mean']:.0f} tok)" for c in row]
            lines.append(f"{size:>8} | " + " | ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


def read_documents(args) -> tuple[list[dict], dict | None]:
    """The files as documents, and the request of a state file among them (None without one)."""
    documents, base = [], None
    for path in args.files:
        if pdf.is_pdf(path):
            documents.extend(pdf.load(path, args.pdf_mode))
            continue
        text = read_text_file(path)
        state = _state(text)
        if state is not None:
            if len(args.files) > 1:
                raise Refused(f"{path} is the page's state file, which holds its own documents; give it alone.")
            try:
                base = state_file.to_request(state)
            except RequestError as e:
                raise Refused(f"{path}: {e.message}") from None
            return base["documents"], base
        documents.append({"id": path, "title": pathlib.Path(path).name, "text": text})
    return documents, base


def _state(text: str):
    if not text.lstrip("\ufeff \t\r\n").startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj if state_file.is_state(obj) else None


def streams(args) -> bool:
    """Whether the run streams the files: BM25 or dense over files and directories (dense:
    the chunks embedded on the workers), at one setting or over a map of them (each cell a streamed
    run), with a model to ask or not; a state file or a hybrid retriever (its fused ranks need every
    chunk's two ranks) make it one request, as before."""
    return args.method in ("bm25", "dense") and not any(str(f).lower().endswith(".json") for f in args.files)


def map_grid(args, chunking: dict):
    """The map's (sizes, overlaps) from --map-sizes and --map-overlaps, read as one request reads its
    `map` (the splitter's own axes), or None without them."""
    if (args.map_sizes is None) != (args.map_overlaps is None):
        raise Refused("Give --map-sizes and --map-overlaps together.")
    if args.map_sizes is None:
        return None
    asked = {"map": {"sizes": _numbers(args.map_sizes, "--map-sizes"), "overlaps": _numbers(args.map_overlaps, "--map-overlaps")}}
    try:
        return read_map(asked, chunking)
    except RequestError as e:
        raise Refused(f"{e.field}: {e.message}") from None


def _streamed(args, rules: gate.Gate) -> int:
    """The files streamed (`kb_cli.run_eval`), the gate judged on the result."""
    try:
        chunking = _chunking(args, None)
        grid = map_grid(args, chunking)
    except Refused as e:
        console.say(f"{PROG}: {e}")
        return 2

    def finish(result):  # the streamed run keeps each question's query in `asked`, in order
        queries = {q["id"]: query for q, (query, _) in zip(result["questions"], result.get("asked", []))}
        return gate.finish(rules, PROG, result, queries)

    return kb_cli.run_eval(args, chunking, table, grid, finish)


def main(argv) -> int:
    args = _parser().parse_args(argv)
    if cli_retrieval.refused_endpoint(args, PROG):
        return 2
    try:
        rules = gate.read(args, EVAL_KINDS)
    except ValueError as e:
        console.say(f"{PROG}: {e}")
        return 2
    if streams(args):
        return _streamed(args, rules)
    if args.jsonl:  # a file asked for and never written would be lost output
        console.say(f"{PROG}: {kb_cli.NO_JSONL}")
        return 2
    try:
        documents, base = read_documents(args)
        questions_text = read_text_file(args.questions) if args.questions is not None else None
    except (OSError, ValueError) as e:
        console.say(f"{PROG}: {unreadable(e)}.")
        return 1
    except Refused as e:
        console.say(f"{PROG}: {e}")
        return 2
    try:
        if args.ask and not (args.endpoint and args.model):
            raise Refused("--ask needs --endpoint URL and --model NAME (the model to ask each question).")
        request = build_request(args, documents, questions_text, args.questions, base)
    except Refused as e:
        console.say(f"{PROG}: {e}")
        return 2
    try:
        estimate = api_estimate(request)
    except RequestError:  # simulate, below, says what is wrong
        estimate = None
    show = estimate is not None and estimate.seconds >= console.SHOW_AFTER
    if show:
        console.say(f"{PROG}: estimated {estimate.sentence()}")
    began = time.perf_counter()
    response = simulate(request, budget=cost.BATCH)  # refused only what could not finish in memory
    if show and "error" not in response:
        console.say(f"{PROG}: done in {time.perf_counter() - began:.1f} s")
    if "error" in response:
        console.say(f"{PROG}: {response['error']['field']}: {response['error']['message']}")
        return 2
    response.pop("chunk_columns", None)  # the chunks themselves: ask `python -m ragsim` for them
    queries = {q["id"]: q.get("query") for q in request["questions"]}
    if args.ask:
        code = ask_cli.ask_set(args, request, response, None if args.json else table(response, request))
        return code or gate.finish(rules, PROG, response, queries)
    try:
        if args.json:
            console.out_json(response, indent=1)
        else:
            console.out(table(response, request))
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of ours
        sys.stderr.close()
        return 0
    return gate.finish(rules, PROG, response, queries)
