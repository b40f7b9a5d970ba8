"""`python -m ragsim`: a request as JSON on stdin, the response as JSON on stdout.

Exit status 0 on success, 2 for a request that breaks the contract (message on stderr), 1 for
input that is not UTF-8 JSON at all or is larger than 64 MB (the most read from stdin). The
output is UTF-8 JSON whatever the request's strings hold. Never a traceback. The request and
response formats are in docs/cli.md.
"""

import os
import signal
import sys

from ragsim import host, limits
from ragsim.errors import RequestError
from ragsim.host.commands import ask_cli, audit_cli, console, eval_cli, inspect_cli
from ragsim.wire import jsonio, state_file
from ragsim.wire.api import simulate, simulate_plain


# What each command does and one example (the help lists every command of COMMANDS; one without
# an entry here is listed by the first line of its module's docstring).
ABOUT = {
    "audit": ("every name-value fact of the files, checked at several overlaps",
              "python -m ragsim audit examples/harbour.md --unit chars --size 100 --overlaps 0,20,40"),
    "ask": ("what your own model answers from exactly the context sent (an OpenAI-compatible server)",
            "python -m ragsim ask examples/harbour.md --question 'when does the pilot boat leave' --endpoint "
            "http://localhost:11434/v1 --model llama3.2"),
    "inspect": ("your own index: its chunks placed in their documents, the splitter that made them, each phrase "
                "present or cut, the facts it destroyed, a question set's verdicts over those chunks",
                "python -m ragsim inspect examples/chunks.jsonl --source examples/harbour.md --phrase 'closes the entrance'"),
    "export": ("your index's chunks placed in their documents, as JSON Lines (the form the page opens)",
               "python -m ragsim export examples/chunks.jsonl --source examples/harbour.md -o -"),
    "eval": ("a question set's recall, precision and IoU over the files at one setting (and a map of settings)",
             "python -m ragsim eval examples/harbour.md --questions examples/questions.json --size 40 --overlap 10 --k 2"),
}
EXAMPLE_REQUEST = ('{"documents": [{"id": "d", "title": "note", "text": "The pilot boat leaves at nine. Fog closes the '
                   'harbour."}], "query": "when does the pilot boat leave", "chunking": {"unit": "words", "size": 6, '
                   '"overlap": 2}, "retrieval": {"k": 1}, "span": {"doc": "d", "start": 0, "end": 30}}')
OPTIONS = ("-h", "--help", "-")


def usage() -> str:
    """The help: how a request is sent, every command with what it does and one example."""
    lines = ["usage: python -m ragsim [COMMAND] [ARGS...]", "", __doc__.strip().splitlines()[0], "",
             "Without a command (or with -), a request is read as JSON on stdin (or the page's \"Download state\" "
             "file as it is), e.g.", "",
             f"  echo '{EXAMPLE_REQUEST}' | python -m ragsim", "", "commands (python -m ragsim COMMAND --help for each):"]
    for name, command in COMMANDS.items():
        if name in OPTIONS:
            continue
        what, example = ABOUT.get(name, (_first_line(command), None))
        lines.append(f"  {name:<8} {what}")
        if example:
            lines.append(f"           e.g. {example}")
    lines += ["", "\n".join(__doc__.strip().splitlines()[2:])]
    return "\n".join(lines)


def _first_line(command) -> str:
    doc = sys.modules[command.__module__].__doc__ or command.__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def show_help(argv) -> int:
    print(usage())
    return 0


# The commands: the first argument names one; without one (or with -), a request is read on stdin.
COMMANDS = {
    "ask": ask_cli.main,
    "audit": audit_cli.main,
    "eval": eval_cli.main,
    "export": inspect_cli.run_export,
    "inspect": inspect_cli.run_inspect,
    "-h": show_help,
    "--help": show_help,
}


def main(argv=None) -> int:
    host.register()  # CPython's hosts: rank files from disk, the onnxruntime model
    argv = sys.argv[1:] if argv is None else argv
    _stop_on_terminate()
    try:
        return _command(argv)
    except KeyboardInterrupt:  # Ctrl-C, or a SIGTERM (below): every temporary file was removed on the way out
        say("ragsim: stopped before the end; its temporary files were removed.")
        return 130


def _stop_on_terminate() -> None:
    """A SIGTERM (a `timeout`, a job runner cancelling) stops the command as Ctrl-C does, so the
    temporary files of a run (an inspect's spill, an output not yet moved into place) are removed on
    the way out; a worker process it forked keeps the default (it is the parent's to clean up)."""
    parent = os.getpid()

    def stop(signum, frame):
        if os.getpid() != parent:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (an embedding caller): leave the handler as it is
        pass


def _command(argv) -> int:
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:])
    if argv and argv != ["-"]:
        known = ", ".join(name for name in COMMANDS if name not in OPTIONS)
        say(f"ragsim: {argv[0]!r} is not a command; use one of {known}, or send a request on stdin with no "
            "argument (python -m ragsim --help).")
        return 2
    return run_request()


def run_request() -> int:
    """A request on stdin, its response on stdout."""
    try:
        request = read_request(sys.stdin.buffer)
    except ValueError as e:
        say(f"ragsim: {e}")
        return 1
    if state_file.is_state(request):  # the page's "Download state" file, as it is
        try:
            request = state_file.to_request(request)
        except RequestError as e:
            say(f"ragsim: {e.field}: {e.message}")
            return 2
    try:
        response = simulate_plain(request)
    except (MemoryError, RecursionError) as e:
        say(f"ragsim: the request needs more {'memory' if isinstance(e, MemoryError) else 'stack'} than this "
            "machine gives; send smaller documents or larger chunks.")
        return 1
    sys.stdout.buffer.write(jsonio.dumps(response).encode("utf-8") + b"\n")
    if "error" in response:
        err = response["error"]
        say(f"ragsim: {err['field']}: {err['message']}")
        return 2
    return 0


def read_request(stream):
    """The request read from a binary stream, at most MAX_STDIN_BYTES of UTF-8 JSON; ValueError with one
    sentence (the input itself is never echoed) for anything else."""
    data = stream.read(limits.MAX_STDIN_BYTES + 1)
    if len(data) > limits.MAX_STDIN_BYTES:
        raise ValueError(f"the input is larger than {limits.MAX_STDIN_BYTES // 2**20} MB, the most this command "
                         "reads; send smaller documents.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"the input is not UTF-8 text ({e.reason} at byte {e.start:,}); send the request "
                         "as UTF-8 JSON.") from None
    try:
        return jsonio.loads(text)
    except RequestError as e:
        raise ValueError(e.message) from None


say = console.say  # one line on stderr, whatever characters it holds


if __name__ == "__main__":
    sys.exit(main())
