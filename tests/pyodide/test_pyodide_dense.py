"""Dense and hybrid retrieval inside real Pyodide (SPEC section 10) answer as CPython does: the
pending round trip, RRF over the host's similarities, and where the model stops reading (the pure
WordPiece, on text that needs its Unicode path)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import make_request
from ragsim.wire import api

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

pytestmark = pytest.mark.slow  # real Pyodide under Node

SCRIPT = Path(__file__).with_name("run_core.mjs")
TEXT = ("Ünïcödé façade naïve café — 東京 and ΑΘΗΝΑ: chunk boundaries matter for retrieval. " * 30
        + "The answer is forty-two. " + "Naïve retrieval reads only the head of a long chunk. " * 20)


def in_pyodide(dist, request):
    run = subprocess.run(["node", str(SCRIPT), str(dist), json.dumps(request)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def dist():
    return build.ensure_fresh()


def test_dense_round_trip_and_hybrid_like_cpython(dist):
    start = TEXT.index("The answer")
    request = make_request(TEXT, query="what is the answer", unit="words", size=250, overlap=20, k=2,
                           span=(start, start + len("The answer is forty-two.")))
    request["retrieval"].update(method="dense", similarities=[])
    pending = api.simulate(request)
    assert pending["dense"]["pending"] and pending["dense"]["truncated"] > 0
    assert in_pyodide(dist, request) == pending
    needs = pending["dense"]["needs"]
    request["retrieval"].update(method="hybrid", weights=[0.25, 0.75], rrf_c=5,
                                similarities=[[*key, round(0.9 - 0.1 * i, 3)] for i, key in enumerate(needs)])
    fused = api.simulate(request)
    assert not fused["dense"]["pending"] and fused["dense"]["ranked_by"] == "hybrid"
    assert in_pyodide(dist, request) == fused
