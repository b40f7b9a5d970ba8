"""A slider move's fast paths against a straightforward reference, to the last bit.

The reference does what SPEC sections 2-4 say, chunk by chunk: cut the windows, tokenize each
chunk's own text, count N, df and dl, sum each chunk's query terms in query order with the variant's
formula (`bm25.VARIANTS`), sort every chunk by (-score, position). The core instead reads counts from
prefix slices, finds a rare term's windows by arithmetic, looks weights up by (tf, dl), adds a common
term to every score in one pass, finds the top k without a full sort and counts single ranks. Small
vocabularies make some terms common (counted in every chunk) and others rare (chunk by chunk).
"""

import math
import re

import pytest
from hypothesis import given, settings, strategies as st

from ragsim.rank import bm25
from ragsim.rank import ranking
from ragsim.wire.api import Session, simulate

COMMON = ["the", "and", "of"]
RARE = [f"w{i}" for i in range(24)] + ["Émile", "x_1", "σς"]
WORD = st.one_of(st.sampled_from(COMMON), st.sampled_from(RARE))
SEPARATOR = st.sampled_from([" ", " ", " ", "\n", ", ", ". ", "  ", "-"])
TEXT = st.lists(st.tuples(WORD, SEPARATOR), min_size=1, max_size=70).map(lambda ws: "".join(w + s for w, s in ws))
QUERY = st.lists(st.one_of(st.sampled_from(COMMON), st.sampled_from(RARE[:8]), st.just("absent")),
                 min_size=1, max_size=7).map(" ".join)
VARIANT = st.sampled_from(list(bm25.VARIANTS))
WINDOW = st.one_of(
    st.tuples(st.just("words"), st.integers(1, 9), st.integers(0, 8)),
    st.tuples(st.just("chars"), st.integers(1, 40), st.integers(0, 39)),
).filter(lambda w: w[2] < w[1])


def reference_windows(text: str, unit: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """SPEC section 2, unit by unit."""
    if unit == "words":
        units = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    else:
        units = [(i, i + 1) for i in range(len(text))]
    out, a, step = [], 0, size - overlap
    while units:
        b = min(a + size, len(units))
        out.append((units[a][0], units[b - 1][1]))
        if b == len(units):
            break
        a += step
    return out


def reference(texts, query, unit, size, overlap, variant, k1=1.2, b=0.75, delta=0.5):
    """Scores and the full ranking, each chunk tokenized on its own (SPEC section 3)."""
    chunks = [(d, s, e) for d, text in enumerate(texts) for s, e in reference_windows(text, unit, size, overlap)]
    bags = [re.findall(r"\w+", texts[d][s:e].lower()) for d, s, e in chunks]
    q = re.findall(r"\w+", query.lower())
    N = len(chunks)
    if N == 0:
        return chunks, [], []
    l_avg = sum(map(len, bags)) / N
    idf_f, weight = bm25.VARIANTS[variant]
    df = {t: sum(1 for bag in bags if t in bag) for t in set(q)}
    scores = []
    for bag in bags:
        score = 0.0
        for t in q:
            if df[t] == 0 or l_avg == 0:
                continue
            tf = bag.count(t)
            if tf or variant in bm25.SHIFTED:
                score += weight(idf_f(df[t], N), tf, len(bag), l_avg, k1, b, delta)
        scores.append(score)
    order = sorted(range(N), key=lambda p: (-scores[p], p))
    return chunks, scores, order


@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=3), QUERY, WINDOW, VARIANT, st.integers(1, 6), st.data())
def test_a_move_scores_and_ranks_as_the_reference_does(texts, query, window, variant, k, data):
    unit, size, overlap = window
    chunks, scores, order = reference(texts, query, unit, size, overlap, variant)
    # a span in one document, so the verdict asks for single ranks (Judged.rank_of)
    d = data.draw(st.integers(0, len(texts) - 1))
    text = texts[d]
    s = data.draw(st.integers(0, len(text) - 1))
    e = data.draw(st.integers(s + 1, len(text)))
    request = {
        "documents": [{"id": f"d{i}", "title": "", "text": t} for i, t in enumerate(texts)],
        "query": query, "chunking": {"unit": unit, "size": size, "overlap": overlap},
        "retrieval": {"k": k, "variant": variant}, "price_per_million": 3.0,
        "span": {"doc": f"d{d}", "start": s, "end": e} if text[s:e].strip() else None,
    }
    session = Session(splits=1)
    top_only = {**request, "wire": "binary", "scores": "top"}  # pruned: only the chunks of rarer terms scored
    for r in (simulate(request, session), simulate({**request, "wire": "binary"}, session), simulate(top_only, session)):
        assert "error" not in r, r
        top = order[:k]
        assert r["stats"]["chunks"] == len(chunks)
        assert r["context"] == "\n\n".join(texts[chunks[p][0]][chunks[p][1] : chunks[p][2]] for p in top)
        if r.get("chunks") is not None:
            assert [(c["start"], c["end"]) for c in r["chunks"]] == [(a, z) for _, a, z in chunks]
            assert [c["score"] for c in r["chunks"]] == scores  # bit for bit
            shared = [None if p == 0 or chunks[p - 1][0] != dd else max(0, chunks[p - 1][2] - a)
                      for p, (dd, a, _) in enumerate(chunks)]
            assert [c["overlap_prev"] for c in r["chunks"]] == shared
            rank = {p: i + 1 for i, p in enumerate(order)}
            assert [c["rank"] for c in r["chunks"]] == [rank[p] for p in range(len(chunks))]
        else:
            packed = r["chunk_bytes"]
            assert packed["top"] == top
            rank = {p: i + 1 for i, p in enumerate(order)}
            assert {int(p): v for p, v in packed["ranks"].items()} == {int(p): rank[int(p)] for p in packed["ranks"]}
            assert ("scores" in packed) != ("score" in packed["columns"])
            if "scores" in packed:  # scores "top", pruned: the top k's and the ranked chunks' scores, bit for bit
                assert set(map(int, packed["scores"])) == set(top) | set(map(int, packed["ranks"]))
                assert all(v == scores[int(p)] for p, v in packed["scores"].items())
        if request["span"] is not None:
            whole = [p for p, (dd, a, z) in enumerate(chunks) if dd == d and a <= s and e <= z]
            # the verdict trims the span; the reference trims it the same way
            ts, te = s + len(text[s:e]) - len(text[s:e].lstrip()), e - (len(text[s:e]) - len(text[s:e].rstrip()))
            whole = [p for p, (dd, a, z) in enumerate(chunks) if dd == d and a <= ts and te <= z]
            best = min((order.index(p) + 1 for p in whole), default=None)
            assert r["verdict"]["best_rank"] == best


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 4, allow_nan=False).map(lambda x: math.floor(x * 4) / 4), max_size=60),
       st.integers(1, 70))
