"""The core inside real Pyodide (the pinned npm package, under Node) answers as CPython does.

Runs tests/pyodide/run_core.mjs against the built dist/, so it also checks what the page relies on:
the runtime files, micropip from the rewritten lock (integrity checked) and the core wheel."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydoc_data.topics import topics

from helpers import make_request
from ragsim.wire import api

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

pytestmark = pytest.mark.slow  # real Pyodide under Node

SCRIPT = Path(__file__).with_name("run_core.mjs")


def real_requests():
    """Two requests on real prose (CPython's help topics): several documents, a span and a fact."""
    docs = [{"id": name, "title": name, "text": topics[name]} for name in ("assert", "with", "if", "try")]
    text = docs[1]["text"]
    sentence = text.index("The execution of the")
    span_end = text.index(".", sentence) + 1
    words = make_request("", query="how does the with statement call __enter__ and __exit__", k=3)
    words.update(documents=docs, span={"doc": "with", "start": sentence, "end": span_end},
                 fact={"doc": "with", "name": [sentence, sentence + 16], "value": [span_end - 20, span_end]})
    chars = make_request("", query="exception handler finally clause", unit="chars", size=300, overlap=60, k=4)
    chars.update(documents=docs, span=None)
    chars["retrieval"].update(variant="bm25l", k1=1.5, b=0.7)
    # Tokens: emoji split across tokens, CJK, RTL and special tokens, in both encodings.
    unicode = "naïve café 👨‍👩‍👧‍👦👍🏽 日本語のテキスト שָׁלוֹם مرحبا ǅemal <|endoftext|> 1234567 \x1c\u3000 end"
    tokens = make_request("", query="with statement 日本語", unit="tokens", size=40, overlap=8, k=3)
    tokens.update(documents=docs + [{"id": "unicode", "title": "unicode", "text": unicode * 3}], span=None)
    tokens["chunking"]["tokenizer"] = "o200k_base"
    lc = dict(tokens, chunking={"strategy": "langchain-token", "size": 9, "overlap": 2})
    # LlamaIndex's SentenceSplitter: Punkt sentences (ragsim.punkt) and cl100k_base counts in Pyodide.
    li = dict(tokens, chunking={"strategy": "llamaindex-sentence", "size": 48, "overlap": 12})
    # Question sets and the settings map: Pyodide's math.log may differ in the last bit,
    # and the pruned ranking must still give CPython's answers.
    qs = dict(words, questions=[
        {"id": "with", "query": "with statement __enter__", "references": [{"doc": "with", "start": sentence, "end": span_end}]},
        {"id": "two", "query": "assert debug if else", "references": [
            {"doc": "assert", "start": 0, "end": 40}, {"doc": "if", "start": 10, "end": 90}]},
    ], map={"sizes": [12, 24, 60], "overlaps": [0, 6, 20]})
    return {"words": words, "chars-bm25l": chars, "tokens-o200k": tokens, "langchain-token": lc,
            "llamaindex-sentence": li, "questions-map": qs}


@pytest.fixture(scope="module")
def dist():
    if not shutil.which("node"):
        pytest.fail("node is required for the Pyodide smoke test (python build.py test checks for it)")
    return build.ensure_fresh()


@pytest.mark.parametrize("name", sorted(real_requests()))
def test_pyodide_answers_like_cpython(dist, name):
    request = real_requests()[name]
    expected = api.simulate(request)
    assert "error" not in expected, expected
    assert expected["chunks"], "the request should produce chunks"
    run = subprocess.run(["node", str(SCRIPT), str(dist)], input=json.dumps(request),
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout) == expected


def test_pyodide_reports_bad_requests_like_cpython(dist):
    request = make_request("one two three", size=3, overlap=3)
    expected = api.simulate(request)
    assert expected["error"]["field"] == "chunking.overlap"
    run = subprocess.run(["node", str(SCRIPT), str(dist), json.dumps(request)],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout) == expected


def test_pyodide_tokenizes_unicode_16_like_cpython(dist):
    """Letters new in Unicode 15 and 16 (Kawi, Todhri) are letters to tiktoken; CPython 3.11's own
    database lacks them and Pyodide's has them, and the committed tables make both tokenize alike.
    Only the chunks' extents and token counts are compared: BM25's `\\w` follows each interpreter's
    own database, so scores of text with such letters differ between CPython 3.11 and Pyodide."""
    text = "Kawi \U00011f04\U00011f05 Todhri \U000105c0\U000105c1x 12\U00010d40 " * 40
    request = make_request(text, unit="tokens", size=7, overlap=2, k=1)
    expected = api.simulate(request)
    run = subprocess.run(["node", str(SCRIPT), str(dist), json.dumps(request)],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    extents = [[(c["start"], c["end"], c["units"]) for c in r["chunks"]] for r in (expected, json.loads(run.stdout))]
    assert extents[0] == extents[1] and len(extents[0]) > 20


TABLES_CHECK = """
import json, unicodedata
from ragsim.text.tokens.patterns import REPRESENTATIVE, representative
groups = {"Lu", "Ll", "Lt", "Lm", "Lo"}
differ = []
for cp in range(0x80, 0x110000):
    if 0xD800 <= cp <= 0xDFFF or cp == 0x17F:  # surrogates; long s stands for itself
        continue
    cat = unicodedata.category(chr(cp))
    group = cat if cat in groups else {"M": "M", "N": "N"}.get(cat[0])
    ours = representative(chr(cp))
    ours = None if ours in (REPRESENTATIVE["WS"], REPRESENTATIVE["other"]) else ours
    if ours != (REPRESENTATIVE[group] if group else None):
        differ.append(cp)
json.dumps([unicodedata.unidata_version, differ[:20], len(differ)])
"""


def test_the_committed_classes_are_pyodides_unicode_16(dist):
    """Pyodide's own database is Unicode 16, the version of tiktoken's tables: there the committed
    ranges (ragsim/tokens/_unicode_data.py) must equal it code point for code point."""
    run = subprocess.run(["node", str(SCRIPT), str(dist), "{}"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "RAGSIM_PYTHON": TABLES_CHECK})
    assert run.returncode == 0, run.stderr[-3000:]
    version, first, count = json.loads(run.stdout)
    assert version == "16.0.0" and (first, count) == ([], 0)
