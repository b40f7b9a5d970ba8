"""The fact rule as it stood before it was measured against labelled facts (SPEC section 4 of that
time): the baseline `facts_eval.py` prints beside today's finder. Kept verbatim (its Fact record is
today's); not used by ragsim."""

import re
from ragsim.judge.facts import Fact  # the same record as today's finder
from ragsim.text.sentences import split_sentences

# Capitalised words that usually open a sentence rather than belong to a name.
SENTENCE_OPENERS = frozenset(
    # articles, demonstratives and pronouns
    "the a an this that these those its it their our his her each every both all some most many"
    " such another one two three"
    # prepositions and conjunctions
    " in on at by for from with within without into onto after before during since until while when"
    " where if as at because although though but and or so yet under over between beyond near along"
    " across through behind below above around toward towards".split()
)
PARTICLES = frozenset("of de del la le von van der du".split())

# Units a value may carry, longest first within a group so "km/h" wins over "km".
UNITS = (
    # length, area, volume
    "km/h", "km²", "km2", "km", "cm", "mm", "m²", "m³", "m", "metres", "meters", "kilometres",
    "kilometers", "miles", "mi", "ft", "feet", "AU", "ha", "hectares", "litres", "liters", "L",
    # mass, force, pressure
    "kg", "g", "t", "tonnes", "tons", "kN", "MN", "bar", "psi", "kPa", "MPa", "Pa",
    # energy and power
    "GWh", "MWh", "kWh", "GW", "MW", "kW", "W", "kV", "V", "A", "Hz", "kHz", "MHz", "GHz",
    # time and rate
    "years", "year", "months", "days", "day", "hours", "hour", "h", "minutes", "min", "seconds", "s",
    "ms", "m/s", "rpm",
    # temperature
    "°C", "°F", "K", "degrees",
    # counts and money
    "million", "billion", "thousand", "percent", "people", "crew", "passengers", "berths", "units",
    "households", "homes", "workers", "staff", "beds", "seats", "ships", "vessels", "satellites",
)
_UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_NUMBER = re.compile(
    r"(?<![\w.,])[$€£¥]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])"  # 42,000 or 1,250.5
    r"|(?<![\w.,])[$€£¥]?\d+(?:\.\d+)?(?![\w.]\d)"  # 11.5 or 2019
)
_UNIT_AFTER = re.compile(r"(?:%|\s?(?:" + _UNIT + r")(?![\w]))")
_WORD = re.compile(r"[^\W_][\w'’]*(?:-[^\W_][\w'’]*)*")


def _capitalised(word: str) -> bool:
    return word[0].isupper() and not (len(word) == 1 and word in "AI")


def _names(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """Name runs in the sentence `text[s:e]`."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, s, e)]
    names = []
    i = 0
    while i < len(words):
        a, b = words[i]
        if not _capitalised(text[a:b]):
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1][1] : words[j][0]]
            w = text[words[j][0] : words[j][1]]
            if gap not in (" ", "-"):
                break
            if _capitalised(w):
                run.append(j)
                j += 1
            elif (w in PARTICLES or w.isdigit()) and j + 1 < len(words) and _capitalised(text[words[j + 1][0] : words[j + 1][1]]) \
                    and text[words[j][1] : words[j + 1][0]] == " ":
                j += 1  # a particle or a number counts only between two capitalised words
            else:
                break
        if run[0] == 0 and text[words[0][0] : words[0][1]].lower() in SENTENCE_OPENERS:
            run = run[1:]
        if len(run) >= 2:
            names.append((words[run[0]][0], words[run[-1]][1]))
        i = j
    return names


def _values(text: str, s: int, e: int, names) -> list[tuple[int, int]]:
    out = []
    for m in _NUMBER.finditer(text, s, e):
        a, b = m.span()
        if any(na <= a < nb for na, nb in names):
            continue  # a number inside a name ("Pier 7 Crane") belongs to the name
        after_m = _UNIT_AFTER.match(text, b, e)
        if after_m:
            b = after_m.end()
        out.append((a, b))
    return out


def detect(text: str) -> list[Fact]:
    """Every name-value fact of a document, in order of the value's position."""
    facts = []
    for s, e in split_sentences(text):
        names = _names(text, s, e)
        if not names:
            continue
        for v in _values(text, s, e, names):
            before = [n for n in names if n[1] <= v[0]]
            after = [n for n in names if n[0] >= v[1]]
            # a name with no comma between it and the value, else the sentence's first name (the
            # others sit in a clause set off by commas), else the first name after the value
            clear = [n for n in before if "," not in text[n[1] : v[0]]]
            name = clear[-1] if clear else (before[0] if before else (after[0] if after else None))
            if name is not None:
                facts.append(Fact(name, v, (s, e)))
    return facts
