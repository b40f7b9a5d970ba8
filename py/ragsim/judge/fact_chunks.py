"""Facts against chunks (SPEC section 4): which chunks answer a fact, and how long its stretch is in
a split's unit. The audit (`wire.audit`), the streamed audit (`host.jobs.audit_stream`) and `inspect`'s
facts (`wire.inspect`, `host.jobs.inspect_facts`) judge with these.
"""

from bisect import bisect_left, bisect_right

from ragsim.judge import facts as fact_rules
from ragsim.text.index import DocIndex


def facts_of(index: DocIndex) -> list[fact_rules.Fact]:
    """The facts of an indexed text, detected once and kept with its index (an audit run one overlap
    at a time, as the page runs it, detects them once)."""
    if "facts" not in index.memo:
        index.memo["facts"] = fact_rules.detect(index.text)
    return index.memo["facts"]


def answering_chunks(starts: list[int], ends: list[int], a: int, z: int) -> list[int]:
    """Positions of the chunks whose extent contains `[a, z)` (chunks sorted by start)."""
    hi = bisect_right(starts, a)
    return [c for c in range(hi) if ends[c] >= z]


def stretch_units(doc: DocIndex, unit: str, start: int, end: int, chunking: dict | None = None) -> int | None:
    """The size of `[start, end)` in the split's unit: words or tokens touched, or code points."""
    if unit == "words":
        return bisect_left(doc.word_starts, end) - bisect_right(doc.word_ends, start)
    if unit == "chars":
        return end - start
    if unit == "tokens":  # the tokens of the split's own tokenizer (cached on the document)
        from ragsim.text.tokens import document_tokens, read_tokenizer

        _, starts, ends = document_tokens(doc, read_tokenizer(chunking or {}))
        return bisect_left(starts, end) - bisect_right(ends, start)
    return None  # sentences, passages, lines, pages: no fixed-window rule to hold them to


def answered(index: DocIndex, extents: list) -> list[tuple[fact_rules.Fact, bool]]:
    """Each fact of the text, and whether one of the chunks `extents` ([start, end], sorted by start)
    holds it whole."""
    starts, ends = [s for s, _ in extents], [e for _, e in extents]
    return [(f, bool(answering_chunks(starts, ends, *f.stretch))) for f in facts_of(index)]
