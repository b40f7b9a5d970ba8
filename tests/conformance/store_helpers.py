"""Helpers for tests that build real stores: a deterministic LangChain embedding, LangChain's
split of the conformance texts, and Chroma's default embedding function running offline on ragsim's
own all-MiniLM-L6-v2 (no download, whatever $HOME holds)."""

import hashlib
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb: no telemetry attempts

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import RecursiveCharacterTextSplitter

from corpus import TEXTS_DIR
from helpers import run_cli
from ragsim.errors import RequestError
from ragsim.host.clients import embed_onnx
from ragsim.host.clients.stores import CHROMA_MODEL_FILES, place_chroma_model, read_store

DIM = 8


def vector(text: str) -> list[float]:
    """A deterministic unit-free vector of a text (its sha256 bytes): stores need some embedding."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [b / 255.0 + 0.01 for b in digest[:DIM]]


class HashEmbeddings(Embeddings):
    """LangChain's Embeddings interface over `vector`: no model, no network."""

    def embed_documents(self, texts):
        return [vector(t) for t in texts]

    def embed_query(self, text):
        return vector(text)


def source_texts(*names: str) -> dict[str, str]:
    return {name: (TEXTS_DIR / name).read_bytes().decode("utf-8") for name in names}


def langchain_chunks(names=("prose.txt", "repeated.txt"), size=200, overlap=40) -> list[Document]:
    """RecursiveCharacterTextSplitter(add_start_index=True) over real texts, one Document per file with
    metadata source = the file's name, as a LangChain loader gives it."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, add_start_index=True)
    documents = [Document(page_content=text, metadata={"source": name}) for name, text in source_texts(*names).items()]
    return splitter.split_documents(documents)


def refused(spec, **options) -> str:
    """The one sentence `read_store(spec, **options)` refuses with."""
    with pytest.raises(RequestError) as caught:
        read_store(spec, **options)
    assert "\n" not in caught.value.message and caught.value.message.endswith(".")
    return caught.value.message


def placed_and_named(store, sources, size, overlap, strategy="langchain-recursive") -> list[dict]:
    """`inspect STORE --source ...` places every chunk at the store's own offsets and names, for each
    source, the splitter that made them, reproducing every chunk; `export`'s records are returned."""
    sources = [str(s) for s in sources]
    out = run_cli("inspect", store, "--source", *sources, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert sum(d["placed"] for d in report["documents"]) == len(report["chunks"]) and report["unplaced"] == []
    assert {c["placement"] for c in report["chunks"]} == {"offsets"}
    assert {s["doc"] for s in report["splitter"]} == set(sources)
    for s in report["splitter"]:
        assert (s["strategy"], s["fields"]["overlap"]) == (strategy, overlap)
        assert size is None or s["fields"]["size"] == size  # None: sizes that cut alike may tie
        assert s["reproduced"] == s["chunks"]
    out = run_cli("export", store, "--source", *sources, "-o", "-")
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def fingerprint(folder: Path) -> dict:
    """Every file of a folder, by its path, with its bytes' hash and its modification time."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers() -> set:
    """The copies of stores ragsim has left in the temporary folder (there should be none)."""
    return {p.name for p in Path(tempfile.gettempdir()).glob("ragsim-store-*")}


def offline_chroma_model(monkeypatch, folder: Path) -> Path:
    """Chroma's DefaultEmbeddingFunction (ONNXMiniLM_L6_V2) made to read ragsim's verified
    all-MiniLM-L6-v2 from `folder`: the files laid out as Chroma's extracted archive and the class's
    DOWNLOAD_PATH pointed there for the test (monkeypatch undoes it)."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    place_chroma_model(folder, embed_onnx.model_dir())
    assert all((folder / "onnx" / name).is_file() for name in CHROMA_MODEL_FILES)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", folder)
    return folder