def test_top_and_single_ranks_equal_the_full_ranking_with_many_ties(scores, k):
    order = ranking.rank(scores)
    assert ranking.top(scores, k) == order[:k]
    assert [ranking.rank_of(scores, p) for p in order] == list(range(1, len(scores) + 1))


def test_a_long_text_with_few_distinct_chunk_lengths_scores_as_the_reference_does():
    """Many chunks of few lengths: the weights come from the (tf, dl) tables, common terms are counted in
    every chunk and rare ones chunk by chunk (the small texts above mostly take the other paths)."""
    import random

    rng = random.Random(14)
    words = [rng.choice(COMMON) if rng.random() < 0.4 else rng.choice(RARE) for _ in range(3000)]
    text = " ".join(words)
    query = "the w1 and w2 the of w3 absent"
    for variant in bm25.VARIANTS:
        for unit, size, overlap in (("words", 10, 3), ("words", 7, 0), ("chars", 60, 20)):
            chunks, scores, order = reference([text], query, unit, size, overlap, variant)
            r = simulate({"documents": [{"id": "d", "title": "", "text": text}], "query": query,
                          "chunking": {"unit": unit, "size": size, "overlap": overlap},
                          "retrieval": {"k": 5, "variant": variant}})
            assert [c["score"] for c in r["chunks"]] == scores, (variant, unit)
            assert [c["rank"] for c in r["chunks"]] == [order.index(p) + 1 for p in range(len(chunks))]
            # the pruned move (scores "top"): the same top k, scoring only the chunks of the rarer terms
            pruned = simulate({"documents": [{"id": "d", "title": "", "text": text}], "query": query,
                               "chunking": {"unit": unit, "size": size, "overlap": overlap},
                               "retrieval": {"k": 5, "variant": variant}, "wire": "binary", "scores": "top"})
            assert pruned["chunk_bytes"]["top"] == order[:5]
            packed = pruned["chunk_bytes"]
            assert ("scores" in packed) != ("score" in packed["columns"])
            assert "scores" not in packed or variant not in bm25.SHIFTED  # BM25L and BM25+ score every chunk
            assert all(v == scores[int(p)] for p, v in packed.get("scores", {}).items())
