"""ragsim.identify: the splitter named from a document's stored chunks, on hand-made cases.

Chunks come from the real libraries where one is mirrored (LangChain, Haystack) and from ragsim's own
splitters otherwise; each is placed in the document where the splitter made it.
"""

import gc
import logging
import os
import time

import pydoc_data.topics
import pytest
from haystack import Document
from haystack.components.preprocessors import DocumentSplitter
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragsim.judge import identify as ident
from ragsim import split as splitters
from ragsim.text import tokens
from ragsim.errors import RequestError
from ragsim.text.index import DocIndex
from ragsim.host import tokens_files as host

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)

# Prose with paragraphs, code and lists: CPython's own help topics, about 20,000 characters.
TEXT = "\n\n".join(pydoc_data.topics.topics[k] for k in sorted(pydoc_data.topics.topics)[:40])[:20000]


def placed(text, chunks):
    """Each chunk found at or after the previous one's start (as the aligner places them)."""
    out, previous = [], 0
    for chunk in chunks:
        at = text.find(chunk, previous)
        assert at >= 0, chunk[:40]
        out.append((at, at + len(chunk)))
        previous = at
    return out


def ours(text, chunking):
    s = splitters.split(DocIndex.build(text), chunking)
    return list(zip(s.starts, s.ends)), [text[a:b] for a, b in zip(s.starts, s.ends)]


def test_a_langchain_recursive_1000_200_split_is_named_with_its_fields():
    chunks = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_text(TEXT)
    r = ident.identify(TEXT, placed(TEXT, chunks), chunks, doc="topics")
    n = len(chunks)
    assert n > 20
    assert (r["doc"], r["strategy"], r["fields"]) == ("topics", "langchain-recursive", {"size": 1000, "overlap": 200})
    assert (r["reproduced"], r["chunks"]) == (n, n)
    assert r["line"] == f"LangChain RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200): {n} of {n} chunks exactly"
    assert r["moves_with_overlap"] is True
    assert r["differs"] is None and r["nearest"] is None


def test_an_unusual_size_and_overlap_are_found_exactly():
    chunks = RecursiveCharacterTextSplitter(chunk_size=737, chunk_overlap=61).split_text(TEXT)
    r = ident.identify(TEXT, placed(TEXT, chunks), chunks)
    assert r["strategy"] == "langchain-recursive"
    assert r["reproduced"] == r["chunks"] == len(chunks)
    # the named setting makes exactly these chunks (737/61 itself or one that cuts the same)
    assert ours(TEXT, {"strategy": "langchain-recursive", **r["fields"]})[1] == chunks


def test_windows_of_words():
    extents, chunks = ours(TEXT, {"strategy": "window", "unit": "words", "size": 50, "overlap": 10})
    r = ident.identify(TEXT, extents, chunks)
    assert (r["strategy"], r["fields"]) == ("window", {"unit": "words", "size": 50, "overlap": 10})
    assert r["reproduced"] == len(chunks)
    assert r["line"] == f"fixed windows of 50 words (overlap 10): {len(chunks)} of {len(chunks)} chunks exactly"
    assert r["moves_with_overlap"] is True  # the step is size - overlap: every later window moves


def test_haystack_word_windows():
    splitter = DocumentSplitter(split_by="word", split_length=40, split_overlap=5)
    chunks = [d.content for d in splitter.run(documents=[Document(content=TEXT)])["documents"]]
    r = ident.identify(TEXT, placed(TEXT, chunks), chunks)
    assert (r["strategy"], r["fields"]) == ("haystack", {"split_by": "word", "size": 40, "overlap": 5})
    assert r["reproduced"] == len(chunks)
    assert r["line"].startswith('Haystack DocumentSplitter(split_by="word", split_length=40, split_overlap=5): ')


def test_chunks_edited_by_hand_get_the_nearest_splitter_and_what_differs():
    chunks = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_text(TEXT)
    extents = placed(TEXT, chunks)
    # Trim the last 7 characters of two chunks in three: still placed, at a shorter extent.
    edited = [(a, b - 7) if i % 3 else (a, b) for i, (a, b) in enumerate(extents)]
    texts = [TEXT[a:b] for a, b in edited]
    kept = sum(1 for i in range(len(chunks)) if i % 3 == 0)
    r = ident.identify(TEXT, edited, texts)
    assert r["strategy"] is None and r["fields"] is None and r["moves_with_overlap"] is None
    assert r["reproduced"] == kept and 2 * kept < len(chunks)
    near = r["nearest"]
    assert near["strategy"] == "langchain-recursive" and near["reproduced"] == kept
    assert ours(TEXT, {"strategy": "langchain-recursive", **near["fields"]})[1] == chunks
    a, b = extents[1]
    assert near["differs"] == {"number": 2, "stored": [a, b - 7], "simulated": [a, b], "text_differs": False,
                               "simulated_chunks": len(chunks)}
    assert r["line"].startswith("No mirrored splitter reproduces half of these chunks; the nearest is "
                                "LangChain RecursiveCharacterTextSplitter(")
    assert r["line"].endswith(f"first difference at chunk 2: stored {a}-{b - 7}, simulated {a}-{b}")


