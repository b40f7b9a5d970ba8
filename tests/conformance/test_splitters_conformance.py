"""ragsim's LangChain and Haystack splitters against the real libraries, on real texts and a grid of settings.

For every case: the chunk texts equal the library's, in order, and `text[start:end]` is each chunk.
The one exception is LangChain's own: when it re-joins pieces with a separator that is not the text
between them (empty pieces dropped between repeated separators, or a regex re-inserted as its
pattern text), its chunk is not in the document. There ragsim's extent spans the same pieces, and
the test checks that the library's chunk is exactly those pieces joined by the separator.
"""

import itertools
import re

import pytest
from haystack import Document
from haystack.components.preprocessors import DocumentSplitter
from langchain_text_splitters import CharacterTextSplitter, Language, RecursiveCharacterTextSplitter

from corpus import TEXTS, ragsim_split
from helpers import make_request
from ragsim.wire.api import simulate
from ragsim.split.langchain_recursive import LANGUAGES

pytestmark = pytest.mark.slow  # the real splitters on real texts

SIZES = (10, 40, 100, 257, 1000)
OVERLAPS = (0, 5, 30, 100)
KEEPS = (False, True, "end")
STRIPS = (True, False)

RECURSIVE_SEPARATORS = (
    ("default", {}),
    ("paragraphs only", {"separators": ["\n\n"]}),
    ("regex", {"separators": [r"\n\s*\n", r"\.\s+", r"\s+", ""], "is_separator_regex": True}),
    *((f"language {name}", {"language": name}) for name in ("markdown", "python", "html", "js")),
)
CHARACTER_SEPARATORS = (
    ("blank line", {}),
    ("newline", {"separator": "\n"}),
    ("space", {"separator": " "}),
    ("empty", {"separator": ""}),
    ("full stop", {"separator": ". "}),
    ("regex blank lines", {"separator": r"\n\s*\n", "is_separator_regex": True}),
    ("lookahead heading", {"separator": r"(?=\n#)", "is_separator_regex": True}),
)


def size_overlaps():
    return [(s, o) for s in SIZES for o in OVERLAPS if o <= s]


def recursive_grid():
    for (label, seps), (size, overlap), keep, strip in itertools.product(
        RECURSIVE_SEPARATORS, size_overlaps(), KEEPS, STRIPS
    ):
        yield label, {"strategy": "langchain-recursive", "size": size, "overlap": overlap,
                      "keep_separator": keep, "strip_whitespace": strip, **seps}


def character_grid():
    for (label, seps), (size, overlap), keep, strip in itertools.product(
        CHARACTER_SEPARATORS, size_overlaps(), KEEPS, STRIPS
    ):
        yield label, {"strategy": "langchain-character", "size": size, "overlap": overlap,
                      "keep_separator": keep, "strip_whitespace": strip, **seps}


def haystack_grid():
    for split_by, length, overlap, threshold in itertools.product(
        ("word", "passage", "line", "period", "page"), (1, 2, 3, 5, 10, 50), (0, 1, 2, 4, 9), (0, 1, 3, 8)
    ):
        if overlap < length:
            yield split_by, {"strategy": "haystack", "split_by": split_by, "size": length,
                             "overlap": overlap, "split_threshold": threshold}


def langchain_chunks(text: str, c: dict) -> list[str]:
    common = {"chunk_size": c["size"], "chunk_overlap": c["overlap"],
              "keep_separator": c["keep_separator"], "strip_whitespace": c["strip_whitespace"]}
    if c["strategy"] == "langchain-character":
        return CharacterTextSplitter(separator=c.get("separator", "\n\n"),
                                     is_separator_regex=c.get("is_separator_regex", False), **common).split_text(text)
    if "language" in c:
        return RecursiveCharacterTextSplitter.from_language(Language(c["language"]), **common).split_text(text)
    return RecursiveCharacterTextSplitter(separators=c.get("separators"),
                                          is_separator_regex=c.get("is_separator_regex", False), **common).split_text(text)


def haystack_chunks(text: str, c: dict) -> list[str]:
    splitter = DocumentSplitter(split_by=c["split_by"], split_length=c["size"], split_overlap=c["overlap"],
                                split_threshold=c["split_threshold"])
    return [d.content for d in splitter.run(documents=[Document(content=text)])["documents"]]


def rejoined(ours: str, lib: str, separator: str, pattern: str, strip: bool) -> bool:
    """Is `lib` the pieces of `ours` joined by `separator`, where `ours` has runs of `pattern` between them?"""
    parts = lib.split(separator)
    gap = f"(?:{pattern})+"
    # When stripping, a whitespace-only first or last piece went away in ours, and the gap beside it
    # with it when the gap was whitespace too ('\r\n' + r'\.\s+' + 'word' is '. word' in ours, where
    # LangChain keeps the literal separator: r'\.\s+word').
    head = tail = ""
    while strip and len(parts) > 1 and not parts[0].strip():
        parts, head = parts[1:], f"(?:{gap})?"
    while strip and len(parts) > 1 and not parts[-1].strip():
        parts, tail = parts[:-1], f"(?:{gap})?"
    if strip:  # ours is the stripped extent; theirs keeps a piece's edge space next to a literal separator
        parts[0] = parts[0].lstrip()
        parts[-1] = parts[-1].rstrip()
    return re.fullmatch(head + gap.join(re.escape(p) for p in parts) + tail, ours, re.S) is not None


