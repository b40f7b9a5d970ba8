"""The words of a fact (SPEC section 4, `judge.facts`): the names and the quantities of one sentence.

- `names(text, s, e)`: proper names as written, runs of capitalised words and the like.
- `values(text, s, e)`: quantities, with dates, times, ordinals, identifiers, labels and scores left out.

Both are linear in the sentence: one pass of a regular expression, a bounded look around each match.
"""

import re

# Capitalised words that usually open a sentence rather than belong to a name.
SENTENCE_OPENERS = frozenset(
    # articles, demonstratives and pronouns
    "the a an this that these those its it their our his her each every both all some most many"
    " such another one two three we you he she they i my your us them there here what which who"
    # prepositions and conjunctions
    " in on at by for from with within without into onto after before during since until while when"
    " where if as at because although though but and or so yet under over between beyond near along"
    " across through behind below above around toward towards also however thus then now today"
    " last next first second over about nearly almost only later earlier meanwhile instead still".split()
)
MONTHS = frozenset(
    "january february march april may june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
LABEL_WORDS = frozenset("figure figures fig fig. figs table tables section chapter no no. vol vol. p p. pp pp."
                        " page pages eq eq. equation ref ref. appendix supplementary step phase version"
                        " v art art. nr note pmid pmcid doi issn isbn accession".split())
NOT_NAMES = frozenset("i".split()) | MONTHS | frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
PARTICLES = frozenset("of de del la le von van der du for".split())  # not "and": it joins two names
MAX_NAME_WORDS = 8  # a longer run of capitals is a title or a heading, not a name

# Units a value may carry, longest first within a group so "km/h" wins over "km".
UNITS = (
    # length, area, volume
    "km/h", "km²", "km2", "km", "cm", "mm", "m²", "m³", "m", "metres", "meters", "kilometres",
    "kilometers", "miles", "mi", "yards", "yd", "ft", "feet", "foot", "inches", "in", "AU", "ha", "hectares", "acres",
    "litres", "liters", "L", "ml", "mL", "µl", "μl", "nm", "µm", "μm",
    # mass, force, pressure
    "kg", "g", "mg", "µg", "μg", "ng", "t", "tonnes", "tons", "lb", "kN", "MN", "bar", "psi", "kPa", "MPa", "Pa",
    # energy and power
    "GWh", "MWh", "kWh", "GW", "MW", "kW", "W", "kV", "V", "Hz", "kHz", "MHz", "GHz", "kb", "kbp", "bp", "Mb", "kDa",
    "Da", "mM", "µM", "μM", "nM",
    # time and rate
    "years", "year", "months", "month", "weeks", "days", "day", "hours", "hour", "h", "minutes", "min",
    "seconds", "s", "ms", "m/s", "mph", "knots", "rpm",
    # temperature
    "°C", "°F", "°", "K", "degrees",
    # scale words and counts
    "million", "billion", "trillion", "thousand", "hundred", "percent", "per cent",
)
_UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_CURRENCY = r"(?:[$€£¥₤]|US\$|A\$|C\$|rs\.?|usd|eur)"
# digits with separators: 42,000 / 42 @,@ 000 (wikitext) / 11.5 / 11 @.@ 5
NUMBER = r"\d{1,3}(?:(?:,| @,@ )\d{3})+(?:(?:\.| @\.@ )\d+)?|\d+(?:(?:\.| @\.@ )\d+)?"
_NUM = NUMBER
_VALUE = re.compile(
    r"(?<![\w.,@/:])(?<![^\W\d_]-)(?<!@-@ )(?P<cur>" + _CURRENCY + r"\s?)?(?P<num>" + _NUM + r")"
    r"(?P<range>\s?(?:–|-|to)\s?(?:" + _CURRENCY + r"\s?)?(?:" + _NUM + r"))?"
    r"(?![\w/:]|\.\d|@)"
)
_COUNTED = re.compile(r" ((?:[a-z]+-)?[a-z]{2,}s|crew|staff|people|personnel)(?![\w-])")
# words after a number that are not what it counts
NOT_COUNTED = frozenset("and are was were has had have for from with the that this than into onto per each its"
                        " their our his her who which what when where while but not all any also only more less"
                        " times".split())
_SMALL = "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
# a number written in words before a plural noun ("three assists", "Eight hundred thousand new jobs")
# a number written as a word, in either case of its first letter
NUMBER_WORD = re.compile(r"\b(?:" + "|".join(f"[{w[0]}{w[0].upper()}]{w[1:]}" for w in (_TENS + "|" + _SMALL).split("|")
                                            + ["hundred", "thousand"]) + r")\b")
_WORD_VALUE = re.compile(
    r"(?<![\w-])(?:(?:" + _TENS + r")(?:[ -](?:one|" + _SMALL + r"))?|" + _SMALL + r"|a hundred|a thousand)"
    r"(?:\s(?:hundred|thousand|million|billion)){0,2}"
    r"(?=\s(?:[a-z]+\s){0,2}[a-z]{3,}s\b)(?![\w-])",
    re.I,
)
# "in" is inches only where no word follows ("a 2 – 1 win in a shootout" measures nothing in inches)
_UNIT_AFTER = re.compile(r"\s?(?:%|\(\s?\d[\d.]*\s?%\s?\)|(?:(?:" + _UNIT + r")(?![\w])(?<!in)|in(?![\w]| [\w]))"
                         r"(?:\s(?:million|billion))?)")
# a game's score, "4 – 3" or wikitext's "4 @-@ 3": a quantity of the team that is the subject of a result verb
SCORE = re.compile(r"(?<![\w.,@/:–-])(?<![–-] )\d{1,2}\s?(?:–|-|@-@)\s?\d{1,2}(?![\w.,]|\s?(?:–|-|@-@)\s?\d)")
_WORD = re.compile(r"[^\W_](?:[\w'’.&-]*[\w'’&])?")
_DATE_NEAR = re.compile(r"\b(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?\s*$", re.I)
_DATE_AFTER = re.compile(r"\s*(?:,\s*)?(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b", re.I)
_TIME_AFTER = re.compile(r"\s?(?:a\.?m\.?|p\.?m\.?|bc|ad|bce|ce|ma)\b", re.I)
_CLOCK_UNIT = re.compile(r"seconds|second|s|minutes|minute|min|hours|hour|h|days|day|weeks|months|years")
_CLOCK_AFTER = re.compile(r" (?:remaining|left|to go|later|ago|earlier|before|after|into)\b")
_SCORE_AFTER = re.compile(r"\s?(?:[–-]|@-@)\s?\d")
# a score or a record that names what it is ("a 3 – 2 lead", "an 18 – 21 – 2 record"): a quantity
_RECORD = re.compile(r"(?<![\d–-] )(?<![\w.,@/:–-])\d{1,3}(?:\s?[–-]\s?\d{1,3}){1,2}\s(?:record|lead|shutout|start|win|victory|loss|defeat)\b")




# a past form after a single capitalised word opening a sentence makes it the subject of an act
# ("Columbus held a 3 – 2 lead", "Blackie paid £ 25"), as common nouns rarely open one that way
_ACT = re.compile(r" (?:[a-z]{3,}ed|held|won|beat|paid|lost|made|took|sold|bought|built|gave|kept|led|drew|wrote|got"
                  r"|fought|struck|sank|shot|hit|ran|spent|set|scored)\b")


def _acts(text: str, word: str, end: int, e: int) -> bool:
    """Whether a single word opening a sentence is a name by what follows it: a past form, when the
    word is no plural ("Sales rose") and ends as few common nouns do."""
    plural = word.endswith("s") and not word.endswith(("us", "is", "as", "ss", "os"))
    return not plural and not word.endswith(("tion", "ment", "ity", "ness", "ance", "ence", "ing", "ure", "age", "ism")) \
        and bool(_ACT.match(text, end, e))


_ROUTE = re.compile(r"[A-Z]{1,3} @-@ \d{1,4}(?![\w@])")


def _is_name_word(w: str) -> bool:
    if not w[0].isupper() or len(w) == 1:
        return False  # a single capital ("A", "I") is no name
    lw = w.lower()
    return lw not in NOT_NAMES and not lw.startswith(("i'", "i’"))


def names(text: str, s: int, e: int, named=None) -> list[tuple[int, int]]:
    """Name runs in `text[s:e]` (one sentence). A single capitalised word opening the sentence counts
    when `named(word)` says the document also writes it capitalised inside a sentence ("Blackie paid
    £ 25" where "Blackie" appears mid-sentence elsewhere); "Sales rose 5%" gives no name."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, s, e)]
    names = []
    i = 0
    first = True
    while i < len(words):
        a, b = words[i]
        w = text[a:b]
        opener = first
        first = False
        route = _ROUTE.match(text, a, e)
        if route:  # wikitext's "N @-@ 88": a road's name, its number a part of it
            names.append(route.span())
            while i < len(words) and words[i][0] < route.end():
                i += 1
            continue
        if not _is_name_word(w) or (opener and w.lower() in SENTENCE_OPENERS) or w.lower().rstrip(".") in LABEL_WORDS:
            # an abbreviated species ("P. falciparum"): a capital, a full stop, a lower-case word
            if len(w) == 1 and w.isupper() and i + 1 < len(words) and text[words[i + 1][0]].islower() \
                    and text[b:words[i + 1][0]] == ". ":
                names.append((a, words[i + 1][1]))
                i += 2
                continue
            i += 1
            continue
        run_end = i
        j = i + 1
        while j < len(words) and j - i < MAX_NAME_WORDS + 2:
            gap = text[words[j - 1][1] : words[j][0]]
            nxt = text[words[j][0] : words[j][1]]
            if gap not in (" ", "-", " - "):
                break
            if _is_name_word(nxt) and nxt.lower().rstrip(".") not in LABEL_WORDS:
                run_end = j
                j += 1
            elif (nxt in PARTICLES or nxt.isdigit()) and j + 1 < len(words) and _is_name_word(
                    text[words[j + 1][0] : words[j + 1][1]]) and text[words[j][1] : words[j + 1][0]] == " ":
                j += 1  # a particle or a number counts only between two capitalised words
            else:
                break
        count = run_end - i + 1
        single = text[a:b]
        end = words[run_end][1]
        if text[end - 2 : end] in ("'s", "’s"):
            end -= 2  # "the Authority's network": the name without its possessive
        if count > MAX_NAME_WORDS:
            pass  # a title or heading in capitals
        elif count >= 2 or not opener or any(c.isupper() or c.isdigit() for c in single[1:]) \
                or (named is not None and (named(single) or (_acts(text, single, end, e) and named(single, False)))):
            names.append((a, end))
        i = run_end + 1
    return names


def values(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """Quantities in `text[s:e]`: dates, times, ordinals, identifiers, labels and scores left out."""
    out = []
    for m in _WORD_VALUE.finditer(text, s, e):
        if _DATE_AFTER.match(text, m.end(), e) or text[max(s, m.start() - 4) : m.start()].lower().endswith("the "):
            continue  # "two June", "the two ships": a date, or items already named
        counted = _COUNTED.match(text, m.end(), e)
        clock = counted and _CLOCK_UNIT.fullmatch(counted.group(1)) and _CLOCK_AFTER.match(text, counted.end(), e)
        if not clock:  # "three days later" places an event in time
            out.append((m.start(), counted.end() if counted and counted.group(1) not in NOT_COUNTED else m.end()))
    records = [m.span() for m in _RECORD.finditer(text, s, e)]
    out += records
    for m in _VALUE.finditer(text, s, e):
        a, b = m.span()
        if records and any(ra <= a < rb for ra, rb in records):
            continue
        num = m.group("num")
        digits = re.sub(r"\D", "", num)
        unit = _UNIT_AFTER.match(text, b, e)
        has_unit = bool(unit) or bool(m.group("cur"))
        if "," not in num and "@,@" not in num and len(digits) >= 6 and not has_unit:
            continue  # an identifier
        if len(digits) == 4 and "." not in num and "," not in num and "@" not in num and not has_unit \
                and 1000 <= int(digits) <= 2100:
            continue  # a year
        before = text[max(s, a - 24) : a]
        if _DATE_NEAR.search(before) or _DATE_AFTER.match(text, b, e) or _TIME_AFTER.match(text, b, e):
            continue  # a date or a time
        prev_word = before.split()[-1].lower() if before.split() else ""
        if prev_word.rstrip(".:") in LABEL_WORDS or prev_word in LABEL_WORDS:
            continue  # "Figure 2", "Table S1", "No. 3", "p. 12"
        if text[a:b].strip() == num and not m.group("range") and not has_unit and _SCORE_AFTER.match(text, b, e):
            continue  # a score or a record ("2 – 0", "29 – 46 – 7")
        if before.rstrip().endswith(("–", "-")) and not has_unit and re.search(r"\d\s?[–-]\s?$", before):
            continue  # the tail of a score
        if text[max(s, a - 1):a] in ("(", "[") and text[b:b + 1] in (")", "]") and not has_unit:
            continue  # a bracketed number: a citation or a note
        if a == s and re.match(r"\s?[.)]\s", text[b : b + 3]):
            continue  # a list number opening the line
        if re.match(r"\s[A-Z][a-z]", text[b : b + 3]) and not has_unit:
            continue  # a number before a name is part of it ("23 The Waldrons", "Highway 88 Bridge")
        if before.endswith(("the ", "The ")) and not has_unit:
            continue  # "the two ships": items already named, not a quantity stated
        if m.group("range") and not has_unit:
            continue  # a range with nothing to measure: a score, a record, pages
        if re.match(r"\s?(?:@-@|-)\s?[^\W\d_]", text[b : b + 6]) and not has_unit:
            continue  # a modifier ("a 20-year period", "a four-game streak"): the noun owns the value
        if unit and _CLOCK_UNIT.fullmatch(unit.group().strip()) and (
                before.endswith(("at ", "At ")) or _CLOCK_AFTER.match(text, unit.end(), e)):
            continue  # a reading of a clock ("froze at 1.8 seconds", "0.4 seconds remaining", "two hours later")
        if unit:
            b = unit.end()
        else:
            counted = _COUNTED.match(text, b, e)  # "14 crew", "24 paintings": the counted noun belongs to it
            if counted and counted.group(1).lower() not in NOT_COUNTED:
                b = counted.end()
        out.append((a, b))
    return sorted(out)


