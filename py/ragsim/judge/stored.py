"""Stored chunks (SPEC section 11): the chunks a real pipeline stored, placed in their documents.

    al = align([{"id": "a1", "text": ..., "doc": "guide.pdf", "start": None, "end": None}, ...],
               {"guide.pdf": source_text})          # sources optional: rebuilt from the chunks
    al.chunks        # Placed, in store order: extent and placement of each
    al.documents     # Document per document: its text (source or rebuilt), gaps
    to_splits(al)    # {doc: StoredSplit}: the placed chunks as the engine's Split, unit "chars"

Placement, per document (`align`):
- `offsets`: the store's start (and end; a start alone means start + the text's length) and the
  source's text there equals the chunk;
- `exact`: the first verbatim occurrence *after* the previous chunk's start (the hint), else the
  first anywhere. "After", not SPEC's "at or after": every splitter starts each chunk after the
  previous one, so a chunk equal to its predecessor (a repeated paragraph, a periodic text) lands on
  its own occurrence rather than on the previous chunk's;
- `whitespace`: the same rule with runs of whitespace treated as equal (leading and trailing
  whitespace ignored); the extent covers the source's own characters, first to last matched;
- `unplaced`: none of these (an empty chunk is always unplaced).
"Previous" is in the order of the store's start offsets when every chunk of the document has one
(the offsets may be stale, the order is still right), else in store order.

Without a source, a document is rebuilt (`rebuild`) from its chunks in that same order, each joined
to the text so far at their longest suffix-prefix overlap; where a chunk shares nothing with it a
gap of unknown length is recorded at the rebuilt text's position; the chunks are then placed in the
rebuilt text by the same rules. Source documents that hold no chunk are listed with 0 chunks.
"""

from dataclasses import dataclass, field
from typing import NamedTuple

from ragsim.errors import RequestError
from ragsim.text.extents import Split
from ragsim.judge.stored_search import INDEX_FROM, Source

PLACEMENTS = ("offsets", "exact", "whitespace", "unplaced")
PROBE = 16  # the prefix `overlap` looks for first: an overlap this long or longer starts with it


@dataclass(frozen=True)
class Stored:
    """One chunk as the store holds it: its own id, text, document and offsets (None when absent)."""

    id: str
    text: str
    doc: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Placed:
    """A stored chunk placed in its document: `[start, end)` code points (None when unplaced)."""

    id: str
    doc: str
    text: str
    start: int | None
    end: int | None
    placement: str


@dataclass(frozen=True)
class Document:
    """A document's text: its source, or (`rebuilt`) its chunks joined, with the gaps' positions."""

    id: str
    text: str
    rebuilt: bool
    gaps: tuple[int, ...] = ()


@dataclass(frozen=True)
class Alignment:
    chunks: tuple[Placed, ...]  # store order
    documents: tuple[Document, ...]  # in order of first chunk, then sources without chunks
    _rows: dict = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self):
        rows: dict[str, list[Placed]] = {d.id: [] for d in self.documents}
        for c in self.chunks:
            rows[c.doc].append(c)
        object.__setattr__(self, "_rows", rows)

    def texts(self) -> dict[str, str]:
        return {d.id: d.text for d in self.documents}

    def of(self, doc: str) -> list[Placed]:
        """All chunks of `doc`, in store order."""
        return self._rows[doc]

    def placed(self, doc: str) -> list[Placed]:
        """The placed chunks of `doc` in document order (start, end, store order)."""
        return sorted((c for c in self._rows[doc] if c.start is not None), key=lambda c: (c.start, c.end))


class StoredSplit(NamedTuple):
    """A document's placed chunks as the engine ranks them, with the store's ids row by row."""

    split: Split
    ids: tuple[str, ...]
    unplaced: tuple[str, ...]


# ---------------------------------------------------------------------------------------------
# Reading plain data


