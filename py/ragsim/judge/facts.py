"""Name-value facts found by rule, for the corpus audit: SPEC section 4; measured in `docs/facts.md`.

A fact is a **name** and a **quantity** that one sentence states together, the quantity being the
name's own: "how much / how many ... of NAME?" is answered by VALUE from that sentence alone. The
rule is measured against facts labelled in real text (`tests/data/facts/`, by
`benchmarks/facts_eval.py`); where precision and recall pull apart it keeps precision, since a false
fact is a false alarm a user acts on.

- **Lines**: a line break ends a sentence (a chat log's written `\\n` too) unless the paragraph is
  wrapped there; a table row (cells split by `|`) names each number cell by its label cell, unless it
  is a header or a row of years; three or more short lines that each read "label number" are a table
  written without rules; a line of a reference list gives nothing.
- **Names and values** (`judge.fact_words`): proper names as written; quantities with their units,
  in digits or words, never dates, clock readings, ordinals, identifiers, labels or scores.
- **Pairing** keeps the shapes whose meaning is plain, each name with the first value after it and
  no other name between: the value set off after the name ("Galle Ring, at 42,000 km", "2.0
  (EMX-2)"), the name as the subject of a verb stating the value within `GAP_WORDS` words ("Harrow
  Lock lifts barges 11.5 m", "the East Terminal, which handles about 4,200 containers"), a short
  clause after a name that opens the sentence ("The Brannock Hill Station, cut into ... in 1994, can
  deliver 1,200 MW"), "At 1,250 m, Varga Pass is ...", and (`judge.fact_shapes`) a subject team's
  scores, a clause after a comma whose subject is the sentence's name ("..., posting a 3 – 1 – 2
  record"), a conversion in brackets and what a price paid for. A value that measures another noun
  ("we cut the federal deficit by $160 billion because Medicare ...") gives none.

Known misses (counted in `docs/facts.md`): numbers in words that no plural noun follows, a name and
value further apart or across a clause, a lower-case name ("10 nM axin"), values in a list after the
first, and modifiers ("a 20-foot ram").

Every offset is a code-point index into the document, half-open, as everywhere in the core. The work
is linear in the text: each line is read once, each look-up is a bisection, and names and gaps are
bounded in words.
"""

import re
from bisect import bisect_left, bisect_right

from ragsim.judge.fact_tables import LINE_ENDS, SPLIT_LINES, TABLE_ROW, Fact, is_header_row, plain_row_fact, \
    plain_rows, reference_line, table_facts
from ragsim.judge.fact_shapes import CLAUSE_BREAKS, follows_on, scores, subject_clauses
from ragsim.judge.fact_words import MONTHS, NUMBER_WORD, SCORE, SENTENCE_OPENERS, names as find_names, values as find_values
from ragsim.text.sentences import split_sentences

# verbs that state a quantity of their subject ("Harrow Lock lifts barges 11.5 m"); any word ending in
# "ed" counts too ("Blackie paid", "Novak Yard employed")
VERBS = frozenset(
    " is was are were be been has had have holds held contains contained measures measured spans"
    " spanned reaches reached rose rises fell falls grew grows paid pays earns earned costs sold"
    " sells spent spends carries carried employs covers weighs lifts lifted generates produces makes"
    " made received receives raised raises won wins lost loses scored scores totals totaled totalled"
    " amounts amounted numbers numbered stands stood runs ran serves served seats houses handles"
    " handled delivers orbits flows drops dropped climbs climbed gained gains reported reports will"
    " would can could may might must shall should"
    # irregular past forms
    " taught bought brought built sent gave took kept left led met drew wrote became began got"
    " fought caught struck sank shot hit cut put set ate drove flew swam"
    .split()
)
GAP_WORDS = 6  # lower-case words at most between a name and its value
MAX_GAP_CHARS = 120  # and characters