def check_langchain(text: str, c: dict) -> int:
    """Asserts one case; returns how many chunks are LangChain's re-joined (non-document) kind."""
    lib = langchain_chunks(text, c)
    ours, extents, unit = ragsim_split(text, c)
    assert unit == "chars"
    assert len(ours) == len(lib), c
    regex = c.get("is_separator_regex", False) or "language" in c
    rejoins = 0
    for (start, end, units), mine, theirs in zip(extents, ours, lib):
        assert text[start:end] == mine
        assert units == len(theirs), c  # LangChain's own length measure
        if mine == theirs:
            continue
        # Only LangChain's re-joined chunks may differ, and only by what stood between the pieces.
        assert not c["keep_separator"], c
        if c["strategy"] == "langchain-character":
            sep = c.get("separator", "\n\n")
            seps = [sep]
        else:
            seps = LANGUAGES[c["language"]] if "language" in c else (c.get("separators") or ["\n\n", "\n", " ", ""])
        assert any(
            s and rejoined(mine, theirs, s, s if regex else re.escape(s), c["strip_whitespace"]) for s in seps
        ), (c, mine, theirs)
        rejoins += 1
    return rejoins


def test_grid_sizes_are_recorded(record_property):
    """The grids' sizes go into pytest's report (the junit XML's properties), not into the dots."""
    sizes = {
        "langchain-recursive": len(list(recursive_grid())) * len(TEXTS),
        "langchain-character": len(list(character_grid())) * len(TEXTS),
        "haystack": len(list(haystack_grid())) * len(TEXTS),
    }
    for name, n in sizes.items():
        record_property(f"conformance_grid_cases_{name}", n)
    assert all(n > 1000 for n in sizes.values())


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_langchain_recursive_matches_the_library(name):
    text = TEXTS[name]
    for _, c in recursive_grid():
        check_langchain(text, c)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_langchain_character_matches_the_library(name):
    text = TEXTS[name]
    for _, c in character_grid():
        check_langchain(text, c)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_haystack_matches_the_library(name):
    text = TEXTS[name]
    for label, c in haystack_grid():
        lib = haystack_chunks(text, c)
        ours, extents, unit = ragsim_split(text, c)
        assert ours == lib, c
        assert all(text[a:b] == t for (a, b, _), t in zip(extents, ours))


def test_language_presets_are_langchains():
    for name, separators in LANGUAGES.items():
        assert list(separators) == RecursiveCharacterTextSplitter.get_separators_for_language(Language(name)), name
    shipped = set()
    for language in Language:  # every preset LangChain ships is offered (Perl is listed but not implemented)
        try:
            RecursiveCharacterTextSplitter.get_separators_for_language(language)
        except ValueError:
            continue
        shipped.add(language.value)
    assert set(LANGUAGES) == shipped


VB6 = """Option Explicit
Private Type Point
    X As Long
    Y As Long
End Type

Public Sub Main()
    Dim i As Integer
    For i = 1 To 10
        Select   Case i
            Case 1
                Debug.Print "one"
            Case Else
                Debug.Print i
        End Select
    Next i
End Sub

Private Function Twice(ByVal n As Long) As Long
    Twice = n * 2
End Function

Public Property Get Name() As String
    Name = "ragsim"
End Property
"""


@pytest.mark.parametrize("language, text", [("visualbasic6", VB6 * 3), ("cobol", "IDENTIFICATION DIVISION.\n"
                                            "PROGRAM-ID. HELLO.\nPROCEDURE DIVISION.\n    DISPLAY 'HELLO'.\n"
                                            "    STOP RUN.\n" * 5), ("elixir", "defmodule M do\n  def f(x) do\n"
                                            "    x\n  end\nend\n" * 8)])
@pytest.mark.parametrize("size, overlap", [(40, 0), (120, 30), (400, 100)])
def test_a_language_preset_splits_as_langchain_does(language, text, size, overlap):
    theirs = RecursiveCharacterTextSplitter.from_language(Language(language), chunk_size=size,
                                                          chunk_overlap=overlap).split_text(text)
    resp = simulate(chunking_request(text, {"strategy": "langchain-recursive", "size": size, "overlap": overlap,
                                            "language": language}))
    assert [text[c["start"]:c["end"]] for c in resp["chunks"]] == theirs


# --- the cases the libraries' issue trackers complain about ----------------------------------------

