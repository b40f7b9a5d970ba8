"""The overlap that keeps a cut phrase whole (`judge.overlap_advice`, inspect's advice) against the
real splitters: LangChain's own, re-run at every overlap below the size, must first keep the span
whole at the overlap ragsim names, and cut it at every larger one ragsim says cuts it."""

import pathlib
import re

import pytest

from ragsim.judge.overlap_advice import Advisor, TRIES, sentence

pytestmark = pytest.mark.slow  # the real library, split at every overlap

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = (ROOT / "examples" / "harbour.md").read_text(encoding="utf-8")
SENTENCES = [m.span() for m in re.finditer(r"[A-Z][^.]{30,220}\.", TEXT)][:14]


def langchain_whole(kind: str, size: int, overlap: int):
    from langchain_text_splitters import RecursiveCharacterTextSplitter as cls

    kept = {}
    docs = cls(chunk_size=size, chunk_overlap=overlap, add_start_index=True).create_documents([TEXT])
    spans = [(d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content)) for d in docs]
    for a, b in SENTENCES:
        kept[(a, b)] = any(s <= a and b <= e for s, e in spans)
    return kept


@pytest.mark.parametrize("size", [100, 200, 300])  # 300: a ladder of TRIES overlaps, refined below the first
def test_the_least_overlap_named_is_the_real_splitters(size):
    by_overlap = {o: langchain_whole("langchain-recursive", size, o) for o in range(size)}
    advisor = Advisor(TEXT, {"strategy": "langchain-recursive", "size": size, "overlap": 0})
    for a, b in SENTENCES:
        advice = advisor.keeping(a, b)
        real = next((o for o in range(size) if by_overlap[o][(a, b)]), None)
        assert advice["overlap"] == real, (a, b, advice, real)
        assert all(not by_overlap[o][(a, b)] for o in advice["cut_above"])
        assert advice["unit"] == "characters" and advice["size"] == size
    assert len(advisor.splits) <= min(size, 2 * TRIES)  # each overlap split once, for all the spans together


def test_a_token_splitters_advice_is_in_tokens():
    a = TEXT.index("The pilot boat")
    advice = Advisor(TEXT, {"strategy": "langchain-token", "size": 40, "overlap": 0}).keeping(a, a + 60)
    assert advice["unit"] == "tokens" and (advice["overlap"] is None or advice["overlap"] < 40)


def test_the_character_splitter_with_its_separator():
    from langchain_text_splitters import CharacterTextSplitter

    size = 150
    advisor = Advisor(TEXT, {"strategy": "langchain-character", "size": size, "overlap": 0, "separator": " "})
    by_overlap = {}
    for o in range(size):
        docs = CharacterTextSplitter(separator=" ", chunk_size=size, chunk_overlap=o, add_start_index=True).create_documents([TEXT])
        by_overlap[o] = [(d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content)) for d in docs]
    for a, b in SENTENCES:
        real = next((o for o in range(size) if any(s <= a and b <= e for s, e in by_overlap[o])), None)
        assert advisor.keeping(a, b)["overlap"] == real, (a, b)


def test_the_advice_in_words():
    assert sentence({"overlap": 61, "unit": "words", "size": 65, "cut_above": []}, 300, 40) == \
        "an overlap of 61 words keeps it whole with this splitter"
    assert sentence({"overlap": 0, "unit": "characters", "size": 200, "cut_above": [95, 96, 97, 98]}, 80, 50) == \
        ("an overlap of 0 characters keeps it whole with this splitter (the index's 50 cuts it; so do some larger "
         "ones: 95, 96, 97 and more)")
    assert sentence({"overlap": None, "unit": "tokens", "size": 200, "cut_above": []}, 900) == \
        "no overlap below the size of 200 tokens keeps it whole with this splitter: a larger size would, or sentence-aware splitting"
    assert "fixed windows" in sentence(None, 91) and "91 characters" in sentence(None, 91)


def test_a_splitter_without_an_overlap_gets_no_figure():
    assert Advisor(TEXT, {"strategy": "langchain-semantic"}).keeping(0, 10) is None
