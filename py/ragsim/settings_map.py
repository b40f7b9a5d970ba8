"""The settings map (SPEC section 8): a grid of chunk sizes x overlaps, each cell the question set
evaluated at that setting, so a person can pick the cheapest setting that keeps every answer.

Sizes and overlaps are in the splitter's own unit. A pair the splitter refuses (an overlap not
smaller than the size, say) gives a null cell. Every cell splits the documents afresh but re-uses
their index (built once), and ranks each question by exact top-k with pruning (`topk`).
"""

from .errors import RequestError
from .questions import Question, chroma_scores, context_tokens, judge, rank_question
from .topk import Setting, Words, collection_paused

MAX_CELLS = 400
# The fields of a splitter that a map cell sets; a refusal naming one of them makes the cell null.
GRID_FIELDS = ("chunking.size", "chunking.overlap")


def _whole_numbers(value, field: str, minimum: int) -> list[int]:
    if not isinstance(value, list) or not value:
        raise RequestError(field, f"Give {field} as a non-empty list of whole numbers.")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise RequestError(field, f"Every entry of {field} must be a whole number of at least {minimum} (got {v!r}).")
        if v not in out:
            out.append(v)
    return out


def read_map(request: dict):
    """`(sizes, overlaps)` from the request's `map`, or None when it asks for none."""
    m = request.get("map")
    if m is None:
        return None
    if not isinstance(m, dict):
        raise RequestError("map", 'Give map as {"sizes": [...], "overlaps": [...]}.')
    sizes = _whole_numbers(m.get("sizes"), "map.sizes", 1)
    overlaps = _whole_numbers(m.get("overlaps"), "map.overlaps", 0)
    if len(sizes) * len(overlaps) > MAX_CELLS:
        raise RequestError("map", f"The map asks for {len(sizes) * len(overlaps)} cells ({len(sizes)} sizes x "
                                  f"{len(overlaps)} overlaps); ask for at most {MAX_CELLS}.")
    return sizes, overlaps


def cell(questions: list[Question], setting: Setting, k: int, price: float, analyzer=None, count=None) -> dict:
    """One cell: verdict counts, mean recall and IoU, and what the setting costs."""
    counts = {"intact": 0, "ranked_out": 0, "cut": 0}
    recall = iou = tokens = 0.0
    for q in questions:
        top = rank_question(q, setting, analyzer).top(k)
        counts[judge(q, top, setting, None)[0]] += 1
        scores = chroma_scores(q.refs, top, setting)
        recall += scores["recall"]
        iou += scores["iou"]
        tokens += context_tokens(top, setting, count)
    n = len(questions)
    return {
        **counts,
        "recall_mean": recall / n,
        "iou_mean": iou / n,
        "chunks": setting.n,
        "units_stored": sum(setting.units),
        "context_tokens_mean": tokens / n,
        "cost_mean": tokens / n * price / 1_000_000,
    }


def settings_map(words: Words, chunking: dict, retrieval: dict, k: int, questions: list[Question], price: float,
                 sizes: list[int], overlaps: list[int], session, count=None, known: Setting | None = None) -> dict:
    """`{"sizes", "overlaps", "cells"}`, `cells[i][j]` for `sizes[i]` and `overlaps[j]` or None.
    `known`, a Setting at `chunking` already ranked (the question set's own), stands for its cell."""
    rows = []
    with collection_paused():
        for size in sizes:
            row = []
            for overlap in overlaps:
                at = dict(chunking, size=size, overlap=overlap)
                try:
                    setting = known if known is not None and at == chunking else Setting(words, at, session, retrieval)
                except RequestError as e:
                    if e.field not in GRID_FIELDS:
                        raise
                    row.append(None)
                    continue
                row.append(cell(questions, setting, k, price, retrieval.get("analyzer"), count))
                if setting is not known:
                    setting.release()
            rows.append(row)
    return {"sizes": sizes, "overlaps": overlaps, "cells": rows}

