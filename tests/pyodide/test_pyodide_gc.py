"""The page's worker keeps Python's cycle collector out of a drag: its prelude, run in
real Pyodide under Node as the worker runs it, answers 40 moves of a drag over a 65,000-word text
without one collection, and the idle pass (`_ragsim_collect`) collects and leaves the collector off.
The same moves with the collector on collect at least once (the test's control: the slow moves it
removes are real)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydoc_data.topics import topics

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402
from helpers import worker_prelude as prelude  # noqa: E402

pytestmark = pytest.mark.slow  # real Pyodide under Node

SCRIPT = Path(__file__).with_name("run_core.mjs")


DRAG = """
import gc, json, time
text = json.loads(request_json)["text"]
_ragsim_hold_text(0, text)
collections = []
gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)

def move(size):
    request = {"documents": [{"id": "doc", "title": "Document", "text": ""}],
               "query": "How does the with statement call __enter__ and __exit__?",
               "chunking": {"unit": "words", "size": size, "overlap": 6}, "retrieval": {"k": 3},
               "span": {"doc": "doc", "start": 1000, "end": 1200}, "wire": "binary", "scores": "top"}
    out = _ragsim_simulate_packed(json.dumps(request), 1)
    assert not out[0].startswith('{"error"'), out[0][:300]

ON = ON_FLAG
if ON:
    gc.enable()
move(24)
collections.clear()
for size in range(25, 65):
    move(size)
during = len(collections)
enabled_after = gc.isenabled()
collections.clear()
_ragsim_collect()
json.dumps({"during": during, "enabled": enabled_after, "idle": len(collections), "after_idle": gc.isenabled()})
"""


def run_drag(dist, on: bool) -> dict:
    code = prelude() + "\n_ragsim_collect()\n" + DRAG.replace("ON_FLAG", "True" if on else "False")
    text = "\n\n".join(topics[k] for k in sorted(topics))
    run = subprocess.run(["node", str(SCRIPT), str(dist)], input=json.dumps({"text": text}), capture_output=True,
                         text=True, timeout=300, env={**os.environ, "RAGSIM_PYTHON": code})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def dist():
    return build.ensure_fresh()


def test_a_drag_in_the_worker_runs_no_cycle_collection_and_the_idle_pass_does(dist):
    off = run_drag(dist, on=False)
    assert off == {"during": 0, "enabled": False, "idle": 1, "after_idle": False}


def test_with_the_collector_on_the_same_drag_collects(dist):
    on = run_drag(dist, on=True)
    assert on["during"] >= 1, on
