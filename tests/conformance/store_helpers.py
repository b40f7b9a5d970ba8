"""Helpers for tests that build real stores: a deterministic LangChain embedding, LangChain's
split of the conformance texts, and Chroma's default embedding function running offline on ragsim's
own all-MiniLM-L6-v2 (no download, whatever $HOME holds)."""

import hashlib
import os
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb: no telemetry attempts

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import RecursiveCharacterTextSplitter

from corpus import TEXTS_DIR
from ragsim.host import embed_onnx
from ragsim.host.stores import CHROMA_MODEL_FILES, place_chroma_model

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


def offline_chroma_model(monkeypatch, folder: Path) -> Path:
    """Chroma's DefaultEmbeddingFunction (ONNXMiniLM_L6_V2) made to read ragsim's verified
    all-MiniLM-L6-v2 from `folder`: the files laid out as Chroma's extracted archive and the class's
    DOWNLOAD_PATH pointed there for the test (monkeypatch undoes it)."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    place_chroma_model(folder, embed_onnx.model_dir())
    assert all((folder / "onnx" / name).is_file() for name in CHROMA_MODEL_FILES)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", folder)
    return folder
