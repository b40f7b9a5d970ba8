"""What the commands share: the documents (each file read as `clients.files` reads one) and the one
setting (splitter, size, overlap, k, retriever) that `eval` and `ask` take alike."""

import argparse
import json
import pathlib

from ragsim.fields import shown
from ragsim.host.clients import pdf
from ragsim.host.clients.files import read_text_file
from ragsim.host.commands import cli_rerank, cli_retrieval
from ragsim.split import registry

CHUNKING_EXAMPLE = '{"strategy": "langchain-semantic", "breakpoint_threshold_amount": 90}'


def add_setting_arguments(parser: argparse.ArgumentParser) -> None:
    """The documents and the one setting (splitter, size, overlap, k, retriever) `eval` and `ask` share."""
    parser.add_argument("files", nargs="+", help="text or Markdown files, one document each; a .pdf as PyPDFLoader "
                        "reads it (ids path#page=N, or path with --pdf-mode single)")
    parser.add_argument("--pdf-mode", default="page", choices=pdf.MODES, help="PyPDFLoader's mode for PDFs")
    parser.add_argument("--strategy", default="window", help="splitter (default: window)")
    parser.add_argument("--unit", default=None, help="words or chars (window and sentences; default chars, as audit)")
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="the chunk size, in the splitter's unit "
                        "(default 900, as audit)")
    parser.add_argument("--overlap", type=int, default=0, help="the overlap between chunks, in the same unit (default 0)")
    parser.add_argument("--k", type=int, default=5, help="how many chunks are retrieved for the question (default 5)")
    cli_retrieval.add_arguments(parser)
    cli_rerank.add_arguments(parser)


def setting_fields(args) -> tuple[dict, dict]:
    """The request's `chunking` and `retrieval` for the arguments of `add_setting_arguments`."""
    chunking = {"strategy": args.strategy, "size": args.size, "overlap": args.overlap}
    if args.unit is not None or picks_unit(args.strategy):
        chunking["unit"] = args.unit or DEFAULT_UNIT
    return chunking, {"k": args.k, **cli_retrieval.retrieval_fields(args)}


def read_documents(args) -> list[dict]:
    """The documents of the files given (OSError or ValueError with one sentence when one cannot be read)."""
    documents = []
    for path in args.files:
        if pdf.is_pdf(path):
            documents.extend(pdf.load(path, args.pdf_mode))
            continue
        documents.append({"id": path, "title": pathlib.Path(path).name, "text": read_text_file(path)})
    return documents


def add_chunking_arguments(parser: argparse.ArgumentParser) -> None:
    """`--chunking JSON` and `--chunking-file F`: every field of any splitter, as the request takes it."""
    parser.add_argument("--chunking", metavar="JSON", help="The request's whole chunking object, every field of "
                        f"any splitter (tokenizer and separators included), e.g. '{CHUNKING_EXAMPLE}'.")
    parser.add_argument("--chunking-file", metavar="FILE", help="The same JSON object, read from a file.")


def read_chunking(args) -> dict | None:
    """The object of --chunking or --chunking-file, or None when neither is given; ValueError with
    one sentence for both at once, a file that cannot be read, bad JSON or a value that is no object.
    Its fields are checked by the core, which names an unknown one and its nearest valid name."""
    text, where = getattr(args, "chunking", None), "--chunking"
    path = getattr(args, "chunking_file", None)
    if text is not None and path is not None:
        raise ValueError("Give --chunking or --chunking-file, not both.")
    if path is not None:
        try:
            text, where = read_text_file(path), path
        except OSError as e:
            raise ValueError(f"{path} cannot be read ({e.strerror}); give the chunking file's path.") from None
    if text is None:
        return None
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply to be a chunking object; write it like {CHUNKING_EXAMPLE}.") from None
    except ValueError as e:
        raise ValueError(f"{where} is not JSON ({e.msg} at column {e.colno}); write it like {CHUNKING_EXAMPLE}.") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a JSON object like {CHUNKING_EXAMPLE} (got {shown(value)}).")
    return value


# The one setting every command starts from unless told (the study's 900-character windows): audit,
# eval and ask alike.
DEFAULT_UNIT = "chars"
DEFAULT_SIZE = 900


def picks_unit(strategy: str) -> bool:
    """Whether the splitter counts its size in the `unit` asked for (its registration says so)."""
    sp = registry.BY_NAME.get(strategy)
    return sp is not None and sp.unit_field == "unit"


def chunking_for(strategy: str, size: int, overlap: int = 0) -> dict:
    """`{"strategy", "size", "overlap"}` with only the fields the splitter has (a semantic chunker
    has no size or overlap; an unknown name keeps them, so its error is the strategy's)."""
    sp = registry.BY_NAME.get(strategy)
    out = {"strategy": strategy}
    for name, value in (("size", size), ("overlap", overlap)):
        if sp is None or sp.field(name) is not None:
            out[name] = value
    return out


# what other tools call ragsim's options (LangChain's and LlamaIndex's parameter names), nearest first
OTHER_NAMES = {"--chunk-size": ("--size",), "--chunksize": ("--size",), "--chunk-overlap": ("--overlap", "--overlaps"),
               "--top-k": ("--k", "--top"), "--topk": ("--k", "--top"), "--k": ("--top",), "--overlap": ("--overlaps",)}


class Parser(argparse.ArgumentParser):
    """The commands' argument parser: an option is never taken for another by its first letters
    (`--overlap` is not `--overlaps`), and a mistake is one sentence with the nearest option named and
    where the full list is, not the whole usage."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message: str):
        import difflib

        said = message
        if message.startswith("unrecognized arguments: "):
            wrong = [w.split("=")[0] for w in message.split(": ", 1)[1].split() if w.startswith("-")]
            known = [o for action in self._actions for o in action.option_strings]
            hints = [f"{w} (did you mean {close[0]}?)" for w in wrong
                     if (close := [o for o in OTHER_NAMES.get(w.replace("_", "-"), ()) if o in known]
                         or difflib.get_close_matches(w, known, n=1, cutoff=0.6))]
            if wrong:
                said = f"unknown option{'s' if len(wrong) > 1 else ''}: " + ", ".join(
                    next((h for h in hints if h.startswith(w + " ")), w) for w in wrong)
        self.exit(2, f"{self.prog}: {said}. `{self.prog} --help` lists every option.\n")
