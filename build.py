#!/usr/bin/env python3
"""Assemble the static site in dist/, serve it, or run every test against it. Standard library only.

    python build.py [--out DIR]       build dist/ (or DIR)
    python build.py serve [--port N]  build, then serve dist/ on 127.0.0.1 and print the URL
    python build.py test [ARGS...]    install what the tests need, build, run pytest over tests/

What dist/ holds and why:

    index.html                        the page; the only file without a hash or version in its path,
                                      so it is the one a host must serve without long caching
    app.<hash>.js, assets/...         the page's scripts and styles, named by a hash of their content
                                      (after their own references were rewritten), so a new build
                                      never mixes with a cached old one
    assets/build-config.<hash>.js     generated: tells the worker where Pyodide and the wheels are
                                      (paths relative to that module); the worker imports it
    assets/js/splitters.<hash>.js     generated: the core's splitter registry (names, fields and
                                      defaults, units, grids), which the page's controls read
    pyodide-<version>/                the Pyodide runtime from the npm package, plus the micropip,
                                      packaging, snowballstemmer and pypdf wheels, with pyodide-lock.json
                                      rewritten to their real sha256 (integrity checks stay on)
    py/<hash>/ragsim-<v>-py3-none-any.whl   the core, a reproducible wheel
    tiktoken/<hash>/<name>.tiktoken   OpenAI's cl100k_base and o200k_base rank files (sha256-checked),
                                      fetched by the worker when tokens are first used
    build.json                        versions and paths of all of the above, and a digest of the
                                      sources it was built from (tests use it to skip fresh builds)
    sw.js                             the service worker (buildlib/offline.py): keeps the page, its
                                      files, the runtime and the core wheel in the browser, so the page
                                      opens offline; like index.html, served without long caching

Two builds from the same sources produce byte-identical trees.

build.py is the entry; buildlib/ holds its parts (base: errors, commands, fetched inputs and the
.venv; extras: rank files and the dense model; serving: the static server).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import functools
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache"
DIST = ROOT / "dist"

sys.path.insert(0, str(ROOT))  # buildlib/ beside this file, whatever the working directory
from buildlib.base import (  # noqa: E402,F401  errors, commands, fetched inputs, .venv
    HASH_LEN, PYODIDE_VERSION, PYODIDE_DIR, PYODIDE_RUNTIME_FILES, SNOWBALLSTEMMER_VERSION,
    PYPDF_VERSION, PYPDF_SHA256, BuildError, sha256_hex, log, run, pyodide_package, wheel_name,
    download_wheel, VENV, in_a_venv, project_python, need_node)
from buildlib.extras import (  # noqa: E402,F401  rank files, the dense model and runtime
    TIKTOKEN_SOURCE, TIKTOKEN_FILES, tiktoken_rank_files, tiktoken_dist_files, DENSE_TOOL,
    DENSE_MODEL_ID, DENSE_MODEL_FILES, DENSE_NPM, npm_dist_files, dense_model_files,
    dense_dist_files)
from buildlib.serving import Handler, Server, make_server  # noqa: E402,F401
from buildlib.offline import service_worker  # noqa: E402  dist/sw.js, the offline copy


# Files of the page. index.html is required; the rest are copied when present.
PAGE_FILES = ("index.html", "app.js")
PAGE_DIRS = ("assets",)
# Files renamed to name.<hash>.ext (hash of content after their references are rewritten).
HASHED_SUFFIXES = (".js", ".css")
# Files in which references to hashed files are rewritten.
REWRITE_SUFFIXES = (".html", ".js", ".mjs", ".css")
# The generated module the worker imports (`import config from "./build-config.js"`).
CONFIG_MODULE = "assets/build-config.js"
# The generated module the page imports (`import { REGISTRY } from "./splitters.js"`): the core's
# splitter registry (ragsim.split.registry_json()), so the page's strategy lists come from it.
SPLITTERS_MODULE = "assets/js/splitters.js"

# Reproducible zip entries: one fixed timestamp and mode for every file.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_MODE = 0o644 << 16


# ---------------------------------------------------------------------------------------------
# The core wheel


def project_metadata(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text())["project"]


def core_sources(root: Path = ROOT) -> list[Path]:
    """Every file of the ragsim package, sorted; caches and compiled files left out."""
    pkg = root / "py" / "ragsim"
    files = [p for p in pkg.rglob("*") if p.is_file() and "__pycache__" not in p.parts
             and p.suffix not in (".pyc", ".pyo")]
    return sorted(files, key=lambda p: p.relative_to(pkg).as_posix())


def zip_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    """A zip archive with fixed timestamps and modes, entries in the given order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = ZIP_MODE
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    return buffer.getvalue()


