"""Host module (reads files): where CPython finds the official rank files.

The pure core takes rank bytes through `tokens.provide`; this module is the fallback `tokens.get`
uses when nothing was provided. It looks, in order, in:
1. the directory named by RAGSIM_TIKTOKEN_DIR (files `cl100k_base.tiktoken`, `o200k_base.tiktoken`,
   or named as tiktoken's cache names them);
2. this checkout's build cache, `.cache/tiktoken/` (filled by `python3 build.py`);
3. tiktoken's own cache (TIKTOKEN_CACHE_DIR, DATA_GYM_CACHE_DIR or the temp dir's data-gym-cache);
4. the rank files that llama-index-core ships (`llama_index/core/_static/tiktoken_cache/`).
Each candidate is used only if its sha256 is the official one (`tokens.provide` checks it).
In the page, the worker provides the bytes itself and this module is never imported.
"""

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from ragsim.text.tokens import ENCODINGS, file_name

# py/ragsim/host/clients/tokens_files.py -> the checkout's root
_CHECKOUT = Path(__file__).resolve().parents[4]


def candidate_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("RAGSIM_TIKTOKEN_DIR"):
        dirs.append(Path(os.environ["RAGSIM_TIKTOKEN_DIR"]))
    dirs.append(_CHECKOUT / ".cache" / "tiktoken")
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    dirs.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    try:
        spec = importlib.util.find_spec("llama_index.core")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            dirs.append(Path(location) / "_static" / "tiktoken_cache")
    return dirs


def find_rank_file(name: str) -> bytes | None:
    """The bytes of encoding `name`'s official rank file, from the first place that has it, or None."""
    spec = ENCODINGS[name]
    for d in candidate_dirs():
        for candidate in (d / file_name(name), d / spec["cache_name"]):
            try:
                data = candidate.read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() == spec["sha256"]:
                return data
    return None


def missing_message(name: str) -> str:
    if sys.platform == "emscripten":  # in the page: the worker provides the file before asking
        return f"The {name} rank file has not been loaded yet; wait for it to load and try again."
    return (f"The {name} rank file is not here: run `python3 build.py` once (it fetches and checks it "
            f"into .cache/tiktoken/), or set RAGSIM_TIKTOKEN_DIR to a folder holding {file_name(name)}.")
