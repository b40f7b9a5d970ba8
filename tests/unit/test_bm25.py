"""BM25 lucene scores computed by hand for a 3-chunk corpus (SPEC section 3)."""

import math

import pytest

from helpers import make_request
from ragsim.wire.api import simulate
from ragsim.text.index import DocIndex, terms

# Three chunks at words/size 4/overlap 0: terms per chunk written out by hand.
TEXT = "cat sat on mat dog ate the cat cat cat and dog"
# chunk 1: cat sat on mat   (dl 4, cat 1)
# chunk 2: dog ate the cat  (dl 4, cat 1, dog 1)
# chunk 3: cat cat and dog  (dl 4, cat 2, dog 1)


def lucene(tf, df, N, dl, avgdl, k1=1.2, b=0.75):
    idf = math.log(1 + (N - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_scores_by_hand():
    r = simulate(make_request(TEXT, query="cat dog", size=4, overlap=0, k=2))
    got = [c["score"] for c in r["chunks"]]
    want = [
        lucene(1, 3, 3, 4, 4),
        lucene(1, 3, 3, 4, 4) + lucene(1, 2, 3, 4, 4),
        lucene(2, 3, 3, 4, 4) + lucene(1, 2, 3, 4, 4),
    ]
    assert got == want  # bit for bit: same formula, same order of operations
    assert [c["rank"] for c in r["chunks"]] == [3, 2, 1]
    assert [c["retrieved"] for c in r["chunks"]] == [False, True, True]


def test_repeated_query_term_counts_per_occurrence():
    once = simulate(make_request(TEXT, query="dog", size=4, overlap=0))
    twice = simulate(make_request(TEXT, query="dog dog", size=4, overlap=0))
    assert [2 * c["score"] for c in once["chunks"]] == [c["score"] for c in twice["chunks"]]


def test_k1_and_b_come_from_the_request():
    r = simulate(make_request(TEXT, query="cat", size=4, overlap=0, retrieval={"k": 1, "k1": 2.0, "b": 0.0}))
    assert r["chunks"][2]["score"] == lucene(2, 3, 3, 4, 4, k1=2.0, b=0.0)


def test_ties_by_document_order_and_k_chunks_even_at_zero():
    r = simulate(make_request(TEXT, query="zebra", size=4, overlap=0, k=2))
    assert [c["score"] for c in r["chunks"]] == [0.0, 0.0, 0.0]
    assert [c["rank"] for c in r["chunks"]] == [1, 2, 3]
    assert r["stats"]["retrieved"] == 2
    assert r["context"] == "cat sat on mat\n\ndog ate the cat"


def test_k_larger_than_n_returns_every_chunk():
    r = simulate(make_request(TEXT, query="cat", size=4, overlap=0, k=10))
    assert r["stats"]["retrieved"] == 3


def test_terms_are_lowercased_word_runs_and_cut_words_yield_fragments():
    assert terms("Hello, WORLD_1 don't") == ["hello", "world_1", "don", "t"]
    doc = DocIndex.build("Hello, WORLD_1 don't")
    # A chars window that cuts "WORLD_1" after "WO" yields the fragment "wo".
    layout = doc.layout([0], [9])
    assert layout.lengths == [2]
    assert doc.term_frequencies("wo", layout) == [1] and doc.term_frequencies("hello", layout) == [1]


def test_statistics_span_all_documents():
    one = make_request(TEXT, query="dog", size=4, overlap=0)
    two = make_request(TEXT, query="dog", size=4, overlap=0)
    two["documents"].append({"id": "e", "title": "", "text": "dog dog dog dog"})
    a, b = simulate(one), simulate(two)
    assert len(b["chunks"]) == 4 and b["chunks"][3]["doc"] == "e" and b["chunks"][3]["number"] == 4
    # df and N change, so the same chunk scores differently once the second document joins.
    assert a["chunks"][1]["score"] != b["chunks"][1]["score"]
    assert b["chunks"][3]["rank"] == 1


@pytest.mark.slow
def test_ln_is_correctly_rounded_so_every_platform_gets_the_same_bits():
    import random
    from decimal import Context, Decimal

    from ragsim.rank.bm25 import ln

    fine = Context(prec=80)
    rng = random.Random(3)
    xs = [1 + (n - df + 0.5) / (df + 0.5) for n in range(1, 60) for df in range(1, n + 1)]
    xs += [rng.uniform(1e-3, 1e6) for _ in range(2000)]
    for x in xs:
        got = ln(x)
        true = fine.ln(Decimal(x))
        # no double lies nearer the true value than the one returned
        for other in (math.nextafter(got, -math.inf), math.nextafter(got, math.inf)):
            assert abs(Decimal(got) - true) <= abs(Decimal(other) - true)
        assert abs(got - math.log(x)) <= math.ulp(got)  # and the C library agrees to one ulp
        assert got == float(Context(prec=40).ln(Decimal(x)))  # the quick 18 digits say what 40 say


def test_ln_in_integers_equals_decimals_correctly_rounded_ln_everywhere():
    """The integer series (ln_mod.ln) against Decimal at 40 digits rounded once (ln_mod._ln_decimal's
    own fallback), over idf's arguments, values near 1, tiny and huge numbers and random doubles."""
    import random
    import struct
    from decimal import Context, Decimal

    from ragsim.rank import bm25
    from ragsim.rank import ln as ln_mod

    exact = Context(prec=40)
    rng = random.Random(11)
    xs = [1 + (n - df + 0.5) / (df + 0.5) for n in (10, 620, 3639, 27781, 71430) for df in range(1, min(n, 400) + 1)]
    xs += [1.0, 2.0, 0.5, 1 + 2**-52, 1 - 2**-53, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
    xs += [math.nextafter(1.0, 2.0) + i * 2**-40 for i in range(50)]
    xs += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(62) | (1 << 52)))[0] for _ in range(3000)]
    xs += [rng.uniform(0.001, 1e6) for _ in range(3000)]
    ln_mod.ln.cache_clear()
    for x in xs:
        assert ln_mod.ln(x) == float(exact.ln(Decimal(x))), x


def test_ln_table_is_decimals():
    from decimal import Context, Decimal

    from ragsim.rank import ln as ln_mod

    c = Context(prec=60)
    scale = Decimal(2) ** ln_mod._LN_BITS

    def fixed(v):  # round(v * 2**96), half even, every step at 60 digits
        return int(c.to_integral_value(c.multiply(v, scale)))

    assert ln_mod._LN2 == fixed(c.ln(Decimal(2)))
    assert ln_mod._LN_TABLE == tuple(fixed(c.ln(c.divide(Decimal(64 + k), Decimal(64)))) for k in range(64))