def build_core_wheel(root: Path = ROOT) -> tuple[str, bytes]:
    """(file name, bytes) of `ragsim-<version>-py3-none-any.whl`, byte-for-byte reproducible."""
    meta = project_metadata(root)
    name, version = meta["name"], meta["version"]
    pkg = root / "py" / "ragsim"
    entries = [(f"ragsim/{p.relative_to(pkg).as_posix()}", p.read_bytes()) for p in core_sources(root)]
    info = f"{name}-{version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {meta.get('description', '')}",
        f"Requires-Python: {meta.get('requires-python', '>=3.11')}",
    ]
    license_text = (meta.get("license") or {}).get("text")
    if license_text:
        metadata.append(f"License: {license_text}")
    entries.append((f"{info}/METADATA", ("\n".join(metadata) + "\n").encode()))
    wheel = "Wheel-Version: 1.0\nGenerator: ragsim build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries.append((f"{info}/WHEEL", wheel.encode()))
    record = []
    for path, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    return f"{name}-{version}-py3-none-any.whl", zip_bytes(entries)


# ---------------------------------------------------------------------------------------------
# The page: copy, then give scripts and styles content-hashed names


def page_sources(root: Path = ROOT) -> list[Path]:
    """The page's files (relative to root), sorted; index.html must exist."""
    if not (root / "index.html").is_file():
        raise BuildError(f"{root / 'index.html'} is missing: the page must exist before dist/ can be built")
    files = [Path(f) for f in PAGE_FILES if (root / f).is_file()]
    for d in PAGE_DIRS:
        if (root / d).is_dir():
            files += [p.relative_to(root) for p in (root / d).rglob("*")
                      if p.is_file() and not p.name.startswith(".")]
    return sorted(files, key=lambda p: p.as_posix())


def hashed_name(rel: str, data: bytes) -> str:
    stem, dot, suffix = rel.rpartition(".")
    return f"{stem}.{sha256_hex(data)[:HASH_LEN]}.{suffix}"


def reference_pattern(basename: str) -> re.Pattern:
    """A reference to a file by its base name inside a URL or import specifier:
    `"./assets/worker.js"`, `'worker.js?x'`, `url(style.css)`, `src=app.js>`."""
    return re.compile(r"(?<=[/\"'`(=])" + re.escape(basename) + r"(?=[\"'`?#)\s>])")


