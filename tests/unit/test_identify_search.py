"""ragsim.identify finds a setting that reproduces every chunk wherever ragsim's mirror reproduces the
library: LangChain's RecursiveCharacterTextSplitter at sizes and overlaps that the strict search
once missed, and a sweep of them over two conformance texts.

The chunks are placed where the mirror makes them (its texts checked equal to LangChain's), so a
chunk left unreproduced is the search's miss, not the mirror's or the placement's.
"""

import pathlib
import sys

import pytest
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragsim import split as splitters
from ragsim.judge import identify as ident
from ragsim.judge.identify_families import families, next_overlap, overlap_window
from ragsim.text.index import DocIndex

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "conformance"))
from corpus import TEXTS  # noqa: E402


def mirrored(text: str, size: int, overlap: int):
    """LangChain's chunks and where ragsim's mirror makes them, or None where the two differ."""
    chunks = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)
    s = splitters.split(DocIndex.build(text), {"strategy": "langchain-recursive", "size": size, "overlap": overlap})
    extents = list(zip(s.starts, s.ends))
    return (chunks, extents) if [text[a:b] for a, b in extents] == chunks else None


def missed(text: str, size: int, overlap: int) -> str | None:
    """What identify says when it reproduces fewer than every chunk the mirror makes, else None."""
    made = mirrored(text, size, overlap)
    if made is None:
        return None
    chunks, extents = made
    r = ident.identify(text, extents, chunks)
    if r["reproduced"] == r["chunks"] == len(chunks):
        s = splitters.split(DocIndex.build(text), {"strategy": r["strategy"], **r["fields"]})
        assert list(zip(s.starts, s.ends)) == extents, r["line"]  # the named setting makes exactly these
        return None
    return f"{size}/{overlap}: {r['line']}"


@pytest.mark.parametrize("size, overlap", [(840, 49), (824, 69)])
def test_a_recursive_split_of_textwrap_is_reproduced_exactly(size, overlap):
    """840/49: every size from the longest chunk's 827 up makes the same first chunk and passes the
    prefix at overlaps near 50, so the sizes below 840 spent the search's full splits first (the
    answer was 828/50, 30 of 32 chunks). 824/69: the longest overlap seen is 49 and the overlaps
    tried stopped at 65, though every one up to there said a larger one was needed."""
    text = TEXTS["textwrap.py"]
    chunks, extents = mirrored(text, size, overlap)
    assert len(chunks) > 20
    assert missed(text, size, overlap) is None
    r = ident.identify(text, extents, chunks)
    assert r["strategy"] == "langchain-recursive"
    assert r["line"].endswith(f": {len(chunks)} of {len(chunks)} chunks exactly")


def test_the_overlaps_follow_the_chunks_past_the_window():
    """Defaults and round numbers first, then the middle of the window; once every overlap up to the
    window's end is shown too small, those beyond it, up to the size."""
    family = families("", ())[0]
    window = overlap_window(family, (49, 49))
    assert window == (46, 65)
    assert next_overlap(family, window, -1, 841, set()) == 200
    assert next_overlap(family, window, 50, 100, set()) == 64  # a power of two
    assert next_overlap(family, window, 50, 100, {64}) == 58  # the middle of the rest of 51..65
    assert next_overlap(family, window, 65, 100, set()) == 83  # the middle of 66..99
    assert next_overlap(family, window, 65, 841, set(range(66, 841))) is None


SWEEPS = {  # text: (sizes, overlaps as (first, step)); walking the overlaps, the search missed 19 on textwrap.py
    "textwrap.py": (range(820, 900, 4), (33, 6)),
    "prose.txt": (range(40, 700, 23), (0, 7)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SWEEPS))
def test_every_recursive_setting_the_mirror_reproduces_is_found(name):
    text, (sizes, (first, step)) = TEXTS[name], SWEEPS[name]
    misses = [m for size in sizes for overlap in range(first, min(size // 2, first + 12 * step), step)
              if (m := missed(text, size, overlap)) is not None]
    assert not misses, "\n".join(misses)