WRAPPED_LINE = 40  # characters: a shorter line ends where it ends (a heading, a list item, a short row)
_NEXT_LINE = re.compile(r"[ \t]*(.?)")
_LIST_START = re.compile(r"[-*•#>|=]|\d+[.)]\s|[A-Za-z][.)]\s")
_DIGIT = re.compile(r"\d")
_CAPITAL = re.compile(r"[^\W\d_a-z]")  # a letter that may be a capital: a cheap test before the work


def _lines(text: str, rows: dict):
    """Each line's extent: a written `\\n` or a real newline ends one, except where a paragraph is
    wrapped (the line runs on into the next: no sentence end, list marker, heading, table cell or
    table row (`rows`, by start) at the break, and a line long enough to have been wrapped)."""
    start = physical = 0
    for m in SPLIT_LINES.finditer(text):
        if m.group() == "\n" and physical not in rows and m.end() not in rows \
                and _wrapped(text, physical, m.start(), m.end()):
            physical = m.end()
            continue
        yield start, m.start()
        start = physical = m.end()
    yield start, len(text)


def _wrapped(text: str, start: int, end: int, after: int) -> bool:
    """Whether the physical line `text[start:end]` runs on into the line at `after`."""
    line = text[start:end].rstrip()
    if len(line) < WRAPPED_LINE or line[-1] in LINE_ENDS or "|" in line:
        return False
    nxt = _NEXT_LINE.match(text, after)
    return bool(nxt) and nxt.group(1) not in ("", "\n") and not _LIST_START.match(text, nxt.start(1))


def _may_count(text: str, s: int, e: int) -> bool:
    """Whether `text[s:e]` may hold a quantity: a digit, or else a number word (the slower test)."""
    return bool(_DIGIT.search(text, s, e) or NUMBER_WORD.search(text, s, e))


def _sentence_facts(text: str, s: int, e: int, named=None) -> list[Fact]:
    """The facts of one sentence. Names and values are in order of position, and each look-up is a
    bisection, so a sentence of n words costs O(n log n) whatever it holds."""
    if not _CAPITAL.search(text, s, e) or not _may_count(text, s, e):
        return []  # no name is written in it, or no quantity
    values = find_values(text, s, e)
    if not values and not SCORE.search(text, s, e):
        return []
    names = find_names(text, s, e, named)
    if not names:
        return []
    name_starts = [n[0] for n in names]
    values = [v for v in values if not _inside(names, name_starts, v[0])]  # a number inside a name is the name's
    facts = [Fact(names[0], v, (s, e)) for v in scores(text, names[0], s, e)]
    if not values:
        return facts
    value_starts = [v[0] for v in values]
    taken = set()

    def pair(n, v):
        facts.append(Fact(n, v, (s, e)))
        taken.add(v)

    def value_from(at):
        i = bisect_left(value_starts, at)
        return values[i] if i < len(values) else None

    def name_from(at):
        i = bisect_left(name_starts, at)
        return names[i] if i < len(names) else None

    for n, v in _value_first(text, s, e, values, name_from):
        if v not in taken:
            pair(n, v)
    for i, n in enumerate(names):
        v = value_from(n[1])
        if v is None or v in taken:
            continue
        between = i + 1 < len(names) and names[i + 1][1] <= v[0]  # another name stands between
        if not between and v[0] - n[1] <= MAX_GAP_CHARS and _owns(text, n, v, s):
            pair(n, v)
            continue
        close = _clause_end(text, n, s, e)  # "The Brannock Hill Station, cut into ... in 1994, can deliver 1,200 MW"
        if close is not None:
            v, m = value_from(close), name_from(close)
            if v is not None and v not in taken and (m is None or m[0] >= v[0]) and v[0] - close <= MAX_GAP_CHARS \
                    and _verb_gap(text[close : v[0]].split(), head=False):
                pair(n, v)
    for v in subject_clauses(text, names, values, s):
        if v not in taken:
            pair(names[0], v)
    for v in values:  # "about 90% of Reykjavik", "1,000 billionaires in America": the value, then its name
        n = None if v in taken else _name_after(text, v, e, name_from)
        if n is not None:
            pair(n, v)
    for f in list(facts):
        v = value_from(f.value[1])
        if v is not None and v not in taken and follows_on(text, f.value, v):
            pair(f.name, v)
    return sorted(facts, key=lambda f: f.value)


