"""The LlamaIndex splitters on small hand-checked texts, their invariants, and their refusals.

Hand-checked cases count "tokens" as characters (`len`), so every number can be checked by eye; the
refusals go through `splitters.split` as a request reaches it.
"""

import pytest
from hypothesis import given, settings, strategies as st

from ragsim import split as splitters
from ragsim.errors import RequestError
from ragsim.text.index import DocIndex
from ragsim.split import llamaindex_markdown as md, llamaindex_sentence as sentence, llamaindex_token as token


def words(text: str) -> int:
    return len(text.split())


# --- SentenceSplitter -------------------------------------------------------------------------------

def test_sentences_packed_while_they_fit():
    # Pieces "One two. " (9), "Three four. " (12), "Five." (5): none fits beside the next at 12.
    assert sentence.split_text("One two. Three four. Five.", len, 12, 0) == [(0, 8, 9), (9, 20, 12), (21, 26, 5)]


def test_overlap_is_trailing_pieces_within_the_overlap():
    # Five 4-character sentences fill 20; the next chunk carries "Ee. " (4 <= 6), not "Dd. Ee. " (8).
    assert sentence.split_text("Aa. Bb. Cc. Dd. Ee. Ff.", len, 20, 6) == [(0, 19, 20), (16, 23, 7)]


def test_carried_overlap_dropped_when_the_next_piece_does_not_fit_beside_it():
    # "One two. " (9) is carried (9 <= 12) but "Three four. " (12) does not fit beside it in 20.
    assert sentence.split_text("One two. Three four. Five.", len, 20, 12) == [(0, 8, 9), (9, 26, 17)]


def test_paragraph_separator_comes_first_and_stays_with_the_next_paragraph():
    text = "First para.\n\n\nSecond para. Two."
    got = sentence.split_text(text, len, 20, 0)
    # "First para." (11) then "\n\n\nSecond para. Two." (20): the separator's piece starts the second.
    assert [text[a:b] for a, b, _ in got] == ["First para.", "Second para. Two."]
    assert [u for _, _, u in got] == [11, 20]


def test_without_sentences_falls_back_to_the_regex_then_words_then_characters():
    text = "alpha, beta gamma"
    assert [text[a:b] for a, b, _ in sentence.split_text(text, len, 7, 0)] == ["alpha,", "beta", "gamma"]
    text = "abcdefgh"
    assert [text[a:b] for a, b, _ in sentence.split_text(text, len, 3, 0)] == ["abc", "def", "gh"]


def test_empty_text_is_one_empty_chunk_as_llamaindex_returns():
    assert sentence.split_text("", len) == [(0, 0, 0)]
    assert token.split_text("", len) == [(0, 0, 0)]


def test_a_piece_that_cannot_fit_is_refused():
    with pytest.raises(Exception) as e:
        sentence.split_text("ab", lambda t: 5 * len(t), 3, 0)
    assert type(e.value).__name__ == "SingleTokenTooLarge"


def test_regex_that_skips_text_joins_pieces_that_are_not_neighbours():
    # The documented divergence: findall(r"\w+") drops the commas and spaces; LlamaIndex's chunk is
    # "ab" + "cd" = "abcd", ragsim's extent spans "ab, cd" (the text between the pieces included).
    import re

    got = sentence.split_text("ab, cd, ef", len, 4, 0, regex=re.compile(r"\w+"))
    assert [(a, b) for a, b, _ in got] == [(0, 6), (8, 10)]
    assert [u for _, _, u in got] == [4, 2]  # LlamaIndex's own counts: "abcd", "ef"


# --- TokenTextSplitter ------------------------------------------------------------------------------

def test_token_splitter_pops_pieces_until_the_overlap_fits():
    # Pieces "aa", " bb", " cc", " dd" (the separator starts the piece after it).
    assert token.split_text("aa bb cc dd", len, 8, 3) == [(0, 8, 8), (6, 11, 6)]
    assert token.split_text("aa bb cc dd", len, 5, 2) == [(0, 5, 5), (6, 8, 3), (9, 11, 3)]


def test_token_splitter_backup_separator_then_characters():
    # No space to cut at: the backup "\n" cuts "aaa", "\nbbb", "\nccc" (3, 4, 4), packed up to 8.
    assert token.split_text("aaa\nbbb\nccc", len, 8, 0) == [(0, 7, 7), (8, 11, 4)]
    text = "abcdefg"
    assert [text[a:b] for a, b, _ in token.split_text(text, len, 3, 0, backup_separators=())] == ["abc", "def", "g"]


def test_token_splitter_keeps_an_oversized_character():
    assert token.split_text("ab", lambda t: 5 * len(t), 3, 0) == [(0, 1, 5), (1, 2, 5)]


# --- MarkdownNodeParser -----------------------------------------------------------------------------

def test_markdown_sections_skip_fenced_headings_and_blank_sections():
    text = "Intro\n\n# One\ntext\n```\n# not a heading\n```\n## Two\n\n   \n# Three"
    assert md.sections(text) == [(0, 5), (7, 41), (42, 48), (54, 61)]
    assert text[42:48] == "## Two"


def test_markdown_needs_a_space_after_the_hashes():
    text = "#hashtag\n# Real\nx"
    assert [text[a:b] for a, b in md.sections(text)] == ["#hashtag", "# Real\nx"]


# --- invariants ---------------------------------------------------------------------------------------

