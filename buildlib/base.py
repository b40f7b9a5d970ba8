"""build.py's groundwork: errors, commands, the inputs fetched once into .cache/ (Pyodide from
npm, pure-Python wheels from PyPI) and the project's own Python in .venv/. Standard library only."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
# Length of the content hashes in file and folder names of dist/.
HASH_LEN = 10

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
