"""Invariants of placing, rebuilding and checking stored chunks (SPEC section 11), on generated
texts cut into fixed character windows (Hypothesis, deadline=None)."""

import pytest
from hypothesis import given, settings, strategies as st

from ragsim.judge.stored import align, overlap, rebuild
from ragsim.judge.stored_checks import phrase_check
from ragsim.judge.stored_search import Sampled, View, fold
from ragsim.split.windows import window_bounds

# Letters, a few that change under case or normalisation, an astral one, and every kind of
# whitespace str.split() knows, so folding and the view's map meet them all.
ALPHABET = st.sampled_from(list("abcab ") + ["é", "😀", "漢", "\n", "\n\n", "  ", "\t", "\u00a0", "\u3000", "\r\n"])
TEXT = st.lists(ALPHABET, min_size=1, max_size=150).map("".join)
UNIQUE = st.lists(st.characters(min_codepoint=33, max_codepoint=0x2FFF).filter(lambda c: not c.isspace()),
                  min_size=1, max_size=120, unique=True).map("".join)
WINDOW = st.tuples(st.integers(1, 30), st.integers(0, 29)).filter(lambda t: t[1] < t[0])
WORDS = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "x", "7", "é", "the"]), min_size=40, max_size=160)
SPACES = st.sampled_from([" ", " ", " ", "\n", "  ", "\n\n", "\t", " \n "])
settings.register_profile("stored", deadline=None, max_examples=150)
settings.load_profile("stored")


def windows(text, size, overlap_):
    return [(a, b) for a, b in window_bounds(len(text), size, overlap_)]


def stored(text, bounds, offsets=False):
    return [{"id": f"w{i}", "text": text[a:b], "doc": "d", "start": a if offsets else None, "end": None}
            for i, (a, b) in enumerate(bounds)]


@pytest.mark.slow
@given(TEXT, WINDOW)
def test_windows_are_placed_exact_in_order_never_past_their_own_offsets(text, window):
    bounds = windows(text, *window)
    al = align(stored(text, bounds), {"d": text})
    prev = -1
    for c, (a, b) in zip(al.chunks, bounds):
        assert c.placement == "exact" and text[c.start : c.end] == c.text
        assert prev < c.start <= a  # the true offset is always a candidate after the previous start
        prev = c.start


@given(UNIQUE, WINDOW)
def test_windows_of_a_text_without_repeats_land_on_their_true_offsets(text, window):
    bounds = windows(text, *window)
    al = align(stored(text, bounds), {"d": text})
    assert [(c.placement, c.start, c.end) for c in al.chunks] == [("exact", a, b) for a, b in bounds]


@given(TEXT, WINDOW)
def test_store_offsets_are_taken_when_they_hold(text, window):
    bounds = windows(text, *window)
    al = align(stored(text, bounds, offsets=True), {"d": text})
    assert [(c.placement, c.start, c.end) for c in al.chunks] == [("offsets", a, b) for a, b in bounds]


@pytest.mark.slow
@given(UNIQUE, WINDOW)
def test_a_rebuilt_document_from_overlapping_windows_is_the_source(text, window):
    size, overlap_ = window
    bounds = windows(text, size, max(overlap_, 1) if size > 1 else 0)
    al = align(stored(text, bounds))
    d = al.documents[0]
    assert d.rebuilt and d.text == text
    assert d.gaps == (() if size > 1 else tuple(range(1, len(text))))
    assert [(c.start, c.end) for c in al.chunks] == bounds


@given(TEXT, WINDOW)
def test_any_rebuild_holds_every_chunk_and_has_gaps_only_without_overlap(text, window):
    bounds = windows(text, *window)
    al = align(stored(text, bounds))
    d = al.documents[0]
    assert all(c.placement == "exact" and d.text[c.start : c.end] == c.text for c in al.chunks)
    assert len(d.text) <= len(text)
    if window[1] > 0:
        assert d.gaps == ()


@given(st.text("ab", max_size=12), st.text("ab", max_size=12))
def test_overlap_is_the_longest_suffix_that_is_a_prefix(a, b):
    brute = max((k for k in range(min(len(a), len(b)) + 1) if a.endswith(b[:k])), default=0)
    assert overlap(a, b) == brute
    assert overlap(a * 5 + "x" * 20, b) == max(k for k in range(min(len(a * 5 + "x" * 20), len(b)) + 1)
                                               if (a * 5 + "x" * 20).endswith(b[:k]))


