"""ragsim.semantic (SPEC section 12) on hand cases: numpy's arithmetic, each strategy's cut, bad input.

The libraries themselves are compared in tests/conformance/test_semantic_conformance.py.
"""

import math

import pytest

from ragsim.split import semantic
from ragsim.split import semantic_numpy as npm
from ragsim.errors import RequestError
from ragsim.split.semantic_chroma import kamradt_threshold, segment


# -- numpy's arithmetic ---------------------------------------------------------------------------

@pytest.mark.parametrize("values, q, expected", [
    ([1, 2, 3, 4], 50, 2.5),  # virtual index 1.5: weight 0.5 takes the upper branch, 3 - 1 * 0.5
    ([1, 2, 3, 4], 95, 3.8499999999999996),  # 3 * 0.95 = 2.8499999999999996, from 4 down: 4 - 0.15000000000000036
    ([0, 10], 75, 7.5),
    ([0, 10], 25, 2.5),
    ([3, 1, 2], 0, 1.0),  # order statistics, not positions
    ([3, 1, 2], 100, 3.0),
    ([5.0], 37, 5.0),
])
def test_percentile_is_numpys_linear_method(values, q, expected):
    got = npm.percentile(values, q)
    assert got == expected and type(got) is float


def test_percentile_refuses_what_numpy_refuses_and_propagates_nan():
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        npm.percentile([1.0, 2.0], 100.5)
    assert math.isnan(npm.percentile([1.0, math.nan, 2.0], 50))


def test_a_kept_curve_gives_every_threshold_from_its_one_sort():
    """Kept.of sorts the distances once; each threshold after it reads that order (a drag re-cuts
    without sorting): the same bits as sorting each time, NaN and the empty curve as before."""
    import random
    from ragsim.split.semantic_langchain import Kept

    rng = random.Random(12)
    spans = [(i * 10, i * 10 + 7) for i in range(301)]
    distances = [rng.random() for _ in range(300)]
    kept = Kept.of(spans, distances)
    assert kept.ordered == sorted(distances) and kept.lengths == [7 * i for i in range(302)]
    for q in (0, 0.5, 12.25, 50, 94.999, 95, 100):
        assert kept.percentile(q) == npm.percentile(distances, q)
    with_nan = Kept.of(spans[:3], [0.2, math.nan])
    assert with_nan.ordered is None and math.isnan(with_nan.percentile(50))
    with pytest.raises(ValueError):
        Kept.of(spans[:1], []).percentile(50)


def test_pairwise_sum_is_numpys_order_not_a_running_total():
    # eight running sums then a tree: exactly 1.0 where a plain loop gives 0.9999999999999999
    assert npm.pairwise_sum([0.1] * 10) == 1.0
    assert sum([0.1] * 10) == 0.9999999999999999
    assert npm.pairwise_sum([0.1] * 5) == sum([0.1] * 5)  # under 8 values: a plain loop
    assert npm.pairwise_sum([]) == 0.0


