"""`DocIndex.layout` tokenizes the words clipped at the extents' edges at C speed (slices of the text
lower-cased once) where that gives what tokenizing each clipped piece gives; it must equal the
piece-by-piece way, and texts where lower-casing a piece differs from slicing the lower-cased text
(a capital sigma, a character that grows) take the piece-by-piece way."""

import pytest
from hypothesis import given, settings, strategies as st

from ragsim.text.index import DocIndex, terms
from ragsim.split.windows import window_columns

TEXT = st.text(alphabet="ab cΣσİßé-.\n_1", min_size=1, max_size=80)


def _layout(text, starts, ends, fast):
    index = DocIndex.build(text)
    if not fast:
        index.memo["lowered"] = None  # the piece-by-piece way
    return index.layout(list(starts), list(ends))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TEXT, st.integers(1, 12), st.integers(0, 11), st.data())
def test_clipped_words_tokenized_at_once_equal_piece_by_piece(text, size, overlap, data):
    overlap = min(overlap, size - 1)
    starts, ends = window_columns(len(text), size, overlap)
    if data.draw(st.booleans()):  # arbitrary extents too (other splitters' chunks)
        pairs = data.draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))), min_size=1, max_size=8))
        starts, ends = [min(a, b) for a, b in pairs], [max(a, b) for a, b in pairs]
    fast, slow = _layout(text, starts, ends, True), _layout(text, starts, ends, False)
    # a term asked alone (one pass over the clipped terms) before the whole mapping is made
    asked = {t: fast.edge_index.get(t) for t in ["a", "b", "ab", "σ", "_1", "absent"]}
    whole = dict(slow.edge_index.items())
    assert asked == {t: whole.get(t) for t in asked}
    assert all((t in fast.edge_index) == (t in whole) for t in asked)
    assert fast.lengths == slow.lengths
    assert fast.inner_from == slow.inner_from and fast.inner_to == slow.inner_to
    assert fast.edge_index == slow.edge_index
    # and both count what tokenizing each extent's own text counts
    assert fast.lengths == [len(terms(text[a:b])) for a, b in zip(starts, ends)]


def test_texts_whose_pieces_lower_case_differently_take_the_piece_by_piece_way():
    assert DocIndex.build("ΑΣΑ word").lowered() is None  # "Σ" lower-cases by what follows it
    assert DocIndex.build("İstanbul word").lowered() is None  # "İ" grows when lower-cased
    assert DocIndex.build("plain words").lowered() == "plain words"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**20), min_size=1, max_size=300), st.integers(1, 30), st.integers(0, 29), st.data())
def test_window_differences_subtract_every_lane_at_once(steps, size, overlap, data):
    """Prefix counts' window differences from two big integers equal the plain subtraction."""
    from array import array
    from itertools import accumulate
    from operator import sub

    from ragsim.text.index import window_differences, window_slices

    overlap = min(overlap, size - 1)
    column = array("i", accumulate([0, *steps]))  # non-decreasing, as prefix counts are
    n = len(column) - 1
    starts, _ = window_columns(n, size, overlap)
    window = (size, size - overlap, n)
    assert window_differences(column, window, len(starts)) == list(map(sub, *window_slices(column, window, len(starts))))
