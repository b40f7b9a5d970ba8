"""What the commands write, always valid UTF-8 and never a terminal's control sequence: a question id,
a query or a file name may hold a lone surrogate (JSON allows "\\ud800"; a file name's undecodable
byte \\xff arrives as "\\udcff"), which neither `print` nor a UTF-8 encoder can write, and text from a
store's metadata or a model's reply may hold escape sequences, which `out` and `say` write escaped.

`out` and `say` write a line to stdout and stderr, a lone surrogate as its backslash escape; `out_json`
writes JSON whose strings keep it as the JSON escape `\\udcff` (jsonio.dumps), so it reads back the same.
"""

import re
import sys

from ragsim.wire import jsonio


# Characters a terminal acts on rather than shows: C0 and C1 controls (escape sequences, carriage
# return, bell) and the bidirectional overrides; text from a file or a server is written with them
# as backslash escapes, so it can neither clear the screen, retitle the window nor hide a line.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escaped(text: str) -> str:
    """`text` with every control character but the line break and the tab as its backslash escape."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def json_safe(text: str) -> str:
    """JSON text with the controls JSON leaves raw (C1, the bidi overrides) as its own \\uXXXX escapes:
    the value reads back the same, and a terminal shows them as text."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _write(stream, text: str, json_text: bool = False) -> None:
    stream.flush()
    safe = json_safe(text) if json_text else escaped(text)
    stream.buffer.write(safe.encode("utf-8", "backslashreplace") + b"\n")
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
    _write(sys.stdout, jsonio.dumps(value, **options), json_text=True)


def printable(text: str) -> str:
    """Text from a file as one line of a report: each run of white space as one space, the control
    characters escaped (`escaped`)."""
    return escaped(re.sub(r"[ \t\n\r\f\v]+", " ", text))


def marked_fact(f: dict) -> str:
    """A fact's sentence (the part a report keeps: `quote_text`) with its name and value marked
    ⟦like this⟧, so a reader can see whether the pair is a fact; "…" where the sentence goes on."""
    qa, qz = f["quote"]
    text = f["quote_text"]
    parts, at = [], 0
    for a, z in sorted([(f["name"][0] - qa, f["name"][1] - qa), (f["value"][0] - qa, f["value"][1] - qa)]):
        parts += [text[at:a], "⟦", text[a:z], "⟧"]
        at = z
    said = printable("".join(parts) + text[at:]).strip()
    return ("…" if qa > f["sentence"][0] else "") + said + ("…" if qz < f["sentence"][1] else "")
