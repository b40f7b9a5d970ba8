"""Invariants of windows, terms, scores and verdicts on generated text (Hypothesis, deadline=None)."""

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from helpers import make_request
from ragsim.wire.api import Session, simulate
from ragsim.text.index import DocIndex, terms

# Letters that change length or context when lower-cased (İ, Σ), emoji, CJK, RTL, combining marks,
# underscores and digits, and every kind of whitespace str.split() knows.
ALPHABET = st.sampled_from(
    list("abcXYZ_09") + ["İ", "Σ", "ς", "é", "e\u0301", "😀", "🇫🇷", "漢", "字", "שלום", "ـ", "'", ",", ".", "-"]
    + [" ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\u2028"]
)
TEXT = st.lists(ALPHABET, max_size=120).map("".join)
WINDOW = st.tuples(st.sampled_from(["words", "chars"]), st.integers(1, 12), st.integers(0, 11)).filter(
    lambda t: t[2] < t[1]
)
settings.register_profile("core", deadline=None, max_examples=150)
settings.load_profile("core")


def units_of(text, unit):
    return text.split() if unit == "words" else list(text)


@given(TEXT, WINDOW)
def test_chunks_cover_every_unit_with_at_most_size_units(text, window):
    unit, size, overlap = window
    r = simulate(make_request(text, unit=unit, size=size, overlap=overlap, k=1))
    n = len(units_of(text, unit))
    assert r["stats"]["units_in_documents"] == n
    covered = 0
    for c in r["chunks"]:
        piece = text[c["start"] : c["end"]]
        assert c["units"] == len(units_of(piece, unit)) <= size
        if unit == "words":
            assert piece == piece.strip() or not piece.strip()  # starts and ends on a word
        covered = max(covered, c["end"])
    if n:
        last_unit_end = len(text.rstrip()) if unit == "words" else len(text)
        assert covered == last_unit_end
        words = text.split()
        assert sum(c["units"] for c in r["chunks"]) == r["stats"]["units_stored"] >= n
        if unit == "words":
            # every word lies wholly inside some chunk
            doc = DocIndex.build(text)
            for s, e in zip(doc.word_starts, doc.word_ends):
                assert any(c["start"] <= s and e <= c["end"] for c in r["chunks"])
            assert len(words) == n
    else:
        assert r["chunks"] == []


@given(TEXT, st.integers(0, 130), st.integers(0, 130))
def test_index_counts_equal_a_fresh_tokenization_of_any_extent(text, a, b):
    start, end = sorted((min(a, len(text)), min(b, len(text))))
    doc = DocIndex.build(text)
    want = Counter(terms(text[start:end]))
    # the hot path: one layout over the extent (plus a neighbour, so the columns have two rows)
    layout = doc.layout([start, start], [end, len(text)])  # columns that only move forward
    assert layout.lengths[0] == sum(want.values())
    for t in (*want, "zzz"):
        assert doc.term_frequencies(t, layout)[0] == want.get(t, 0)
        chunks, tfs = doc.sparse_frequencies(t, layout)
        assert dict(zip(chunks, tfs)).get(0, 0) == want.get(t, 0)


@pytest.mark.slow
@given(TEXT, WINDOW, st.data())
def test_a_span_of_at_most_overlap_plus_one_units_is_never_cut(text, window, data):
    unit, size, overlap = window
    doc = DocIndex.build(text)
    if unit == "words":
        bounds = list(zip(doc.word_starts, doc.word_ends))
    else:
        bounds = [(i, i + 1) for i in range(len(text))]
    bounds = [b for b in bounds if text[b[0] : b[1]].strip()]  # a span is trimmed of whitespace
    if not bounds:
        return
    i = data.draw(st.integers(0, len(bounds) - 1))
    j = data.draw(st.integers(i, min(len(bounds) - 1, i + overlap)))
    if unit == "chars":
        # in chars the stretch is counted in code points, whitespace included
        j = min(j, i + overlap)
        if bounds[j][1] - bounds[i][0] > overlap + 1:
            return
    span = (bounds[i][0], bounds[j][1])
    r = simulate(make_request(text, unit=unit, size=size, overlap=overlap, k=1, span=span))
    assert r["verdict"]["kind"] in ("intact", "ranked_out")
    f = simulate(make_request(text, unit=unit, size=size, overlap=overlap, k=1,
                              fact=((bounds[i][0], bounds[i][1]), (bounds[j][0], bounds[j][1])))
                 if i != j else make_request(text, unit=unit, size=size, overlap=overlap, k=1))
    if i != j:
        assert f["fact"]["kind"] != "destroyed"


@given(TEXT, TEXT, WINDOW)
def test_a_chunk_without_query_terms_scores_zero(text, query, window):
    unit, size, overlap = window
    r = simulate(make_request(text, query=query, unit=unit, size=size, overlap=overlap, k=3))
    q = set(terms(query))
    for c in r["chunks"]:
        if not q & set(terms(text[c["start"] : c["end"]])):
            assert c["score"] == 0.0
        else:
            assert c["score"] > 0.0


@pytest.mark.slow
@given(st.lists(st.tuples(TEXT, TEXT, WINDOW, st.integers(1, 5)), min_size=1, max_size=6))
def test_cached_session_and_fresh_computation_agree(moves):
    session = Session(documents=2, splits=3)
    for text, query, (unit, size, overlap), k in moves:
        req = make_request(text, query=query, unit=unit, size=size, overlap=overlap, k=k)
        assert simulate(req, session) == simulate(req)
        assert simulate(req, session) == simulate(req)  # second time from the cache
