"""ragsim: simulate the retrieval half of a RAG pipeline, deterministically, in pure Python."""

__version__ = "0.1.0"
