"""A small rule-based English sentence segmenter that reports offsets (for `sentences` packing).

Rules, in the order they are applied:

1. A blank line (a newline, optional spaces, another newline) always ends a sentence, so headings,
   list items and code lines without a full stop are not glued onto the next paragraph.
2. A candidate end is a run of terminators (`.`, `!`, `?`, `…`), then any closing quotes and
   brackets (`"`, `'`, `”`, `’`, `»`, `)`, `]`, `}`), then whitespace. The sentence ends after the
   closers: `He said "Stop." Then` splits after the quote. A period with no whitespace after it is
   never an end, so decimals (`3.14`), versions (`v2.0.1`), URLs and `e.g.,` stay whole.
3. The candidate is not an end when the word before the terminator is
   - a title or Latin abbreviation that is always followed by more of the sentence
     (`Dr.`, `Mr.`, `e.g.`, `i.e.`, `cf.`, `vs.`, `approx.` ... see `NEVER_FINAL`), or
   - a single capital letter or a run of single letters with dots (initials `J. R. R. Tolkien`,
     `U.S.`, `a.m.`), or
   - followed by a word that starts with a lower-case letter (`etc. and`, `"Why?" he asked`),
     which also covers abbreviations such as `etc.`, `Inc.`, `No.` in mid-sentence.
   - `No.`, `Art.` or `Nr.` followed by a digit (`Harrow Lock No. 3`).
   An abbreviation that may end a sentence (`etc.`, `Inc.`) ends it when a capital follows.
4. Sentences are trimmed of surrounding whitespace; text holding no sentence (only whitespace)
   yields none.

Known limits: `U.S.` at the very end of a sentence does not end it; a sentence that starts with a
lower-case letter (`iPhone sales rose.`) is joined to the one before it.
"""

import re

# Words before a period that never end a sentence (compared lower-case, without the final period).
NEVER_FINAL = frozenset(
    # titles and honorifics
    "mr mrs ms mx dr prof sr jr st rev gen col lt sgt capt cmdr gov sen rep hon fr mt ft"
    # Latin and scholarly abbreviations that always introduce more text
    " e.g eg i.e ie cf vs viz al approx ca fig figs eq eqs ch sec vol pp p ed eds op"
    # months and weekdays before a date
    " jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun".split()
)

# Words before a period that introduce a number ("No. 3"): not an end when a digit follows.
BEFORE_NUMBER = frozenset("no nos art arts nr".split())

_TERMINATORS = ".!?…"
_CLOSERS = "\"'”’»)]}"
_CANDIDATE = re.compile(r"[.!?…]+[\"'”’»)\]}]*(?=\s|$)|\n[^\S\n]*\n")
_INITIALS = re.compile(r"(?:[^\W\d_]\.)*[^\W\d_]")  # "J", "U.S", "a.m" (single letters, dots between)
_OPENERS = "\"'“‘«([{"


def _word_before(text: str, end: int) -> str:
    """The whitespace-delimited word ending at `end`, without leading opening quotes or brackets."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:end].lstrip(_OPENERS)


def _next_char(text: str, pos: int) -> str:
    """The first character of the next word after `pos` (past whitespace and opening quotes)."""
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    while pos < n and text[pos] in _OPENERS:
        pos += 1
    return text[pos] if pos < n else ""


def _is_end(text: str, m: re.Match) -> bool:
    if m.group()[0] == "\n":
        return True  # rule 1: blank line
    nxt = _next_char(text, m.end())
    if nxt == "":
        return True  # end of text
    if nxt.islower():
        return False  # rule 3c
    run = m.group().rstrip(_CLOSERS)
    if run == ".":  # a single period: look at the word it ends
        word = _word_before(text, m.start())
        if word.lower() in NEVER_FINAL or _INITIALS.fullmatch(word):
            return False
        if nxt.isdigit() and word.lower() in BEFORE_NUMBER:
            return False  # rule 3d: "Lock No. 3", "Art. 12"
    return True


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence extents `[start, end)` in order, trimmed of surrounding whitespace."""
    out = []
    start = 0
    n = len(text)
    for m in _CANDIDATE.finditer(text):
        if not _is_end(text, m):
            continue
        end = m.end() if m.group()[0] != "\n" else m.start()
        _append(text, start, end, out)
        start = m.end()
    _append(text, start, n, out)
    return out


def _append(text: str, start: int, end: int, out: list) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))
