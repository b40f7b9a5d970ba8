"""The checks on stored chunks (SPEC section 11): is a phrase held whole, and what the splitter did.

    phrase_check(al, "the warranty lasts two years")      # [{"text", "verdict", "chunks", ...}]
    phrase_check(al, {"doc": "guide", "start": 120, "end": 168})
    splitter_stats(al, count_tokens="cl100k_base")        # SPEC's `stats`, tokens included
    report(al, phrases, count_tokens)                     # documents, chunks, phrases, stats

A placed chunk holds a stretch of its document whole when its extent contains it (a `whitespace`
placement counts by its extent over the source's characters); unplaced chunks hold nothing.
"""

import bisect
import statistics
from collections import Counter

from ragsim.rank import dense
from ragsim.judge.pipeline import overlap_stats
from ragsim.errors import RequestError
from ragsim.judge.stored import Alignment, Placed, chunks_report, documents_report

QUOTE = 80  # the most characters of a phrase an error message quotes


def quote(text: str, limit: int = QUOTE) -> str:
    """`text` quoted for a message, at most `limit` characters of it."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class _Holders:
    """One document's placed chunks in document order, to ask which hold a stretch whole."""

    def __init__(self, rows: list[Placed]):
        self.rows = rows
        self.starts = [c.start for c in rows]
        self.longest = max((c.end - c.start for c in rows), default=0)

    def whole(self, a: int, b: int) -> list[Placed]:
        lo = bisect.bisect_left(self.starts, b - self.longest)  # a holder starts no earlier
        hi = bisect.bisect_right(self.starts, a)
        return [c for c in self.rows[lo:hi] if c.end >= b]

    def cuts(self, a: int, b: int) -> list[dict]:
        """The boundaries inside `[a, b)`: neighbours (in document order) where the earlier one
        ends inside it or the later one starts inside it; `at` is that end, else that start."""
        rows, out = self.rows, []
        lo = max(0, bisect.bisect_left(self.starts, a - self.longest) - 1)
        hi = bisect.bisect_right(self.starts, b)
        for k in range(lo, min(hi, len(rows)) + 1):
            prev = rows[k - 1] if k > 0 else None
            nxt = rows[k] if k < len(rows) else None
            ends_inside = prev is not None and a < prev.end < b
            if ends_inside or (nxt is not None and a < nxt.start < b):
                out.append({"end_of": prev and prev.id, "start_of": nxt and nxt.id,
                            "at": prev.end if ends_inside else nxt.start})
        return out


def _entry(doc: str, text: str, a: int, b: int, holders: _Holders) -> dict:
    whole = holders.whole(a, b)
    return {"text": text[a:b], "doc": doc, "start": a, "end": b,
            "verdict": "present" if whole else "absent", "chunks": [c.id for c in whole],
            "cut_by": [] if whole else holders.cuts(a, b), "overlap_needed": b - a}


def phrase_check(al: Alignment, phrase, field: str = "phrase") -> list[dict]:
    """Where the stored chunks keep `phrase` whole, or which boundaries cut it (SPEC section 11).

    `phrase` is text or a span `{doc, start, end}` (a marked answer, a question set's reference;
    surrounding whitespace trimmed as SPEC section 4 trims spans). A span gets one entry, at that span.
    Text (trimmed the same way) is matched verbatim and gets one entry per document holding it: the
    first occurrence some chunk holds whole (`present`), else the document's first occurrence
    (`absent`, with its `cut_by`). So `present` means the index holds the phrase somewhere in that
    document; the entry's `doc`, `start`, `end` say which occurrence was judged. `cut_by` is empty
    when present; `overlap_needed` is the occurrence's length in code points."""
    texts = al.texts()
    if isinstance(phrase, dict):
        doc, a, b = _span(phrase, texts, field)
        return [_entry(doc, texts[doc], a, b, _Holders(al.placed(doc)))]
    if not isinstance(phrase, str) or not phrase.strip():
        raise RequestError(field, f"{field} must be a non-empty text or a span {{doc, start, end}}.")
    needle = phrase.strip()
    out = []
    for doc, text in texts.items():
        first = text.find(needle)
        if first < 0:
            continue
        holders, at = _Holders(al.placed(doc)), first
        while at >= 0 and not holders.whole(at, at + len(needle)):
            at = text.find(needle, at + 1)
        out.append(_entry(doc, text, first if at < 0 else at, (first if at < 0 else at) + len(needle), holders))
    if not out:
        raise RequestError(field, f"The phrase {quote(needle)} is in none of the documents; "
                                  "copy it from the source text exactly (it is matched verbatim).")
    return out


def _span(span: dict, texts: dict, field: str) -> tuple[str, int, int]:
    doc, a, b = span.get("doc"), span.get("start"), span.get("end")
    if not isinstance(doc, str) or doc not in texts:
        names = ", ".join(repr(d) for d in list(texts)[:10])
        raise RequestError(f"{field}.doc", f"{field}.doc {doc!r} is not one of the documents ({names}).")
    text = texts[doc]
    for name, v in (("start", a), ("end", b)):
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= len(text):
            raise RequestError(f"{field}.{name}",
                               f"{field}.{name} must be an integer from 0 to {len(text)} (got {v!r}).")
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if a >= b:
        raise RequestError(field, f"{field} is empty once its surrounding whitespace is trimmed; mark some text.")
    return doc, a, b


def _counter(count_tokens, memo: bool = False):
    """A callable counting tokens: given, or the core's exact tiktoken for an encoding's name;
    with `memo`, one that counts each distinct text once."""
    if count_tokens is None:
        return None
    if not callable(count_tokens):
        from ragsim.text import tokens

        count_tokens = tokens.get(count_tokens, "tokenizer").count
    if not memo:
        return count_tokens
    seen: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in seen:
            seen[text] = count_tokens(text)
        return seen[text]

    return count


def _spread(values: list, name: str) -> dict:
    if not values:
        return {f"{name}_min": None, f"{name}_median": None, f"{name}_max": None}
    return {f"{name}_min": min(values), f"{name}_median": statistics.median(values), f"{name}_max": max(values)}


def splitter_stats(al: Alignment, count_tokens=None) -> dict:
    """SPEC section 11's `stats`: every chunk's size in characters (and in tokens with a counter: a
    callable or an encoding name such as "cl100k_base", else null), the overlap neighbours in each
    document really share (`max(0, previous.end - next.start)` over placed chunks in document order,
    as section 7), and how many chunks the dense model reads only in part (section 10)."""
    texts = [c.text for c in al.chunks]
    count = _counter(count_tokens)
    tokens = [count(t) for t in texts] if count is not None else []
    overlaps: Counter = Counter()
    for d in al.documents:
        rows = al.placed(d.id)
        overlaps.update(max(0, p.end - n.start) for p, n in zip(rows, rows[1:]))
    return {**_spread([len(t) for t in texts], "chars"), **_spread(tokens, "tokens"), **overlap_stats(overlaps),
            "truncated": sum(e is not None for e in dense.read_ends(texts))}


def report(al: Alignment, phrases=(), count_tokens=None) -> dict:
    """SPEC section 11's `documents`, `chunks`, `phrases` (each phrase's entries, in order) and `stats`."""
    count = _counter(count_tokens, memo=True)  # the chunks and the stats count the same texts
    found = [e for i, p in enumerate(phrases) for e in phrase_check(al, p, f"phrases[{i}]")]
    return {"documents": documents_report(al), "chunks": chunks_report(al, count), "phrases": found,
            "stats": splitter_stats(al, count)}
