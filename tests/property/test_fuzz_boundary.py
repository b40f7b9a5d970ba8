"""A fuzz of the JSON boundary: requests built from the contract's own fields, each value
sometimes replaced by any JSON at all, go through `simulate` and `simulate_json` (and the equivalent
code and the audit, which read the same fields).

For every request: no exception escapes; an error names a field and says in a sentence what to
do; a response keeps SPEC's invariants (extents inside their document, ranks a permutation of 1..N,
retrieved = min(k, N)); and the JSON text is valid UTF-8 whatever the strings held. Bounded:
a few hundred examples of small texts, deadline=None.

Then the seeded campaign: 3,000 hostile requests from tests/fuzz_requests.py (every strategy,
retriever, unit, question set and map field, values at and past their bounds) through `simulate`, the
JSON boundary and `simulate_packed`, each within 20 s; the same seeds every run, so a failure names
the seed that reproduces it. tests/fuzz_long.py runs the same at 50,000.
"""

import json
import random

import fuzz_requests
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ragsim.wire.api import Session, equivalent_code, equivalent_code_json, simulate, simulate_json
from ragsim.wire.audit import audit

SCALAR = (st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=False, allow_infinity=False)
          | st.text(alphabet="ab é\ud800", max_size=4))
ANY_JSON = SCALAR | st.lists(SCALAR, max_size=3) | st.dictionaries(st.sampled_from(["a", "size", "doc"]), SCALAR,
                                                                  max_size=2)

PIECES = st.sampled_from(["the", "cat", "sat", "a", "aaaa", "Σ", "😀", "\ud800", "#", "# Head", ".", "!", " ",
                          "  ", "\n", "\n\n", "\f", "---", "1", "42"])
TEXT = st.lists(PIECES, max_size=40).map(" ".join) | st.sampled_from(["", " ", "\n\n\n", "a" * 60 + "!"])
SEPARATORS = st.sampled_from(["\n\n", "\n", " ", "", ".", "(?:a+)+b", "(?:a|a)+!", "\\s*\\s*x", "[", "(a)",
                              "(?<=\\. )", "\\n#{1,6} ", "a{1,3}", "x" * 600])


TOKENIZERS = st.sampled_from(["cl100k_base", "o200k_base"])
# Each strategy's own fields, each with values of its kind (edge values included).
SIZES = st.integers(1, 30)
STRATEGY_FIELDS = {
    "window": {"unit": st.sampled_from(["words", "chars", "tokens"]), "size": SIZES, "overlap": st.integers(0, 30),
               "tokenizer": TOKENIZERS},
    "sentences": {"unit": st.sampled_from(["words", "chars"]), "size": SIZES, "overlap": st.integers(0, 30)},
    "langchain-character": {"size": SIZES, "overlap": st.integers(0, 30), "separator": SEPARATORS,
                            "is_separator_regex": st.booleans(), "keep_separator": st.sampled_from([True, False, "start", "end"]),
                            "strip_whitespace": st.booleans()},
    "langchain-recursive": {"size": SIZES, "overlap": st.integers(0, 30), "separators": st.lists(SEPARATORS, max_size=4),
                            "is_separator_regex": st.booleans(), "keep_separator": st.sampled_from([True, False, "start", "end"]),
                            "language": st.sampled_from(["markdown", "python", "html"])},
    "haystack": {"size": SIZES, "overlap": st.integers(0, 30), "split_threshold": st.integers(0, 5),
                 "split_by": st.sampled_from(["word", "passage", "line", "period", "page"])},
    # the token splitters (SPEC section 9)
    "langchain-token": {"size": SIZES, "overlap": st.integers(0, 30), "tokenizer": TOKENIZERS},
    "llamaindex-sentence": {"size": st.integers(1, 60), "overlap": st.integers(0, 30), "separator": SEPARATORS,
                            "paragraph_separator": SEPARATORS, "secondary_chunking_regex": SEPARATORS | st.none(),
                            "metadata": st.sampled_from(["", "title: x"])},
    "llamaindex-token": {"size": st.integers(1, 60), "overlap": st.integers(0, 30), "separator": SEPARATORS,
                         "backup_separators": st.lists(SEPARATORS, max_size=2)},
    "llamaindex-markdown": {},
}
RETRIEVAL_FIELDS = {
    "variant": st.sampled_from(["lucene", "robertson", "atire", "bm25l", "bm25+"]),
    "k1": st.sampled_from([0, 0.5, 1.2, 1000]),
    "b": st.sampled_from([0, 0.75, 1]),
    "delta": st.sampled_from([0, 0.5, 2]),
    "terms": st.fixed_dictionaries({}, optional={"stopwords": st.sampled_from(["english", None]),
                                                 "stemmer": st.sampled_from(["snowball-english", None])}),
}


def some_of(draw, fields: dict) -> dict:
    """A random subset of `fields`, each drawn from its strategy."""
    return {k: draw(s) for k, s in fields.items() if draw(st.booleans())}


