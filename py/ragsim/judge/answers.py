"""An answer given as text, placed in the documents: how most evaluation sets are kept (a question and
its answer, RAGAS' `reference` and `reference_contexts`, LlamaIndex's generated contexts) where
ragsim's questions carry character offsets (SPEC section 8).

`locate(docs, text, hint, every)` finds `text` in the documents as they write it, white space aside
(a line break in the document may be a space in the set, and the reverse), case kept:

- found once: that place;
- found several times: with a `hint` (other text near the right one), the place nearest the hint's
  first occurrence in the same document; with `every`, every place; otherwise refused, naming where
  it occurs;
- found nowhere: refused, saying so (the set's answer may be a paraphrase: give the words as the
  document writes them, or the passage that holds them).

Each refusal is one sentence (`RequestError`). The search is one regular expression over each
document, linear in its length: the answer's words joined by `\\s+`, every character escaped.
"""

import re

from ragsim.errors import RequestError
from ragsim.fields import shown

MAX_ANSWER = 20_000  # characters: an answer or a context longer than this is a document, not an answer
SHOWN_PLACES = 3  # places a refusal names


def _pattern(text: str) -> re.Pattern:
    """The answer's words joined by any white space, not inside a longer word at either end."""
    words = text.split()
    body = r"\s+".join(re.escape(w) for w in words)
    before = r"(?<!\w)" if re.match(r"\w", words[0]) else ""
    after = r"(?!\w)" if re.search(r"\w$", words[-1]) else ""
    return re.compile(before + body + after)


def _places(docs: list[dict], text: str) -> list[tuple[int, int, int]]:
    pattern = _pattern(text)
    return [(d, m.start(), m.end()) for d, doc in enumerate(docs) for m in pattern.finditer(doc["text"])]


def locate(docs: list[dict], text, where: str, hint=None, every: bool = False) -> list[tuple[int, int, int]]:
    """The places `(doc position, start, end)` of the answer `text` in `docs`, as the module says."""
    if not isinstance(text, str) or not text.strip():
        raise RequestError(where, f"{where} is empty; give the answer as the document writes it.")
    if len(text) > MAX_ANSWER:
        raise RequestError(where, f"{where} is {len(text):,} characters long, more than the {MAX_ANSWER:,} an answer "
                                  "may be; give the passage that holds the answer.")
    places = _places(docs, text)
    if not places:
        raise RequestError(where, f"{where} {shown(text)} is in none of the documents; give the words as the "
                                  "document writes them (an answer written in other words cannot be placed).")
    if len(places) == 1 or every:
        return places
    if hint is not None:
        if not isinstance(hint, str) or not hint.strip():
            raise RequestError(where, f"{where}: the hint is empty; give text near the right occurrence.")
        near = _places(docs, hint)
        if not near:
            raise RequestError(where, f"{where}: the hint {shown(hint)} is in none of the documents; give text "
                                      "near the right occurrence as the document writes it.")
        d, at, _ = near[0]
        same = [p for p in places if p[0] == d]
        if not same:
            raise RequestError(where, f"{where}: the hint {shown(hint)} is in a document that does not hold the "
                                      "answer; give text near the right occurrence.")
        return [min(same, key=lambda p: abs(p[1] - at))]
    listed = ", ".join(f"{shown(docs[d]['id'])} at {s:,}" for d, s, _ in places[:SHOWN_PLACES])
    more = f" and {len(places) - SHOWN_PLACES} more" if len(places) > SHOWN_PLACES else ""
    raise RequestError(where, f"{where} {shown(text)} occurs {len(places)} times ({listed}{more}); give a hint "
                              "(text near the right one), or take every occurrence.")
