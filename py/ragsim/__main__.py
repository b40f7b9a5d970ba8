"""`python -m ragsim`: a request as JSON on stdin, the response as JSON on stdout.

Exit status 0 on success, 2 for a request that breaks the contract (message on stderr), 1 for
input that is not UTF-8 JSON at all or is larger than 64 MB (the most read from stdin). The
output is UTF-8 JSON whatever the request's strings hold. Never a traceback.
"""

import sys

import ragsim.host  # noqa: F401  (CPython's hosts: rank files from disk, the onnxruntime model)
from ragsim import limits
from ragsim.errors import RequestError
from ragsim.host import ask_cli, audit_cli, eval_cli, inspect_cli
from ragsim.wire import jsonio
from ragsim.wire.api import simulate


def show_help(argv) -> int:
    print(__doc__.strip())
    return 0


# The commands: the first argument names one; without one, a request is read on stdin.
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
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:])
    return run_request()


def run_request() -> int:
    """A request on stdin, its response on stdout."""
    try:
        request = read_request(sys.stdin.buffer)
    except ValueError as e:
        say(f"ragsim: {e}")
        return 1
    try:
        response = simulate(request)
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


def say(line: str) -> None:
    """One line on stderr, whatever characters it holds."""
    sys.stderr.buffer.write(line.encode("utf-8", "backslashreplace") + b"\n")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