def _offset(value, field: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RequestError(field, f"{field} must be a non-negative integer or null (got {value!r}).")
    return value


def _string(value, field: str) -> str:
    if not isinstance(value, str):
        raise RequestError(field, f"{field} must be a string (got {type(value).__name__}).")
    return value


def read_chunks(raw) -> list[Stored]:
    """Check the plain data `[{"id", "text", "doc", "start", "end"}]` and return `Stored` chunks."""
    if not isinstance(raw, (list, tuple)):
        raise RequestError("chunks", "chunks must be a list of {id, text, doc, start, end} objects.")
    out, seen = [], {}
    for i, c in enumerate(raw):
        f = f"chunks[{i}]"
        if not isinstance(c, dict):
            raise RequestError(f, f"{f} must be an object with id, text and doc.")
        cid = _string(c.get("id"), f"{f}.id")
        if cid in seen:
            raise RequestError(f"{f}.id", f"{f}.id {cid!r} repeats chunks[{seen[cid]}]'s; give every chunk its own id.")
        seen[cid] = i
        start, end = _offset(c.get("start"), f"{f}.start"), _offset(c.get("end"), f"{f}.end")
        if start is not None and end is not None and end < start:
            raise RequestError(f"{f}.end", f"{f}.end ({end}) is before its start ({start}).")
        out.append(Stored(cid, _string(c.get("text"), f"{f}.text"), _string(c.get("doc"), f"{f}.doc"), start, end))
    return out


def read_sources(raw) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise RequestError("sources", "sources must be an object {document id: text}.")
    return {_string(k, "sources"): _string(v, f"sources[{k!r}]") for k, v in raw.items()}


# ---------------------------------------------------------------------------------------------
# Alignment


def align(chunks, sources=None, *, index_from: int = INDEX_FROM) -> Alignment:
    """Place every stored chunk (plain data or `Stored`) in its source (`{doc id: text}`) or, for a
    document without one, in its rebuilt text. `index_from`: see `stored_search.Source`."""
    given = isinstance(chunks, (list, tuple)) and all(isinstance(c, Stored) for c in chunks)
    stored = list(chunks) if given else read_chunks(chunks)
    texts = read_sources(sources)
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(stored):
        by_doc.setdefault(c.doc, []).append(i)
    placed: list = [None] * len(stored)
    documents = []
    for doc, rows in by_doc.items():
        order = walk_order([stored[i] for i in rows], rows)
        if doc in texts:
            document = Document(doc, texts[doc], False)
        else:
            text, gaps = rebuild([stored[i].text for i in order])
            document = Document(doc, text, True, gaps)
        source, after = Source(document.text, index_from), 0
        for i in order:
            placed[i] = place(stored[i], source, after)
            if placed[i].start is not None:
                after = placed[i].start + 1
        documents.append(document)
    documents += [Document(d, t, False) for d, t in texts.items() if d not in by_doc]
    return Alignment(tuple(placed), tuple(documents))


def walk_order(chunks: list[Stored], rows: list[int]) -> list[int]:
    """`rows` (the chunks' store positions) in the order the walk visits them: by the store's start
    offsets when every chunk has one (a start, or an end less its length; ties in store order),
    else as stored."""
    if all(c.start is not None or c.end is not None for c in chunks):
        keys = [c.start if c.start is not None else c.end - len(c.text) for c in chunks]
        return [r for _, r in sorted(zip(keys, rows))]
    return list(rows)


def place(c: Stored, source: Source, after: int) -> Placed:
    """Place one chunk: its offsets if they hold, else `source.find` from the hint `after`."""
    text = source.text
    if c.text:
        start = c.start if c.start is not None else (None if c.end is None else c.end - len(c.text))
        if start is not None and start >= 0:
            end = c.end if c.end is not None else start + len(c.text)
            if end <= len(text) and text[start:end] == c.text:
                return Placed(c.id, c.doc, c.text, start, end, "offsets")
        found = source.find(c.text, after)
        if found is not None:
            kind, start, end = found
            return Placed(c.id, c.doc, c.text, start, end, kind)
    return Placed(c.id, c.doc, c.text, None, None, "unplaced")


# ---------------------------------------------------------------------------------------------
# Rebuilding a document from its chunks


def overlap(a: str, b: str) -> int:
    """The length of the longest suffix of `a` that is a prefix of `b` (at most the shorter length).

    Candidates start where `b`'s first PROBE characters occur in `a`'s tail, left to right (so the
    longest comes first), each checked with one comparison; overlaps shorter than PROBE are checked
    one by one. Every step is a str method (C speed), where KMP's failure table would take a Python
    step per character of every chunk."""
    m = min(len(a), len(b))
    if not m:
        return 0
    tail = a[len(a) - m :]
    probe = b[: min(m, PROBE)]
    i = tail.find(probe)
    while i >= 0:
        if b.startswith(tail[i:]):
            return m - i
        i = tail.find(probe, i + 1)
    for k in range(min(m, PROBE) - 1, 0, -1):
        if tail.endswith(b[:k]):
            return k
    return 0


def rebuild(texts: list[str]) -> tuple[str, tuple[int, ...]]:
    """The chunks' texts joined, each at its longest overlap with the text so far; and the positions
    in the result where two neighbours shared nothing (a gap of unknown length). Empty texts are skipped."""
    cap = max(map(len, texts), default=0)
    parts, gaps, length, tail = [], [], 0, ""
    for t in texts:
        if not t:
            continue
        k = overlap(tail, t)
        if parts and k == 0:
            gaps.append(length)
        piece = t[k:]
        parts.append(piece)
        length += len(piece)
        tail = (tail + piece)[-cap:]
    return "".join(parts), tuple(gaps)


# ---------------------------------------------------------------------------------------------
# What the rest of the engine and the report read


def to_splits(al: Alignment) -> dict[str, StoredSplit]:
    """Per document, its placed chunks as a `Split` in document order (unit "chars", units = the
    extent's length), the store ids row by row, and the ids of the chunks left unplaced."""
    out = {}
    for d in al.documents:
        rows = al.placed(d.id)
        split = Split([(c.start, c.end, c.end - c.start) for c in rows], "chars", len(d.text))
        unplaced = tuple(c.id for c in al.of(d.id) if c.start is None)
        out[d.id] = StoredSplit(split, tuple(c.id for c in rows), unplaced)
    return out


def documents_report(al: Alignment) -> list[dict]:
    """SPEC section 11's `documents`, with each rebuilt document's `gaps` added."""
    out = []
    for d in al.documents:
        rows = al.of(d.id)
        placed = sum(c.start is not None for c in rows)
        out.append({"id": d.id, "chunks": len(rows), "placed": placed, "unplaced": len(rows) - placed,
                    "rebuilt": d.rebuilt, "gaps": list(d.gaps)})
    return out


def chunks_report(al: Alignment, count_tokens=None) -> list[dict]:
    """SPEC section 11's `chunks`, in store order; `tokens` is null without a counter."""
    return [{"id": c.id, "doc": c.doc, "start": c.start, "end": c.end, "placement": c.placement,
             "chars": len(c.text), "tokens": None if count_tokens is None else count_tokens(c.text)}
            for c in al.chunks]
