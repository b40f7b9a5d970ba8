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
    pyodide-<version>/                the Pyodide runtime from the npm package, plus the micropip,
                                      packaging, snowballstemmer and pypdf wheels, with pyodide-lock.json
                                      rewritten to their real sha256 (integrity checks stay on)
    py/<hash>/ragsim-<v>-py3-none-any.whl   the core, a reproducible wheel
    tiktoken/<hash>/<name>.tiktoken   OpenAI's cl100k_base and o200k_base rank files (sha256-checked),
                                      fetched by the worker when tokens are first used
    build.json                        versions and paths of all of the above, and a digest of the
                                      sources it was built from (tests use it to skip fresh builds)

Two builds from the same sources produce byte-identical trees.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import functools
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache"
DIST = ROOT / "dist"

# Pinned exactly: the runtime, its lock file and the Python it carries (3.14) move together.
PYODIDE_VERSION = "314.0.7"
PYODIDE_DIR = f"pyodide-{PYODIDE_VERSION}"
# Only what the browser needs at run time; the npm package also ships typings, maps and consoles.
PYODIDE_RUNTIME_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
# Pure-Python wheel loaded on demand when a user turns stemming on; pinned for reproducibility.
SNOWBALLSTEMMER_VERSION = "3.1.1"
# Pure-Python PDF reader the worker installs when the first PDF arrives (ragsim.pdf reads it as
# LangChain's PyPDFLoader does); the wheel's sha256 pinned: build.py refuses any other bytes.
PYPDF_VERSION = "7.1.1"
PYPDF_SHA256 = "04c5680d4b4cfa04ab505b09393fc949860c34a4dad6565284d11a2f5c3ce8b1"

# Files of the page. index.html is required; the rest are copied when present.
PAGE_FILES = ("index.html", "app.js")
PAGE_DIRS = ("assets",)
# Files renamed to name.<hash>.ext (hash of content after their references are rewritten).
HASHED_SUFFIXES = (".js", ".css")
# Files in which references to hashed files are rewritten.
REWRITE_SUFFIXES = (".html", ".js", ".mjs", ".css")
# The generated module the worker imports (`import config from "./build-config.js"`).
CONFIG_MODULE = "assets/build-config.js"
HASH_LEN = 10

# Reproducible zip entries: one fixed timestamp and mode for every file.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_MODE = 0o644 << 16