def test_a_store_of_a_documents_first_chunks_is_named_by_the_splitter_making_fewest_besides():
    # Many settings make a document's first chunk or three; the one named makes the fewest chunks that
    # were not stored, not the first found that makes them all (the search goes on past it).
    md = "# A\n\nOne para here.\n\n## B\n\nTwo para here with more words.\n\n# C\n\nThree para. " * 5
    extents, chunks = ours(md, {"strategy": "llamaindex-markdown"})
    r = ident.identify(md, extents[:1], chunks[:1], tokenizers=())
    assert r["strategy"] == "llamaindex-markdown"
    assert r["differs"] == {"number": 2, "stored": None, "simulated": list(extents[1]), "text_differs": False,
                            "simulated_chunks": len(extents)}
    text = TEXT[:6000]
    extents, chunks = ours(text, {"strategy": "langchain-character", "separator": "\n\n", "size": 200, "overlap": 0})
    r = ident.identify(text, extents[:3], chunks[:3], tokenizers=())
    assert r["strategy"] == "langchain-character" and r["differs"]["simulated_chunks"] == len(extents)


def test_one_edited_chunk_still_names_the_splitter_and_says_which():
    extents, chunks = ours(TEXT, {"strategy": "window", "unit": "chars", "size": 800, "overlap": 100})
    texts = list(chunks)
    texts[0] = texts[0].upper()  # its text is no longer the document's at its extent
    r = ident.identify(TEXT, extents, texts)
    assert (r["strategy"], r["fields"]) == ("window", {"unit": "chars", "size": 800, "overlap": 100})
    assert r["reproduced"] == len(chunks) - 1
    assert r["differs"]["number"] == 1 and r["differs"]["text_differs"] is True


def test_random_cut_points_name_no_splitter():
    cuts = [0, 137, 1021, 1777, 3001, 3130, 4999, 5350, 7777, 8012, 9999]
    cuts = [c + next(i for i in range(50) if TEXT[c + i - 1 : c + i + 1].isalnum()) if c else 0 for c in cuts]
    extents = list(zip(cuts, cuts[1:]))
    r = ident.identify(TEXT, extents, [TEXT[a:b] for a, b in extents])
    assert r["strategy"] is None
    assert 2 * r["reproduced"] < r["chunks"] == len(extents)
    assert r["nearest"] is not None and r["line"].startswith("No mirrored splitter reproduces half")


def test_moves_with_overlap_is_measured():
    doc = DocIndex.build(TEXT)
    assert ident.moves_with_overlap(doc, {"strategy": "window", "unit": "chars", "size": 300, "overlap": 30})
    assert ident.moves_with_overlap(doc, {"strategy": "langchain-recursive", "size": 1000, "overlap": 200})
    # Paragraph windows with nothing carried over cut at the same paragraphs whatever the overlap...
    md = "# A\n\nalpha\n\n## B\n\nbeta\n\n## C\n\ngamma\n"
    assert not ident.moves_with_overlap(DocIndex.build(md), {"strategy": "llamaindex-markdown"})
    # ...and LangChain's packer, where every paragraph is longer than the overlap, carries none over.
    long_paragraphs = "\n\n".join(("word " * 30).strip() for _ in range(6))
    chunking = {"strategy": "langchain-recursive", "size": 160, "overlap": 40}
    assert not ident.moves_with_overlap(DocIndex.build(long_paragraphs), chunking)


def test_markdown_sections_are_named():
    md = "# Title\n\nIntro text.\n\n## Part one\n\nSome words here.\n\n## Part two\n\nMore words, and more.\n"
    extents, chunks = ours(md, {"strategy": "llamaindex-markdown"})
    r = ident.identify(md, extents, chunks)
    assert r["reproduced"] == 3 == r["chunks"]
    # three sections: LangChain's recursive splitter at some small size cuts the same, and comes first
    assert ours(md, {"strategy": r["strategy"], **r["fields"]})[0] == extents


def test_unplaced_chunks_are_counted_and_never_reproduced():
    extents, chunks = ours(TEXT, {"strategy": "window", "unit": "words", "size": 120, "overlap": 0})
    r = ident.identify(TEXT, [None, *extents[1:]], chunks)
    assert (r["strategy"], r["reproduced"], r["chunks"]) == ("window", len(chunks) - 1, len(chunks))


