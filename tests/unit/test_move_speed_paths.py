"""A slider move's fast paths give what the plain computations give, to the last bit.

Top-k without a full sort, a chunk's rank counted rather than sorted for: checked against
`ranking.rank` on scores with many ties, zeros and (as dense similarities have) negative values.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragsim.rank import bm25
from ragsim.rank import ranking

# few distinct values, so ties are the rule rather than the exception
tied_scores = st.lists(st.sampled_from([0.0, -0.0, 0.5, 1.25, 1.25000000000001, 3.0, -1.0]), max_size=40)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(tied_scores, st.integers(0, 45))
def test_top_is_the_head_of_the_full_ranking(scores, k):
    assert ranking.top(scores, k) == ranking.rank(scores)[:k]


@settings(max_examples=200, deadline=None)
@given(tied_scores)
def test_rank_of_each_chunk_is_its_place_in_the_full_ranking(scores):
    order = ranking.rank(scores)
    assert [ranking.rank_of(scores, p) for p in order] == list(range(1, len(scores) + 1))  # a pass each
    ascending = sorted(scores)  # many asked: counted in the sorted scores
    assert [ranking.rank_of(scores, p, ascending) for p in order] == list(range(1, len(scores) + 1))
    assert ranking.top(scores, 3, ascending) == order[:3]


def test_ties_rank_in_position_order():
    scores = [1.0, 2.0, 1.0, 0.0, 2.0, 0.0]
    assert ranking.rank(scores) == [1, 4, 0, 2, 3, 5]
    assert ranking.top(scores, 3) == [1, 4, 0]
    assert [ranking.rank_of(scores, p) for p in range(6)] == [3, 1, 4, 5, 2, 6]
    assert ranking.top(scores, 0) == [] and ranking.top([], 3) == []
