"""The pruned move (issue 14, `ranking.Pruned`): the top k and single ranks from the chunks a rarer query
term is in, equal to the full ranking; and where it cannot decide, it says so instead of guessing."""

import random

from ragsim.rank import bm25
from ragsim.rank import ranking
from ragsim.judge import pipeline
from ragsim.wire.api import Session, simulate
from ragsim.wire.request import read_request


def _text(seed=14, n=4000):
    rng = random.Random(seed)
    common, rare = ["the", "and", "of"], [f"w{i}" for i in range(40)]
    return " ".join(rng.choice(common) if rng.random() < 0.5 else rng.choice(rare) for _ in range(n))


def _corpus(text, query, chunking, variant="lucene", k=5):
    request = {"documents": [{"id": "d", "title": "", "text": text}], "query": query, "chunking": chunking,
               "retrieval": {"k": k, "variant": variant}, "wire": "binary", "scores": "top"}
    req = read_request(request)
    return req, pipeline.split_all(req, Session(), req.chunking)


def test_the_pruned_top_and_ranks_equal_the_full_ranking_and_unknown_ranks_are_none():
    text = _text()
    for variant in ("lucene", "robertson", "atire"):
        for chunking in ({"unit": "words", "size": 12, "overlap": 4}, {"unit": "chars", "size": 70, "overlap": 10}):
            req, corpus = _corpus(text, "the w1 and w2 the of w3 absent", chunking, variant)
            args = (req.query_terms, corpus.lengths, corpus.occurrences, variant, req.k1, req.b, req.delta)
            scores = ranking.score_all(*args)
            order = ranking.rank(scores)
            pruned = ranking.Pruned.build(*args, 5)
            assert pruned is not None, (variant, chunking)
            assert pruned.top == order[:5]
            assert len(pruned.candidates) < len(scores)  # chunks holding only common terms were never scored
            ranks = [pruned.rank_of(p) for p in range(len(scores))]
            known = [p for p, r in enumerate(ranks) if r is not None]
            assert len(known) > 10 and None in ranks
            assert all(ranks[p] == order.index(p) + 1 for p in known)
            assert all(pruned.score_of(p) == scores[p] for p in range(len(scores)))  # bit for bit, scored or not


def test_it_steps_aside_where_it_cannot_decide():
    text = _text()
    chunking = {"unit": "words", "size": 12, "overlap": 4}
    for query, variant in (("the and of", "lucene"),  # only common terms: nothing to prune with
                           ("the w1", "bm25l"),  # BM25L gives every chunk a score for an absent term
                           ("the w1", "bm25+")):
        req, corpus = _corpus(text, query, chunking, variant)
        assert ranking.Pruned.build(req.query_terms, corpus.lengths, corpus.occurrences, variant, req.k1, req.b,
                                 req.delta, 5) is None, query


def test_a_span_in_a_low_chunk_gets_its_rank_from_every_score():
    """A span held only by chunks of common terms: the pruned ranking cannot count its rank, so the
    move scores every chunk; the verdict equals the full wire's."""
    text = _text()
    words = text.split()
    at = next(i for i in range(len(words) - 3) if all(w in ("the", "and", "of") for w in words[i:i + 4]))
    start = len(" ".join(words[:at])) + 1
    end = start + len(" ".join(words[at:at + 4]))
    request = {"documents": [{"id": "d", "title": "", "text": text}], "query": "w1 the w2",
               "chunking": {"unit": "words", "size": 12, "overlap": 4}, "retrieval": {"k": 3},
               "span": {"doc": "d", "start": start, "end": end}, "wire": "binary"}
    full, top = simulate(request, Session()), simulate({**request, "scores": "top"}, Session())
    assert top["verdict"] == full["verdict"] and top["verdict"]["kind"] == "ranked_out"
    assert top["chunk_bytes"]["ranks"] == full["chunk_bytes"]["ranks"]
    assert top["chunk_bytes"]["top"] == full["chunk_bytes"]["top"]
    assert "score" in top["chunk_bytes"]["columns"]  # every chunk was scored: the column is sent after all
    assert "scores" not in top["chunk_bytes"]
    # and a span the pruned ranking can count: no column, the ranked chunks' scores instead
    request["query"] = "w1 w2 the"
    request["span"] = None
    full, top = simulate(request, Session()), simulate({**request, "scores": "top"}, Session())
    assert "score" not in top["chunk_bytes"]["columns"] and top["chunk_bytes"]["top"] == full["chunk_bytes"]["top"]
    assert set(top["chunk_bytes"]["scores"]) == {str(p) for p in full["chunk_bytes"]["top"]}


def test_scores_top_needs_the_binary_wire():
    r = simulate({"documents": [{"id": "d", "title": "", "text": "a b"}], "query": "a", "scores": "top",
                  "chunking": {"unit": "words", "size": 1}, "retrieval": {"k": 1}})
    assert r["error"]["field"] == "scores" and "binary" in r["error"]["message"]


def test_the_core_benchmark_prunes_where_the_page_does():
    """bench_core reports the move the page asks for: its threshold is the page's."""
    import pathlib
    import re
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    page = re.search(r"export const PRUNE_CHUNKS = ([\d_]+);", (root / "assets/js/compute.js").read_text())
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        import bench_core
    finally:
        sys.path.remove(str(root / "benchmarks"))
    assert page and int(page.group(1).replace("_", "")) == bench_core.PRUNE_CHUNKS