def test_without_rank_files_token_splitters_are_skipped_and_said(monkeypatch, tmp_path):
    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(host, "candidate_dirs", lambda: [tmp_path])
    text = TEXT[:3000]
    cuts = [0, 401, 1013, 1500, 2222, 2900]
    extents = list(zip(cuts, cuts[1:]))
    r = ident.identify(text, extents, [text[a:b] for a, b in extents])
    assert r["strategy"] is None
    assert [s.split(":")[0] for s in r["skipped"]] == [
        "Splitters counting cl100k_base tokens were not tried", "Splitters counting o200k_base tokens were not tried"]


def test_one_extent_per_text():
    with pytest.raises(RequestError) as e:
        ident.identify("abc", [(0, 3)], ["abc", "b"])
    assert e.value.field == "chunks"


def test_the_lines_name_each_library_as_it_spells_it():
    d = ident.describe
    assert d({"strategy": "langchain-recursive", "length": "tokens", "tokenizer": "o200k_base", "size": 256,
              "overlap": 0}) == ('LangChain RecursiveCharacterTextSplitter.from_tiktoken_encoder('
                                 'encoding_name="o200k_base", chunk_size=256, chunk_overlap=0)')
    assert d({"strategy": "langchain-character", "separator": "\n\n", "size": 900, "overlap": 100}) == (
        'LangChain CharacterTextSplitter(separator="\\n\\n", chunk_size=900, chunk_overlap=100)')
    assert d({"strategy": "llamaindex-sentence", "size": 1024, "overlap": 200}) == (
        "LlamaIndex SentenceSplitter(chunk_size=1024, chunk_overlap=200)")
    assert d({"strategy": "window", "unit": "tokens", "size": 100, "overlap": 10}) == (
        "fixed windows of 100 cl100k_base tokens (overlap 10)")


@pytest.mark.slow
def test_a_size_whose_first_chunk_breaks_the_monotone_search_is_still_found():
    """LlamaIndex's SentenceSplitter re-splits sentences longer than the size: on the UDHR's article 1
    its first chunk ends at 81 characters at size 27, 87 at 28 and 72 from 29 on, so the bisection
    over sizes misses 30; every candidate is then tried (found by the identify property test)."""
    import pathlib

    from llama_index.core.node_parser import SentenceSplitter

    text = (pathlib.Path(__file__).resolve().parents[1] / "conformance/texts/udhr_article1.txt").read_text()
    chunks = SentenceSplitter(chunk_size=30, chunk_overlap=0).split_text(text)
    r = ident.identify(text, placed(text, chunks), chunks)
    assert r["strategy"] == "llamaindex-sentence" and r["reproduced"] == r["chunks"] == len(chunks) > 40
    assert ours(text, {"strategy": "llamaindex-sentence", **r["fields"]})[1] == chunks


LARGE = {  # one chunk, the whole text: each ends in a space no LangChain splitter keeps, so the
    # splitters that strip it never reproduce the chunk and search every size they may
    "words": lambda n: ("word " * n)[:n],
    "sentences": lambda n: ("The cat sat. " * n)[:n],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LARGE))
def test_one_large_chunk_is_searched_in_work_linear_in_its_length(monkeypatch, name):
    """A chunk of 1 MB took over 300 s (the sizes tried grew with the chunk, each split
    the whole text). Each splitter's search now has a budget linear in the document (the floor set to
    0 here so that it governs at every length), and the splitters after one that spent it are still
    tried: at 8x the text, linear work splits 8x the characters and takes about 8x the time,
    quadratic 64x."""
    monkeypatch.setattr(ident, "FAMILY_FLOOR", 0)
    split, work = ident._split, {"chars": 0}

    def counted(doc, chunking):
        work["chars"] += len(doc.text)
        return split(doc, chunking)

    monkeypatch.setattr(ident, "_split", counted)

    def cost(n):
        text, best = LARGE[name](n), float("inf")
        gc.disable()  # the collector's passes grow with the heap: identify's own work is what is held
        try:
            for _ in range(3):
                work["chars"] = 0
                t = time.process_time()
                r = ident.identify(text, [(0, n)], [text], tokenizers=())
                best = min(best, time.process_time() - t)
        finally:
            gc.enable()
        return best, work["chars"], r

    (small, small_chars, _), (large, large_chars, r) = cost(125_000), cost(1_000_000)
    assert (r["strategy"], r["fields"], r["reproduced"]) == ("window", {"unit": "chars", "size": 1_000_000, "overlap": 0}, 1)
    assert "Not every setting of LangChain RecursiveCharacterTextSplitter" in r["skipped"][-1]
    assert large_chars <= 8 * small_chars
    assert large <= 24 * max(small, 0.002)
