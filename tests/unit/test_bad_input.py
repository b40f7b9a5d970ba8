"""Every request that breaks the contract gets one field and one actionable sentence, never a traceback."""

import json

import pytest

from helpers import CORE, make_request, run_cli
from ragsim.wire.api import simulate, simulate_json

TEXT = "one two three four five six"


def with_(**changes):
    req = make_request(TEXT, query="two", size=4, overlap=1)
    for path, value in changes.items():
        obj = req
        keys = path.split("__")
        for key in keys[:-1]:
            obj = obj[key]
        obj[keys[-1]] = value
    return req


BAD = [
    ({"documents": None}, "documents"),
    ({"documents": "text"}, "documents"),
    ({"documents": []}, "documents"),
    ({"documents": [{"id": "d", "title": "", "text": 5}]}, "documents[0].text"),
    ({"documents": [{"id": "d", "text": "a"}, {"id": "d", "text": "b"}]}, "documents[1].id"),
    ({"chunking__unit": "bytes"}, "chunking.unit"),  # "tokens" is a unit (the exact tokenizers)
    ({"chunking__size": 0}, "chunking.size"),
    ({"chunking__size": 2.5}, "chunking.size"),
    ({"chunking__size": True}, "chunking.size"),
    ({"chunking__size": "24"}, "chunking.size"),
    ({"chunking__overlap": -1}, "chunking.overlap"),
    ({"chunking__overlap": 4}, "chunking.overlap"),
    ({"chunking__strategy": "magic"}, "chunking.strategy"),
    ({"retrieval__k": 0}, "retrieval.k"),
    ({"retrieval__k": 1.0}, "retrieval.k"),
    ({"retrieval__variant": "tfidf"}, "retrieval.variant"),
    ({"retrieval__k1": "x"}, "retrieval.k1"),
    ({"span": {"doc": "nope", "start": 0, "end": 3}}, "span.doc"),
    ({"span": {"doc": "d", "start": 0, "end": 999}}, "span"),
    ({"span": {"doc": "d", "start": 3, "end": 4}}, "span"),  # a single space
    ({"span": {"doc": "d", "start": 2, "end": 1}}, "span"),
    ({"fact": {"doc": "d", "name": [0, 3], "value": [1, 7]}}, "fact.value"),
    ({"fact": {"doc": "d", "name": [0, 3], "value": [4, 900]}}, "fact.value"),
    ({"fact": {"doc": "d", "name": [0], "value": [4, 7]}}, "fact.name"),
    ({"price_per_million": "cheap"}, "price_per_million"),
    ({"price_per_million": float("nan")}, "price_per_million"),
    ({"query": 7}, "query"),
]


@pytest.mark.parametrize("changes,field", BAD, ids=[f for _, f in BAD])
def test_bad_request_names_the_field(changes, field):
    r = simulate(with_(**changes))
    assert set(r) == {"error"}
    assert r["error"]["field"] == field
    msg = r["error"]["message"]
    assert msg.endswith(".") and "Traceback" not in msg and len(msg) < 200


def test_overlap_message_is_the_one_people_see():
    r = simulate(make_request(TEXT, size=24, overlap=30))
    assert r["error"]["message"] == "Overlap must be smaller than the chunk size (got 30 and 24)."


def test_valid_edge_cases_are_not_errors():
    assert "error" not in simulate(make_request("", query=""))
    assert "error" not in simulate(make_request("   ", query="!!!"))
    r = simulate(make_request(TEXT, query="?? --", k=3))
    assert all(c["score"] == 0.0 for c in r["chunks"])


def test_non_object_request_and_bad_json_string():
    assert simulate([1, 2])["error"]["field"] == "request"
    assert json.loads(simulate_json("{nope"))["error"]["field"] == "request"


@pytest.mark.slow
def test_cli_round_trip_and_exit_codes():
    ok = run_cli(stdin=json.dumps(make_request(TEXT, query="two", size=4, overlap=1)), cwd=CORE, timeout=60)
    assert ok.returncode == 0 and json.loads(ok.stdout) == simulate(make_request(TEXT, query="two", size=4, overlap=1))
    bad = run_cli(stdin=json.dumps(make_request(TEXT, size=4, overlap=4)), cwd=CORE, timeout=60)
    assert bad.returncode == 2 and "chunking.overlap" in bad.stderr and "Traceback" not in bad.stderr
    broken = run_cli(stdin="{not json", cwd=CORE, timeout=60)
    assert broken.returncode == 1 and "not valid JSON" in broken.stderr and "Traceback" not in broken.stderr


