"""What the commands write, always valid UTF-8 (issue 22): a question id, a query or a file name may
hold a lone surrogate (JSON allows "\\ud800"; a file name's undecodable byte \\xff arrives as
"\\udcff"), which neither `print` nor a UTF-8 encoder can write.

`out` and `say` write a line to stdout and stderr, a lone surrogate as its backslash escape; `out_json`
writes JSON whose strings keep it as the JSON escape `\\udcff` (jsonio.dumps), so it reads back the same.
"""

import sys

from ragsim.wire import jsonio


def _write(stream, text: str) -> None:
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "backslashreplace") + b"\n")
    stream.flush()


# The commands say what a request will cost, and show its progress, only past this many seconds of
# estimate: a quick run's output (and a refusal's one line) stays as it was.
SHOW_AFTER = 1.0


def out(text: str) -> None:
    """A line (or several) on stdout."""
    _write(sys.stdout, text)


def say(text: str) -> None:
    """A line on stderr."""
    _write(sys.stderr, text)


def out_json(value, **options) -> None:
    """`value` as JSON on stdout."""
    _write(sys.stdout, jsonio.dumps(value, **options))
