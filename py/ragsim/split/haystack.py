"""`haystack`: Haystack 2.x `DocumentSplitter` (split_by word, passage, line, period, page), with extents.

Haystack cuts the text at one delimiter (`str.split`), puts the delimiter back on every unit but
the last, and joins `split_length` units per chunk, stepping by `split_length - split_overlap`
(`more_itertools.windowed`, whose padding decides how many windows there are). A window with
fewer than `split_threshold` units is glued onto the previous chunk; a window that adds no new
text is skipped; empty chunks are dropped. Nothing is stripped, so every chunk is a slice of the
document and its extent is exact. Units are Haystack's: the delimited pieces, counted as it
counts them (two spaces in a row make an extra "word" holding one space).
"""

from ragsim.errors import RequestError
from ragsim.text.extents import Extent, Split
from ragsim.fields import get_choice, get_int

# split_by -> (delimiter, unit name shown to people); haystack's _CHARACTER_SPLIT_BY_MAPPING.
SPLIT_BY = {
    "word": (" ", "words"),
    "passage": ("\n\n", "passages"),
    "line": ("\n", "lines"),
    "period": (".", "sentences"),
    "page": ("\f", "pages"),
}


def windows(n_units: int, length: int, step: int) -> list[tuple[int, int]]:
    """Unit ranges `[a, b)` of `more_itertools.windowed(units, length, step=step)` without the padding.

    The first window holds the first `length` units; after it, one window is yielded per `step`
    items of (the remaining units + padding of `length - 1` when step >= length, else `step - 1`).
    """
    if n_units == 0:
        return []
    out = [(0, min(length, n_units))]
    if n_units <= length:
        return out
    padding = length - 1 if step >= length else step - 1
    for j in range(1, (n_units - length + padding) // step + 1):
        a = j * step
        out.append((a, min(a + length, n_units)))
    return out


def window_count(n_units: int, length: int, step: int) -> int:
    """`len(windows(n_units, length, step))`, by arithmetic: the most chunks Haystack makes (windows
    adding no new text are skipped, short ones glued on)."""
    if n_units <= length:
        return 1 if n_units else 0
    padding = length - 1 if step >= length else step - 1
    return 1 + (n_units - length + padding) // step


def count(doc, chunking: dict, size: int, overlap: int) -> int:
    """The most chunks `split` makes (`window_count` over the delimited units), before splitting;
    0 for a split_by it will refuse."""
    split_by = chunking.get("split_by", "word")
    delimiter = SPLIT_BY.get(split_by, ("", ""))[0] if isinstance(split_by, str) else ""
    if not delimiter:
        return 0
    bounds = doc.memo.get(("haystack", delimiter))
    n = len(bounds) - 1 if bounds is not None else doc.text.count(delimiter) + 1
    return window_count(n, size, size - overlap) if doc.text else 0


def split(doc, chunking: dict) -> Split:
    split_by = get_choice(chunking, "split_by", "chunking.split_by", tuple(SPLIT_BY), default="word")
    length = get_int(chunking, "size", "chunking.size", default=200, minimum=1)
    overlap = get_int(chunking, "overlap", "chunking.overlap", default=0, minimum=0)
    if overlap >= length:
        raise RequestError(
            "chunking.overlap",
            f"Haystack needs split_overlap smaller than split_length (got {overlap} and {length}); lower the overlap.",
        )
    threshold = get_int(chunking, "split_threshold", "chunking.split_threshold", default=0, minimum=0)
    delimiter, unit = SPLIT_BY[split_by]
    text = doc.text
    if not text:
        return Split((), unit, 0)  # Haystack skips an empty document

    # Unit i is text[bounds[i]:bounds[i + 1]]: the delimiter stays on the unit before it. The units
    # depend on the text alone, so they are kept on the index for the next move.
    bounds = doc.memo.get(("haystack", delimiter))
    if bounds is None:
        bounds = [0]
        d = len(delimiter)
        pos = text.find(delimiter)
        while pos != -1:
            bounds.append(pos + d)
            pos = text.find(delimiter, pos + d)
        bounds.append(len(text))
        doc.memo[("haystack", delimiter)] = bounds
    n = len(bounds) - 1

    step = length - overlap
    chunks: list[list[int]] = []  # [start, end, units]
    covered = 0
    for index, (a, b) in enumerate(windows(n, length, step)):
        # A window adding no text past the units already covered is skipped (only with overlap).
        if overlap > 0 and chunks and bounds[max(a, covered)] == bounds[b] and max(a, covered) <= b:
            continue
        covered = max(covered, b)
        if b - a < threshold and chunks:
            # Glued on after the overlap units, which the previous chunk already holds.
            prev = chunks[-1]
            glue_from = bounds[min(a + overlap, b)]
            if glue_from < bounds[b]:
                if glue_from != prev[1]:
                    raise AssertionError("Haystack glued a window that does not follow the previous chunk")
                prev[1] = bounds[b]
            prev[2] += max(0, b - (a + overlap))
        elif bounds[b] > bounds[a]:
            chunks.append([bounds[a], bounds[b], b - a])
    return Split(tuple(Extent(s, e, u) for s, e, u in chunks), unit, n)
