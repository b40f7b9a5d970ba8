"""Unknown keys in a request are refused with the nearest valid name (or the list of valid ones), by
`simulate`, the audit and `python -m ragsim` alike; every field of every splitter at its library
default is accepted, and so is a request carrying every key the page sends."""

import copy
import json

import pytest

from helpers import make_request, one_line, run_cli
from ragsim.split import STRATEGIES
from ragsim.wire import keys
from ragsim.wire.api import simulate


def base():
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."
    return make_request(text, query="delta", size=4, overlap=1, k=1, span=(18, 37), fact=((18, 23), (24, 31)))


@pytest.mark.parametrize("change, field, near", [
    (lambda r: r.update(answer=r.pop("span")), "answer", "span"),
    (lambda r: r.update(retreival=r["retrieval"]), "retreival", "retrieval"),
    (lambda r: r["documents"][0].update(titel="x"), "documents[0].titel", "documents[0].title"),
    (lambda r: r["chunking"].update(chunk_size=4), "chunking.chunk_size", "chunking.size"),
    (lambda r: r["chunking"].update(overlapp=1), "chunking.overlapp", "chunking.overlap"),
    (lambda r: r["retrieval"].update(top_k=3), "retrieval.top_k", "retrieval.k"),
    (lambda r: r["retrieval"].update(terms={"stopword": "english"}), "retrieval.terms.stopword", "retrieval.terms.stopwords"),
    (lambda r: r["span"].update(stat=1), "span.stat", "span.start"),
    (lambda r: r["fact"].update(names=[0, 1]), "fact.names", "fact.name"),
    (lambda r: r.update(questions=[{"id": "q", "query": "x", "refs": []}]), "questions[0].refs", "questions[0].references"),
    (lambda r: r.update(questions=[{"id": "q", "query": "x", "references": [{"doc": "d", "start": 18, "ends": 37}]}]),
     "questions[0].references[0].ends", "questions[0].references[0].end"),
    (lambda r: r.update(map={"sizes": [4], "overlap": [0]}), "map.overlap", "map.overlaps"),
    (lambda r: r.update(expand={"neighbors": 1}), "expand.neighbors", "expand.neighbours"),
])
def test_an_unknown_key_is_refused_with_the_nearest_name(change, field, near):
    request = base()
    change(request)
    out = simulate(copy.deepcopy(request))
    assert out["error"]["field"] == field, out
    message = out["error"]["message"]
    assert message.endswith(f"; perhaps you meant {near}.") and message.count(". ") == 0
    done = run_cli(stdin=json.dumps(request))
    assert done.returncode == 2 and one_line(done.stderr).startswith(f"ragsim: {field}: ")


def test_an_unknown_key_with_no_near_name_lists_the_valid_ones():
    out = simulate({**base(), "zzz": 1})
    assert out["error"]["field"] == "zzz" and "which takes documents, query, chunking" in out["error"]["message"]


def test_chunking_fields_depend_on_the_strategy():
    request = base()
    request["chunking"] = {"strategy": "haystack", "unit": "words", "size": 4}
    out = simulate(request)
    assert out["error"]["field"] == "chunking.unit" and "the haystack splitter" in out["error"]["message"]
    request["chunking"] = {"strategy": "llamaindex-markdown", "size": 4}
    assert simulate(request)["error"]["field"] == "chunking.size"
    request["chunking"] = {"strategy": "langchain-character", "size": 40, "overlap": 0, "separators": ["\n"]}
    assert simulate(request)["error"]["message"].endswith("perhaps you meant chunking.separator.")


