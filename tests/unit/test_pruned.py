"""The pruned move (`ranking.MaxScore`, also the question sets' own ranking): the
top k and any chunk's rank from the chunks that can reach them, equal to the full ranking bit for
bit, with the chunks holding only common terms never scored."""

import random

import pytest

from ragsim.rank import ranking, weights
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


def _maxscore(req, corpus, variant):
    terms = weights.Terms(corpus.lengths, corpus.occurrence, variant, req.k1, req.b, req.delta)
    return ranking.MaxScore(terms, req.query_terms)


def test_the_pruned_top_and_ranks_equal_the_full_ranking_bit_for_bit():
    text = _text()
    for variant in ("lucene", "robertson", "atire", "bm25l", "bm25+"):
        for chunking in ({"unit": "words", "size": 12, "overlap": 4}, {"unit": "chars", "size": 70, "overlap": 10}):
            req, corpus = _corpus(text, "the w1 and w2 the of w3 absent", chunking, variant)
            args = (req.query_terms, corpus.lengths, corpus.occurrences, variant, req.k1, req.b, req.delta)
            scores = ranking.score_all(*args)
            order = ranking.rank(scores)
            pruned = _maxscore(req, corpus, variant)
            assert pruned.top(5) == order[:5], (variant, chunking)
            if variant not in ("bm25l", "bm25+"):  # those give every chunk a score: all are computed
                assert len(pruned.scored) < len(scores) / 2  # chunks holding only common terms were never scored
            assert all(pruned.best_rank([p]) == order.index(p) + 1 for p in range(len(scores)))
            assert all(pruned.score_of(p) == scores[p] for p in range(len(scores)))  # bit for bit, scored or not


def test_only_common_terms_still_rank_exactly():
    text = _text()
    req, corpus = _corpus(text, "the and of the", {"unit": "words", "size": 12, "overlap": 4})
    scores = ranking.score_all(req.query_terms, corpus.lengths, corpus.occurrences, "lucene", req.k1, req.b, req.delta)
    pruned = _maxscore(req, corpus, "lucene")
    assert pruned.top(7) == ranking.rank(scores)[:7]
    assert pruned.best_rank([3, 9]) == min(ranking.rank(scores).index(p) for p in (3, 9)) + 1


def test_a_span_in_a_low_chunk_gets_its_exact_rank_without_every_score():
    """A span held only by chunks of common terms: its rank is counted among the chunks that could
    tie or beat it, so the column of every score is still not needed; the verdict equals the full wire's."""
    text = _text()
    words = text.split()
    at = next(i for i in range(len(words) - 3) if all(w in ("the", "and", "of") for w in words[i:i + 4]))
    start = len(" ".join(words[:at])) + 1
    end = start + len(" ".join(words[at:at + 4]))
    request = {"documents": [{"id": "d", "title": "", "text": text}], "query": "w1 the w2",
               "chunking": {"unit": "words", "size": 12, "overlap": 4}, "retrieval": {"k": 3},
               "span": {"doc": "d", "start": start, "end": end}, "wire": "binary"}
    for query in ("w1 the w2", "w1 w2 the"):
        request["query"] = query
        full, top = simulate(request, Session()), simulate({**request, "scores": "top"}, Session())
        assert top["verdict"] == full["verdict"] and top["verdict"]["kind"] == "ranked_out"
        assert top["chunk_bytes"]["ranks"] == full["chunk_bytes"]["ranks"]
        assert top["chunk_bytes"]["top"] == full["chunk_bytes"]["top"]
        assert "score" not in top["chunk_bytes"]["columns"]  # the ranked chunks' scores instead
        assert set(top["chunk_bytes"]["scores"]) == {str(p) for p in [*full["chunk_bytes"]["top"],
                                                                     *map(int, full["chunk_bytes"]["ranks"])]}


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


def _ahead_by_scores(scores, s, p):
    return sum(1 for x in scores if x > s) + sum(1 for x in scores[:p] if x == s)


@pytest.mark.slow
def test_chunks_ahead_of_a_score_are_counted_as_the_full_ranking_counts_them():
    """`MaxScore.ahead(s, p)` (the streamed eval's span ranks): the chunks scoring above s
    and those scoring s before position p, equal to a count over every score, for every chunk's own
    score and position (then 1 + it is the chunk's rank), for scores between them and for 0, with
    shared tables (a question set's) too; above a high score only the chunks that could reach it are scored."""
    text = _text(seed=26)
    for variant in ("lucene", "robertson", "atire", "bm25l", "bm25+"):
        for chunking in ({"unit": "words", "size": 12, "overlap": 4}, {"unit": "chars", "size": 70, "overlap": 10}):
            for shared in (False, True):
                req, corpus = _corpus(text, "the w1 and w2 the of w3 absent", chunking, variant)
                args = (req.query_terms, corpus.lengths, corpus.occurrences, variant, req.k1, req.b, req.delta)
                scores = ranking.score_all(*args)
                order = ranking.rank(scores)
                terms = weights.Terms(corpus.lengths, corpus.occurrence, variant, req.k1, req.b, req.delta, shared=shared)
                n = len(scores)
                top = max(scores)
                pruned = ranking.MaxScore(terms, req.query_terms)
                assert pruned.ahead(top, n) == scores.count(top)
                if variant not in ("bm25l", "bm25+"):  # those give every chunk a score: all are computed
                    assert len(pruned.scored) < n / 4, (variant, chunking, shared)
                probes = sorted(set(scores))
                probes += [(a + b) / 2 for a, b in zip(probes, probes[1:])] + [0.0, top * 2]
                for s in probes[::7] + [0.0, top, probes[len(probes) // 2]]:
                    for p in (0, 1, n // 3, n - 1, n):
                        assert pruned.ahead(s, p) == _ahead_by_scores(scores, s, p), (variant, chunking, shared, s, p)
                for p in range(0, n, 5):
                    assert 1 + ranking.MaxScore(terms, req.query_terms).ahead(scores[p], p) == order.index(p) + 1
