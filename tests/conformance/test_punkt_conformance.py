"""ragsim.punkt against nltk's untrained PunktSentenceTokenizer (nltk 3.10.4): the same sentence spans.

Texts: windows over the real conformance texts, seeded random strings over an alphabet of the
characters Punkt decides on (marks, quotes, brackets, initials, numbers, ellipses, the whitespace
where `regex` and `re` disagree), Unicode-heavy prose, and Hypothesis-generated strings. Also checks
that the committed character classes are those of the installed `regex`.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from nltk.tokenize import PunktSentenceTokenizer

from corpus import TEXTS
import importlib.util
import pathlib

from ragsim.text import punkt_data, punkt

_spec = importlib.util.spec_from_file_location(
    "punkt_gen", pathlib.Path(__file__).resolve().parents[2] / "tools" / "punkt_gen.py")
punkt_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(punkt_gen)

NLTK = PunktSentenceTokenizer()

# What Punkt's decisions turn on, with a few words to carry them.
PIECES = [
    "a", "A", "word", "Word", "x", " ", " ", "  ", "\n", "\n\n", "\t", "\r\n",
    ".", ".", "?", "!", "...", ". . .", "--", "-", ",", ";", ":",
    '"', "'", "(", ")", "[", "]", "{", "}", "\u2018", "\u2019", "\u201c", "\u201d", "\xab", "\xbb",
    "J.", "Mr.", "U.S.", "3.", "12.5", "-4.", "1,000.", "##number##.",
    "\x1c", "\x85", "\xa0", "\u3000", "\u2028",  # whitespace to one engine and not the other
    "e\u0301", "\u00b2", "\u24b6", "\u0663", "\u0130", "\xdf", "\u01c5",  # marks, No, So letters, digits, cases
    "\u65e5\u672c", "\u3002", "\U0001f44d", "\u05e9\u05dc\u05d5\u05dd",  # CJK, emoji, Hebrew
    "`", "&", "#", "*", "@", "%",
]

UNICODE_PROSE = (
    "Dr. M\u00fcller kam um 3. Mai an. \u201eGut!\u201c, sagte er. Danach\u2026 nichts.\n\n"
    "\u65e5\u672c\u8a9e\u306e\u6587\u3002\u6b21\u306e\u6587\u3002 English after. Fine.\n"
    "\u0645\u0631\u062d\u0628\u0627. \u05e9\u05dc\u05d5\u05dd. Emoji \U0001f600 here. \U0001f44d\U0001f3fd Done?\n"
    "Cafe\u0301 o\u0308. Na\u0303o. \u0130stanbul. \u03a3\u039f\u03a6\u039f\u03a3. e.g. this. i.e. that. "
    "(Quoted.) \u00abNon.\u00bb Oui. 'Single.' Next \u2014 and\u2009thin space. A. B. Smith. 1. 2. 3. List."
)


def texts_from_windows() -> list[str]:
    """Windows of several lengths over every conformance text."""
    out = []
    for text in (*TEXTS.values(), UNICODE_PROSE):
        for width in (80, 400, 3000):
            out += [text[i:i + width] for i in range(0, max(1, len(text) - width // 2), width // 4 + 7)]
    return out


def random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def check(text: str) -> None:
    assert punkt.span_tokenize(text) == list(NLTK.span_tokenize(text)), repr(text)


def test_real_texts_windows():
    texts = texts_from_windows()
    assert len(texts) > 1400
    for text in texts:
        check(text)


def test_whole_texts():
    for text in (*TEXTS.values(), UNICODE_PROSE):
        check(text)


@pytest.mark.parametrize("seed", range(2))
def test_random_punctuation_texts(seed):
    for text in random_texts(2000, seed):
        check(text)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=30).map("".join))
def test_hypothesis_pieces(text):
    check(text)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=60))
def test_hypothesis_any_unicode(text):
    check(text)


@pytest.mark.slow
def test_character_classes_are_the_installed_regex():
    for name, ranges in punkt_gen.classes().items():
        body = " ".join(f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in ranges)
        assert body == punkt_data.RANGES[name], name


def test_the_cases_that_need_regex_semantics():
    # \x1c is whitespace to Python's re, not to regex: nltk keeps "a.\x1cB" one sentence.
    check("One a.\x1cB two. Three")
    assert len(punkt.span_tokenize("One a.\x1cB two. Three")) == 2
    # A combining mark is a word character to regex (so "\u0301." is an initial, not a break before
    # a capital); a superscript two is one to re only (so "\u00b2." is a break).
    check("Name \u0301. Smith went. Home")
    assert len(punkt.span_tokenize("Name \u0301. Smith went. Home")) == 2
    check("Name \u00b2. Smith went. Home")
    assert len(punkt.span_tokenize("Name \u00b2. Smith went. Home")) == 3
