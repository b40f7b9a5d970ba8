"""Fixed sliding windows (SPEC section 2), checked on hand-countable fixtures."""

from helpers import make_request
from ragsim.wire.api import simulate
from ragsim.text.index import DocIndex
from ragsim.split.windows import split, window_bounds


def test_worked_example_154_words_at_24_6():
    text = " ".join(f"w{i}" for i in range(154))
    r = simulate(make_request(text, size=24, overlap=6))
    assert r["stats"]["chunks"] == 9
    assert r["stats"]["units_stored"] == 202
    assert r["stats"]["units_in_documents"] == 154
    assert round(r["stats"]["amplification"], 2) == 1.31


def test_window_bounds_stop_once_the_end_is_reached():
    assert window_bounds(10, 4, 1) == [(0, 4), (3, 7), (6, 10)]
    assert window_bounds(11, 4, 1) == [(0, 4), (3, 7), (6, 10), (9, 11)]
    assert window_bounds(3, 4, 2) == [(0, 3)]
    assert window_bounds(0, 4, 2) == []


def test_word_extents_run_from_first_word_start_to_last_word_end():
    text = "  alpha beta\n\ngamma   delta  "
    s = split(DocIndex.build(text), {"unit": "words", "size": 2, "overlap": 1})
    assert [(e.start, e.end, e.units) for e in s.extents] == [(2, 12, 2), (8, 19, 2), (14, 27, 2)]
    assert text[8:19] == "beta\n\ngamma"  # original whitespace and newlines kept


def test_char_extents_are_the_windows_themselves():
    text = "abcdefghij"
    s = split(DocIndex.build(text), {"unit": "chars", "size": 4, "overlap": 2})
    assert [(e.start, e.end) for e in s.extents] == [(0, 4), (2, 6), (4, 8), (6, 10)]
    assert s.units_in_document == 10


def test_code_points_not_utf16_units():
    text = "😀😀 ab cd"
    r = simulate(make_request(text, unit="chars", size=3, overlap=0, k=1))
    assert [(c["start"], c["end"]) for c in r["chunks"]] == [(0, 3), (3, 6), (6, 8)]


def test_empty_and_whitespace_documents_have_no_chunks():
    for text in ("", "  \n\t "):
        r = simulate(make_request(text, query="anything"))
        assert r["chunks"] == [] and r["stats"]["chunks"] == 0
        assert r["context"] == "" and r["stats"]["context_tokens"] == 0
        assert r["stats"]["amplification"] is None
