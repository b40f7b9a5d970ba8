"""The settings map (SPEC section 8): a grid of chunk sizes x overlaps, each cell the question set
evaluated at that setting, so a person can pick the cheapest setting that keeps every answer.

Sizes and overlaps are in the splitter's own unit. A pair the splitter refuses (an overlap not
smaller than the size, say) gives a null cell. Every cell splits the documents afresh but re-uses
their index (built once), and ranks each question by exact top-k with pruning (`topk`).
"""

from ragsim.errors import RequestError
from ragsim.judge.questions import Question, chroma_scores, context_tokens, judge, rank_question
from ragsim.rank.queries import Setting, Words, collection_paused
from ragsim.split import registry
from ragsim.fields import shown

MAX_CELLS = 400


def _whole_numbers(value, field: str, minimum, numbers: bool = False) -> list:
    kind = "number" if numbers else "whole number"
    if not isinstance(value, list) or not value:
        raise RequestError(field, f"Give {field} as a non-empty list of {kind}s.")
    for v in value:
        ok = isinstance(v, (int, float)) and v - v == 0 if numbers else isinstance(v, int)
        if isinstance(v, bool) or not ok or v < minimum:
            raise RequestError(field, f"Every entry of {field} must be a {kind} of at least {minimum} (got {shown(v)}).")
    return list(dict.fromkeys(value))  # in order, duplicates dropped, in O(n)


def _axis(chunking: dict, i: int, minimum):
    """(least value, whether any real number) of the splitter's i-th grid field."""
    sp = registry.of(chunking or {})
    grid = registry.grid_fields(chunking or {})
    f = sp.field(grid[i]) if sp is not None and len(grid) > i else None
    if f is None or f.minimum is None:
        return minimum, False
    return f.minimum, f.number


def read_map(request: dict, chunking: dict | None = None):
    """`(sizes, overlaps)` from the request's `map`, or None when it asks for none. They are the
    values of the splitter's grid fields (registry): size and overlap for most, a threshold and a
    minimum size for a semantic chunker; a grid of one field takes one column, `overlaps: [0]`."""
    m = request.get("map")
    if m is None:
        return None
    if not isinstance(m, dict):
        raise RequestError("map", 'Give map as {"sizes": [...], "overlaps": [...]}.')
    sizes = _whole_numbers(m.get("sizes"), "map.sizes", *_axis(chunking, 0, 1))
    overlaps = _whole_numbers(m.get("overlaps"), "map.overlaps", *_axis(chunking, 1, 0))
    sp = registry.of(chunking or {})
    if sp is not None and sp.grid is not None and len(sp.grid) == 1 and len(overlaps) > 1:
        raise RequestError("map.overlaps", f"The {sp.name} map has one axis ({sp.grid[0]}): give map.overlaps as [0].")
    if len(sizes) * len(overlaps) > MAX_CELLS:
        raise RequestError("map", f"The map asks for {len(sizes) * len(overlaps)} cells ({len(sizes)} sizes x "
                                  f"{len(overlaps)} overlaps); ask for at most {MAX_CELLS}.")
    return sizes, overlaps


def cell(questions: list[Question], setting: Setting, k: int, price: float, analyzer=None, count=None) -> dict:
    """One cell: verdict counts, mean recall and IoU, and what the setting costs."""
    judged = []
    for q in questions:
        top = rank_question(q, setting, analyzer).top(k)
        scores = chroma_scores(q.refs, top, setting)
        judged.append((judge(q, top, setting, None)[0], scores["recall"], scores["iou"], context_tokens(top, setting, count)))
    return tally(judged, setting.n, sum(setting.units), price)


def tally(judged: list, chunks: int, units_stored: int, price: float) -> dict:
    """A cell from its questions' (verdict, recall, IoU, context tokens), in question order, and the
    setting's chunks and units stored (also a streamed run's cell: `host.jobs.eval_run.map_cells`)."""
    counts = {"intact": 0, "ranked_out": 0, "cut": 0}
    recall = iou = tokens = 0.0
    for verdict, r, i, t in judged:
        counts[verdict] += 1
        recall += r
        iou += i
        tokens += t
    n = len(judged)
    return {
        **counts,
        "recall_mean": recall / n,
        "iou_mean": iou / n,
        "chunks": chunks,
        "units_stored": units_stored,
        "context_tokens_mean": tokens / n,
        "cost_mean": tokens / n * price / 1_000_000,
    }


def settings_map(words: Words, chunking: dict, retrieval: dict, k: int, questions: list[Question], price: float,
                 sizes: list[int], overlaps: list[int], session, count=None, known: Setting | None = None) -> dict:
    """`{"sizes", "overlaps", "cells"}`, `cells[i][j]` for `sizes[i]` and `overlaps[j]` or None.
    `known`, a Setting at `chunking` already ranked (the question set's own), stands for its cell."""
    rows = []
    # The splitter's registered grid (size and overlap, in its own unit; none without a size): the
    # fields a cell sets, and a refusal naming one of them makes the cell null.
    grid = registry.grid_fields(chunking)
    refused = tuple(f"chunking.{name}" for name in grid)
    with collection_paused():
        for size in sizes:
            row = []
            for overlap in overlaps:
                at = dict(chunking, **dict(zip(grid, (size, overlap))))
                try:
                    setting = known if known is not None and at == chunking else Setting(words, at, session, retrieval)
                except RequestError as e:
                    if e.field not in refused:
                        raise
                    row.append(None)
                    continue
                row.append(cell(questions, setting, k, price, retrieval.get("analyzer"), count))
                if setting is not known:
                    setting.release()
            rows.append(row)
    return {"sizes": sizes, "overlaps": overlaps, "cells": rows}
