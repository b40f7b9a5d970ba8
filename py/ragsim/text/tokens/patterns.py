"""The pretokenizer patterns of cl100k_base and o200k_base, rewritten for Python's `re`.

tiktoken (tiktoken_ext/openai_public.py) writes them for Rust's `fancy-regex`. Python 3.11's `re`
has the possessive quantifiers and lookaheads they use; what it lacks or reads differently is:

- `\\p{L}`, `\\p{N}`, `\\p{Lu}`, ...: the classes come from the committed ranges in
  `_unicode_data.py` (the Unicode version of tiktoken's regex-syntax), never from the running
  interpreter's `unicodedata`, which is Unicode 14 in CPython 3.11 and 16 in Pyodide's 3.14;
- `\\s`: Rust means the Unicode White_Space property; Python's `\\s` is `str.isspace()`, which also
  takes U+001C..U+001F. Written out as White_Space (stable since Unicode 6.3);
- `$`: Rust means the end of the text; Python's also matches before a final newline, so `\\Z`;
- `(?i:'s|...)`: Rust folds `s` to `S` and `ſ` (U+017F); Python's IGNORECASE does the same.

Speed: `re` tests a character against a class's ranges above U+FFFF one by one, and the full
classes have hundreds of them. So the patterns run on a *shadow* of the text instead: every
non-ASCII character is replaced by one representative of its class (a letter of the same general
category, a mark, a number, a space, or "other"), ASCII and `ſ` stay themselves. The pattern only
ever asks which class a character is in (or whether it is one of a few ASCII characters), so the
shadow splits into pieces of the same lengths as the text would, and the pieces are cut from the
text by those lengths.
"""

import re
from bisect import bisect_right

from ragsim.text.tokens.unicode_data import RANGES, UNICODE_VERSION

# Unicode White_Space (PropList.txt) beyond ASCII: NEL, no-break space, ogham space mark, en quad ..
# hair space, line and paragraph separators, narrow no-break space, medium math space, ideographic space.
WHITE_SPACE_NON_ASCII = (0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)

# One representative per class, each outside ASCII. ſ (U+017F) stands for itself: `(?i:'s)` takes it.
REPRESENTATIVE = {
    "Lu": "\u00c0",  # À
    "Ll": "\u00e0",  # à
    "Lt": "\u01c5",  # ǅ
    "Lm": "\u02b0",  # ʰ
    "Lo": "\u00aa",  # ª
    "M": "\u0300",   # combining grave accent
    "N": "\u00b2",   # superscript two
    "WS": "\u00a0",  # no-break space
    "other": "\u00a7",  # §
}
LONG_S = "\u017f"

# The classes over the shadow alphabet: ASCII members plus the representatives.
LU = "A-Z\u00c0"
LL = "a-z\u00e0" + LONG_S
LT, LM, LO, M = "\u01c5", "\u02b0", "\u00aa", "\u0300"
LETTER = LU + LL + LT + LM + LO
NUMBER = "0-9\u00b2"
WS = "\\t\\n\\x0b\\x0c\\r \u00a0"


def _table() -> tuple[list[int], list[str]]:
    """Sorted range starts and, for each, the representative of the range (or of "other")."""
    ranges = []
    for group, chunks in RANGES.items():
        for item in "".join(chunks).split():
            lo, _, hi = item.partition("-")
            ranges.append((int(lo, 16), int(hi or lo, 16), REPRESENTATIVE[group]))
    ranges += [(cp, cp, REPRESENTATIVE["WS"]) for cp in WHITE_SPACE_NON_ASCII]
    ranges.sort()
    starts, reps, last_end = [0], [REPRESENTATIVE["other"]], -1
    for lo, hi, rep in ranges:
        if lo <= last_end:
            raise ValueError(f"overlapping class ranges at U+{lo:04X}")  # a category is one class
        starts += [lo, hi + 1]
        reps += [rep, REPRESENTATIVE["other"]]
        last_end = hi
    return starts, reps


_STARTS, _REPS = _table()


class _Shadow(dict):
    """code point -> its representative, filled on first sight (str.translate's mapping)."""

    def __missing__(self, cp: int) -> str:
        rep = _REPS[bisect_right(_STARTS, cp) - 1]
        self[cp] = rep
        return rep


SHADOW = _Shadow({cp: chr(cp) for cp in range(128)})
SHADOW[ord(LONG_S)] = LONG_S


def representative(ch: str) -> str:
    """The character the patterns see in place of `ch`."""
    return SHADOW[ord(ch)]


def shadow(text: str) -> str:
    """The text the patterns run on: ASCII text as it is, other characters by representative."""
    return text if text.isascii() else text.translate(SHADOW)


def _patterns() -> dict[str, str]:
    L, N, S, not_s = f"[{LETTER}]", f"[{NUMBER}]", f"[{WS}]", f"[^{WS}]"
    cl100k = "|".join([
        r"'(?i:[sdmt]|ll|ve|re)",
        f"[^\\r\\n{LETTER}{NUMBER}]?+{L}++",
        f"{N}{{1,3}}+",
        f" ?[^{WS}{LETTER}{NUMBER}]++[\\r\\n]*+",
        f"{S}++\\Z",
        f"{S}*[\\r\\n]",
        f"{S}+(?!{not_s})",
        S,
    ])
    upper = f"[{LU}{LT}{LM}{LO}{M}]"
    lower = f"[{LL}{LM}{LO}{M}]"
    contraction = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    o200k = "|".join([
        f"[^\\r\\n{LETTER}{NUMBER}]?{upper}*{lower}+{contraction}",
        f"[^\\r\\n{LETTER}{NUMBER}]?{upper}+{lower}*{contraction}",
        f"{N}{{1,3}}",
        f" ?[^{WS}{LETTER}{NUMBER}]+[\\r\\n/]*",
        f"{S}*[\\r\\n]+",
        f"{S}+(?!{not_s})",
        f"{S}+",
    ])
    return {"cl100k_base": cl100k, "o200k_base": o200k}


PATTERNS = _patterns()


def compile_pattern(name: str) -> re.Pattern:
    """The compiled pretokenizer of encoding `name`, to be run on `shadow(text)`."""
    return re.compile(PATTERNS[name])


__all__ = ["PATTERNS", "REPRESENTATIVE", "UNICODE_VERSION", "compile_pattern", "representative", "shadow"]
