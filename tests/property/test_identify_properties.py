"""ragsim.identify on chunks made by the real libraries at random settings, over the conformance texts:
each set is recognised, with its strategy and a setting that reproduces every chunk exactly (the
library's own or one that cuts the same), and chunks that no mirrored splitter made get none.

The chunks are placed as an aligner would place them: each found at or after the previous one's start.
"""

import logging
import os
import pathlib
import sys

import llama_index.core
import pytest
import tiktoken
from haystack import Document as HaystackDocument
from haystack.components.preprocessors import DocumentSplitter
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from langchain_text_splitters import CharacterTextSplitter, RecursiveCharacterTextSplitter, TokenTextSplitter
from llama_index.core import Document
from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
from llama_index.core.node_parser import TokenTextSplitter as LlamaTokenSplitter

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "conformance"))
from corpus import TEXTS  # noqa: E402
from ragsim import split as splitters  # noqa: E402
from ragsim.judge.identify import identify  # noqa: E402
from ragsim.text.index import DocIndex  # noqa: E402

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("llama_index.core.node_parser.text.token").setLevel(logging.ERROR)
ASCII = [name for name, text in TEXTS.items() if text.isascii()]  # LangChain's token windows decode bytes


@pytest.fixture(scope="module", autouse=True)
def tiktoken_rank_files():
    """tiktoken (under LangChain's token splitters) reads the rank files LlamaIndex ships, never the network."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(pathlib.Path(llama_index.core.__file__).parent / "_static/tiktoken_cache"))
        tiktoken.get_encoding("cl100k_base")  # loaded once, kept by tiktoken for the session
        yield


def sized(draw, lo, hi):
    size = draw(st.integers(lo, hi))
    return size, draw(st.integers(0, size // 2))


def lc_recursive(draw, text):
    size, overlap = sized(draw, 40, 1200)
    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)


def lc_recursive_tokens(draw, text):
    size, overlap = sized(draw, 10, 300)
    return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base", chunk_size=size, chunk_overlap=overlap).split_text(text)


def lc_character(draw, text):
    size, overlap = sized(draw, 40, 1200)
    return CharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)


def lc_token(draw, text):
    size, overlap = sized(draw, 5, 300)
    return TokenTextSplitter(encoding_name="cl100k_base", chunk_size=size, chunk_overlap=overlap).split_text(text)


def haystack(draw, text):
    length = draw(st.integers(1, 60))
    overlap = draw(st.integers(0, length - 1))
    split_by = draw(st.sampled_from(["word", "passage", "line", "period"]))
    splitter = DocumentSplitter(split_by=split_by, split_length=length, split_overlap=overlap)
    return [d.content for d in splitter.run(documents=[HaystackDocument(content=text)])["documents"]]


def li_sentence(draw, text):
    size, overlap = sized(draw, 30, 400)
    return SentenceSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)


def li_token(draw, text):
    size, overlap = sized(draw, 20, 400)
    return LlamaTokenSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)


def li_markdown(draw, text):
    return [n.get_content() for n in MarkdownNodeParser().get_nodes_from_documents([Document(text=text)])]


def ragsim_own(draw, text):
    """`window` and `sentences` mirror no library: their chunks are ragsim's."""
    strategy = draw(st.sampled_from(["window", "sentences"]))
    unit = draw(st.sampled_from(["words", "chars", "tokens"]))
    size = draw(st.integers(5, 150) if unit != "chars" else st.integers(40, 900))
    chunking = {"strategy": strategy, "unit": unit, "size": size, "overlap": draw(st.integers(0, size // 2))}
    s = splitters.split(DocIndex.build(text), chunking)
    return [text[a:b] for a, b in zip(s.starts, s.ends)]


LIBRARIES = {
    lc_recursive: list(TEXTS), lc_recursive_tokens: list(TEXTS), lc_character: list(TEXTS),
    lc_token: ASCII, haystack: list(TEXTS), li_sentence: list(TEXTS), li_token: list(TEXTS),
    li_markdown: ["markdown.md"], ragsim_own: list(TEXTS),
}


def placed(text, chunks):
    """Each chunk found after the previous one's start; None where it is not there, or where a second
    copy of it lies close enough after the previous chunk, or before the next chunk, to be the one the
    splitter meant (repeated passages, a short chunk such as "break" found inside the chunk before it:
    which copy is meant cannot be told from the text, and the aligner's tests cover it)."""
    out, previous, previous_end = [], -1, 0
    for i, chunk in enumerate(chunks):
        at = text.find(chunk, previous + 1)
        again = text.find(chunk, at + 1) if at >= 0 else -1
        following = text.find(chunks[i + 1], at + 1) if at >= 0 and i + 1 < len(chunks) else -1
        if at < 0 or 0 <= again <= max(previous_end + 10, following):
            out.append(None)
            continue
        out.append((at, at + len(chunk)))
        previous, previous_end = at, at + len(chunk)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("library", LIBRARIES, ids=lambda f: f.__name__)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_chunks_of_every_mirrored_library_are_recognised(library, data):
    name = data.draw(st.sampled_from(LIBRARIES[library]), label="text")
    text = TEXTS[name]
    chunks = library(data.draw, text)
    extents = placed(text, chunks)
    # LangChain re-joins pieces around repeated separators into text that is not the document's
    assume(None not in extents and chunks)
    r = identify(text, extents, chunks)
    assert r["strategy"] is not None, r["line"]
    assert r["reproduced"] == r["chunks"] == len(chunks), r["line"]
    s = splitters.split(DocIndex.build(text), {"strategy": r["strategy"], **r["fields"]})
    assert sorted(extents) == list(zip(s.starts, s.ends)), r["line"]  # the named setting makes exactly these
    assert r["line"].endswith(f": {len(chunks):,} of {len(chunks):,} chunks exactly")  # 1,101 past a thousand


@st.composite
def random_cuts(draw):
    """A text cut at random points inside words, into pieces of different lengths."""
    text = TEXTS[draw(st.sampled_from(["prose.txt", "textwrap.py", "pydoc_topics", "markdown.md"]))]
    inside = [i for i in range(1, len(text)) if text[i - 1].isalnum() and text[i].isalnum()]
    cuts = sorted(draw(st.lists(st.sampled_from(inside), min_size=6, max_size=14, unique=True)))
    bounds = [0, *cuts, len(text)]
    lengths = [b - a for a, b in zip(bounds, bounds[1:])]
    assume(len(set(lengths)) == len(lengths))
    return text, list(zip(bounds, bounds[1:]))


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(case=random_cuts())
def test_chunks_no_mirrored_splitter_made_get_none(case):
    text, extents = case
    r = identify(text, extents, [text[a:b] for a, b in extents])
    assert r["strategy"] is None, r["line"]
    assert 2 * r["reproduced"] < r["chunks"] == len(extents)
    assert r["line"].startswith("No mirrored splitter reproduces half of these chunks; the nearest is ")
