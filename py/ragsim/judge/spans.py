"""The marked answer span, the fact, and their verdicts (SPEC section 4)."""

from ragsim.errors import RequestError


def trim(text: str, start: int, end: int, field: str) -> tuple[int, int]:
    """`[start, end)` with surrounding whitespace removed; refuses a span outside `text` or empty."""
    if not (0 <= start <= end <= len(text)):
        raise RequestError(
            field,
            f"The span {start}-{end} lies outside its document ({len(text)} characters); mark the answer again.",
        )
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        raise RequestError(field, "The marked answer is empty once whitespace is trimmed; select some text.")
    return start, end


def holds(c_start: int, c_end: int, start: int, end: int) -> str | None:
    """'whole' when the chunk's extent contains the span, 'part' when they only intersect, else None."""
    if c_start <= start and end <= c_end:
        return "whole"
    if c_start < end and start < c_end:
        return "part"
    return None


def covered(intervals, start: int, end: int) -> int:
    """Characters of `[start, end)` lying in the union of `intervals` (each `(s, e)`)."""
    clipped = sorted((max(s, start), min(e, end)) for s, e in intervals if s < end and start < e)
    total, reach = 0, start
    for s, e in clipped:
        if e > reach:
            total += e - max(s, reach)
            reach = e
    return total


def verdict(whole_ranks: list[int], whole_retrieved: bool, parts: int, parts_retrieved: int, coverage: float) -> dict:
    """The span verdict from what the chunks hold (ranks are 1-based)."""
    if whole_retrieved:
        kind = "intact"
    elif whole_ranks:
        kind = "ranked_out"
    else:
        kind = "cut"
    return {
        "kind": kind,
        "best_rank": min(whole_ranks) if whole_ranks else None,
        "parts": parts,
        "parts_retrieved": parts_retrieved,
        "coverage_sent": coverage,
    }


def fact_kind(answering_ranks: list[int], k: int) -> str:
    """'destroyed' when no chunk holds name and value whole, 'intact' when a retrieved one does."""
    if not answering_ranks:
        return "destroyed"
    return "intact" if min(answering_ranks) <= k else "ranked_out"
