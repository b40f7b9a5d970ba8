"""The "equivalent code" runs against the real libraries and yields ragsim's chunks, scores and top k."""

import json
import math

import pytest

from corpus import TEXTS
from helpers import make_request
from ragsim.wire.api import equivalent_code_json, simulate
from ragsim.wire.codegen import equivalent_code

CASES = (
    ("prose.txt", {"unit": "words", "size": 24, "overlap": 6}, {}),
    ("crlf.txt", {"unit": "chars", "size": 50, "overlap": 10}, {"variant": "atire"}),
    ("prose.txt", {"strategy": "sentences", "unit": "words", "size": 40, "overlap": 12}, {"variant": "bm25l"}),
    ("markdown.md", {"strategy": "sentences", "unit": "chars", "size": 200, "overlap": 60}, {}),
    ("markdown.md", {"strategy": "langchain-recursive", "language": "markdown", "size": 160, "overlap": 40},
     {"terms": {"stopwords": "english", "stemmer": "snowball-english"}}),
    ("textwrap.py", {"strategy": "langchain-recursive", "language": "python", "size": 500, "overlap": 100},
     {"variant": "bm25+", "k1": 1.5, "b": 0.5, "delta": 1.0}),
    ("page.html", {"strategy": "langchain-recursive", "language": "html", "size": 120, "overlap": 0}, {"variant": "robertson"}),
    ("script.js", {"strategy": "langchain-recursive", "language": "js", "size": 150, "overlap": 30, "keep_separator": "end"}, {}),
    ("pydoc_topics", {"strategy": "langchain-recursive", "size": 300, "overlap": 50, "strip_whitespace": False},
     {"terms": {"stopwords": "english"}}),
    ("prose.txt", {"strategy": "langchain-character", "size": 200, "overlap": 40, "separator": ". ", "keep_separator": True}, {}),
    ("repeated.txt", {"strategy": "langchain-character", "size": 150, "overlap": 30}, {"variant": "bm25+"}),
    ("pydoc_topics", {"strategy": "haystack", "split_by": "word", "size": 40, "overlap": 8}, {}),
    ("crlf.txt", {"strategy": "haystack", "split_by": "line", "size": 3, "overlap": 1, "split_threshold": 2},
     {"terms": {"stemmer": "snowball-english"}}),
    ("repeated.txt", {"strategy": "haystack", "split_by": "passage", "size": 2, "overlap": 1}, {"variant": "atire"}),
    ("prose.txt", {"strategy": "haystack", "split_by": "period", "size": 3, "overlap": 0}, {}),
    ("crlf.txt", {"strategy": "haystack", "split_by": "page", "size": 1, "overlap": 0}, {}),
)
QUERY = "Were the snapshots pruned? holds width text harbour"


@pytest.mark.parametrize("name,chunking,retrieval", CASES)
def test_generated_code_reproduces_ragsim(name, chunking, retrieval):
    text = TEXTS[name]
    req = make_request(text, query=QUERY, k=4)
    req["chunking"] = chunking
    req["retrieval"] = {"k": 4, **retrieval}
    r = simulate(req)
    assert "error" not in r, r

    code = equivalent_code(req)
    namespace = {"text": text}
    exec(compile(code, f"<equivalent code for {name}>", "exec"), namespace)

    assert namespace["chunks"] == [text[c["start"]:c["end"]] for c in r["chunks"]]
    for ours, theirs in zip((c["score"] for c in r["chunks"]), namespace["scores"]):
        assert math.isclose(ours, float(theirs), rel_tol=1e-9, abs_tol=1e-12)
    by_rank = sorted(r["chunks"], key=lambda c: c["rank"])
    assert namespace["top"] == [c["number"] - 1 for c in by_rank[:4]]


def test_json_entry_returns_code_or_the_field_at_fault():
    req = make_request("Some text.", query="text")
    assert "bm25s.BM25(method='lucene'" in json.loads(equivalent_code_json(json.dumps(req)))["code"]
    req["chunking"] = {"strategy": "langchain-recursive", "language": "klingon", "size": 10, "overlap": 0}
    assert json.loads(equivalent_code_json(json.dumps(req)))["error"]["field"] == "chunking.language"
    assert json.loads(equivalent_code_json("{"))["error"]["field"] == "request"
