"""buildlib/offline.py: the service worker build.py writes keeps exactly the page, its
files, Pyodide's runtime and the core wheel, names this build's page by its sha256, and takes a new
version with any change to build.json."""

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402
from buildlib import offline  # noqa: E402

RUNTIME = [f"{build.PYODIDE_DIR}/{name}" for name in offline.RUNTIME]
WHEEL = "py/0123456789/ragsim-0.1.0-py3-none-any.whl"
PAGE = ["index.html", "app.0123456789.js", "assets/style.0123456789.css"]


def site(**changes) -> dict[str, bytes]:
    files = {p: p.encode() for p in PAGE + RUNTIME + [WHEEL, f"{build.PYODIDE_DIR}/micropip-0.11.1-py3-none-any.whl"]}
    files["build.json"] = b'{"source_digest": "a"}\n'
    files.update(changes)
    return files


def manifest(sw: bytes) -> dict:
    return json.loads(re.search(r"const BUILD = (\{.*?\});", sw.decode(), re.S).group(1))


def test_the_worker_keeps_the_page_its_files_the_runtime_and_the_wheel_only():
    files = site()
    built = manifest(offline.service_worker(files, PAGE, WHEEL))
    assert built["files"] == sorted(PAGE + RUNTIME + [WHEEL])  # not micropip, not build.json
    assert built["page"] == "index.html"
    assert built["pageSha256"] == hashlib.sha256(files["index.html"]).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{%d}" % build.HASH_LEN, built["version"])


def test_a_new_build_is_a_new_version_and_the_same_build_the_same_bytes():
    same = offline.service_worker(site(), PAGE, WHEEL)
    assert offline.service_worker(site(), PAGE, WHEEL) == same
    other = offline.service_worker(site(**{"build.json": b'{"source_digest": "b"}\n'}), PAGE, WHEEL)
    assert manifest(other)["version"] != manifest(same)["version"]


def test_a_file_the_build_lacks_is_refused():
    files = site()
    del files[f"{build.PYODIDE_DIR}/pyodide.asm.wasm"]
    with pytest.raises(build.BuildError, match="pyodide.asm.wasm"):
        offline.service_worker(files, PAGE, WHEEL)


def test_the_template_is_the_script_with_its_build_filled_in():
    text = offline.service_worker(site(), PAGE, WHEEL).decode()
    template = offline.TEMPLATE.read_text()
    assert offline.MARKER not in text and template.count(offline.MARKER) == 2
    head = template.split(offline.MARKER)[0]
    assert text.startswith(head) and text.endswith(template.split(offline.MARKER)[2])
