"""Ranking a question set with every chunk's score summed in 32-bit lanes of one integer (topk):
the lanes only choose which chunks to score exactly, so the answers are the full ranking's."""

import random
import sys
from array import array

import pytest

from ragsim.rank import bm25, queries as topk
from ragsim.rank import ranking
from ragsim.wire.api import Session
from ragsim.text.index import terms
from ragsim.rank.queries import Setting, Words

UNIT = topk.LANE_SCALE  # the real lane unit, 2**-20
LUCENE = {"variant": "lucene", "k1": 1.2, "b": 0.75, "delta": 0.5, "analyzer": None}


def corpus(seed=3):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(120)] + ["the", "of", "a", "in"] * 10
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(300, 900))) for _ in range(4)]


def queries(seed=4, count=40):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(130)] + ["the", "of"]
    return [terms(" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 9)))) for _ in range(count)]


def setting_of(texts, chunking, retrieval=LUCENE):
    session = Session()
    return Setting(Words([session.index(t) for t in texts]), chunking, session, retrieval)


@pytest.mark.parametrize("scale", [16.0, 64.0, UNIT])
@pytest.mark.parametrize("chunking", [{"unit": "chars", "size": 120, "overlap": 30},
                                      {"unit": "words", "size": 12, "overlap": 0}])
@pytest.mark.parametrize("variant", ["lucene", "robertson"])
def test_lanes_give_the_full_rankings_top_k_and_ranks(monkeypatch, scale, chunking, variant):
    """At the real unit and at coarse ones (a unit of 1/16 of a score point puts many chunks within
    one unit of each other, so the margin must keep every chunk that could still be in the top k)."""
    monkeypatch.setattr(topk, "LANE_SCALE", scale)
    s = setting_of(corpus(), chunking, dict(LUCENE, variant=variant))
    tops = ranks = 0
    for qt in queries():
        full = ranking.rank(s.scores(qt))
        q = s.query(qt)
        for k in (1, 5, 12):
            assert q.top(k) == full[:k]
        rank = {c: i + 1 for i, c in enumerate(full)}
        for group in (full[5:7], full[40:41], full[-1:]):
            assert q.best_rank(group) == min(rank[c] for c in group)
        # the lanes decided (else this would test MaxScore only)
        exact = q.exact()
        tops += exact._lane_candidates(5) is not None
        exact._score(full[40:41])
        ranks += exact._lane_rank(full[40], exact.scored[full[40]]) is not None
    assert tops >= 30 and ranks >= 20


def test_a_query_whose_sums_could_overflow_a_lane_is_ranked_by_maxscore():
    s = setting_of(corpus(), {"unit": "chars", "size": 120, "overlap": 30})
    qt = ["w1"] * 3000 + ["w2"]  # 3,000 times a weight of a few points: sums past 2**31 units
    q = s.query(qt)
    assert q.top(5) == ranking.rank(s.scores(qt))[:5]
    assert (q._rough or q._exact)._lane_sum() is None


def test_lanes_at_least_marks_exactly_the_lanes_at_least_x():
    s = setting_of(["a b c d e f g h i j k l m n o p"], {"unit": "words", "size": 1, "overlap": 0})
    rng = random.Random(5)
    values = [rng.choice([0, 1, 2, 7, 1 << 20, (1 << 31) - 1]) for _ in range(s.n)]
    total = int.from_bytes(array(topk._LANE, values), sys.byteorder)
    for x in (0, 1, 2, 3, 8, 1 << 20, (1 << 31) - 1):
        bits = s.lanes_at_least(total, x)
        assert s.lane_positions(bits) == [p for p, v in enumerate(values) if v >= x]
        assert bits.bit_count() == sum(v >= x for v in values)


def test_a_settings_lanes_are_released_with_its_queries():
    s = setting_of(corpus(), {"unit": "chars", "size": 120, "overlap": 30})
    s.query(["w1", "w2"]).top(5)
    assert s.lanes[0]
    s.release()
    assert s.lanes == ({}, {}) and not s.queries
