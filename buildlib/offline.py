"""The site's service worker: dist/sw.js, written from buildlib/sw.js with this build's
version and the files a visit needs, so the page opens offline after one visit and a second visit
reads them from the browser. Standard library only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from buildlib.base import HASH_LEN, PYODIDE_DIR, BuildError

TEMPLATE = Path(__file__).with_name("sw.js")
# Where the template's BUILD object is; build.py replaces everything between the two markers.
MARKER = "/*BUILD*/"
# The runtime files every start needs (the optional wheels, rank files and the dense model are
# left to the HTTP cache: fetched only when a feature needs them).
RUNTIME = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def precache(page_files: list[str], core_wheel: str) -> list[str]:
    """The files sw.js keeps at install, relative to the site's root, sorted: the page and all its
    files, Pyodide's runtime and the core wheel."""
    return sorted({*page_files, *(f"{PYODIDE_DIR}/{name}" for name in RUNTIME), core_wheel})


def service_worker(files: dict[str, bytes], page_files: list[str], core_wheel: str) -> bytes:
    """sw.js for the site whose files (by path) are `files`; its version is a hash of build.json,
    which changes with any source of the build."""
    keep = precache(page_files, core_wheel)
    missing = [p for p in keep if p not in files]
    if missing:
        raise BuildError(f"the service worker would keep files the build does not have: {missing}")
    build = {
        "version": hashlib.sha256(files["build.json"]).hexdigest()[:HASH_LEN],
        "page": "index.html",
        "pageSha256": hashlib.sha256(files["index.html"]).hexdigest(),
        "files": keep,
    }
    template = TEMPLATE.read_text(encoding="utf-8")
    head, _, rest = template.partition(MARKER)
    _, _, tail = rest.partition(MARKER)
    return (head + json.dumps(build, indent=1, sort_keys=True) + tail).encode("utf-8")
