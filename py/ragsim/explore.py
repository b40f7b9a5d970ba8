"""The questions a person asks after a verdict (issue 5): would more results help, is the answer in
any chunk at all, do the cuts move with the overlap, and what context expansion would send.

Pure functions over the columns `api.simulate` already has: chunk starts/ends per document, ranks.
"""

import re

AT_K = (1, 3, 5, 10)
PHRASE_LIMIT = 1000  # occurrences listed at most; the count is exact


def kind_at(whole_ranks: list[int], k: int, missing: str) -> str:
    """Verdict at top-k from the ranks of the chunks holding the span (or answering the fact) whole."""
    if not whole_ranks:
        return missing
    return "intact" if min(whole_ranks) <= k else "ranked_out"


def at_k_table(span_ranks, fact_ranks, k: int) -> list[dict]:
    """The verdict at k = 1, 3, 5, 10 and the current k, side by side (None where nothing is marked)."""
    return [
        {
            "k": kk,
            "span": None if span_ranks is None else kind_at(span_ranks, kk, "cut"),
            "fact": None if fact_ranks is None else kind_at(fact_ranks, kk, "destroyed"),
        }
        for kk in sorted(set(AT_K) | {k})
    ]


def find_phrase(texts, starts, ends, doc_of, phrase: str) -> dict:
    """Chunks whose text contains `phrase` exactly; and whether the documents contain it at all."""
    occurrences, count = [], 0
    holding = set()
    # chunk positions of each document, for the containment check
    by_doc: dict[int, list[int]] = {}
    for p, d in enumerate(doc_of):
        by_doc.setdefault(d, []).append(p)
    for d, text in enumerate(texts):
        i = text.find(phrase) if phrase else -1
        while i >= 0:
            j = i + len(phrase)
            count += 1
            if len(occurrences) < PHRASE_LIMIT:
                occurrences.append([d, i, j])
            for p in by_doc.get(d, ()):
                if starts[p] <= i and j <= ends[p]:
                    holding.add(p)
            i = text.find(phrase, i + 1)
    if count == 0:
        verdict = "absent"  # not in any document: nothing to chunk
    elif holding:
        verdict = "in_chunks"
    else:
        verdict = "destroyed"  # in the documents, in no chunk: lost at chunking, not ranked too low
    return {"phrase": phrase, "occurrences": count, "where": occurrences,
            "chunks": sorted(p + 1 for p in holding), "verdict": verdict}


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
    side (or its whole parent section), in rank order; an extent meeting an earlier one of the same
    document is merged into it, as a parent-document retriever sends each parent once."""
    pieces: list[list[int]] = []  # [doc, start, end]
    secs = {}
    for p in order_top:
        d = doc_of[p]
        if section:
            if d not in secs:
                secs[d] = sections(texts[d])
            a = max(s for s, e in secs[d] if s <= starts[p])
            z = min(e for s, e in secs[d] if e >= ends[p])
        else:
            lo = max(first_chunk[d], p - neighbours)
            hi = min(first_chunk[d] + chunk_count[d] - 1, p + neighbours)
            a = min(starts[lo : hi + 1])
            z = max(ends[lo : hi + 1])
        for piece in pieces:
            if piece[0] == d and piece[1] <= z and a <= piece[2]:
                piece[1], piece[2] = min(piece[1], a), max(piece[2], z)
                break
        else:
            pieces.append([d, a, z])
    # merging can make two earlier pieces meet; fold until stable
    merged = True
    while merged:
        merged = False
        for i in range(len(pieces)):
            for j in range(i + 1, len(pieces)):
                a, b = pieces[i], pieces[j]
                if a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2]:
                    a[1], a[2] = min(a[1], b[1]), max(a[2], b[2])
                    del pieces[j]
                    merged = True
                    break
            if merged:
                break
    return pieces