def chunking_request(text: str, chunking: dict, **kw) -> dict:
    req = make_request(text, **kw)
    req["chunking"] = chunking
    return req


def test_asked_overlap_silently_zero_when_every_piece_is_longer():
    """Overlap is made of whole pieces: paragraphs longer than the overlap leave none at all."""
    text = "\n\n".join(TEXTS["repeated.txt"].split("\n\n")[1:4])  # three paragraphs of 120 characters
    c = {"strategy": "langchain-recursive", "size": 200, "overlap": 50, "separators": ["\n\n"]}
    lib = RecursiveCharacterTextSplitter(separators=["\n\n"], chunk_size=200, chunk_overlap=50).split_text(text)
    r = simulate(chunking_request(text, c))
    ours = [text[ch["start"]:ch["end"]] for ch in r["chunks"]]
    assert ours == lib
    assert r["stats"]["overlap_max"] == 0
    assert r["stats"]["boundaries_without_overlap"] == len(lib) - 1 > 0
    # ... and the library agrees: no chunk starts with the end of the one before it.
    assert not any(b[:1] and a.endswith(b[:10]) for a, b in zip(lib, lib[1:]))


def test_oversized_chunk_when_a_piece_cannot_be_split():
    url = "https://example.org/" + "x" * 150
    text = f"See {url} for the details.\n\nThen more text follows here."
    c = {"strategy": "langchain-recursive", "size": 60, "overlap": 10, "separators": ["\n\n", "\n", " "]}
    lib = RecursiveCharacterTextSplitter(separators=["\n\n", "\n", " "], chunk_size=60, chunk_overlap=10).split_text(text)
    ours, extents, _ = ragsim_split(text, c)
    assert ours == lib
    assert max(e - s for s, e, _ in extents) > 60  # the URL alone, over size, as LangChain emits it


def test_repeated_passages_offsets_exact_where_add_start_index_is_wrong():
    """LangChain recovers start_index with str.find after splitting; repeated text fools it. Ours are computed."""
    # Repeated short paragraphs (a log, a changelog, boilerplate): the same chunk text occurs many times.
    text = "Snapshot kept.\n\n" * 5 + "Snapshot kept longer than the rest.\n\n" + "Snapshot kept.\n\n" * 5
    wrong = 0
    checked = 0
    for size, overlap in [(s, o) for s in range(20, 80, 3) for o in (0, 5, 10, 15) if o <= s]:
        splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, add_start_index=True)
        docs = splitter.create_documents([text])
        c = {"strategy": "langchain-recursive", "size": size, "overlap": overlap}
        ours, extents, _ = ragsim_split(text, c)
        assert ours == [d.page_content for d in docs]
        for (start, end, _), d in zip(extents, docs):
            checked += 1
            assert text[start:end] == d.page_content
            if d.metadata["start_index"] != start:
                wrong += 1
                # LangChain points at an earlier copy of the same words.
                assert d.metadata["start_index"] < start
                assert text[d.metadata["start_index"]:].startswith(d.page_content)
    assert wrong > 0 and checked > 100


# --- generated text: the libraries and ragsim on whatever Hypothesis finds ----------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

GEN_TEXT = st.lists(st.sampled_from(
    ["word", "Dr.", "3.14", "日本", "🙂", "é", ".", ". ", "#", "\n#", "```\n", "def ", "\nclass ", "<p", "<div>",
     " ", "  ", "\t", "\n", "\n\n", "\n\n\n\n", "\r\n", "\f", "\u00a0"]
), max_size=80).map("".join)


@settings(deadline=None, max_examples=300)
@given(text=GEN_TEXT, size=st.integers(1, 40), data=st.data())
def test_generated_text_langchain(text, size, data):
    c = {"strategy": data.draw(st.sampled_from(["langchain-recursive", "langchain-character"])), "size": size,
         "overlap": data.draw(st.integers(0, size)), "keep_separator": data.draw(st.sampled_from(KEEPS)),
         "strip_whitespace": data.draw(st.booleans())}
    if c["strategy"] == "langchain-recursive":
        c.update(data.draw(st.sampled_from([s for _, s in RECURSIVE_SEPARATORS])))
    else:
        c.update(data.draw(st.sampled_from([s for _, s in CHARACTER_SEPARATORS])))
    check_langchain(text, c)


@settings(deadline=None, max_examples=300)
@given(text=GEN_TEXT, length=st.integers(1, 12), data=st.data())
def test_generated_text_haystack(text, length, data):
    c = {"strategy": "haystack", "split_by": data.draw(st.sampled_from(["word", "passage", "line", "period", "page"])),
         "size": length, "overlap": data.draw(st.integers(0, length - 1)),
         "split_threshold": data.draw(st.integers(0, 14))}
    ours, extents, _ = ragsim_split(text, c)
    assert ours == haystack_chunks(text, c)
