"""Invariants of the question-set metrics and of the pruned ranking (Hypothesis, bounded, deadline=None)."""

import pytest
from hypothesis import given, settings, strategies as st

from ragsim.rank import ranking
from ragsim.wire.api import Session
from ragsim.text.index import terms
from ragsim.judge.questions import chroma_scores
from ragsim.rank.queries import Setting, Words

settings.register_profile("questions", deadline=None, max_examples=120)
settings.load_profile("questions")

LUCENE = {"variant": "lucene", "k1": 1.2, "b": 0.75, "delta": 0.5, "analyzer": None}
WORDS = st.sampled_from(["tide", "fog", "quay", "ship", "the", "a", "pilot", "of", "net", "bell"])
TEXT = st.lists(WORDS, min_size=1, max_size=40).map(" ".join)
WINDOW = st.tuples(st.sampled_from(["words", "chars"]), st.integers(1, 30), st.integers(0, 29)).filter(
    lambda t: t[2] < t[1])


def setting_of(texts, window, retrieval=LUCENE):
    unit, size, overlap = window
    session = Session()
    return Setting(Words([session.index(t) for t in texts]), {"unit": unit, "size": size, "overlap": overlap},
                   session, retrieval)


@st.composite
def case(draw):
    """Documents, a split, disjoint references (as Chroma's excerpts are) and any retrieved set."""
    texts = draw(st.lists(TEXT, min_size=1, max_size=3))
    s = setting_of(texts, draw(WINDOW))
    refs = []
    for d, text in enumerate(texts):
        cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=6)))
        refs += [(d, a, b) for a, b in zip(cuts[::2], cuts[1::2]) if a < b]
    if not refs:
        refs = [(0, 0, len(texts[0]))]
    top = draw(st.lists(st.integers(0, s.n - 1), unique=True, max_size=s.n)) if s.n else []
    return texts, s, refs, top


@given(case())
def test_recall_is_one_exactly_when_every_reference_character_is_in_a_retrieved_chunk(c):
    texts, s, refs, top = c
    held = {(s.doc_of[p], i) for p in top for i in range(s.starts[p], s.ends[p])}
    every = all((d, i) in held for d, a, b in refs for i in range(a, b))
    r = chroma_scores(refs, top, s)
    assert (r["recall"] == 1) == every
    assert 0 <= r["iou"] <= min(r["recall"], r["precision"]) <= 1


@pytest.mark.slow
@given(st.lists(TEXT, min_size=1, max_size=3), WINDOW, st.lists(WORDS, max_size=6).map(" ".join),
       st.integers(1, 8), st.sampled_from(["lucene", "robertson", "atire", "bm25+"]))
def test_pruned_top_k_and_ranks_equal_the_full_ranking(texts, window, query, k, variant):
    """MaxScore's top k and ranks equal the full ranking's."""
    s = setting_of(texts, window, dict(LUCENE, variant=variant))
    qt = terms(query)
    full = ranking.rank(ranking.every_score(s.terms, qt))
    q = s.query(qt)
    assert q.top(k) == full[:k]
    rank = {c: i + 1 for i, c in enumerate(full)}
    for group in (full[:1], full[-2:], full[k:k + 3]):
        if group:
            assert q.best_rank(group) == min(rank[c] for c in group)


@pytest.mark.slow
@given(st.lists(st.text(alphabet="ab .,\n-_é9İ", max_size=60).map(lambda s: s + " a") | TEXT, min_size=1, max_size=3),
       WINDOW, st.lists(WORDS | st.sampled_from(["b", "ab", "i", "i̇"]), min_size=1, max_size=5))
def test_setting_counts_equal_the_chunks_tokenized(texts, window, query):
    """Every chunk's term count and each term's frequencies, as the Setting computes them for all the
    chunks at once (arithmetic over windows, clipped edge words), equal the chunk's text tokenized."""
    s = setting_of(texts, window)
    chunk_terms = [terms(texts[s.doc_of[p]][s.starts[p]:s.ends[p]]) for p in range(s.n)]
    assert s.lengths == [len(ts) for ts in chunk_terms]
    for t in dict.fromkeys(query):
        got = dict(zip(*s.corpus.holding(t)))
        assert got == {p: ts.count(t) for p, ts in enumerate(chunk_terms) if t in ts}
