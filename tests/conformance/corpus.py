"""The real texts the conformance tests split, and ragsim's split of one text as plain data (imported by the tests)."""

import inspect
import os
import logging
import pathlib
import textwrap

import pydoc_data.topics

from ragsim import split as splitters
from ragsim.text.index import DocIndex

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

TEXTS_DIR = pathlib.Path(__file__).resolve().parent / "texts"

# LangChain logs a warning for every oversized chunk; the tests make such chunks on purpose.
logging.getLogger("langchain_text_splitters").setLevel(logging.ERROR)
logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)


def load_texts() -> dict[str, str]:
    """Name -> text: the files in texts/ (read byte-exact, CRLF kept), a stdlib module's source and
    a few of CPython's pydoc topics."""
    texts = {p.name: p.read_bytes().decode("utf-8") for p in sorted(TEXTS_DIR.iterdir()) if p.name[0] != "."}
    texts["textwrap.py"] = inspect.getsource(textwrap)
    topics = pydoc_data.topics.topics
    texts["pydoc_topics"] = "\n\n".join(topics[k] for k in ("assert", "break", "if", "while", "with"))
    return texts


TEXTS = load_texts()


def ragsim_split(text: str, chunking: dict):
    """ragsim's split of one text: (chunk texts, extents as (start, end, units), unit)."""
    s = splitters.split(DocIndex.build(text), chunking)
    extents = [(e[0], e[1], e[2]) for e in s.extents]
    return [text[a:b] for a, b, _ in extents], extents, s.unit
