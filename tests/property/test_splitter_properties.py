"""Invariants of every strategy on generated text: extents round-trip, sentence packing keeps sentences whole."""

import pytest
from hypothesis import given, settings, strategies as st

from ragsim.text.index import DocIndex
from ragsim.text.sentences import split_sentences
from ragsim.split import split

# Text with Unicode letters, emoji (astral code points), punctuation that ends sentences, quotes,
# brackets, and irregular whitespace (tabs, CRLF, form feeds, runs of spaces and blank lines).
PIECES = st.sampled_from([
    "word", "Dr.", "e.g.", "3.14", "J.", "U.S.", "étoile", "日本語", "🙂", "👩‍🔬", "x",
    ".", "!", "?", "...", '"', "”", ")", "(", "]", ",", "#",
    " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r\n\r\n", "\f", "\u00a0", "\u2029",
])
TEXT = st.lists(PIECES, max_size=60).map("".join)

SIZE = st.integers(1, 60)


def chunkings():
    recursive = st.fixed_dictionaries({
        "strategy": st.just("langchain-recursive"),
        "size": SIZE,
        "keep_separator": st.sampled_from([True, False, "start", "end"]),
        "strip_whitespace": st.booleans(),
    }, optional={"language": st.sampled_from(["markdown", "python", "html", "js"])})
    character = st.fixed_dictionaries({
        "strategy": st.just("langchain-character"),
        "size": SIZE,
        "separator": st.sampled_from(["\n\n", "\n", " ", "", ". "]),
        "keep_separator": st.sampled_from([True, False, "end"]),
        "strip_whitespace": st.booleans(),
    })
    haystack = st.fixed_dictionaries({
        "strategy": st.just("haystack"),
        "split_by": st.sampled_from(["word", "passage", "line", "period", "page"]),
        "size": SIZE,
        "split_threshold": st.integers(0, 5),
    })
    sized = st.fixed_dictionaries({
        "strategy": st.sampled_from(["window", "sentences"]),
        "unit": st.sampled_from(["words", "chars"]),
        "size": SIZE,
    })

    def with_overlap(c):
        limit = c["size"] if c["strategy"].startswith("langchain") else c["size"] - 1
        return st.integers(0, limit).map(lambda o: {**c, "overlap": o})

    return st.one_of(recursive, character, haystack, sized).flatmap(with_overlap)


@pytest.mark.slow
@settings(deadline=None, max_examples=400)
@given(text=TEXT, chunking=chunkings())
def test_extents_round_trip_for_every_strategy(text, chunking):
    s = split(DocIndex.build(text), chunking)
    previous_start = -1
    for start, end, units in s.extents:
        assert 0 <= start < end <= len(text)  # a chunk is never empty and lies in its document
        assert start >= previous_start  # in document order
        previous_start = start
        assert units >= 1
        name = chunking["strategy"]
        if name.startswith("langchain") and chunking["keep_separator"] or chunking.get("unit") == "chars":
            assert units == end - start  # characters, and the chunk is exactly the document's text
        if chunking.get("unit") == "words":
            assert units == len(text[start:end].split())


@pytest.mark.slow
@settings(deadline=None, max_examples=300)
@given(text=TEXT, unit=st.sampled_from(["words", "chars"]), size=SIZE, data=st.data())
def test_sentence_packing_never_cuts_a_sentence_that_fits(text, unit, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    doc = DocIndex.build(text)
    extents = split(doc, {"strategy": "sentences", "unit": unit, "size": size, "overlap": overlap}).extents
    for a, b in split_sentences(text):
        length = len(text[a:b].split()) if unit == "words" else b - a
        holders = [e for e in extents if e[0] <= a and b <= e[1]]
        cutters = [e for e in extents if e[0] < b and a < e[1] and not (e[0] <= a and b <= e[1])]
        if length <= size:
            assert holders and not cutters  # whole in some chunk, and no chunk ends inside it
        else:
            assert cutters and all(e[2] <= size for e in cutters)  # fixed windows, none over size


@pytest.mark.slow
@settings(deadline=None, max_examples=300)
@given(text=TEXT)
def test_sentences_are_ordered_trimmed_and_disjoint(text):
    previous_end = 0
    for a, b in split_sentences(text):
        assert previous_end <= a < b <= len(text)
        assert not text[a].isspace() and not text[b - 1].isspace()
        previous_end = b
    # every non-space character belongs to some sentence
    covered = set()
    for a, b in split_sentences(text):
        covered.update(range(a, b))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
