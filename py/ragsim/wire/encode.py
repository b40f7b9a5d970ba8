"""Step 3 of `api.simulate`: a judged corpus -> the response (SPEC section 6), as plain dicts.

The chunks go out as SPEC's list of objects; as the same values in JSON columns, `chunk_columns`,
when the request asks for `"wire": "columns"`; or, for `"wire": "binary"` (the page's worker), as
`chunk_bytes`: the per-chunk numbers packed in one little-endian byte string (`data`, which
`api.simulate_packed` hands over beside the JSON) and in JSON only what needs a rank: the top k in
rank order and the ranks of the chunks holding the span or the fact. Nothing here sorts the whole
corpus for it. docs/wire.md describes the layout.
"""

import array
import math
import struct
import sys
from collections import Counter

from ragsim import limits
from ragsim.split.semantic_split import needs as semantic_needs, trimmed
from ragsim.text import explore
from ragsim.judge.questions import read_question_set
from ragsim.judge.pipeline import Judged, context, context_tokens, fact_verdict, overlap_stats, tokens_of, verdict, whole_ranks  # noqa: F401
from ragsim.wire import encode_dense
from ragsim.wire.request import Request


def response(req: Request, judged: Judged) -> dict:
    """The verdict's response to `req` from its judged corpus: every field but the other answers'
    (wire.answers writes those, and `semantic`'s, after it)."""
    c = judged.corpus
    limits.check_context(sum(c.ends[p] - c.starts[p] for p in judged.top))  # before joining them
    sent = context(req, judged)
    v = verdict(req, judged)
    out = {
        "chunks": None,
        "verdict": v,
        "fact": fact_verdict(req, judged),
        "stats": stats(req, judged, sent, v["best_rank"]),
        "context": sent,
        "documents": judged.corpus.documents,
        "query_terms": req.query_terms,
        "at_k": explore.at_k_table(None if req.span is None else whole_ranks(judged),
                                   None if req.fact is None else [rank_of(judged)(p) for p in judged.answering],
                                   req.k),
    }
    if req.wire == "columns":
        del out["chunks"]
        out["chunk_columns"] = chunk_columns(req, judged)
    elif req.wire == "binary":
        del out["chunks"]
        out["chunk_columns"] = {}  # encode_dense.encode adds `read_end` here; packed below
    else:
        out["chunks"] = chunk_objects(req, judged)
    if judged.dense is not None:
        encode_dense.encode(req, judged, out)
    if req.wire == "binary":
        out["chunk_bytes"] = chunk_bytes(req, judged, out.pop("chunk_columns").get("read_end"))
    return out


def rank_of(judged: Judged):
    """`position -> rank` without sorting every chunk when the pipeline can say it (`Judged.rank_of`)."""
    return getattr(judged, "rank_of", None) or judged.ranks.__getitem__


def chunk_objects(req: Request, judged: Judged) -> list[dict]:
    """SPEC section 6's chunks: one object per chunk, in position order."""
    c, k = judged.corpus, req.k
    ids = [d["id"] for d in req.docs]
    return [
        {"doc": ids[di], "number": pos + 1, "start": s, "end": e, "units": u, "score": sc, "rank": r,
         "retrieved": r <= k, "holds": judged.held.get(pos), "overlap_prev": o}
        for pos, di, s, e, u, sc, r, o in zip(range(len(c.starts)), c.doc_of, c.starts, c.ends, c.units,
                                              judged.scores, judged.ranks, judged.shared)
    ]


def chunk_columns(req: Request, judged: Judged) -> dict:
    """The same chunks as columns (a tenth of the encoding work); `number` is the position + 1 and
    `retrieved` is `rank <= k`, as in the objects."""
    c = judged.corpus
    return {"ids": [d["id"] for d in req.docs], "doc": c.doc_of, "start": c.starts, "end": c.ends,
            "units": c.units, "score": judged.scores, "rank": judged.ranks,
            "holds": {str(p): h for p, h in judged.held.items()}, "overlap_prev": judged.shared}


# The binary wire: (name, array typecode, the type named on the wire), in byte order of the data.
# The float column goes first, so every column starts aligned to its own item size. A chunk's
# document and overlap_prev are not sent: they follow from `documents[].chunks` (chunks are in
# document order) and from the previous chunk's end.
BYTE_COLUMNS = (("score", "d", "f64"), ("start", "i", "i32"), ("end", "i", "i32"), ("units", "i", "i32"))
assert array.array("i").itemsize == 4 and array.array("d").itemsize == 8


def _packed(typecode: str, values) -> bytes:
    if isinstance(values, array.array) and values.typecode == typecode and sys.byteorder == "little":
        return values.tobytes()  # a column the core keeps as an array already: one copy
    if not isinstance(values, list):
        values = list(values)
    # struct packs a list three times faster than array.array parses one (the same bytes).
    return struct.pack(f"<{len(values)}{typecode}", *values)


def _repeated(units: list) -> bytes | None:
    """The int32 bytes of a column whose values are all one number but perhaps the last (fixed
    windows' units), by repeating four bytes; None for any other column."""
    n = len(units)
    if not n or not isinstance(units, list):
        return None
    first = units[0]
    same = units.count(first)
    if same == n:
        return struct.pack("<i", first) * n
    if same == n - 1 and units[-1] != first:
        return struct.pack("<i", first) * (n - 1) + struct.pack("<i", units[-1])
    return None


