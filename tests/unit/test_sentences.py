"""The rule-based sentence segmenter (ragsim.sentences) and sentence packing, on hand-checked cases."""

import pytest

from ragsim.text.index import DocIndex
from ragsim.text.sentences import split_sentences
from ragsim.split import split


def sentences(text):
    return [text[a:b] for a, b in split_sentences(text)]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        # titles, Latin abbreviations, decimals
        ("Dr. Hart measured 3.14 fathoms, i.e. too little. Then she left.",
         ["Dr. Hart measured 3.14 fathoms, i.e. too little.", "Then she left."]),
        ("Use a tool, e.g. a spade. It works.", ["Use a tool, e.g. a spade.", "It works."]),
        # initials and dotted abbreviations
        ("J. R. R. Tolkien wrote it. The U.S. Army read it.", ["J. R. R. Tolkien wrote it.", "The U.S. Army read it."]),
        # quotes and closing brackets after the terminator
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("(See above.) Next one.", ["(See above.)", "Next one."]),
        ("It ends [here.] And “curly.” Done.", ["It ends [here.]", "And “curly.”", "Done."]),
        # a lower-case word after the terminator continues the sentence
        ('"Why?" he asked. Fine.', ['"Why?" he asked.', "Fine."]),
        ("Apples, pears, etc. and more. Etc. Next.", ["Apples, pears, etc. and more.", "Etc.", "Next."]),
        ("Wait... what? Yes.", ["Wait... what?", "Yes."]),
        # a blank line always ends one (headings, list items); single newlines do not
        ("# Heading\n\nBody text\nwraps here. End.", ["# Heading", "Body text\nwraps here.", "End."]),
        ("Line one\r\n\r\nLine two", ["Line one", "Line two"]),
        # a period not followed by whitespace: versions, URLs
        ("See v2.0.1 at example.org/x.html now. Ok.", ["See v2.0.1 at example.org/x.html now.", "Ok."]),
        ("  \n\n  ", []),
        ("", []),
    ],
)
def test_segmenter(text, expected):
    assert sentences(text) == expected


def test_extents_are_trimmed_offsets():
    text = "  First one.   Second one.\n"
    assert split_sentences(text) == [(2, 12), (15, 26)]


def pack(text, **chunking):
    s = split(DocIndex.build(text), {"strategy": "sentences", **chunking})
    return [(text[e[0]:e[1]], e[2]) for e in s.extents], s


def test_packing_whole_sentences_with_sentence_overlap():
    text = "Ab bc cd. De ef fg. Gh hi ij. Jk kl lm."
    chunks, s = pack(text, unit="words", size=7, overlap=3)
    # 3 words a sentence: two fit in 7; the last sentence (3 words) is the overlap.
    assert chunks == [("Ab bc cd. De ef fg.", 6), ("De ef fg. Gh hi ij.", 6), ("Gh hi ij. Jk kl lm.", 6)]
    assert s.unit == "words" and s.units_in_document == 12


def test_overlap_is_zero_when_the_last_sentence_is_longer_than_it():
    chunks, _ = pack("Ab bc cd. De ef fg. Gh hi ij.", unit="words", size=7, overlap=2)
    assert chunks == [("Ab bc cd. De ef fg.", 6), ("Gh hi ij.", 3)]


def test_a_sentence_longer_than_size_falls_back_to_windows():
    text = "Short one. This sentence has exactly seven words in. End."
    chunks, _ = pack(text, unit="words", size=4, overlap=1)
    assert chunks == [
        ("Short one.", 2),
        ("This sentence has exactly", 4),
        ("exactly seven words in.", 4),
        ("End.", 1),
    ]


def test_chars_unit_counts_the_extent_with_its_inner_spaces():
    chunks, _ = pack("Ab. Cd. Ef.", unit="chars", size=7, overlap=0)
    assert chunks == [("Ab. Cd.", 7), ("Ef.", 3)]


def test_number_abbreviation_before_a_digit_does_not_end_a_sentence():
    from ragsim.text.sentences import split_sentences

    text = "Harrow Lock No. 3 lifts barges 11.5 metres. The answer was no. Then it was yes."
    got = [text[a:b] for a, b in split_sentences(text)]
    assert got == ["Harrow Lock No. 3 lifts barges 11.5 metres.", "The answer was no.", "Then it was yes."]