def hash_and_rewrite(files: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """Rename scripts and styles to content-hashed names and rewrite every reference to them.

    A file's hash covers its content after its own references were rewritten, so a change deep
    in the chain (the core wheel -> build-config -> worker -> gate -> app.js) renames every file
    above it. Returns (new files by path, map of original path -> hashed path)."""
    hashed = [p for p in files if p.endswith(HASHED_SUFFIXES)]
    by_base: dict[str, str] = {}
    for p in hashed:
        base = p.rsplit("/", 1)[-1]
        if base in by_base:
            raise BuildError(f"{by_base[base]} and {p} share the name {base}; references would be ambiguous")
        by_base[base] = p
    patterns = {p: reference_pattern(p.rsplit("/", 1)[-1]) for p in hashed}
    rewritable = [p for p in files if p.endswith(REWRITE_SUFFIXES)]
    deps = {p: sorted(q for q in hashed if q != p and patterns[q].search(files[p].decode("utf-8")))
            for p in rewritable}

    renamed: dict[str, str] = {}
    content: dict[str, bytes] = {}

    @functools.cache
    def resolve(p: str, trail: tuple[str, ...] = ()) -> None:
        if p in trail:
            raise BuildError("circular references between " + " -> ".join(trail + (p,)))
        data = files[p]
        if p in deps:
            text = data.decode("utf-8")
            for q in deps[p]:
                resolve(q, trail + (p,))
                new_base = renamed[q].rsplit("/", 1)[-1]
                text = patterns[q].sub(new_base, text)
            data = text.encode("utf-8")
        content[p] = data
        if p in patterns:
            renamed[p] = hashed_name(p, data)

    for p in sorted(files):
        resolve(p)
    out = {renamed.get(p, p): content[p] for p in files}
    return out, {p: renamed[p] for p in sorted(renamed)}


# ---------------------------------------------------------------------------------------------
# The whole build


def source_digest(root: Path = ROOT) -> str:
    """A digest of every input of the build; dist/ is fresh when build.json carries the same one."""
    h = hashlib.sha256()
    inputs = [Path("build.py"), Path("pyproject.toml"), DENSE_TOOL.relative_to(ROOT)]
    inputs += sorted(p.relative_to(ROOT) for p in (ROOT / "buildlib").glob("*") if p.suffix in (".py", ".js"))
    inputs += [p.relative_to(root) for p in core_sources(root)]
    with contextlib.suppress(BuildError):
        inputs += page_sources(root)
    for rel in inputs:
        path = root / rel
        if path.is_file():
            h.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(f"pyodide {PYODIDE_VERSION} snowballstemmer {SNOWBALLSTEMMER_VERSION} pypdf {PYPDF_VERSION}".encode())
    return h.hexdigest()


def lock_entry(base: dict, wheel: Path, data: bytes) -> dict:
    name, version = wheel_name(wheel)
    entry = dict(base)
    entry.update(file_name=wheel.name, sha256=sha256_hex(data), version=version)
    return entry


def assemble(root: Path = ROOT, cache: Path = CACHE) -> dict[str, bytes]:
    """Every file of dist/ by relative path, in memory (about 14 MB)."""
    out: dict[str, bytes] = {}
    page = {rel.as_posix(): (root / rel).read_bytes() for rel in page_sources(root)}  # fails first
    pkg = pyodide_package(cache)
    for name in PYODIDE_RUNTIME_FILES:
        out[f"{PYODIDE_DIR}/{name}"] = (pkg / name).read_bytes()

    # micropip and packaging at the lock's versions; their PyPI wheels differ from Pyodide's
    # builds, so the lock gets their real hashes. snowballstemmer is added for on-demand stemming.
    lock = json.loads(out[f"{PYODIDE_DIR}/pyodide-lock.json"])
    packages = lock["packages"]
    wheels = {}
    for name in ("micropip", "packaging"):
        if name not in packages:
            raise BuildError(f"pyodide-lock.json of {PYODIDE_VERSION} has no {name} entry")
        wheel = download_wheel(name, packages[name]["version"], cache)
        data = wheel.read_bytes()
        packages[name] = lock_entry(packages[name], wheel, data)
        wheels[name] = (wheel.name, data)
    wheel = download_wheel("snowballstemmer", SNOWBALLSTEMMER_VERSION, cache)
    data = wheel.read_bytes()
    packages["snowballstemmer"] = lock_entry(
        {"name": "snowballstemmer", "imports": ["snowballstemmer"], "package_type": "package",
         "install_dir": "site", "depends": [], "unvendored_tests": False}, wheel, data)
    wheels["snowballstemmer"] = (wheel.name, data)
    wheel = download_wheel("pypdf", PYPDF_VERSION, cache)
    data = wheel.read_bytes()
    if sha256_hex(data) != PYPDF_SHA256:
        raise BuildError(f"{wheel.name} has sha256 {sha256_hex(data)}, not the pinned {PYPDF_SHA256}; delete it and rebuild")
    packages["pypdf"] = lock_entry(
        {"name": "pypdf", "imports": ["pypdf"], "package_type": "package",
         "install_dir": "site", "depends": [], "unvendored_tests": False}, wheel, data)
    wheels["pypdf"] = (wheel.name, data)
    for name, data in wheels.values():
        out[f"{PYODIDE_DIR}/{name}"] = data
    out[f"{PYODIDE_DIR}/pyodide-lock.json"] = (json.dumps(lock, indent=1, sort_keys=True) + "\n").encode()

    ranks = tiktoken_dist_files(cache)  # tiktoken rank files, fetched by the worker on demand
    out.update(ranks)
    dense_files, dense = dense_dist_files(cache)  # the dense model and its runtime, on demand
    out.update(dense_files)
    core_name, core_data = build_core_wheel(root)
    core_path = f"py/{sha256_hex(core_data)[:HASH_LEN]}/{core_name}"
    out[core_path] = core_data

    # Paths in the config module are relative to the module itself (it lives in assets/).
    up = "../" * CONFIG_MODULE.count("/")
    config = {
        "pyodide": f"{up}{PYODIDE_DIR}/",
        "pyodideVersion": PYODIDE_VERSION,
        "coreWheel": up + core_path,
        "ragsimVersion": project_metadata(root)["version"],
        "onDemand": {name: f"{up}{PYODIDE_DIR}/{wheels[name][0]}" for name in ("snowballstemmer", "pypdf")},
        "tiktoken": {p.rsplit("/", 1)[1].split(".")[0]: up + p for p in ranks},
        "dense": {"model": DENSE_MODEL_ID,
                  **{f"{name}Bytes": len(dense_files[f"{dense['localModelPath']}{DENSE_MODEL_ID}/onnx/{name}.onnx"])
                     for name in ("model", "model_quantized")},
                  **{k: up + v for k, v in dense.items()}},
    }
    page[CONFIG_MODULE] = (
        "// Generated by build.py: where the worker finds Pyodide and the wheels. Paths are relative\n"
        "// to this module. Do not edit; rebuild instead.\n"
        f"export default {json.dumps(config, indent=2, sort_keys=True)};\n").encode()
    page[SPLITTERS_MODULE] = splitters_module(root)
    page_out, renamed = hash_and_rewrite(page)
    out.update(page_out)

    out["build.json"] = (json.dumps({
        "ragsim": config["ragsimVersion"],
        "pyodide": {"version": PYODIDE_VERSION, "dir": f"{PYODIDE_DIR}/"},
        "wheels": {"ragsim": core_path,
                   **{n: f"{PYODIDE_DIR}/{w}" for n, (w, _) in sorted(wheels.items())}},
        "assets": renamed,
        "tiktoken": {p.rsplit("/", 1)[1].split(".")[0]: p for p in ranks},
        "dense": dense,
        "source_digest": source_digest(root),
    }, indent=2, sort_keys=True) + "\n").encode()
    out["sw.js"] = service_worker(out, list(page_out), core_path)
    return out


def splitters_module(root: Path = ROOT) -> bytes:
    """The page's splitter table: `ragsim.split.registry_json()` of root's core, read by a fresh
    interpreter (the core is standard library only) so that the table is the one being built."""
    code = "import ragsim.split as s; print(s.registry_json())"
    env = {**os.environ, "PYTHONPATH": str(root / "py"), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BuildError(f"could not read the splitter registry from {root / 'py'}: {last}")
    return ("// Generated by build.py from ragsim.split.registry_json() (py/ragsim/split/registry.py).\n"
            "// Do not edit; register a splitter there and rebuild.\n"
            f"export const REGISTRY = {done.stdout.strip()};\n").encode()


@contextlib.contextmanager
def build_lock(cache: Path = CACHE):
    """Serialise builds: several people and test sessions share one checkout."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(out_dir: Path = DIST, root: Path = ROOT, cache: Path = CACHE, only_if_stale: bool = False) -> Path:
    """Build into out_dir, replacing a previous build there atomically enough for a live server."""
    out_dir = out_dir.resolve()
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "build.json").is_file():
        raise BuildError(f"{out_dir} exists and is not a previous build (no build.json); refusing to replace it")
    with build_lock(cache):
        if only_if_stale and is_fresh(out_dir, root):  # a parallel session has just built it
            return out_dir
        files = assemble(root, cache)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
        for rel, data in sorted(files.items()):
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        os.chmod(staging, 0o755)
        if out_dir.exists():
            old = out_dir.with_name(f".{out_dir.name}-old-{os.getpid()}")
            out_dir.rename(old)
            staging.rename(out_dir)
            shutil.rmtree(old)
        else:
            staging.rename(out_dir)
    log(f"built {out_dir} ({len(files)} files)")
    return out_dir


def is_fresh(out_dir: Path = DIST, root: Path = ROOT) -> bool:
    """True when out_dir holds a build of the current sources."""
    try:
        info = json.loads((out_dir / "build.json").read_text())
    except (OSError, ValueError):
        return False
    return info.get("source_digest") == source_digest(root)


def ensure_fresh(out_dir: Path = DIST, root: Path = ROOT, cache: Path = CACHE) -> Path:
    """Build out_dir unless it already holds a build of the current sources (tests call this)."""
    return out_dir if is_fresh(out_dir, root) else build(out_dir, root, cache, only_if_stale=True)


# ---------------------------------------------------------------------------------------------
# Serving

def serve(port: int, out_dir: Path = DIST) -> None:
    need_node()
    build(out_dir)
    server = make_server(out_dir, port)
    print(f"Serving {out_dir} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl+C to stop)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


# ---------------------------------------------------------------------------------------------
# Testing


# What the browser tests drive, as Debian packages them: Chromium (through Playwright), Firefox
# (firefox-esr, over WebDriver BiDi) and WebKit (WebKitGTK's WebKitWebDriver, under Xvfb); the last
# two through tests/browser/other_browsers.py, with no browser download.
TEST_BROWSERS = {"/usr/bin/chromium": "chromium", "/usr/bin/firefox-esr": "firefox-esr",
                 "/usr/bin/WebKitWebDriver": "webkit2gtk-driver", "/usr/bin/Xvfb": "xvfb"}


def browsers_for_tests(python: Path) -> None:
    """Make sure the browsers exist: Debian's, installed with apt-get as root when any is missing
    (as CI runs); without root, Playwright's own Chromium, and the Firefox and WebKit tests are
    skipped, each saying which package to install."""
    missing = [package for path, package in TEST_BROWSERS.items() if not Path(path).exists()]
    if not missing:
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        log(f"installing {', '.join(missing)} with apt-get")
        run(["apt-get", "update"])
        run(["apt-get", "install", "-y", *missing], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        return
    if "chromium" in missing:
        log("installing Playwright's Chromium")
        run([str(python), "-m", "playwright", "install", "chromium"])
    others = [package for package in missing if package != "chromium"]
    if others:
        log(f"the Firefox and WebKit tests need {' '.join(others)} (as root: apt-get install -y {' '.join(others)}); "
            "without them they are skipped")


def test(pytest_args: list[str]) -> int:
    need_node()
    python = project_python()
    log(f"installing the test extras into {python.parent.parent}")
    run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", f"{ROOT}[test]"])
    browsers_for_tests(python)
    build(DIST)
    return subprocess.call([str(python), "-m", "pytest", str(ROOT / "tests"), *pytest_args], cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DIST, help="output directory (default: dist/)")
    sub = parser.add_subparsers(dest="command")
    serve_p = sub.add_parser("serve", help="build, then serve on 127.0.0.1")
    serve_p.add_argument("--port", type=int, default=8000)
    test_p = sub.add_parser("test", help="install test needs, build, run pytest over tests/")
    test_p.add_argument("pytest_args", nargs="*", help="passed on to pytest (options too)")
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "test":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        if args.command == "serve":
            serve(args.port, args.out)
        elif args.command == "test":
            return test(args.pytest_args + unknown)
        else:
            build(args.out)
    except BuildError as exc:
        print(f"build.py: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
