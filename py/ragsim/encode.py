"""Step 3 of `api.simulate`: a judged corpus -> the response (SPEC section 6), as plain dicts.

The chunks go out as SPEC's list of objects, or, when the request asks for `"wire": "columns"` (the
page's worker does), as the same values in columns, `chunk_columns`.
"""

import math
import statistics

from . import dense, explore
from . import tokens as ragsim_tokens
from .pipeline import Judged, context, fact_verdict, verdict, whole_ranks
from .request import Request


def tokens_of(text: str) -> int:
    """SPEC section 5's token estimate: a token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def context_tokens(req: Request, text: str) -> int:
    """Tokens of a context: exact with the request's top-level tokenizer (SPEC section 9), else the estimate."""
    return tokens_of(text) if req.tokenizer is None else ragsim_tokens.get(req.tokenizer).count(text)


def response(req: Request, judged: Judged) -> dict:
    """The response to `req` from its judged corpus (without the optional questions' fields)."""
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
                                   None if req.fact is None else [judged.ranks[p] for p in judged.answering],
                                   req.k),
    }
    if req.wire == "columns":
        del out["chunks"]
        out["chunk_columns"] = chunk_columns(req, judged)
    else:
        out["chunks"] = chunk_objects(req, judged)
    if judged.dense is not None:
        dense.encode(req, judged, out)
    return out


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
        **overlap_stats([o for o in judged.shared if o is not None]),
    }


def overlap_stats(overlaps: list[int]) -> dict:
    if not overlaps:
        return {"overlap_min": None, "overlap_median": None, "overlap_max": None, "boundaries_without_overlap": 0}
    return {
        "overlap_min": min(overlaps),
        "overlap_median": statistics.median(overlaps),
        "overlap_max": max(overlaps),
        "boundaries_without_overlap": sum(1 for o in overlaps if o == 0),
    }