@pytest.mark.slow
@given(st.lists(TEXT, max_size=6))
def test_rebuild_keeps_every_chunk(texts):
    joined, gaps = rebuild(texts)
    assert all(t in joined for t in texts)
    assert len(joined) <= sum(map(len, texts))
    assert all(0 < g < len(joined) for g in gaps) and list(gaps) == sorted(set(gaps))


@given(TEXT)
def test_the_view_maps_back_to_the_same_characters(text):
    view = View(text)
    assert view.folded == fold(text)
    for p, ch in enumerate(view.folded):
        q = view.to_text(p)
        assert text[q] == ch if ch != " " else text[q].isspace() and not text[q - 1].isspace()


@given(TEXT, WINDOW, st.data())
def test_a_phrase_no_longer_than_the_overlap_plus_one_is_never_absent(text, window, data):
    size, overlap_ = window
    bounds = windows(text, size, overlap_)
    if not text.strip():
        return
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, min(len(text), a + overlap_ + 1)))
    if not text[a:b].strip():
        return
    [e] = phrase_check(align(stored(text, bounds, offsets=True), {"d": text}), {"doc": "d", "start": a, "end": b})
    assert e["verdict"] == "present" and e["cut_by"] == [] and e["overlap_needed"] <= overlap_ + 1


@given(TEXT, WINDOW, st.data())
def test_an_absent_phrase_is_cut_by_a_boundary_inside_it(text, window, data):
    bounds = windows(text, *window)
    if not text.strip():
        return
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    if not text[a:b].strip():
        return
    [e] = phrase_check(align(stored(text, bounds, offsets=True), {"d": text}), {"doc": "d", "start": a, "end": b})
    whole = [f"w{i}" for i, (s, t) in enumerate(bounds) if s <= e["start"] and e["end"] <= t]
    assert e["chunks"] == whole and (e["verdict"] == "present") == bool(whole)
    if not whole:
        assert e["cut_by"] and all(e["start"] < cut["at"] < e["end"] for cut in e["cut_by"])


def mangle(piece, spaces):
    """`piece` with each inner run of whitespace replaced by the next of `spaces`."""
    words = piece.split(" ")
    return "".join(w + (spaces[i % len(spaces)] if i < len(words) - 1 else "") for i, w in enumerate(words))


@pytest.mark.slow
@settings(max_examples=80)
@given(WORDS, st.lists(SPACES, min_size=1, max_size=8), st.integers(80, 200), st.integers(0, 79),
       st.lists(SPACES, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_the_index_places_every_chunk_as_a_scan_does(words, spaces, size, overlap_, other, rnd):
    text = mangle(" ".join(words), spaces)
    bounds = windows(text, size, overlap_)
    chunks = stored(text, bounds)
    for i, c in enumerate(chunks):
        if i % 3 == 1:
            c["text"] = mangle(" ".join(c["text"].split(" ")), other)  # whitespace changed
    chunks.append({"id": "junk", "text": "zeta " * 30, "doc": "d"})
    rnd.shuffle(chunks)  # out of order: the walk searches globally
    scanned = align(chunks, {"d": text}, index_from=len(text) + 1)
    indexed = align(chunks, {"d": text}, index_from=0)
    assert indexed == scanned
    for c in indexed.chunks:
        if c.placement == "exact":
            assert text[c.start : c.end] == c.text
        elif c.placement == "whitespace":
            assert fold(text[c.start : c.end]) == fold(c.text)
            assert not text[c.start].isspace() and not text[c.end - 1].isspace()
        else:
            assert c.id == "junk"


@pytest.mark.slow
@settings(max_examples=100)
@given(st.lists(st.sampled_from(["ab", "abc", "b", "ca", " ", "\n"]), min_size=60, max_size=400).map("".join),
       st.integers(0, 10_000), st.integers(79, 140), st.integers(0, 10_000), st.sampled_from(["", "x", "\n"]))
def test_the_sampled_index_finds_the_first_occurrence_from_the_hint(text, at, length, lo, mutation):
    # A text of few, repeating pieces: many candidates per needle, most of them false.
    if len(text) < length:
        return
    at %= len(text) - length + 1
    needle = text[at : at + length]
    if mutation:
        needle = needle[:40] + mutation + needle[41:]
    lo %= len(text)
    q = Sampled(text).first(needle, lo)
    expected = text.find(needle, lo)
    expected = expected if expected >= 0 else text.find(needle)
    assert q == expected  # (None, "scan instead", needs more candidates than a short text has)