class BuildError(Exception):
    """A build step failed for a reason a person can fix; printed without a traceback."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def log(message: str) -> None:
    print(f"build: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, **kwargs)
    except FileNotFoundError as exc:
        raise BuildError(f"{cmd[0]} is not installed or not on PATH (needed for: {' '.join(cmd)})") from exc
    except subprocess.CalledProcessError as exc:
        raise BuildError(f"command failed with status {exc.returncode}: {' '.join(cmd)}") from exc


# ---------------------------------------------------------------------------------------------
# Inputs fetched once into .cache/


def pyodide_package(cache: Path = CACHE) -> Path:
    """The extracted npm package pyodide@PYODIDE_VERSION, fetched with `npm pack` on first use."""
    target = cache / PYODIDE_DIR / "package"
    if (target / "package.json").is_file():
        return target
    npm_dir = cache / "npm"
    npm_dir.mkdir(parents=True, exist_ok=True)
    tarball = npm_dir / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tarball.is_file():
        log(f"fetching pyodide@{PYODIDE_VERSION} with npm pack")
        run(["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--silent"], cwd=npm_dir, stdout=subprocess.DEVNULL)
    if not tarball.is_file():
        raise BuildError(f"npm pack did not produce {tarball}")
    staging = Path(tempfile.mkdtemp(dir=cache))
    with tarfile.open(tarball) as tar:
        tar.extractall(staging, filter="data")
    version = json.loads((staging / "package" / "package.json").read_text())["version"]
    if version != PYODIDE_VERSION:
        raise BuildError(f"npm gave pyodide {version}, expected exactly {PYODIDE_VERSION}")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # another build won the race
        shutil.rmtree(staging)
    else:
        (staging / "package").rename(target)
        shutil.rmtree(staging)
    return target


def wheel_name(path: Path) -> tuple[str, str]:
    """(distribution, version) from a wheel file name."""
    dist, version = path.name.split("-")[:2]
    return dist, version


def download_wheel(name: str, version: str | None, cache: Path = CACHE) -> Path:
    """A pure-Python wheel for CPython 3.14 from pip's index, the exact version when it exists.

    Falls back to whatever version pip picks when the exact one is missing (a mirror may lag)."""
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    norm = name.replace("-", "_")

    def cached() -> Path | None:
        found = sorted(wheels.glob(f"{norm}-*-py3-none-any.whl"))
        exact = [w for w in found if version and wheel_name(w)[1] == version]
        return (exact or found or [None])[-1]

    hit = cached()
    if hit and (version is None or wheel_name(hit)[1] == version):
        return hit
    base = [str(project_python()), "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
            "--python-version", "3.14", "--implementation", "py", "--abi", "none",
            "--platform", "any", "-d", str(wheels)]
    specs = [f"{name}=={version}", name] if version else [name]
    for spec in specs:
        log(f"pip download {spec}")
        try:
            run(base + [spec], stdout=subprocess.DEVNULL)
        except BuildError as exc:
            log(f"{exc}; trying the next candidate")
            continue
        hit = cached()
        if hit:
            if version and wheel_name(hit)[1] != version:
                log(f"{name}=={version} is not available; using {hit.name}")
            return hit
    raise BuildError(f"could not download a py3-none-any wheel of {name} with pip")


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
# tiktoken rank files (issue 12): OpenAI's cl100k_base and o200k_base, for exact token counts.
# Taken from the llama-index-core wheel, which bundles both under tiktoken's cache names (the sha1
# of each file's URL), and checked against the sha256 that tiktoken itself checks
# (tiktoken_ext/openai_public.py); tests hold these equal to ragsim.tokens.ENCODINGS and tiktoken's.

TIKTOKEN_SOURCE = ("llama-index-core", "0.14.25", "llama_index/core/_static/tiktoken_cache/")
TIKTOKEN_FILES = {  # name: (sha256, name in tiktoken's cache)
    "cl100k_base": ("223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                    "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"),
    "o200k_base": ("446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                   "fb374d419588a4632f3f557e76b4b70aebbca790"),
}


def tiktoken_rank_files(cache: Path = CACHE) -> dict[str, bytes]:
    """{name: bytes} of the official rank files, kept in .cache/tiktoken/<name>.tiktoken (where the
    core's CPython loader, ragsim.tokens.host, also looks) and verified by sha256 on every build."""
    target = cache / "tiktoken"
    out: dict[str, bytes] = {}
    for name, (sha, _) in TIKTOKEN_FILES.items():
        path = target / f"{name}.tiktoken"
        if path.is_file() and sha256_hex(path.read_bytes()) == sha:
            out[name] = path.read_bytes()
    missing = [n for n in TIKTOKEN_FILES if n not in out]
    if missing:
        dist, version, folder = TIKTOKEN_SOURCE
        wheel = download_wheel(dist, version, cache)
        with zipfile.ZipFile(wheel) as archive:
            for name in missing:
                sha, cache_name = TIKTOKEN_FILES[name]
                data = archive.read(folder + cache_name)
                if sha256_hex(data) != sha:
                    raise BuildError(f"{name} in {wheel.name} has sha256 {sha256_hex(data)}, not tiktoken's {sha}")
                target.mkdir(parents=True, exist_ok=True)
                (target / f"{name}.tiktoken").write_bytes(data)
                out[name] = data
    return out


def tiktoken_dist_files(cache: Path = CACHE) -> dict[str, bytes]:
    """dist/ paths of the rank files, under a content hash: tiktoken/<hash>/<name>.tiktoken."""
    return {f"tiktoken/{sha256_hex(data)[:HASH_LEN]}/{name}.tiktoken": data
            for name, data in sorted(tiktoken_rank_files(cache).items())}


# ---------------------------------------------------------------------------------------------
# Dense retrieval (issue 13): the all-MiniLM-L6-v2 model as ONNX, made by tools/dense_model.py from
# verified PyPI weights, and the runtime that runs it in the page (transformers.js and
# onnxruntime-web's plain CPU wasm), both from npm, pinned and checked by sha256.

DENSE_TOOL = ROOT / "tools" / "dense_model.py"
DENSE_MODEL_ID = "all-MiniLM-L6-v2"
# model_quantized.onnx is the int8 approximation (22 MB) a page may offer, labelled as such.
DENSE_MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx",
                     "onnx/model_quantized.onnx")