def test_numbers_out_of_range_are_field_errors_not_crashes():
    for changes, field in (({"price_per_million": 1e308}, "price_per_million"),
                           ({"retrieval__k1": 1e308}, "retrieval.k1"),
                           ({"retrieval__b": 1.5}, "retrieval.b")):
        out = json.loads(simulate_json(json.dumps(with_(**changes))))
        assert out["error"]["field"] == field


def test_deeply_nested_json_is_refused_with_a_message():
    out = json.loads(simulate_json("[" * 100_000 + "]" * 100_000))
    assert out["error"]["field"] == "request" and "nested" in out["error"]["message"]


def test_columns_wire_carries_the_same_chunks():
    from ragsim.wire.api import Session

    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa " * 20
    req = make_request(text, query="gamma kappa", size=7, overlap=2, k=3, span=(6, 22))
    objects = simulate(req)
    columns = simulate({**req, "wire": "columns"}, Session())
    c = columns.pop("chunk_columns")
    rebuilt = [{"doc": c["ids"][c["doc"][i]], "number": i + 1, "start": c["start"][i], "end": c["end"][i],
                "units": c["units"][i], "score": c["score"][i], "rank": c["rank"][i],
                "retrieved": c["rank"][i] <= 3, "holds": c["holds"].get(str(i)), "overlap_prev": c["overlap_prev"][i]}
               for i in range(len(c["start"]))]
    assert rebuilt == objects.pop("chunks")
    assert columns == objects  # everything else is the same
    assert simulate({**req, "wire": "rows"})["error"]["field"] == "wire"


# --- every refusal a refusal --------------------------------------------------------------------

LANGCHAIN = {"strategy": "langchain-recursive", "size": 20, "overlap": 0}
HOSTILE = [
    # BM25+ and BM25L divide zero by zero for a chunk without a query term
    ({"retrieval__variant": "bm25+", "retrieval__k1": 0}, "retrieval.k1"),
    ({"retrieval__variant": "bm25l", "retrieval__k1": 0, "retrieval__delta": 0}, "retrieval.delta"),
    # list and dict values where a name is expected
    ({"retrieval__terms": {"stopwords": ["english"]}}, "retrieval.terms.stopwords"),
    ({"retrieval__terms": {"stemmer": {"x": 1}}}, "retrieval.terms.stemmer"),
    ({"chunking": {**LANGCHAIN, "language": ["markdown"]}}, "chunking.language"),
    ({"chunking": {**LANGCHAIN, "language": {"x": 1}}}, "chunking.language"),
    ({"chunking__strategy": ["window"]}, "chunking.strategy"),
    ({"chunking__strategy": {"name": "window"}}, "chunking.strategy"),
    ({"retrieval__variant": ["bm25l"]}, "retrieval.variant"),
    ({"chunking__unit": ["words"]}, "chunking.unit"),
    ({"wire": {"columns": True}}, "wire"),
    ({"chunking": {"strategy": "haystack", "split_by": ["word"], "size": 4}}, "chunking.split_by"),
    ({"chunking": {**LANGCHAIN, "keep_separator": ["start"]}}, "chunking.keep_separator"),
    # 3,000 separators once recursed 3,000 deep
    ({"chunking": {**LANGCHAIN, "separators": ["x"] * 3000}}, "chunking.separators"),
    # untrusted regular expressions that backtrack catastrophically, and a pattern too long
    ({"chunking": {**LANGCHAIN, "separators": ["(?:a+)+b"], "is_separator_regex": True}}, "chunking.separators"),
    ({"chunking": {**LANGCHAIN, "separators": ["\\s*\\s*x"], "is_separator_regex": True}}, "chunking.separators"),
    ({"chunking": {"strategy": "langchain-character", "separator": "(?:\\w+\\s?)*$", "is_separator_regex": True,
                   "size": 9, "overlap": 0}}, "chunking.separator"),
    ({"chunking": {**LANGCHAIN, "separators": ["a" * 501], "is_separator_regex": True}}, "chunking.separators"),
    ({"chunking": {"strategy": "llamaindex-sentence", "size": 50, "overlap": 0,
                   "secondary_chunking_regex": "(?:a|ab)+c"}}, "chunking.secondary_chunking_regex"),
    # size limits, checked before any work
    ({"documents": [{"id": "d", "text": "a" * 10_000_001}]}, "documents"),
    ({"query": "why " * 30_000}, "query"),
]


