"""Dense and hybrid ranking in the core (SPEC section 10), on hand-computed cases."""

from fractions import Fraction

import pytest

from ragsim import dense, wordpiece

# Four chunks. BM25 ranks them 0, 2, 3, 1 (2 and 3 tie at 1.0: position order);
# the similarities rank them 1, 2, 0, 3.
BM25 = [2.0, 0.0, 1.0, 1.0]
SIMILARITIES = [0.1, 0.9, 0.5, -0.2]


def test_dense_ranks_by_similarity_ties_by_position():
    assert dense.rank(SIMILARITIES) == [1, 2, 0, 3]
    assert dense.rank([0.5, -0.1, 0.5, 0.7]) == [3, 0, 2, 1]
    assert dense.ranks_of([1, 2, 0, 3]) == [3, 1, 2, 4]


def test_rrf_hand_computed():
    bm25_ranks = dense.ranks_of([0, 2, 3, 1])
    dense_ranks = dense.ranks_of([1, 2, 0, 3])
    assert bm25_ranks == [1, 4, 2, 3] and dense_ranks == [3, 1, 2, 4]
    # score = 0.5 / (60 + rank_bm25) + 0.5 / (60 + rank_dense)
    expected = [Fraction(1, 2 * 61) + Fraction(1, 2 * 63), Fraction(1, 2 * 64) + Fraction(1, 2 * 61),
                Fraction(1, 2 * 62) + Fraction(1, 2 * 62), Fraction(1, 2 * 63) + Fraction(1, 2 * 64)]
    fused = dense.rrf(bm25_ranks, dense_ranks)
    assert fused == pytest.approx([float(e) for e in expected], rel=1e-15)
    scores, order = dense.scores_and_order("hybrid", BM25, SIMILARITIES)
    assert scores == fused
    assert order == [0, 2, 1, 3]  # 248/15372 > 1/62 > 125/7808 > 127/8064


def test_rrf_weights_and_c():
    # c = 1, weights 0.2 / 0.8: 0.3, 0.44, 1/3, 0.21
    scores, order = dense.scores_and_order("hybrid", BM25, SIMILARITIES, c=1, weights=(0.2, 0.8))
    assert scores == pytest.approx([0.3, 0.44, 1 / 3, 0.21])
    assert order == [1, 2, 0, 3]
    # all weight on one side is that side's ranking
    assert dense.scores_and_order("hybrid", BM25, SIMILARITIES, weights=(1, 0))[1] == [0, 2, 3, 1]
    assert dense.scores_and_order("hybrid", BM25, SIMILARITIES, weights=(0, 1))[1] == [1, 2, 0, 3]


def test_rrf_ties_fall_to_position():
    # mirrored ranks give equal fused scores: document order decides
    scores, order = dense.scores_and_order("hybrid", [1.0, 2.0], [0.9, 0.1])
    assert scores[0] == scores[1] and order == [0, 1]


def test_methods_pass_through():
    assert dense.scores_and_order("bm25", BM25, None) == (BM25, [0, 2, 3, 1])
    assert dense.scores_and_order("dense", BM25, SIMILARITIES) == (SIMILARITIES, [1, 2, 0, 3])


def test_read_ends():
    short = "A man is eating food."
    long = "word " * 300  # 300 pieces: the model reads 254 of them
    assert dense.read_ends([short, long]) == [None, 254 * 5 - 1]
    assert wordpiece.read_end("word " * 254) is None  # exactly the budget is read whole
    assert wordpiece.read_end("word " * 255) == 254 * 5 - 1
    # punctuation pieces count: "a." is two pieces
    assert wordpiece.read_end("a. " * 127) is None and wordpiece.read_end("a. " * 128) == 127 * 3 - 1