TEXT = st.lists(st.sampled_from(["Aa", "bb", " ", "  ", ". ", "! ", ", ", "\n", "\n\n\n", "J. ", "\t", "x"]),
                max_size=40).map("".join)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(1, 15), st.integers(0, 15), st.sampled_from([len, words]))
def test_extents_are_stripped_ordered_within_size_and_cover_the_text(text, size, overlap, count):
    overlap = min(overlap, size)
    for got in (sentence.split_text(text, count, size, overlap), token.split_text(text, count, size, overlap)):
        if not text:
            assert got == [(0, 0, 0)]
            continue
        covered = set()
        for (a, b, units), nxt in zip(got, got[1:] + [None]):
            chunk = text[a:b]
            assert chunk and chunk == chunk.strip()
            assert units <= size
            if nxt is not None:
                assert nxt[0] >= a and nxt[1] >= b  # a stripped tail may end where the chunk before did
            covered.update(range(a, b))
        assert all(i in covered for i, c in enumerate(text) if not c.isspace())


# --- refusals, as a request reaches them -----------------------------------------------------------------

def refusal(text: str, chunking: dict) -> RequestError:
    with pytest.raises(RequestError) as e:
        splitters.split(DocIndex.build(text), chunking)
    return e.value


@pytest.mark.parametrize("chunking, field", [
    ({"strategy": "llamaindex-sentence", "size": 10, "overlap": 11}, "chunking.overlap"),
    ({"strategy": "llamaindex-token", "size": 0}, "chunking.size"),
    ({"strategy": "llamaindex-sentence", "separator": ""}, "chunking.separator"),
    ({"strategy": "llamaindex-sentence", "paragraph_separator": ""}, "chunking.paragraph_separator"),
    ({"strategy": "llamaindex-sentence", "secondary_chunking_regex": "(unclosed"}, "chunking.secondary_chunking_regex"),
    ({"strategy": "llamaindex-sentence", "secondary_chunking_regex": "(a)|b"}, "chunking.secondary_chunking_regex"),
    ({"strategy": "llamaindex-token", "backup_separators": [""]}, "chunking.backup_separators"),
    ({"strategy": "llamaindex-token", "metadata": 5}, "chunking.metadata"),
    ({"strategy": "llamaindex-sentence", "tokenizer": "gpt2"}, "chunking.tokenizer"),
    ({"strategy": "llamaindex-token", "tokenizer": ["cl100k_base"]}, "chunking.tokenizer"),
    ({"strategy": "llamaindex-sentence", "secondary_chunking_regex": 3}, "chunking.secondary_chunking_regex"),
])
def test_bad_fields_are_named(chunking, field):
    assert refusal("Some text.", chunking).field == field


def test_metadata_longer_than_the_chunk_size_is_refused():
    e = refusal("Some text.", {"strategy": "llamaindex-sentence", "size": 5, "overlap": 0,
                                     "metadata": "file_path: /a/b/c/d/e/f.txt"})
    assert e.field == "chunking.metadata"
    assert "shorten chunking.metadata or raise chunking.size" in e.message


def test_a_character_over_the_size_is_refused_naming_the_size():
    # "\U0001f44d" is three cl100k_base tokens; LlamaIndex raises "Single token exceeded chunk size".
    e = refusal("a \U0001f44d b", {"strategy": "llamaindex-sentence", "size": 1, "overlap": 0})
    assert e.field == "chunking.size"
    assert "3 tokens" in e.message


def test_strategies_report_units_and_extents():
    text = "# Title\nOne sentence. Another one.\n\n# Next\nMore."
    s = splitters.split(DocIndex.build(text), {"strategy": "llamaindex-markdown"})
    assert s.unit == "chars" and [text[a:b] for a, b, _ in s.extents] == ["# Title\nOne sentence. Another one.", "# Next\nMore."]
    s = splitters.split(DocIndex.build(text), {"strategy": "llamaindex-sentence", "size": 8, "overlap": 0})
    assert s.unit == "tokens" and all(text[a:b].strip() == text[a:b] and u <= 8 for a, b, u in s.extents)


# --- any field value at all: an answer or a refusal naming a field, never a traceback ------------------

ANY_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 3000) | st.floats() | st.text(max_size=5),
                        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=2),
                        max_leaves=5)
FIELDS = ["size", "overlap", "separator", "paragraph_separator", "secondary_chunking_regex", "metadata",
          "backup_separators", "tokenizer"]
FIELD_VALUES = ANY_JSON | st.integers(1, 40) | st.sampled_from(["file_path: /a/b.txt", "", " ", "(x)", "[", r"\w+", "o200k_base"])


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from(list("ab .\n#`!?,;\u65e5\U0001f44d\t")), max_size=60),
       st.sampled_from(["llamaindex-sentence", "llamaindex-token", "llamaindex-markdown"]),
       st.dictionaries(st.sampled_from(FIELDS), FIELD_VALUES, max_size=4))
def test_any_field_value_is_answered_or_refused(text, strategy, fields):
    from ragsim.wire.api import simulate

    r = simulate({"documents": [{"id": "d", "title": "t", "text": text}], "query": "a",
                  "chunking": {"strategy": strategy, **fields}, "retrieval": {"k": 2}})
    if "error" in r:
        assert set(r["error"]) == {"field", "message"} and r["error"]["message"].endswith(".")
    else:
        assert all(text[c["start"]:c["end"]] == text[c["start"]:c["end"]].strip() for c in r["chunks"])