@pytest.mark.parametrize("changes,field", HOSTILE, ids=[f"{f}-{i}" for i, (_, f) in enumerate(HOSTILE)])
def test_hostile_values_are_refusals_not_crashes(changes, field):
    r = simulate(with_(**changes))
    assert set(r) == {"error"} and r["error"]["field"] == field
    msg = r["error"]["message"]
    assert msg.endswith(".") and len(msg) < 300  # a wrong value is shown cut short, never whole


def test_a_shifted_variant_with_b_1_refuses_an_empty_chunk_and_names_it():
    text = "alpha beta gamma -- -- -- delta alpha"
    req = make_request(text, query="alpha", unit="chars", size=6, overlap=0, retrieval={"k": 2, "b": 1})
    for variant in ("bm25l", "bm25+"):
        r = simulate({**req, "retrieval": {"k": 2, "b": 1, "variant": variant}})
        assert r["error"]["field"] == "retrieval.b" and "chunk 4 has no terms" in r["error"]["message"]
    assert "error" not in simulate({**req, "retrieval": {"k": 2, "b": 0.99, "variant": "bm25l"}})
    assert "error" not in simulate({**req, "retrieval": {"k": 2, "b": 1, "variant": "lucene"}})


def test_the_hostile_separator_is_refused_at_once_and_its_harmless_cousins_run():
    import time

    text = "a" * 5000 + "!"
    req = make_request(text, retrieval={"k": 1})
    start = time.perf_counter()
    r = simulate({**req, "chunking": {**LANGCHAIN, "separators": ["(?:a+)+b"], "is_separator_regex": True}})
    assert "backtracks catastrophically" in r["error"]["message"] and time.perf_counter() - start < 5
    for harmless in ("\\n#{1,6} ", "(?<=\\. )", "\\n\\n+", "[.!?]\\s+", "\\n+\\s*", "(?:foo|bar)+"):
        ok = simulate({**req, "chunking": {**LANGCHAIN, "separators": [harmless, ""], "is_separator_regex": True}})
        assert "error" not in ok, harmless


def test_every_language_preset_passes_the_regex_check():
    from ragsim.text.safe_regex import check
    from ragsim.split.langchain_recursive import LANGUAGES

    for separators in LANGUAGES.values():
        for s in separators:
            if s:
                check(s, "chunking.separators")


@pytest.mark.slow
def test_the_chunk_count_is_refused_before_splitting():
    text = "word " * 300_000  # 300,000 words: size 1 would make 300,000 chunks
    r = simulate(make_request(text, size=1, overlap=0))
    assert r["error"]["field"] == "chunking.size" and "300,000 chunks" in r["error"]["message"]
    assert "200,000" in r["error"]["message"]
    chars = simulate(make_request(text, unit="chars", size=1000, overlap=999))  # 1.5 million windows
    assert chars["error"]["field"] == "chunking.size"
    assert "error" not in simulate(make_request(text, size=2, overlap=0))  # 150,000 chunks are allowed


def test_section_expansion_of_an_empty_document_found_by_the_fuzz():
    # LlamaIndex's SentenceSplitter gives an empty text one empty chunk; its section is the empty text
    r = simulate({"documents": [{"id": "d", "text": ""}], "query": "", "chunking": {"strategy": "llamaindex-sentence"},
                  "retrieval": {"k": 1}, "expand": {"section": True}})
    assert r["expanded"]["pieces"] == [[0, 0, 0]] and r["expanded"]["context"] == ""


def test_every_json_entry_point_refuses_nan_and_a_wrong_retrieval():
    """json.loads takes NaN and Infinity literals: no entry point lets one escape (found by a sweep
    putting each into every field); the audit once raised AttributeError on a retrieval that is no object."""
    from ragsim.wire.api import equivalent_code_json
    from ragsim.wire.audit import audit_json

    req = make_request(TEXT, query="two", size=4, overlap=1)
    for value in (float("nan"), float("inf"), [1], "x"):
        for field in ("retrieval", "price_per_million"):
            text = json.dumps({**req, field: value})
            audit_text = json.dumps({"documents": req["documents"], "chunking": req["chunking"], field: value})
            for entry in (simulate_json, equivalent_code_json, audit_json):
                out = json.loads(entry(audit_text if entry is audit_json else text))
                assert "error" not in out or out["error"]["message"].endswith(".")
    audit_req = {"documents": req["documents"], "chunking": req["chunking"], "retrieval": [1]}  # the audit's own fields
    assert json.loads(audit_json(json.dumps(audit_req)))["error"]["field"] == "retrieval"
