"""SPEC section 10's fields of a response (dense and hybrid retrieval), written from the plain
reports of `rank.dense`: the drag's (`Judged.dense`: method, pending, where the model stops
reading each chunk), the chunks still to embed, and a question ranker's (`QuestionRanker.report`).
"""

from ragsim.text import wordpiece


def encode(req, judged, out: dict) -> None:
    """Add each chunk's `truncated` and `read_end` (where the model stops reading, a code point of
    the document, or None) to the response `out`, and `dense`: how the ranking was made, what the
    verdict should say about truncation, and (`pending`) whether the host still has chunks to embed."""
    report, c = judged.dense, judged.corpus
    ends = [None if e is None else s + e for s, e in zip(c.starts, report["read_ends"])]
    if out.get("chunks") is not None:
        for chunk, end in zip(out["chunks"], ends):
            chunk["truncated"] = end is not None
            chunk["read_end"] = end
    else:
        out["chunk_columns"]["read_end"] = ends
    span_end = None if req.span is None else req.span[2]
    out["dense"] = {
        "method": report["method"],
        "ranked_by": "bm25" if report["pending"] else report["method"],
        "pending": report["pending"],
        "needs": [],
        "max_pieces": wordpiece.MAX_PIECES,
        "truncated": sum(e is not None for e in ends),
        "retrieved_truncated": [p + 1 for p in judged.top if ends[p] is not None],
        # chunks that hold the whole marked span but whose model stops before its end
        "answer_unread": sorted(p + 1 for p, h in judged.held.items()
                                if h == "whole" and ends[p] is not None and ends[p] < span_end),
    }
    if req.retriever.embedding is not None:  # the user's own model ranked: named on every verdict
        out["dense"]["model"] = req.retriever.embedding["model"]


def needs(req, out: dict) -> None:
    """After every run of the request (sweeps too): the chunks the host must still embed."""
    if "dense" in out and req.retriever.given is not None:
        out["dense"]["needs"] = [list(k) for k in req.retriever.given.missing]


def questions(report: dict, out: dict) -> None:
    """A question ranker's report (`rank.dense.QuestionRanker.report`) into the response's (or the
    audit's) `dense`: `questions_pending`, `question_needs` (from the page's cosines), and `pending`
    when any question waited."""
    d = out.setdefault("dense", {})
    d["questions_pending"] = report["pending"]
    d["question_needs"] = report["needs"]
    d["pending"] = d.get("pending", False) or report["pending"]
