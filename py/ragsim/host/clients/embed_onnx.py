"""The CPython host of dense retrieval (SPEC section 10): all-MiniLM-L6-v2 through onnxruntime.

Not part of the pure core: it reads files, imports onnxruntime, numpy and tokenizers (the
`ragsim[dense]` extra) when first used, and runs the model. The core asks it for similarities only.

The model is the one build.py made, looked for in this order: $RAGSIM_DENSE_MODEL (a folder holding
onnx/model.onnx and tokenizer.json), .cache/dense/model/all-MiniLM-L6-v2 and
dist/models/<hash>/all-MiniLM-L6-v2 of the checkout. When none is there it is made on first use by
tools/dense_model.py (the same verified steps build.py runs) into .cache/dense/model.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

MODEL_ID = "all-MiniLM-L6-v2"
CHECKOUT = Path(__file__).resolve().parents[4]  # py/ragsim/host/clients/embed_onnx.py -> the repository
TOOL = CHECKOUT / "tools" / "dense_model.py"
CACHE_MODEL = CHECKOUT / ".cache" / "dense" / "model"
# from the checkout, into the project's own virtual environment (PEP 668 refuses the system's pip)
INSTALL = '.venv/bin/pip install -e ".[dense]" in the ragsim checkout'
BATCH = 16  # texts per run; sorted by length so a batch pads little
CACHE_LIMIT = 50_000  # embeddings kept, by text (384 floats each: about 80 MB at the limit)


class DenseUnavailable(Exception):
    """The model cannot run here; the message is one sentence saying what to do."""


def _verified(directory: Path) -> bool:
    """True when directory holds the model files listed by its manifest, with those sha256."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
        files = manifest["files"]
    except (OSError, ValueError, KeyError):
        return False
    for rel in ("onnx/model.onnx", "tokenizer.json"):
        path = directory / rel
        if rel not in files or not path.is_file():
            return False
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != files[rel]:
            return False
    return True


def candidates() -> list[Path]:
    found = []
    if os.environ.get("RAGSIM_DENSE_MODEL"):
        found.append(Path(os.environ["RAGSIM_DENSE_MODEL"]))
    found.append(CACHE_MODEL / MODEL_ID)
    found += sorted((CHECKOUT / "dist" / "models").glob(f"*/{MODEL_ID}"))
    return found


def model_dir(make: bool = True) -> Path:
    """The folder of a verified model, made with tools/dense_model.py when there is none."""
    for directory in candidates():
        if _verified(directory):
            return directory
    if not make:
        raise DenseUnavailable("The dense model has not been built yet: run python3 build.py.")
    if not TOOL.is_file():
        raise DenseUnavailable(
            f"The dense model is missing and this installation has no tools/dense_model.py to make it: "
            f"set RAGSIM_DENSE_MODEL to a folder built by it.")
    CACHE_MODEL.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".model-", dir=CACHE_MODEL))
    done = subprocess.run([sys.executable, str(TOOL), str(staging), "--cache", str(CACHE_MODEL.parent), "--quantized"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        reason = (done.stderr.strip().splitlines() or ["it failed"])[-1]
        raise DenseUnavailable(f"The dense model could not be made ({reason}).")
    target = CACHE_MODEL / MODEL_ID
    try:
        (staging / MODEL_ID).rename(target)
    except OSError:  # another process made it meanwhile
        pass
    shutil.rmtree(staging, ignore_errors=True)
    if not _verified(target):
        raise DenseUnavailable(f"The dense model in {target} does not match its manifest: delete the folder.")
    return target


_SURROGATE = re.compile("[\ud800-\udfff]")


def readable(text: str) -> str:
    """The text as `tokenizers` can take it: a lone surrogate (legal in a JSON string, a
    file name's stray byte) becomes U+FFFD, which BertNormalizer drops as it drops the surrogate
    itself in the core's WordPiece (wordpiece._normal), so both read the same pieces."""
    return text if text.isascii() or not _SURROGATE.search(text) else _SURROGATE.sub("\ufffd", text)


class Embedder:
    """Sentence embeddings as sentence-transformers computes them for this model: WordPiece
    truncated to 256 pieces, last hidden state mean-pooled over the attention mask, L2-normalised.
    Embeddings are kept by text, so a text is embedded once."""

    def __init__(self, directory: Path | None = None, threads: int | None = None):
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise DenseUnavailable(
                f"Dense retrieval needs {exc.name or 'onnxruntime'} in this Python: {INSTALL}.") from exc
        self.np = numpy
        directory = directory or model_dir()
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        try:
            self.session = onnxruntime.InferenceSession(str(directory / "onnx" / "model.onnx"), options,
                                                        providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types (and MemoryError)
            raise DenseUnavailable(f"onnxruntime could not load the dense model ({type(exc).__name__}).") from exc
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.no_padding()
        self.directory = directory
        self.cache: OrderedDict = OrderedDict()

    def _run(self, texts: list[str]):
        np = self.np
        encodings = self.tokenizer.encode_batch([readable(t) for t in texts])
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        hidden = self.session.run(["last_hidden_state"], {
            "input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(self, texts: list[str]):
        """A (len(texts), 384) float32 array of unit vectors."""
        np = self.np
        missing = sorted({t for t in texts if t not in self.cache}, key=len)
        for i in range(0, len(missing), BATCH):
            batch = missing[i : i + BATCH]
            for text, vector in zip(batch, self._run(batch)):
                self.cache[text] = vector
        return cached_rows(np, self.cache, texts, self.session.get_outputs()[0].shape[-1], CACHE_LIMIT)

    def similarities(self, query: str, texts: list[str], keys=None) -> list[float]:
        """Cosine similarity of each text with the query (their unit vectors' dot product); the
        core's host interface (`keys` name the chunks; texts are what this host needs). Each product
        is summed along its own row (float64), so a text's cosine is the same bits wherever it stands:
        two chunks of the same text tie exactly and rank by position (SPEC section 3), as they do when
        a streamed run embeds them in different batches (`eval_dense.cosines`); a matrix-vector
        product may round a row by where it falls."""
        if not texts:
            return []
        vectors = self.embed([query, *texts]).astype(self.np.float64)
        return [float(s) for s in (vectors[1:] * vectors[0]).sum(axis=1)]


def cached_rows(np, cache: OrderedDict, texts: list[str], width: int, limit: int):
    """The vectors of `texts` from `cache` (each there already) as a float32 array, the cache kept to
    its `limit` most recently used texts (at least these)."""
    out = np.empty((len(texts), width), dtype=np.float32)
    for row, text in enumerate(texts):
        cache.move_to_end(text)
        out[row] = cache[text]
    while len(cache) > max(limit, len(texts)):
        cache.popitem(last=False)
    return out


@functools.cache
def default_embedder() -> Embedder:
    """One embedder per process (the model loads once, its cache is shared)."""
    return Embedder()