def test_mean_and_std():
    assert npm.mean([2, 4, 4, 4, 5, 5, 7, 9]) == 5.0
    assert npm.std([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0  # ddof 0
    x = [0.1] * 10 + [0.7] * 3
    assert npm.mean(x) == 0.23846153846153845
    assert npm.std(x) == 0.2527950265408459
    assert math.isnan(npm.mean([]))


def test_gradient_central_inside_one_sided_at_the_ends():
    assert npm.gradient([1.0, 4.0, 9.0, 16.0]) == [3.0, 4.0, 6.0, 7.0]
    assert npm.gradient([2.0, 5.0]) == [3.0, 3.0]
    with pytest.raises(ValueError):
        npm.gradient([1.0])


def test_norms_and_dot():
    assert npm.dot([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == 32.0
    assert npm.row_norm([3.0, 4.0]) == 5.0 == npm.vector_norm([3.0, 4.0])


# -- langchain-semantic ---------------------------------------------------------------------------

TEXT = "Red apples.  Green pears.\nBlue sky."  # sentences at (0, 11), (13, 25), (26, 35)
VECTORS = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]  # distances 0 and 1


def lc(**fields):
    return {"strategy": "langchain-semantic", **fields}


def test_langchain_windows_are_sentences_joined_with_a_space():
    assert semantic.texts_to_embed(TEXT, lc()) == [
        "Red apples. Green pears.", "Red apples. Green pears. Blue sky.", "Green pears. Blue sky."]
    assert semantic.texts_to_embed(TEXT, lc(buffer_size=0)) == ["Red apples.", "Green pears.", "Blue sky."]


def test_langchain_chunk_is_rejoined_and_its_extent_spans_its_sentences():
    chunks, curve = semantic.cut(TEXT, lc(), VECTORS)
    # "  " became " ": the chunk text is LangChain's (24 characters), the extent the source's (25)
    assert chunks == [(0, 25, 24, "Red apples. Green pears."), (26, 35, 9, "Blue sky.")]
    assert curve == {"distances": [0.0, 1.0], "positions": [13, 26], "threshold": 0.95, "cuts": [26]}


def test_langchain_min_chunk_size_runs_a_short_group_on():
    chunks, curve = semantic.cut(TEXT, lc(min_chunk_size=30), VECTORS)
    assert chunks == [(0, 35, 34, "Red apples. Green pears. Blue sky.")]
    assert curve["cuts"] == [] and curve["threshold"] == 0.95


def test_langchain_number_of_chunks():
    assert len(semantic.cut(TEXT, lc(number_of_chunks=1), VECTORS)[0]) == 1  # the 100th percentile
    chunks, curve = semantic.cut(TEXT, lc(number_of_chunks=3), VECTORS)  # the 0th: 0.0, so 1 > 0 cuts
    assert curve["threshold"] == 0.0 and [c[3] for c in chunks] == ["Red apples. Green pears.", "Blue sky."]


def test_langchain_single_sentence_and_gradient_with_two_are_returned_as_split():
    assert semantic.texts_to_embed("Just one sentence", lc()) == []
    assert semantic.cut("Just one sentence", lc(), []) == (
        [(0, 17, 17, "Just one sentence")], {"distances": [], "positions": [], "threshold": None, "cuts": []})
    two = "A b. C d."
    chunks, curve = semantic.cut(two, lc(breakpoint_threshold_type="gradient"), [[1.0, 0.0], [1.0, 0.0]])
    assert chunks == [(0, 4, 4, "A b."), (5, 9, 4, "C d.")] and curve["threshold"] is None


def test_langchain_gradient_reports_the_curve_it_compares():
    text = "A. B. C. D."
    vectors = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    chunks, curve = semantic.cut(text, lc(breakpoint_threshold_type="gradient"), vectors)
    assert curve["distances"] == [0.0, 1.0, 0.0]
    assert curve["gradient"] == [1.0, 0.0, -1.0] and curve["threshold"] == 0.8999999999999999  # as np.percentile
    assert [c[3] for c in chunks] == ["A.", "B. C. D."]  # only the first gradient is above 0.9


def test_langchain_split_regex_groups_are_sentences_as_re_split_returns_them():
    fields = lc(sentence_split_regex="(\n)", buffer_size=0)
    assert semantic.texts_to_embed("a\nb", fields) == ["a", "\n", "b"]
    chunks, _ = semantic.cut("a\nb", fields, [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert chunks == [(0, 3, 5, "a \n b")]  # both distances 1.0, none above the 95th percentile


def test_langchain_zero_vector_has_similarity_zero():
    chunks, curve = semantic.cut(TEXT, lc(), [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    assert curve["distances"] == [1.0, 0.0]


# -- llamaindex-semantic --------------------------------------------------------------------------

LI_TEXT = "  First one here. Second one here. Third one here."


def test_llamaindex_sentences_run_to_the_next_and_chunks_are_slices():
    fields = {"strategy": "llamaindex-semantic"}
    assert semantic.texts_to_embed(LI_TEXT, fields) == [
        "  First one here. Second one here. ", LI_TEXT, "Second one here. Third one here."]
    chunks, curve = semantic.cut(LI_TEXT, fields, VECTORS)
    assert chunks == [(0, 35, 35, "  First one here. Second one here. "), (35, 50, 15, "Third one here.")]
    assert curve == {"distances": [0.0, 1.0], "positions": [18, 35], "threshold": 0.95, "cuts": [35]}


def test_llamaindex_no_distance_is_one_chunk_and_a_zero_vector_cuts_nothing():
    fields = {"strategy": "llamaindex-semantic"}
    assert semantic.cut("", fields, []) == ([(0, 0, 0, "")], {"distances": [], "positions": [], "threshold": None,
                                                              "cuts": []})
    chunks, curve = semantic.cut(LI_TEXT, fields, [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    # NaN (0 / 0, as numpy's) is kept for the cut and answered as null, which JSON holds
    assert len(chunks) == 1 and curve["distances"][0] is None and curve["threshold"] is None


# -- Chroma ---------------------------------------------------------------------------------------

def rows_of(entry, n: int, width: int) -> list:
    """Band rows (`segment`'s input) of the matrix `entry(r, c)`."""
    return [[entry(r, r + k) if 0 <= r + k < n else 0.0 for k in range(-width, width + 1)] for r in range(n)]


def test_cluster_dynamic_program_finds_the_blocks():
    similar = {(0, 1), (2, 3)}
    entry = lambda r, c: 0.0 if r == c else (1.0 if (min(r, c), max(r, c)) in similar else -1.0)
    assert segment(rows_of(entry, 4, 1), 1, 2) == [(0, 1), (2, 3)]
    assert segment(rows_of(entry, 4, 3), 3, 4) == [(0, 1), (2, 3)]


def test_cluster_start_stays_zero_where_no_run_scores_above_zero():
    # every single piece scores 0 (its diagonal), never more than dp's initial 0: the library's
    # segmentation keeps its initial 0 and one cluster reaches back to the first piece
    assert segment(rows_of(lambda r, c: 0.0 if r == c else -1.0, 4, 0), 0, 1) == [(0, 3)]


def test_kamradt_threshold_is_the_last_midpoint():
    # the bracket closes on 0.5 from both sides; the last midpoint is just below it, so both 0.9 and
    # 0.5 lie above it although the search asked for at most one cut
    assert kamradt_threshold([0.1, 0.9, 0.5], 1) == 0.4999990463256836
    assert kamradt_threshold([0.1, 0.9, 0.5], 0) == 0.9000005722045898
    assert kamradt_threshold([0.1, 0.9, 0.5], 5) == 9.5367431640625e-07


def test_chroma_pieces_and_chunks():
    text = "Cats purr softly. Cats nap all day.\n\nStocks fell sharply. Stocks rose again."
    fields = {"strategy": "chroma-cluster", "size": 18, "min_chunk_size": 6}
    # LangChain's recursive split at 6 tokens: "." kept at the start of the next piece, stripped
    pieces = ["Cats purr softly", ". Cats nap all day.", "Stocks fell sharply", ". Stocks rose again."]
    assert semantic.texts_to_embed(text, fields) == pieces
    windows = semantic.texts_to_embed(text, {**fields, "strategy": "chroma-kamradt"})
    assert windows[0] == " ".join(pieces)  # 3 pieces either side
    vectors = [[1.0, 0.0]] * 2 + [[0.0, 1.0]] * 2
    chunks, curve = semantic.cut(text, fields, vectors)
    assert chunks == [(0, 35, 11, "Cats purr softly . Cats nap all day."),
                      (37, 76, 9, "Stocks fell sharply . Stocks rose again.")]
    # neighbours' distances; the line is 1 - the mean similarity (2 of 6 pairs similar)
    assert curve == {"distances": [0.0, 1.0, 0.0], "positions": [16, 37, 56], "threshold": 1 - 1 / 3, "cuts": [37]}


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields, field", [
    ({"strategy": "semantic"}, "chunking.strategy"),
    (lc(breakpoint_threshold_type="zscore"), "chunking.breakpoint_threshold_type"),
    (lc(breakpoint_threshold_amount=150), "chunking.breakpoint_threshold_amount"),
    (lc(breakpoint_threshold_type="gradient", breakpoint_threshold_amount=-1), "chunking.breakpoint_threshold_amount"),
    (lc(buffer_size=-1), "chunking.buffer_size"),
    (lc(number_of_chunks=0), "chunking.number_of_chunks"),
    (lc(min_chunk_size="10"), "chunking.min_chunk_size"),
    (lc(sentence_split_regex="("), "chunking.sentence_split_regex"),
    (lc(sentence_split_regex="(?:a+)+b"), "chunking.sentence_split_regex"),
    (lc(sentence_split_regex="(x)|y"), "chunking.sentence_split_regex"),  # group unmatched at "y"
    ({"strategy": "llamaindex-semantic", "breakpoint_percentile_threshold": 101},
     "chunking.breakpoint_percentile_threshold"),
    ({"strategy": "chroma-cluster", "min_chunk_size": 0}, "chunking.min_chunk_size"),
    ({"strategy": "chroma-kamradt", "tokenizer": "gpt2"}, "chunking.tokenizer"),
])
def test_bad_fields_name_the_field(fields, field):
    with pytest.raises(RequestError) as e:
        semantic.texts_to_embed("x y. z w. y q.", fields)
    assert e.value.field == field and e.value.message.endswith((".", ")."))


def test_vectors_must_match_the_texts():
    with pytest.raises(RequestError, match="one vector per text to embed: 3 ") as e:
        semantic.cut(TEXT, lc(), VECTORS[:2])
    assert e.value.field == "vectors"
    with pytest.raises(RequestError, match="one dimension"):
        semantic.cut(TEXT, lc(), [[1.0, 0.0], [1.0], [0.0, 1.0]])
    with pytest.raises(RequestError, match="list of numbers"):
        semantic.cut(TEXT, lc(), [[1.0, 0.0], "ab", [0.0, 1.0]])
