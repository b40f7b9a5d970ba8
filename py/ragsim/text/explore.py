"""The questions a person asks after a verdict: would more results help, is the answer in
any chunk at all, do the cuts move with the overlap, and what context expansion would send.

Pure functions over the columns `api.simulate` already has: chunk starts/ends per document, ranks.
"""

import re
from bisect import bisect_left, bisect_right

AT_K = (1, 3, 5, 10)
PHRASE_LIMIT = 1000  # occurrences listed at most; the count is exact


def kind_at(whole_ranks: list[int], k: int, missing: str) -> str:
    """Verdict at top-k from the ranks of the chunks holding the span (or answering the fact) whole."""
    if not whole_ranks:
        return missing
    return "intact" if min(whole_ranks) <= k else "ranked_out"


def at_k_table(span_ranks, fact_ranks, k: int) -> list[dict]:
    """The verdict at k = 1, 3, 5, 10, the current k and the least k that sends the span or the fact
    (its best rank: the k the page's sentence names as the fix), side by side (None where nothing is
    marked)."""
    best = {min(r) for r in (span_ranks, fact_ranks) if r}
    return [
        {
            "k": kk,
            "span": None if span_ranks is None else kind_at(span_ranks, kk, "cut"),
            "fact": None if fact_ranks is None else kind_at(fact_ranks, kk, "destroyed"),
        }
        for kk in sorted(set(AT_K) | {k} | best)
    ]


def find_phrase(texts, starts, ends, doc_of, phrase: str) -> dict:
    """Chunks whose text contains `phrase` exactly; and whether the documents contain it at all.

    Linear in occurrences plus chunks (times a logarithm): every occurrence has the same length, so
    a chunk holds one iff the first occurrence starting inside it also ends inside it.
    """
    occurrences, count = [], 0
    at: list[list[int]] = [[] for _ in texts]  # per document, where the phrase starts, ascending
    for d, text in enumerate(texts):
        i = text.find(phrase) if phrase else -1
        while i >= 0:
            at[d].append(i)
            i = text.find(phrase, i + 1)
        count += len(at[d])
        occurrences.extend([d, i, i + len(phrase)] for i in at[d][: PHRASE_LIMIT - len(occurrences)])
    holding = []
    for p, d in enumerate(doc_of):
        found = at[d]
        if found:
            q = bisect_left(found, starts[p])
            if q < len(found) and found[q] + len(phrase) <= ends[p]:
                holding.append(p + 1)
    if count == 0:
        verdict = "absent"  # not in any document: nothing to chunk
    elif holding:
        verdict = "in_chunks"
    else:
        verdict = "destroyed"  # in the documents, in no chunk: lost at chunking, not ranked too low
    return {"phrase": phrase, "occurrences": count, "where": occurrences, "chunks": holding, "verdict": verdict}


def cut_positions(starts: list[int], ends: list[int], text_length: int) -> list[int]:
    """Where the text is cut: every chunk end before the document's end, in order, without repeats."""
    return sorted({e for e in ends if e < text_length})


_HEADING = re.compile(r"^#{1,6}[ \t]", re.M)


def sections(text: str) -> list[tuple[int, int]]:
    """Markdown sections: each ATX heading opens one; a document without headings is one section."""
    marks = [m.start() for m in _HEADING.finditer(text) if m.start() > 0]
    bounds = [0, *marks, len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def expand(order_top, starts, ends, doc_of, first_chunk, chunk_count, texts, neighbours=0, section=False):
    """Extents actually sent when each retrieved chunk also brings its `neighbours` chunks on either
    side (or its whole parent section), in rank order; extents of one document that meet (or touch)
    are merged, as a parent-document retriever sends each parent once, and the merged piece takes
    the place of its best-ranked member. O(k log k + sections) for k retrieved chunks."""
    wanted = []  # (doc, start, end, rank position)
    bounds = {}
    # k chunks of 2 * neighbours + 1 each, sliced one by one, is k x neighbours; past the
    # chunks themselves, a table of extremes answers each range at once.
    reach = None
    if not section and len(order_top) * (2 * neighbours + 1) > 8 * len(starts):
        reach = Extremes(starts, min), Extremes(ends, max)
    for r, p in enumerate(order_top):
        d = doc_of[p]
        if section:
            if d not in bounds:
                secs = sections(texts[d]) or [(0, len(texts[d]))]  # an empty text: one empty section
                bounds[d] = ([s for s, _ in secs], [e for _, e in secs])
            sec_starts, sec_ends = bounds[d]
            a = sec_starts[bisect_right(sec_starts, starts[p]) - 1]  # the last section starting at or before
            z = sec_ends[bisect_left(sec_ends, ends[p])]  # the first section ending at or after
        else:
            lo = max(first_chunk[d], p - neighbours)
            hi = min(first_chunk[d] + chunk_count[d] - 1, p + neighbours)
            a = min(starts[lo : hi + 1]) if reach is None else reach[0].over(lo, hi)
            z = max(ends[lo : hi + 1]) if reach is None else reach[1].over(lo, hi)
        wanted.append((d, a, z, r))
    merged: list[list[int]] = []  # [doc, start, end, best rank position]
    for d, a, z, r in sorted(wanted):
        last = merged[-1] if merged else None
        if last is not None and last[0] == d and a <= last[2]:
            last[2], last[3] = max(last[2], z), min(last[3], r)
        else:
            merged.append([d, a, z, r])
    merged.sort(key=lambda piece: piece[3])
    return [[d, a, z] for d, a, z, _ in merged]


class Extremes:
    """`fn` (min or max) of `values[lo : hi + 1]` for any range, each in O(1) after O(n log n) (a sparse
    table: level j holds fn over every run of 2**j values, built at C speed with `map`)."""

    def __init__(self, values, fn):
        self.fn = fn
        self.levels = [list(values)]
        width = 1
        while width * 2 <= len(values):
            prev = self.levels[-1]
            self.levels.append(list(map(fn, prev, prev[width:])))
            width *= 2

    def over(self, lo: int, hi: int):
        j = (hi - lo + 1).bit_length() - 1
        level = self.levels[j]
        return self.fn(level[lo], level[hi - (1 << j) + 1])
