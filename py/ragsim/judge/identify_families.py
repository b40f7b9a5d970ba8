"""The splitters `identify` searches, each with its other fields fixed, the unit its size is
counted in, and the settings people most often leave or pick (tried first)."""

from typing import NamedTuple

from ragsim import split as splitters

TOKENIZERS = ("cl100k_base", "o200k_base")

# The settings people leave as they are (the libraries' defaults) or pick from tutorials, tried first.
LC_SIZES = (4000, 1000, 2000, 1500, 800, 500, 512, 256, 300, 200, 100)
LC_OVERLAPS = (200, 100, 50, 0, 20, 150)
TOKEN_SIZES = (512, 256, 1024, 1000, 500, 128, 100, 4000)
TOKEN_OVERLAPS = (0, 50, 20, 100, 200, 64, 32)
LI_SIZES = (1024, 512, 256, 128)
LI_OVERLAPS = (200, 20, 50, 0, 100)
WINDOW_SIZES = (200, 100, 500, 1000, 50)
WINDOW_OVERLAPS = (0, 20, 50, 10)


class Family(NamedTuple):
    """One splitter with its other fields fixed: searched over `size` and `overlap` in `unit`."""

    strategy: str
    fixed: dict
    unit: object  # "chars", "words", ("tokens" or "pieces", encoding) or ("haystack", delimiter)
    exact: bool  # every chunk but the last holds exactly `size` units (windows): a narrow search
    sizes: tuple = ()
    overlaps: tuple = ()


def families(text: str, tokenizers: tuple) -> list[Family]:
    """The splitters searched, the commonest first (the first that reproduces every chunk wins)."""
    out = [Family("langchain-recursive", {}, "chars", False, LC_SIZES, LC_OVERLAPS)]
    if "cl100k_base" in tokenizers:
        out.append(Family("llamaindex-sentence", {}, ("tokens", "cl100k_base"), False, LI_SIZES, LI_OVERLAPS))
    for sep in ("\n\n", "\n", " "):
        out.append(Family("langchain-character", {"separator": sep}, "chars", False, LC_SIZES, LC_OVERLAPS))
    out.append(Family("window", {"unit": "chars"}, "chars", True, WINDOW_SIZES, WINDOW_OVERLAPS))
    out.append(Family("window", {"unit": "words"}, "words", True, WINDOW_SIZES, WINDOW_OVERLAPS))
    for split_by in ("word", "passage", "line", "period", "page"):
        delimiter = splitters.haystack.SPLIT_BY[split_by][0]
        if split_by in ("word", "passage") or delimiter in text:
            out.append(Family("haystack", {"split_by": split_by}, ("haystack", delimiter), True, (200,), (0,)))
    out.append(Family("sentences", {"unit": "words"}, "words", False, WINDOW_SIZES, WINDOW_OVERLAPS))
    out.append(Family("sentences", {"unit": "chars"}, "chars", False, LC_SIZES, LC_OVERLAPS))
    for name in tokenizers:
        unit = ("tokens", name)
        out.append(Family("langchain-recursive", {"length": "tokens", "tokenizer": name}, unit, False,
                          TOKEN_SIZES, TOKEN_OVERLAPS))
        out.append(Family("langchain-token", {"tokenizer": name}, unit, True, TOKEN_SIZES, TOKEN_OVERLAPS))
        out.append(Family("window", {"unit": "tokens", "tokenizer": name}, unit, True, TOKEN_SIZES, TOKEN_OVERLAPS))
    if "cl100k_base" in tokenizers:
        # TokenTextSplitter counts the tokens of the words one by one: that is its measure
        out.append(Family("llamaindex-token", {}, ("pieces", "cl100k_base"), False, LI_SIZES, (20, 0, 50, 200)))
        unit = ("tokens", "cl100k_base")
        out.append(Family("sentences", {"unit": "tokens"}, unit, False, TOKEN_SIZES, TOKEN_OVERLAPS))
    return out