# (package, exact version, sha256 of the npm tarball, {file in package/dist/: its sha256}).
# transformers.js bundles onnxruntime-web's JavaScript; the wasm must come from that same build.
DENSE_NPM = (
    ("@huggingface/transformers", "4.3.2", "5414fb47b11ae2a8c10a3aac68f833e6fb6e9bde03e9e612ad7da3ea9e9d2663",
     {"transformers.min.js": "8b5a3171f8876bab2b1820a7d65eb87628e3d30bb5ea85b9dd398e76eb34decb"}),
    ("onnxruntime-web", "1.31.0-dev.20260914-8d85527a0",
     "0de27582f3e3189dec4a2082513a0af1ea79ae7fd3039bbfe634a526e173cbe0",
     {"ort-wasm-simd-threaded.mjs": "c57ca56328877353a575e51bbca6f18450027d6c9bf2307a2cb2c41363b4de9f",
      "ort-wasm-simd-threaded.wasm": "06ba057753da3847e4c24f02d91ab133455b0817c69a44993a9a53a2146df9e3"}),
)


def npm_dist_files(name: str, version: str, tarball_sha: str, files: dict[str, str],
                   cache: Path = CACHE) -> dict[str, bytes]:
    """{file: bytes} from package/dist/ of name@version: the tarball fetched once with `npm pack`,
    the files kept in .cache/npm/<name>-<version>/, everything checked by sha256 on every build."""
    stem = f"{name.replace('@', '').replace('/', '-')}-{version}"  # npm pack's own file name
    folder = cache / "npm" / stem
    out = {f: (folder / f).read_bytes() for f in files if (folder / f).is_file()}
    if any(sha256_hex(out.get(f, b"")) != sha for f, sha in files.items()):
        tarball = cache / "npm" / f"{stem}.tgz"
        if not tarball.is_file():
            log(f"fetching {name}@{version} with npm pack")
            tarball.parent.mkdir(parents=True, exist_ok=True)
            run(["npm", "pack", f"{name}@{version}", "--silent"], cwd=tarball.parent, stdout=subprocess.DEVNULL)
        data = tarball.read_bytes()
        if sha256_hex(data) != tarball_sha:
            raise BuildError(f"{tarball.name} has sha256 {sha256_hex(data)}, expected {tarball_sha}: delete it")
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            out = {f: tar.extractfile(f"package/dist/{f}").read() for f in files}
        for f, sha in files.items():
            if sha256_hex(out[f]) != sha:
                raise BuildError(f"{name}@{version}'s dist/{f} has sha256 {sha256_hex(out[f])}, expected {sha}")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f).write_bytes(out[f])
    return out


def dense_model_files(cache: Path = CACHE) -> dict[str, bytes]:
    """The model's files by path relative to its folder, as tools/dense_model.py made them in
    .cache/dense/model/ (run with the project's Python when missing: it verifies its inputs), each
    checked against the sha256 in the manifest the tool wrote."""
    folder = cache / "dense" / "model" / DENSE_MODEL_ID

    def read() -> dict[str, bytes] | None:
        try:
            listed = json.loads((folder / "manifest.json").read_text())["files"]
            out = {rel: (folder / rel).read_bytes() for rel in DENSE_MODEL_FILES}
        except (OSError, ValueError, KeyError):
            return None
        return out if all(sha256_hex(data) == listed.get(rel) for rel, data in out.items()) else None

    files = read()
    if files is None:
        python = str(project_python())
        if subprocess.run([python, "-c", "import numpy, onnx, onnxruntime"], capture_output=True).returncode != 0:
            log("installing numpy, onnx and onnxruntime for tools/dense_model.py")
            run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "numpy", "onnx>=1.15",
                 "onnxruntime>=1.17"])
        log("making the dense model with tools/dense_model.py")
        staging = Path(tempfile.mkdtemp(prefix=".model-", dir=cache))
        try:
            run([python, str(DENSE_TOOL), str(staging), "--cache", str(cache / "dense"), "--quantized"],
                stdout=subprocess.DEVNULL)
            shutil.rmtree(folder, ignore_errors=True)
            folder.parent.mkdir(parents=True, exist_ok=True)
            (staging / DENSE_MODEL_ID).rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        files = read()
        if files is None:
            raise BuildError(f"tools/dense_model.py left {folder} without the files its manifest lists")
    return files


def dense_dist_files(cache: Path = CACHE) -> tuple[dict[str, bytes], dict]:
    """dist/ paths of the model (models/<hash>/all-MiniLM-L6-v2/..., the layout transformers.js
    reads) and of the runtime (<package>-<version>/...), and the paths the worker needs."""
    model = dense_model_files(cache)
    digest = sha256_hex(b"".join(sha256_hex(model[rel]).encode() for rel in DENSE_MODEL_FILES))[:HASH_LEN]
    out = {f"models/{digest}/{DENSE_MODEL_ID}/{rel}": data for rel, data in model.items()}
    paths = {"localModelPath": f"models/{digest}/"}
    for name, version, tarball_sha, files in DENSE_NPM:
        folder = f"{name.rsplit('/', 1)[-1]}-{version}"
        for f, data in npm_dist_files(name, version, tarball_sha, files, cache).items():
            out[f"{folder}/{f}"] = data
            paths[f] = f"{folder}/{f}"
    return out, paths