def chunk_bytes(req: Request, judged: Judged, read_end: list | None = None) -> dict:
    """The chunks for `"wire": "binary"` (docs/wire.md): `data` holds each column of BYTE_COLUMNS (and
    `read_end` for dense and hybrid requests, -1 for a chunk read whole) one after the other,
    little-endian, `count` values each, from the byte offsets `columns` gives. `top` is the retrieved
    positions (0-based) in rank order, `ranks` the rank of each chunk that holds the span or the fact,
    by position; any other chunk's rank follows from the scores (best score first, ties by position),
    and a chunk is retrieved when its position is in `top`."""
    c = judged.corpus
    specs = list(BYTE_COLUMNS)
    if req.scores == "top" and judged.pruned is not None and judged._scores is None:
        # no score column: the scores of the chunks given a rank, below (a move that had to score
        # every chunk anyway, or dense and hybrid retrieval, send the column as usual)
        specs = specs[1:]
        values = {"start": c.starts, "end": c.ends, "units": c.units}
    else:
        values = {"score": judged.scores, "start": c.starts, "end": c.ends, "units": c.units}
    if read_end is not None:
        values["read_end"] = [-1 if e is None else e for e in read_end]
        specs.append(("read_end", "i", "i32"))
    parts, columns, at = [], {}, 0
    for name, code, kind in specs:
        part = _repeated(values[name]) if name == "units" else None
        if part is None:
            part = _packed(code, values[name])
        columns[name] = [kind, at]
        parts.append(part)
        at += len(part)
    rank = rank_of(judged)
    ranked = sorted(set(judged.held) | set(judged.answering))
    out = {"count": len(c.starts), "ids": [d["id"] for d in req.docs], "columns": columns,
           "holds": {str(p): h for p, h in judged.held.items()}, "top": list(judged.top),
           "ranks": {str(p): rank(p) for p in ranked}, "data": b"".join(parts)}
    if "score" not in columns:
        out["scores"] = {str(p): judged.score_of(p) for p in sorted({*judged.top, *ranked})}
    return out


def take_data(response: dict) -> bytes | None:
    """Take the binary wire's bytes out of `response` (None for any other wire, or a refusal)."""
    packed = response.get("chunk_bytes")
    return packed.pop("data", None) if isinstance(packed, dict) else None


def semantic(req: Request, judged: Judged, out: dict, store, questions=None) -> None:
    """SPEC section 12, after every run of the request: `semantic_needs` (the texts the host must
    embed, per pending document: the same key is named once), and a verdict of `pending` where the
    marked span's (or the fact's) document waits for its vectors. Each document's curve is in its
    `documents[i].semantic` already (rank.corpus), without `distances` and `positions` where the
    request's `semantic_have` names its key and the session kept it from an earlier request."""
    curves = judged.corpus.semantic
    if not any(c is not None for c in curves):
        return
    out["semantic_needs"] = semantic_needs([d["id"] for d in req.docs], curves, store)
    for entry, c in zip(out["documents"], curves):  # `semantic_have`: the curves the caller holds, left out
        if c is not None and not c["pending"] and c["key"] in req.semantic_have and c["key"] not in store.fresh:
            entry["semantic"] = trimmed(c)
    waiting = {i for i, c in enumerate(curves) if c is not None and c["pending"]}
    if req.span is not None and req.span[0] in waiting:
        out["verdict"]["kind"] = "pending"
    if req.fact is not None and req.fact[0] in waiting:
        out["fact"]["kind"] = "pending"
    if waiting and out.get("questions"):  # a question with a span in a waiting document: pending, not cut
        _questions_pending(read_question_set(questions, req.docs), waiting, out)


def _questions_pending(questions, waiting: set, out: dict) -> None:
    """Each question (SPEC section 8) with a span in a document still waiting for its vectors gets
    the verdict `pending` and no needed_k; `question_stats` counts them as `pending`. Its metrics stay
    those of the chunks there are (none in that document)."""
    stats = out["question_stats"]
    for q, r in zip(questions, out["questions"]):
        if any(d in waiting for d, _, _ in q.spans) and r["verdict"] != "pending":
            stats[r["verdict"]] -= 1
            stats["pending"] = stats.get("pending", 0) + 1
            r["verdict"], r["needed_k"] = "pending", None


def stats(req: Request, judged: Judged, sent: str, best_rank) -> dict:
    """SPEC section 5's numbers."""
    c = judged.corpus
    units_stored = sum(c.units)
    estimate = tokens_of(sent)
    tokens = context_tokens(req, sent)
    parts = sum(1 for h in judged.held.values() if h == "part")
    return {
        "unit": c.unit or req.chunking.get("unit", "words"),
        "units_in_documents": c.units_in_documents,
        "chunks": len(c.starts),
        "units_stored": units_stored,
        "amplification": units_stored / c.units_in_documents if c.units_in_documents else None,
        "chunks_whole": len(judged.held) - parts,
        "chunks_part": parts,
        "retrieved": len(judged.top),
        "best_rank": best_rank,
        "context_chars": len(sent),
        "context_tokens": tokens,
        "context_tokens_estimate": estimate,
        "tokenizer": req.tokenizer,
        "cost": tokens * req.price / 1_000_000,
        "price_per_million": req.price,
        "k": req.k,
        **overlap_stats(judged.overlap_counts()),
    }
