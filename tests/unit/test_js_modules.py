"""The page's pure JavaScript modules under Node's own test runner: `node --test tests/js/` runs
tests/js/*.test.mjs, each importing its module from assets/js as the page does (ES modules, no DOM,
no build): format.js, offsets.js, spans.js, limits.js, question-wire.js, saved-index.js and more.
Modules that import the generated splitter table (params.js, requests.js, compute.js) are loaded
from a copy of assets/js with that table generated beside them (tests/js/page-modules.mjs)."""

import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
JS_TESTS = ROOT / "tests" / "js"


def node_flags() -> list[str]:
    """Node reads assets/js's .js files as ES modules by their syntax (no package.json says so) from
    20.19 on; 20.10 to 20.18 need --experimental-detect-module for that."""
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30).stdout
    major, minor = (int(x) for x in version.strip().lstrip("v").split(".")[:2])
    return [] if (major, minor) >= (20, 19) else ["--experimental-detect-module"]


def test_node_test_runs_every_js_test_and_all_pass():
    if not shutil.which("node"):
        pytest.fail("node is required for the JavaScript tests (python build.py test checks for it)")
    run = subprocess.run(["node", *node_flags(), "--test", "--test-reporter=tap", "tests/js/"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr
    counts = {k: int(v) for k, v in re.findall(r"^# (tests|pass|fail) (\d+)$", run.stdout, re.M)}
    files = sorted(JS_TESTS.glob("*.test.mjs"))
    written = sum(len(re.findall(r"^test\(", f.read_text(encoding="utf-8"), re.M)) for f in files)
    assert len(files) >= 5 and counts == {"tests": written, "pass": written, "fail": 0}, counts