# ---------------------------------------------------------------------------------------------
# The whole build


def source_digest(root: Path = ROOT) -> str:
    """A digest of every input of the build; dist/ is fresh when build.json carries the same one."""
    h = hashlib.sha256()
    inputs = [Path("build.py"), Path("pyproject.toml"), DENSE_TOOL.relative_to(ROOT)]
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

    ranks = tiktoken_dist_files(cache)  # tiktoken rank files (issue 12), fetched by the worker on demand
    out.update(ranks)
    dense_files, dense = dense_dist_files(cache)  # the dense model and its runtime (issue 13), on demand
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
    return out


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


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs and cache headers that suit hashed names.

    `mounts` maps a URL prefix (e.g. "/__tests__/") to another directory; tests use it to serve
    pages that are not shipped in dist/."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".whl": "application/zip",
        ".zip": "application/zip",
        ".css": "text/css",
        ".html": "text/html; charset=utf-8",
        ".svg": "image/svg+xml",
    }
    mounts: dict[str, str] = {}
    quiet = False

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, directory in self.mounts.items():
            if clean.startswith(prefix):
                saved, self.directory = self.directory, directory
                try:
                    return super().translate_path("/" + clean[len(prefix):])
                finally:
                    self.directory = saved
        return super().translate_path(path)

    def end_headers(self) -> None:
        path = self.path.split("?", 1)[0]
        immutable = re.search(r"\.[0-9a-f]{%d}\.(js|css)$" % HASH_LEN, path) or \
            path.startswith(("/py/", f"/{PYODIDE_DIR}/", "/tiktoken/", "/models/", "/transformers-",
                             "/onnxruntime-web-"))
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if immutable else "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            super().log_message(format, *args)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(directory: Path, port: int = 0, mounts: dict[str, Path] | None = None,
                quiet: bool = False) -> Server:
    """An HTTP server for directory on 127.0.0.1 (port 0 = a free one); call serve_forever()."""
    handler = type("BoundHandler", (Handler,), {
        "mounts": {k: str(v) for k, v in (mounts or {}).items()}, "quiet": quiet})
    return Server(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))


def serve(port: int, out_dir: Path = DIST) -> None:
    need_node()
    build(out_dir)
    server = make_server(out_dir, port)
    print(f"Serving {out_dir} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl+C to stop)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


# ---------------------------------------------------------------------------------------------
# The project's own Python: a virtual environment in .venv/

VENV = ROOT / ".venv"


def in_a_venv() -> bool:
    return sys.prefix != getattr(sys, "base_prefix", sys.prefix)


def project_python(venv: Path = VENV) -> Path:
    """The Python that installs and runs what the build and the tests need: the one running now
    when it already is a virtual environment, else .venv/ (made on first use). Never the system's
    own site-packages: Debian 12+ and Ubuntu 23.04+ refuse pip there (PEP 668), and it is not ours."""
    if in_a_venv():
        return Path(sys.executable)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    has_pip = [str(python), "-c", "import pip"]
    if python.exists() and subprocess.run(has_pip, capture_output=True).returncode == 0:
        return python
    log(f"creating the project's virtual environment in {venv}")
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
    if made.returncode != 0 or subprocess.run(has_pip, capture_output=True).returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        raise BuildError(
            f"{sys.executable} could not create a virtual environment with pip in {venv} "
            "(on Debian or Ubuntu install python3-venv: sudo apt-get install python3-venv)")
    return python


def need_node() -> None:
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            raise BuildError(f"{tool} is not installed: install Node.js 20 or newer with npm "
                             "(Pyodide is fetched with npm and smoke-tested under Node)")


# ---------------------------------------------------------------------------------------------
# Testing


def chromium_for_tests(python: Path) -> None:
    """Make sure a Chromium exists: Debian's, else apt as root, else Playwright's own download."""
    if Path("/usr/bin/chromium").exists():
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        log("installing Chromium with apt-get")
        run(["apt-get", "update"])
        run(["apt-get", "install", "-y", "chromium"], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        return
    log("installing Playwright's Chromium")
    run([str(python), "-m", "playwright", "install", "chromium"])


def test(pytest_args: list[str]) -> int:
    need_node()
    python = project_python()
    log(f"installing the test extras into {python.parent.parent}")
    run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", f"{ROOT}[test]"])
    chromium_for_tests(python)
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