def _value_first(text: str, s: int, e: int, values: list, name_from) -> list:
    """The shapes where the value comes before its name: "from 2.0 (EMX-2) to 11.0 (LafMS03)" (the
    name alone in brackets), "At 1,250 m, Varga Pass is ..." and "Four miles ( 6 @.@ 4 km ) later ,
    N @-@ 88 turns east" (the sentence opens on the value, then the name and its verb)."""
    out = []
    for v in values:
        n = name_from(v[1])
        if n is not None and _BRACKETED.fullmatch(text, v[1], n[0]) and text[n[1] : n[1] + 1] == ")":
            out.append((n, v))
    first = values[0]
    n = name_from(first[1]) if _OPENING_AT.fullmatch(text, s, first[0]) else None
    after = _WORD_AFTER.match(text, n[1], e) if n is not None else None
    if after and _LEAD_IN.fullmatch(text, first[1], n[0]) and _verb(after.group(1).lower()):
        out.append((n, first))
    return out


def _name_after(text: str, v: tuple[int, int], e: int, name_from):
    """The name a value is of, written after it ("90% of Reykjavik"): a few lower-case words at most,
    then "of", "in", "at" or "among" and the name, which no noun follows and which is no plural
    acronym; no clause break or participle between. None otherwise."""
    m = _OF_NAME.match(text, v[1], e)
    n = name_from(m.end()) if m else None
    if n is None or n[0] != m.end() or _PLURAL_ACRONYM.fullmatch(text, *n) or _modifies(text, n, e):
        return None
    words = m.group().split()
    # "vehicles traveling east of": a participle makes the name its object; "manufacturing jobs in": an adjective
    participle = any(w.endswith("ing") and not words[i + 1].endswith("s") for i, w in enumerate(words[:-1]))
    return None if participle or any(w in CLAUSE_BREAKS for w in words) else n


def _modifies(text: str, name: tuple[int, int], e: int) -> bool:
    """Whether a noun follows the name, so the name qualifies it ("50 minutes of NHL experience")."""
    after = _WORD_AFTER.match(text, name[1], e)
    if not after or not after.group(1).isalpha() or not after.group(1).islower():
        return False
    word = after.group(1)
    return word not in PREPOSITIONS and word not in CLAUSE_BREAKS and not _verb(word, guess=False) \
        and not (word.endswith("s") and len(word) > 3)


def _inside(names: list, starts: list, at: int) -> bool:
    i = bisect_right(starts, at) - 1
    return i >= 0 and names[i][0] <= at < names[i][1]


_BRACKETED = re.compile(r" ?\(")
# a value's name after it: a few lower-case words at most, then "of", "in", "at", "for" or "among"
_OF_NAME = re.compile(r"(?: [a-z][a-z'’-]*){0,4}? (?:of|in|at|among) (?:the )?(?=[^\W\d_a-z])")
_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")  # "ORFs", "SNPs": a plural of a common noun, not a name
_COMMA = re.compile(r" ?, ?")
_OPENING_AT = re.compile(r"(?:At |With |For the next )?")
_LEAD_IN = re.compile(r"(?:\s?\([^()]{1,30}\))?(?: later)? ?, ?")
_WORD_AFTER = re.compile(r" (\w+)")
# the value set off after its name: "Galle Ring, at 42,000 km", "Adams Ring, 63,000 km from", "Name (V", "Name: V"
_APPOSITION = re.compile(r"\s?(?:,|:|\(|–|-)\s?(?:(?:at|of|about|around|some|nearly|approximately|over|under|with|only|just"
                         r"|roughly|~)\s)?")