@st.composite
def requests(draw):
    texts = draw(st.lists(TEXT, min_size=1, max_size=3))
    docs = [{"id": f"d{i}", "title": "t", "text": t} for i, t in enumerate(texts)]
    strategy = draw(st.sampled_from(sorted(STRATEGY_FIELDS)))
    chunking = {"strategy": strategy, **some_of(draw, STRATEGY_FIELDS[strategy])}
    if strategy in ("window", "sentences"):
        chunking.setdefault("size", 5)
    if draw(st.integers(0, 4)):  # mostly an overlap the strategy accepts
        chunking["overlap"] = chunking.get("overlap", 0) % chunking.get("size", 200)
    retrieval = {"k": draw(st.integers(1, 12)), **some_of(draw, RETRIEVAL_FIELDS)}
    d = draw(st.integers(0, len(docs) - 1))
    n = len(texts[d])
    a, b = sorted(draw(st.tuples(st.integers(0, n), st.integers(0, n))))
    marks = texts[d][a:b].strip() and texts[d][a:min(a + 1, n)].strip() and texts[d][b:min(b + 2, n)].strip()
    request = {"documents": docs, "query": draw(st.lists(PIECES, max_size=4).map(" ".join)), "chunking": chunking,
               "retrieval": retrieval}
    if marks:  # a span, a fact, questions that are not blank (blank ones are refused: tested in tests/unit)
        reference = {"doc": f"d{d}", "start": a, "end": b}
        request.update(some_of(draw, {
            "span": st.just(reference),
            "fact": st.just({"doc": f"d{d}", "name": [a, a + 1], "value": [b, b + 2]}),
            # SPEC section 8: a question set and the settings map
            "questions": st.lists(PIECES, min_size=1, max_size=2).map(
                lambda qs: [{"id": f"q{i}", "query": q, "references": [reference]} for i, q in enumerate(qs)]),
            "map": st.fixed_dictionaries({"sizes": st.lists(SIZES, min_size=1, max_size=2),
                                          "overlaps": st.lists(st.integers(0, 12), min_size=1, max_size=2)}),
        }))
    request.update(some_of(draw, {
        "find": PIECES,
        "cuts": st.booleans(),
        "sweep": st.lists(st.integers(0, 12), max_size=3),
        "expand": st.fixed_dictionaries({"neighbours": st.integers(0, 3), "section": st.booleans()}),
        "wire": st.sampled_from(["objects", "columns"]),
        "price_per_million": st.sampled_from([0, 3, 1e6]),
        "tokenizer": TOKENIZERS,  # SPEC section 9: exact context tokens
    }))
    # A quarter of the requests get one value anywhere replaced by any JSON at all.
    if draw(st.integers(0, 3)) == 3:
        places = [chunking, retrieval, docs[0], request] + ([retrieval["terms"]] if "terms" in retrieval else [])
        where = draw(st.sampled_from(places))
        where[draw(st.sampled_from(sorted(where) + ["extra"]))] = draw(ANY_JSON)
    return request


def check_error(error: dict) -> None:
    assert set(error) == {"field", "message"}
    assert isinstance(error["field"], str) and error["field"]
    message = error["message"]
    assert isinstance(message, str) and len(message) > 12 and message == message.strip() and message.endswith(".")


def check_response(request: dict, r: dict) -> None:
    texts = {d["id"]: d["text"] for d in request["documents"]}
    chunks = r["chunks"]
    if chunks is None:  # the columns wire: rebuild what the invariants need
        cols = r["chunk_columns"]
        chunks = [{"doc": cols["ids"][d], "start": s, "end": e, "rank": k}
                  for d, s, e, k in zip(cols["doc"], cols["start"], cols["end"], cols["rank"])]
    n = len(chunks)
    for c in chunks:
        assert 0 <= c["start"] <= c["end"] <= len(texts[c["doc"]])
    assert sorted(c["rank"] for c in chunks) == list(range(1, n + 1))
    k = r["stats"]["k"]
    assert r["stats"]["retrieved"] == min(k, n) == sum(1 for c in chunks if c["rank"] <= k)
    assert r["stats"]["chunks"] == n


@pytest.mark.slow
@settings(deadline=None, max_examples=250, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(requests())
def test_no_request_escapes_the_contract(request):
    r = simulate(request)
    if "error" in r:
        check_error(r["error"])
    else:
        check_response(request, r if "chunks" in r else {**r, "chunks": None})
    text = simulate_json(json.dumps(request), Session())
    text.encode("utf-8")  # lone surrogates are escaped, so the answer is valid UTF-8
    assert json.loads(text) == json.loads(json.dumps(r))
    # the other JSON entry points take the same requests: equivalent code, the audit
    for other in (equivalent_code(request), audit({**request, "overlaps": [0, 3]})):
        if "error" in other:
            check_error(other["error"])
    equivalent_code_json(json.dumps(request)).encode("utf-8")


@settings(deadline=None, max_examples=150)
@given(st.dictionaries(st.sampled_from(["documents", "query", "chunking", "retrieval", "span", "fact", "find",
                                       "sweep", "expand", "wire"]), ANY_JSON | st.lists(ANY_JSON, max_size=2),
                       max_size=6))
def test_any_json_at_all_is_answered_or_refused(request):
    r = simulate(request)
    assert "error" in r  # without documents as objects no request is whole
    check_error(r["error"])
    simulate_json(json.dumps(request)).encode("utf-8")


# Seeds 0..2,999, a share of dense and hybrid requests small enough for CI (the model runs on the CPU):
# about 40 s of CPU on an idle 2-core machine.
CAMPAIGN = 3_000


@pytest.mark.slow
def test_a_seeded_campaign_of_hostile_requests_is_answered_or_refused():
    failures, kinds = [], {"response": 0, "error": 0}
    fuzz_requests.warm()
    for seed in range(CAMPAIGN):
        try:
            kinds[fuzz_requests.run(fuzz_requests.make(random.Random(seed), dense=0.02), seconds=20)] += 1
        except (Exception, fuzz_requests.Hang) as e:  # noqa: BLE001  (malformed, a hang, anything that escaped)
            failures.append(f"seed {seed}: {type(e).__name__}: {str(e)[:300]}")
    assert not failures, failures[:5]
    assert kinds["response"] > CAMPAIGN // 4 and kinds["error"] > CAMPAIGN // 4, kinds  # both kinds exercised
