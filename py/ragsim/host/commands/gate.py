"""A gate for CI: `eval` and `inspect` take `--fail-on cut,ranked_out,absent` and
`--min-recall X` (`--min-precision`, `--min-iou` alike, SPEC section 8's means over the question set).
After the report a command with a gate writes two lines on stderr, a CI log's summary and its
verdict: "gate held: ..." (exit 0) or "gate failed: ..." (exit 1), one sentence naming each rule that
failed and the questions or phrases that broke it. A rule that cannot be judged (a value out of range,
`cut` without a question set) is refused before anything is read (exit 2).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

# What --fail-on takes, and what each judges: a question's verdict (SPEC section 8) or a phrase's
# (section 11's `absent`: no placed chunk holds it whole; `inspect` only).
KINDS = {"cut": "question", "ranked_out": "question", "absent": "phrase"}
WORDS = {"cut": "cut", "ranked_out": "ranked out", "absent": "absent"}
METRICS = ("recall", "precision", "iou")
SHOWN = {"recall": "recall", "precision": "precision", "iou": "IoU"}
LISTED = 5  # questions or phrases named per rule before "and N more"


@dataclass(frozen=True)
class Gate:
    fail_on: tuple[str, ...] = ()  # in the order given, each once
    minimums: tuple[tuple[str, float], ...] = ()  # (metric, the least mean that holds)

    @property
    def on(self) -> bool:
        return bool(self.fail_on or self.minimums)

    @property
    def needs_questions(self) -> bool:
        return bool(self.minimums) or any(KINDS[k] == "question" for k in self.fail_on)


def add_arguments(parser) -> None:
    parser.add_argument("--fail-on", action="append", default=[], metavar="KIND",
                        help="Exit 1 when any question is cut or ranked_out, or (inspect) any phrase absent: "
                        "repeatable, or a comma list, e.g. cut,ranked_out (docs/ci.md).")
    for metric in METRICS:
        parser.add_argument(f"--min-{metric}", metavar="X", help=f"Exit 1 when the question set's mean "
                            f"{SHOWN[metric]} is below X (0 to 1).")


def read(args, kinds=tuple(KINDS)) -> Gate:
    """The gate the options ask for (Gate().on is False without any); ValueError with one sentence for
    a kind this command cannot judge or a value that is no share from 0 to 1."""
    fail_on: list[str] = []
    for given in args.fail_on:
        for word in given.split(","):
            kind = word.strip().lower().replace("-", "_")
            if kind in kinds:
                if kind not in fail_on:
                    fail_on.append(kind)
                continue
            if kind in KINDS:  # absent, given to eval: its questions are cut instead
                raise ValueError(f"--fail-on {kind} judges {KINDS[kind]}s, which this command does not check; "
                                 f"it takes {_listed(kinds)} (a reference no chunk holds whole makes its question cut).")
            near = difflib.get_close_matches(kind, kinds, n=1, cutoff=0.6)
            raise ValueError(f"--fail-on takes {_listed(kinds)}, repeated or as a comma list (got {word.strip()!r}"
                             f"{f'; did you mean {near[0]}?' if near else ''}).")
    minimums = []
    for metric in METRICS:
        text = getattr(args, f"min_{metric}", None)
        if text is None:
            continue
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 <= value <= 1:  # NaN fails this too
            raise ValueError(f"--min-{metric} takes a number from 0 to 1, the least mean {SHOWN[metric]} that passes "
                             f"(got {text!r}).")
        minimums.append((metric, value))
    return Gate(tuple(fail_on), tuple(minimums))


def _listed(kinds) -> str:
    kinds = list(kinds)
    return ", ".join(kinds[:-1]) + " or " + kinds[-1] if len(kinds) > 1 else kinds[0]


def summary(result: dict) -> str:
    """One line for a CI log: the questions' verdicts and means, and the phrases present and absent."""
    parts = []
    st = result.get("question_stats")
    if st:
        means = ", ".join(f"{SHOWN[m]} {_num(st[f'{m}_mean'])}" for m in METRICS)
        parts.append(f"{_count(st['count'], 'question')}: {st['intact']:,} intact, {st['ranked_out']:,} ranked out, "
                     f"{st['cut']:,} cut; {means}")
    phrases = result.get("phrases")
    if phrases:
        absent = sum(p["verdict"] == "absent" for p in phrases)
        parts.append(f"{_count(len(phrases), 'phrase')}: {len(phrases) - absent:,} present, {absent:,} absent")
    return "; ".join(parts) or "nothing judged"


def verdict(gate: Gate, result: dict, queries: dict | None = None) -> tuple[bool, str]:
    """(held, one sentence): what held, or each rule that failed with the questions (id and first
    words of the query, from `queries` by id or the result's own `query`) or phrases that broke it."""
    queries = queries or {}
    failed, held = [], []
    for kind in gate.fail_on:
        if KINDS[kind] == "question":
            items = result.get("questions") or []
            bad = [_question(q, queries) for q in items if q["verdict"] == kind]
        else:
            items = result.get("phrases") or []
            bad = [_phrase(p) for p in items if p["verdict"] == kind]
        if bad:
            failed.append(f"{len(bad):,} of {_count(len(items), KINDS[kind])} {WORDS[kind]}: {_some(bad)}")
        else:
            held.append(f"no {KINDS[kind]} {WORDS[kind]}")
    st = result.get("question_stats") or {}
    for metric, least in gate.minimums:
        mean = st.get(f"{metric}_mean")
        if mean is None:
            failed.append(f"no question was judged, so mean {SHOWN[metric]} is unknown")
        elif mean < least:
            failed.append(f"mean {SHOWN[metric]} {_below(mean, least)} is below --min-{metric} {least:g}")
        else:
            held.append(f"mean {SHOWN[metric]} {_num(mean)} is at least {least:g}")
    if failed:
        return False, "gate failed: " + "; ".join(failed) + "."
    return True, "gate held: " + ", ".join(held) + "."


def _question(q: dict, queries: dict) -> str:
    query = queries.get(q["id"], q.get("query"))
    return q["id"] + (f" ({_first_words(query)})" if query else "")


def _phrase(p: dict) -> str:
    said = _first_words(p["text"])
    return said + (f" ({p['source']})" if p.get("source", "phrase") != "phrase" else "")


def _first_words(text: str, n: int = 6) -> str:
    words = text.split()
    return '"' + " ".join(words[:n]) + ("…" if len(words) > n else "") + '"'


def _some(names: list[str]) -> str:
    return ", ".join(names[:LISTED]) + (f" and {len(names) - LISTED:,} more" if len(names) > LISTED else "")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _num(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _below(mean: float, least: float) -> str:
    """The mean with enough digits that it reads as below the threshold (0.4996 is not "0.500")."""
    for digits in (3, 6, 12):
        shown = f"{mean:.{digits}f}"
        if float(shown) < least:
            return shown
    return repr(mean)


def finish(gate: Gate, prog: str, result: dict, queries: dict | None = None) -> int:
    """The gate's two lines on stderr (summary, verdict) and its exit status: 0 held, 1 failed; 0
    and nothing said without a gate."""
    if not gate.on:
        return 0
    from ragsim.host.commands import console

    ok, said = verdict(gate, result, queries)
    console.say(f"{prog}: {summary(result)}")
    console.say(f"{prog}: {said}")
    return 0 if ok else 1
