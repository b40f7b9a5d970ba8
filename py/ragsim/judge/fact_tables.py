"""Facts of lines that are not prose (`judge.facts`): table rows, with cells split by `|` or written
as lines of "label number", and the lines of a reference list, which give none. The record of a
fact (`Fact`) lives here, so both modules share it."""

import re
from dataclasses import dataclass

from ragsim.judge.fact_words import LABEL_WORDS, MONTHS, NUMBER

SPLIT_LINES = re.compile(r"\n|\\n")
LINE_ENDS = frozenset(".!?:;|")
# two authors of a reference, "Foley M, Tilley L" or "Bozdech Z  Llinás M" (initials, not a roman numeral)
_AUTHOR = r"[A-Z][a-z'’-]+ (?!(?:I|II|III|IV|V|VI|VII|VIII|IX|X|XI|XII)\b)[A-Z]{1,3}\b"
_AUTHORS = re.compile(_AUTHOR + r"(?:,\s?|\s{1,2})" + _AUTHOR)
_REFERENCE_MARK = re.compile(r"\b(?:19|20)\d\d\b\W{0,3}\d+\s?(?:\(\d+\))?\s?[:;]?\s?\d+\s?[-–]\s?\d+")  # year, volume, pages
_DATE_CELL = re.compile(r"(?:[a-z]+\.?\s+\d{1,2},?\s+)?(?:19|20)\d\d|(?:[a-z ]+\s)?(?:19|20)\d\d", re.I)
_MONTH_IN = re.compile(r"\b(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_DIGIT = re.compile(r"\d")
TABLE_ROW = re.compile(r"\S[^\S\n]*\|[^\S\n]*\S")


@dataclass(frozen=True)
class Fact:
    name: tuple[int, int]
    value: tuple[int, int]
    sentence: tuple[int, int]

    @property
    def stretch(self) -> tuple[int, int]:
        """From the earlier start to the later end: what one chunk must hold to answer the fact."""
        return min(self.name[0], self.value[0]), max(self.name[1], self.value[1])


def table_facts(text: str, s: int, e: int, header: bool) -> list[Fact]:
    """A table row's facts: its label cell names each number cell."""
    cells = []
    pos = s
    for part in text[s:e].split("|"):
        a, b = pos, pos + len(part)
        pos = b + 1
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        cells.append((a, b))
    label = cells[0]
    label_text = text[label[0] : label[1]]
    if header or not re.search(r"[^\W\d_]{2}", label_text) or re.search(r"\bin (?:millions|thousands|billions)\b", label_text):
        return []
    years = _YEAR.findall(label_text)
    if len(years) >= 2 or (years and len(re.findall(r"[^\W\d_]{2,}", label_text)) <= 1):
        return []  # a row of years ("years 2012 2013 2016", "2007"): its cells are no one name's
    out = []
    for a, b in cells[1:]:
        cell = text[a:b]
        if len(cell) > 40:
            continue
        if re.fullmatch(r"(?:19|20)\d\d", cell):
            continue  # a year, or a dash written as its code point ("2014" for "—")
        if not re.fullmatch(r"[-–(]?\s?[$€£]?\s?\(?-?\d[\d,]*(?:\.\d+)?\)?\s?%?(?:\s?\(\s?-?\$?\s?[\d,.]+\s?%?\s?\))?", cell):
            continue
        out.append(Fact((label[0], label[1]), (a, b), (s, e)))
    return out


# a line of a table written without rules: a label, then one number ("Hall 's carbines 267")
_PLAIN_ROW = re.compile(r"[^\S\n]*(?P<label>[^\s\d][^\n]*?)[^\S\n]+(?P<num>" + NUMBER + r")[^\S\n]*")
PLAIN_ROW_CHARS = 80  # a longer line is prose
PLAIN_ROWS = 3  # consecutive lines at least, so a wrapped line that happens to end on a number is no row


def plain_rows(text: str) -> dict:
    """The rows of tables written as lines of "label number", by where each line starts: each row's
    label and number, for runs of `PLAIN_ROWS` such lines or more."""
    rows, run = {}, []
    for ls, le in physical_lines(text):
        m = _PLAIN_ROW.fullmatch(text, ls, le) if le - ls <= PLAIN_ROW_CHARS else None
        if m and not LINE_ENDS.intersection(m.group("label")[-1:]):
            run.append((ls, m.span("label"), m.span("num")))
            continue
        if len(run) >= PLAIN_ROWS:
            rows.update((r[0], r[1:]) for r in run)
        run = []
    if len(run) >= PLAIN_ROWS:
        rows.update((r[0], r[1:]) for r in run)
    return rows


def physical_lines(text: str):
    start = 0
    for m in SPLIT_LINES.finditer(text):
        yield start, m.start()
        start = m.end()
    yield start, len(text)


def plain_row_fact(text: str, ls: int, le: int, label: tuple[int, int], num: tuple[int, int]) -> list[Fact]:
    """A plain row's fact, unless its label is a year, a date, a figure or a reference, or its number
    a year."""
    label_text, num_text = text[label[0] : label[1]], text[num[0] : num[1]]
    last = label_text.split()[-1].lower().rstrip(".:")
    if not re.search(r"[^\W\d_]{2}", label_text) or _YEAR.search(label_text) or _MONTH_IN.search(label_text) or last in LABEL_WORDS \
            or re.fullmatch(r"(?:1[0-9]|20)\d\d", num_text) or reference_line(text, ls, le):
        return []
    return [Fact(label, num, (ls, le))]


def is_header_row(text: str, s: int, e: int) -> bool:
    """A table row of years, dates or column titles: no facts."""
    cells = [c.strip() for c in text[s:e].split("|")[1:]]
    if not cells or any(len(c) > 80 for c in cells):
        return True
    return all(_DATE_CELL.fullmatch(c) or _MONTH_IN.search(c) or not _DIGIT.search(c) for c in cells)


def reference_line(text: str, s: int, e: int) -> bool:
    """A line of a reference list: two authors written "Surname AB", or a year with volume and pages."""
    return bool(_AUTHORS.search(text, s, e) or _REFERENCE_MARK.search(text, s, e))
