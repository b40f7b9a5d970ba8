"""Shapes of a fact that reach past the name's first value (`judge.facts`): a team's scores after a
result verb, a clause whose subject is the sentence's opening name, and values that follow on from
a paired one (a conversion in brackets, what a price paid for). Measured with the rest of the finder
in `docs/facts.md`.
"""

import re

from ragsim.judge.fact_words import SCORE

# words between a name and its value that end the clause: the value belongs to something else
CLAUSE_BREAKS = frozenset(
    "which who whom whose that because although though but while when where whereas if unless since"
    " and or nor than compared versus vs after before until".split()
)

_RESULT = re.compile(r"(?: (?:then|again|also|later|eventually|finally))? (?:beat|defeated|won|lost|drew|tied|edged|routed)\b")


def scores(text: str, name: tuple[int, int], s: int, e: int) -> list[tuple[int, int]]:
    """A team's scores where the team opens the sentence and a result verb follows it ("The Gambia
    then beat Tunisia 1 @-@ 0 at home and won 2 @-@ 1 in Tunisia"), up to a clause break other than
    "and" with another result."""
    m = _RESULT.match(text, name[1], e) if opens(text, name, s) else None
    if m is None:
        return []
    out, at = [], m.end()
    for score in SCORE.finditer(text, at, e):
        words = text[at : score.start()].split()
        if ";" in text[at : score.start()] or any(w in CLAUSE_BREAKS and not (w == "and" and i + 1 < len(words)
                and _RESULT.match(" " + words[i + 1])) for i, w in enumerate(words)):
            break
        out.append(score.span())
        at = score.end()
    return out


_LIST_COMMA = re.compile(r" ?, ?")
_CONVERSION = re.compile(r"\s?\(\s?")
_PRICE = re.compile(r"[$€£¥₤]")
# a clause after a comma whose subject is the sentence's, ending just before the value
_PARTICIPLE = re.compile(r" ?, (posting|recording|finishing|scoring|allowing|culminating in|earning|totall?ing"
                         r"|reaching|winning|aged) (?:(?:a|an|just|only|about|some|over|nearly) )?$")


def subject_clauses(text: str, names: list, values: list, s: int) -> list[tuple[int, int]]:
    """The values of a clause after a comma whose subject is the sentence's opening name ("Sanford
    continued his strong play , posting a 3 – 1 – 2 record"; "..., aged 77 years"), no other name
    between unless the clause gives an age."""
    subject = names[0]
    if not opens(text, subject, s):
        return []
    out = []
    for i, v in enumerate(values):
        clause = _PARTICIPLE.search(text, max(s, v[0] - 30), v[0]) if subject[1] <= v[0] else None
        if clause and (clause.group(1) == "aged" or not any(subject[1] <= n[0] < v[0] for n in names[1:])):
            out.append(v)
            # "posting a 3 – 1 – 2 record , 1 @.@ 38 goals against average": a list goes on with the clause
            while i + 1 < len(values) and _LIST_COMMA.fullmatch(text, values[i][1], values[i + 1][0]):
                i += 1
                out.append(values[i])
    return out


def follows_on(text: str, value: tuple[int, int], nxt: tuple[int, int]) -> bool:
    """Whether the next value is the same name's: a conversion in brackets ("200 – 300 yards ( 180 –
    270 m )"), or what a price was paid for ("paid £ 25 for 24 paintings")."""
    return bool(_CONVERSION.fullmatch(text, value[1], nxt[0])) or (
        bool(_PRICE.match(text, *value)) and text[value[1] : nxt[0]] == " for ")


def opens(text: str, name: tuple[int, int], s: int) -> bool:
    """Whether the name opens the sentence, after "The" at most."""
    opening = text[s : name[0]].split()
    return len(opening) <= 1 and all(w in ("The", "the") for w in opening)