# each strategy's every field at its library default: all read, none refused (the table is the splitters')
ALL_FIELDS = {
    "window": {"unit": "tokens", "size": 4, "overlap": 1, "tokenizer": "cl100k_base"},
    "sentences": {"unit": "words", "size": 8, "overlap": 2, "tokenizer": "cl100k_base"},
    "langchain-character": {"size": 40, "overlap": 0, "separator": "\n\n", "is_separator_regex": False,
                            "keep_separator": False, "strip_whitespace": True},
    "langchain-recursive": {"size": 40, "overlap": 0, "separators": ["\n\n", "\n", " ", ""], "is_separator_regex": False,
                            "keep_separator": True, "strip_whitespace": True, "length": "tokens", "tokenizer": "cl100k_base"},
    "langchain-token": {"size": 8, "overlap": 1, "tokenizer": "cl100k_base"},
    "haystack": {"split_by": "word", "size": 4, "overlap": 1, "split_threshold": 0},
    "llamaindex-sentence": {"size": 64, "overlap": 4, "separator": " ", "paragraph_separator": "\n\n\n",
                            "secondary_chunking_regex": "[^,.;]+[,.;]?|[,.;]", "metadata": "", "tokenizer": "cl100k_base"},
    "llamaindex-token": {"size": 64, "overlap": 4, "separator": " ", "backup_separators": ["\n"], "metadata": "",
                         "tokenizer": "cl100k_base"},
    "llamaindex-markdown": {},
    # SPEC section 12: the semantic chunkers' fields at the libraries' defaults
    "langchain-semantic": {"buffer_size": 1, "breakpoint_threshold_type": "percentile", "breakpoint_threshold_amount": 95,
                           "number_of_chunks": None, "sentence_split_regex": r"(?<=[.?!])\s+", "min_chunk_size": None},
    "llamaindex-semantic": {"buffer_size": 1, "breakpoint_percentile_threshold": 95},
    "chroma-cluster": {"size": 400, "min_chunk_size": 50, "tokenizer": "cl100k_base"},
    "chroma-kamradt": {"size": 400, "min_chunk_size": 50, "tokenizer": "cl100k_base"},
}


# fields that exclude others: LangChain's language presets replace the separators
OTHER_FIELDS = {"langchain-recursive": {"size": 40, "overlap": 0, "language": "markdown", "keep_separator": True}}


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_field_of_every_strategy_is_accepted(strategy):
    assert set(ALL_FIELDS[strategy]) | set(OTHER_FIELDS.get(strategy, {})) == set(keys.CHUNKING_FIELDS[strategy])
    for fields in [ALL_FIELDS[strategy]] + ([OTHER_FIELDS[strategy]] if strategy in OTHER_FIELDS else []):
        request = base()
        request["chunking"] = {"strategy": strategy, **fields}
        assert "error" not in simulate(request), simulate(request)


def test_every_key_the_page_sends_is_accepted():
    """The page's own keys (params.js buildRequest, compute.js, investigate.js, settings-map.js,
    dense-client.js): a request with all of them at once is simulated, not refused."""
    request = base()
    request["documents"][0]["text"] = request["documents"][0]["text"] * 3
    request.update(tokenizer="cl100k_base", wire="binary", scores="top", cuts=True, find="delta", expand={"neighbours": 1},
                   sweep=[0, 1], map={"sizes": [4, 6], "overlaps": [0, 1]},
                   questions=[{"id": "1", "query": "delta", "references": [{"doc": "d", "start": 18, "end": 37}]}])
    request["retrieval"].update(variant="bm25l", k1=1.2, b=0.75, delta=0.5, terms={"stopwords": "english"})
    out = simulate(request)
    assert "error" not in out and {"found", "cuts", "expanded", "sweep", "map", "questions"} <= set(out)
    hybrid = base()
    hybrid["retrieval"].update(method="hybrid", rrf_c=60, weights=[0.5, 0.5], similarities=[],
                               question_similarities={"other": []})
    hybrid["chunking"]["strategy"] = "window"
    assert "error" not in simulate(hybrid)


def test_the_audit_refuses_unknown_keys_too():
    from ragsim.wire.audit import audit

    r = base()
    out = audit({"documents": r["documents"], "chunking": r["chunking"], "overlap": [0]})
    assert out["error"]["field"] == "overlap" and out["error"]["message"].endswith("perhaps you meant overlaps.")


def test_the_pages_language_choices_are_the_cores_presets():
    """The page offers every LangChain preset the core mirrors, and no other."""
    import pathlib
    import re

    from ragsim.split.langchain_recursive import LANGUAGES

    source = (pathlib.Path(__file__).resolve().parents[2] / "assets" / "js" / "params.js").read_text(encoding="utf-8")
    listed = re.search(r"const LANGUAGES = Object\.fromEntries\(\[([^\]]*)\]", source).group(1)
    assert re.findall(r'"(\w+)"', listed) == list(LANGUAGES)