_PUNCTUATION = re.compile(r"[,;:()\[\]\"“”?!–]| - ")
_POSSESSIVE = ("'s", "'", "’s", "’")
_WHICH = re.compile(r"\s?,\s?which\s")
PREPOSITIONS = frozenset("in on at by for from with within into onto of to under over near across through about "
                         "against among between".split())
NOT_HEADS = CLAUSE_BREAKS | SENTENCE_OPENERS | frozenset(_POSSESSIVE)
CLAUSE_WORDS = 14  # words at most in a clause set off by commas after a name
# base forms, which state a quantity after a plural name ("the Blue Jackets finish with 65 points")
BASE_VERBS = frozenset("finish hold own employ operate produce carry cover reach total earn pay sell spend contain"
                       " measure span rise fall grow win lose score make receive raise serve house handle deliver"
                       " generate count number account average exceed top".split())


def _verb(word: str, then: str = "", guess: bool = True) -> bool:
    """A verb that can state its subject's quantity: a listed one, a past form ("paid", "employed"), or,
    with `guess`, a present form ("builds") that no preposition follows ("seasons in 19 years" is a noun)."""
    if word in VERBS or (word.endswith("ed") and len(word) > 3):
        return True
    return guess and word.endswith("s") and not word.endswith("ss") and len(word) > 3 and word not in NOT_HEADS \
        and then.lower() not in PREPOSITIONS


def _verb_gap(words: list[str], head: bool = True, plural: bool = False, guess: bool | None = None) -> bool:
    """Whether the words between a name and a value read "verb ... value" (or, with `head`, "noun verb
    ... value": "Galle Ring station orbits at 42,000 km"; with `plural`, a base form: "Blue Jackets
    finish with"), with no clause break, number or name among them."""
    if not words or len(words) > GAP_WORDS:
        return False
    first, then = words[0].lower(), words[1].lower() if len(words) > 1 else ""
    verb = (plural and first in BASE_VERBS) or _verb(first, then, guess=head if guess is None else guess) \
        or (head and then and first.isalpha() and first not in NOT_HEADS and _verb(then))
    if not verb:
        return False
    for i, w in enumerate(words):
        lw = w.lower().strip("'’")
        if (lw in CLAUSE_BREAKS and not (lw in ("after", "before") and i == len(words) - 1)) \
                or (lw and lw[0].isdigit()) or (w[0].isupper() and lw not in MONTHS):
            return False  # "after two games" measures the time it took; "started March with" names a month
    return True


def _clause_end(text: str, name: tuple[int, int], s: int, e: int) -> int | None:
    """Where a clause set off by commas right after the name ends (past its closing comma), when the
    name opens the sentence (after at most "The") and the clause is short and holds no other
    punctuation; else None."""
    m = _COMMA.match(text, name[1], e)
    if not m or name[0] - s > 30:
        return None
    opening = text[s : name[0]].split()
    if len(opening) > 2 or any(w.lower() not in SENTENCE_OPENERS for w in opening):
        return None
    close = text.find(",", m.end(), min(e, m.end() + 200))
    if close < 0 or _PUNCTUATION.search(text, m.end(), close) or len(text[m.end() : close].split()) > CLAUSE_WORDS:
        return None
    return close + 1


