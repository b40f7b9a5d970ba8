"""Every BM25 variant through `api.simulate` against bm25s (float64, same term lists), with and without the term options.

bm25s is given the chunk texts ragsim made, tokenized the SPEC way (lower-cased `\\w+` runs), with
bm25s's own English stop-word list and the Snowball English stemmer applied in bm25s's order (stop
words out, then stems). bm25s keeps repeated query tokens (each adds again) and drops tokens it has
never seen; ragsim must agree to 1e-9 relative. Where every query term has idf > 0, the Robertson
ranking also agrees with rank_bm25's BM25Okapi (whose scores carry the constant k1 + 1).
"""

import itertools
import math
import re

import bm25s
import numpy as np
import pytest
import snowballstemmer
from bm25s.stopwords import STOPWORDS_EN
from rank_bm25 import BM25Okapi

from corpus import TEXTS
from helpers import make_request
from ragsim.text.analyzers import STOPWORDS_ENGLISH
from ragsim.wire.api import Session, simulate

pytestmark = pytest.mark.slow  # the real BM25 libraries on real texts

VARIANTS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
PARAMS = ({"k1": 1.2, "b": 0.75, "delta": 0.5}, {"k1": 1.5, "b": 0.3, "delta": 1.0}, {"k1": 0.9, "b": 1.0, "delta": 0.25})
TERMS = (None, {"stopwords": "english"}, {"stemmer": "snowball-english"}, {"stopwords": "english", "stemmer": "snowball-english"})
QUERIES = (
    "how are snapshots pruned",
    "the the holds holds holds",  # repeated tokens, stop words
    "width wrapping of text lines",
    "zyzzyva qwertyuiop snapshot",  # tokens absent from every chunk
    "is the",  # only stop words
    "Snapshots PRUNED prune pruning",  # stemming folds these together
)
CORPORA = (
    ("repeated.txt", {"unit": "words", "size": 12, "overlap": 3}),
    ("textwrap.py", {"strategy": "langchain-recursive", "language": "python", "size": 400, "overlap": 60}),
    ("prose.txt", {"strategy": "sentences", "unit": "words", "size": 30, "overlap": 10}),
)

_stem = snowballstemmer.stemmer("english").stemWord


def bm25s_terms(text: str, options) -> list[str]:
    tokens = re.findall(r"\w+", text.lower())
    if options and options.get("stopwords"):
        tokens = [t for t in tokens if t not in STOPWORDS_EN]
    if options and options.get("stemmer"):
        tokens = [_stem(t) for t in tokens]
    return tokens


def request(name, chunking, query, variant, params, terms):
    req = make_request(TEXTS[name], query=query, k=3)
    req["chunking"] = chunking
    req["retrieval"] = {"k": 3, "variant": variant, **params, **({"terms": terms} if terms else {})}
    return req


def cases():
    return itertools.product(CORPORA, VARIANTS, PARAMS, TERMS, QUERIES)


def test_stop_words_are_bm25s_list():
    assert STOPWORDS_ENGLISH == frozenset(STOPWORDS_EN)


def test_grid_size_is_recorded(record_property):
    """The grid's size goes into pytest's report (the junit XML's properties), not into the dots."""
    n = len(list(cases()))
    record_property("bm25_grid_cases", n)
    record_property("bm25_grid_cases_per_variant", n // len(VARIANTS))
    assert n >= 1000


@pytest.mark.parametrize("variant", VARIANTS)
def test_scores_equal_bm25s(variant):
    session = Session()
    checked = 0
    for (name, chunking), params, terms, query in itertools.product(CORPORA, PARAMS, TERMS, QUERIES):
        r = simulate(request(name, chunking, query, variant, params, terms), session)
        assert "error" not in r, r
        text = TEXTS[name]
        chunks = [text[c["start"]:c["end"]] for c in r["chunks"]]
        ours = [c["score"] for c in r["chunks"]]
        retriever = bm25s.BM25(method=variant, dtype="float64", **params)
        retriever.index([bm25s_terms(c, terms) for c in chunks], show_progress=False)
        q = bm25s_terms(query, terms)
        assert r["query_terms"] == q
        theirs = retriever.get_scores(q) if q else np.zeros(len(chunks))
        assert len(theirs) == len(ours)
        for a, b in zip(ours, theirs):
            assert math.isclose(a, float(b), rel_tol=1e-9, abs_tol=1e-12), (name, variant, params, terms, query, a, b)
        checked += 1
    assert checked == len(CORPORA) * len(PARAMS) * len(TERMS) * len(QUERIES)


def test_robertson_ranking_agrees_with_rank_bm25_where_idf_is_positive():
    agreed = 0
    for (name, chunking), params, terms, query in itertools.product(CORPORA, PARAMS, TERMS, QUERIES):
        r = simulate(request(name, chunking, query, "robertson", params, terms))
        text = TEXTS[name]
        corpus = [bm25s_terms(text[c["start"]:c["end"]], terms) for c in r["chunks"]]
        q = bm25s_terms(query, terms)
        n = len(corpus)
        df = {t: sum(t in doc for doc in corpus) for t in set(q)}
        if not q or any(not (0 < d < n / 2) for d in df.values()):
            continue  # rank_bm25 floors negative idf at epsilon * mean idf; bm25s clips at 0
        okapi = BM25Okapi(corpus, k1=params["k1"], b=params["b"]).get_scores(q)
        ours = [c["score"] for c in r["chunks"]]
        for a, b in zip(ours, okapi):
            assert math.isclose(a * (params["k1"] + 1), float(b), rel_tol=1e-9, abs_tol=1e-12)
        assert [c["rank"] for c in r["chunks"]] == [
            1 + sorted(range(n), key=lambda d: (-okapi[d], d)).index(i) for i in range(n)
        ]
        agreed += 1
    assert agreed >= 10