def _owns(text: str, name: tuple[int, int], value: tuple[int, int], s: int) -> bool:
    """Whether the text between a name and its first value says the value is the name's."""
    if _APPOSITION.fullmatch(text, name[1], value[0]):
        return True
    gap = text[name[1] : value[0]]
    words = [w for w in gap.split() if w != ","]  # wikitext writes " , "
    before = text[max(s, name[0] - 12) : name[0]].split()
    last = before[-1].lower() if before else ""
    which = _WHICH.match(gap)
    if which:  # "the East Terminal, which handles about 4,200 containers": the clause's subject is the name
        rest = gap[which.end():]
        return not _PUNCTUATION.search(rest) and _verb_gap(rest.split(), head=False, guess=True)
    if gap.lstrip().startswith(","):
        # "Its rival, Mount Orrin Array, spans 2.5 km": a name set off by commas, then its verb
        return last.endswith(",") and not _PUNCTUATION.search(gap.lstrip()[1:]) and _verb_gap(words, head=False)
    if _PUNCTUATION.search(gap):
        return False
    if words and words[0].lower() in _POSSESSIVE:
        # "Atlanta 's hull received two inches of armor": the name's own part, then its verb; any other
        # possessive ("Society 's 20 ...", "under Dunnington 's command") qualifies what owns the value
        return len(words) > 2 and last not in PREPOSITIONS and words[1].isalpha() and words[1].islower() \
            and words[1] not in NOT_HEADS and _verb_gap(words[2:], head=False)
    if last.endswith("ing") and len(last) > 4:
        return False  # "a barge leaving Corbie reaches ...": the name is an object, not the subject
    plural = text[name[1] - 1 : name[1]] == "s" and text[name[1] - 2 : name[1] - 1] not in ("s", "'", "’")
    # "In Europe prices rose by 3 points": a name after a preposition has no head noun of its own
    return _verb_gap(words, head=last not in PREPOSITIONS, plural=plural)


_LOWER_WORD = re.compile(r"\b[a-z][a-z'’-]*")
_MID_CAPITAL = re.compile(r"(?<=[a-z,;] )[A-Z][\w'’-]+")


def detect(text: str) -> list[Fact]:
    """Every name-value fact of a document, in order of position."""
    facts = []
    mid: list = []
    seen: list = []

    def named(word: str, inside: bool = True) -> bool:
        """Whether the document writes `word` capitalised inside a sentence, or (not `inside`)
        never in lower case; each list is read once, when first asked."""
        if inside:
            if not mid:
                mid.append({m.group() for m in _MID_CAPITAL.finditer(text)})
            return word in mid[0]
        if not seen:
            seen.append({m.group() for m in _LOWER_WORD.finditer(text)})
        return word.lower() not in seen[0]

    rows = plain_rows(text) if _DIGIT.search(text) else {}
    for ls, le in _lines(text, rows):
        if ls in rows:
            facts.extend(plain_row_fact(text, ls, le, *rows[ls]))
            continue
        if "|" in text[ls:le] and TABLE_ROW.search(text, ls, le):
            facts.extend(table_facts(text, ls, le, is_header_row(text, ls, le)))
            continue
        if not _CAPITAL.search(text, ls, le) or not _may_count(text, ls, le) or reference_line(text, ls, le):
            continue  # no name, no quantity, or a reference list
        for s, e in split_sentences(text[ls:le]):
            facts.extend(_sentence_facts(text, ls + s, ls + e, named))
    return facts


QUOTE_AROUND = 100  # characters of the sentence shown on each side of a fact's stretch


def quote(fact: Fact) -> tuple[int, int]:
    """What to show of the fact's sentence so a reader can check the pair: the sentence, clipped to
    `QUOTE_AROUND` characters on each side of the name-to-value stretch."""
    a, z = fact.stretch
    s, e = fact.sentence
    return max(s, a - QUOTE_AROUND), min(e, z + QUOTE_AROUND)


def described(text: str, fact: Fact) -> dict:
    """A fact as every report gives it: where its name, value and sentence are, their texts, and the
    part of the sentence to show (`quote`, `quote_text`)."""
    qa, qz = quote(fact)
    return {"name": list(fact.name), "value": list(fact.value), "name_text": text[fact.name[0] : fact.name[1]],
            "value_text": text[fact.value[0] : fact.value[1]], "stretch": list(fact.stretch),
            "sentence": list(fact.sentence), "quote": [qa, qz], "quote_text": text[qa:qz]}
