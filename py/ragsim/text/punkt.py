r"""nltk's untrained `PunktSentenceTokenizer` (nltk 3.10.4, `nltk/tokenize/punkt.py`) in the standard library.

LlamaIndex's `SentenceSplitter` cuts paragraphs into sentences with `PunktSentenceTokenizer()`:
no training text, so its parameters are empty (no abbreviations, collocations, sentence starters
or orthographic statistics). nltk cannot be imported in Pyodide (it needs the `regex` engine), so
this module ports what that tokenizer does, control flow kept where it matters:

- candidates are the `.`, `?` and `!` followed by punctuation or by whitespace and a token
  (`period_context_re`); each is decided on a small context, the word before it, the mark and what
  follows (`_match_potential_end_contexts`, where a candidate whose word overlaps the previous
  candidate's is dropped);
- the context is cut into Punkt word tokens line by line (`word_tokenize`) and annotated. With
  empty parameters the annotation reduces to: a lone mark, or a word ending in one period (not
  two), is a sentence break; it is not one when the word is an initial (`J.`) or a number (`3.`)
  and the next token is lower case or punctuation, or the word is an initial and the next token
  is upper case. A break counts only when some token follows it in the context;
- closing quotes and brackets after a break move onto the sentence before (`_realign_boundaries`).

nltk compiles its patterns with `regex`, whose `\s`, `\w` and `\d` are not `re`'s: `\s` leaves out
the separators U+001C..U+001F, and `\w` and `\d` follow `regex`'s own Unicode tables. The classes
below spell those out (`_punkt_data.py`, generated from the pinned `regex`). What stays Python's
own, as in nltk: `str.split("\n")`, `strip`, `lower`, `isupper`, `islower`.
"""

import re
import string

from ragsim.text.punkt_data import RANGES


def _class_body(name: str) -> str:
    items = RANGES[name].split()
    out = []
    for item in items:
        lo, _, hi = item.partition("-")
        out.append(f"\\U{int(lo, 16):08x}" + (f"-\\U{int(hi, 16):08x}" if hi else ""))
    return "".join(out)


# `regex`'s \s: Unicode White_Space (Python's `re` adds U+001C..U+001F).
_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_S = f"[{_WS}]"
_NS = f"[^{_WS}]"
_ALPHA = f"[{_class_body('ALPHA')}]"  # [^\W\d]
_DIGIT = _class_body("DIGIT")  # \d, as a class body

# PunktLanguageVars, with sent_end_chars = (".", "?", "!").
_SENT_END = r"[.?!]"
# Characters that cannot appear within words (curly quotes and guillemets included, and ? !).
_NON_WORD = r"(?:[)\";}\]*:@'({\[\u2018\u2019\u201c\u201d\xab\xbb?!])"
# Hyphen runs and ellipses are multi-character punctuation.
_MULTI = rf"(?:-{{2,}}|\.{{2,}}|(?:\.{_S}){{2,}}\.)"
# Characters that cannot start a word token.
_WORD_START = r"[^(\"`{\[:;&#*@)}\]\-,]"

_WORD_TOKENIZER = re.compile(
    rf"{_MULTI}"
    rf"|(?={_WORD_START}){_NS}+?(?={_S}|$|{_NON_WORD}|{_MULTI}|,(?=$|{_S}|{_NON_WORD}|{_MULTI}))"
    rf"|{_NS}"
)
_PERIOD_CONTEXT = re.compile(rf"{_SENT_END}(?=(?P<after_tok>{_NON_WORD}|{_S}+(?P<next_tok>{_NS}+)))")
_BOUNDARY_REALIGNMENT = re.compile(
    rf"[\"')\]}}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:{_S}+|(?=--)|$)", re.MULTILINE
)

# PunktToken's patterns.
_ELLIPSIS = re.compile(r"\.\.+$")
_NUMERIC = re.compile(rf"^-?[.,]?[{_DIGIT}][{_DIGIT},.\-]*\.?$")
_INITIAL = re.compile(rf"{_ALPHA}\.$")

_SENT_END_CHARS = (".", "?", "!")
_PUNCTUATION = tuple(";:,.!?")


def word_tokenize(line: str) -> list[str]:
    """Punkt's word tokens of one line (punctuation other than periods split off)."""
    return _WORD_TOKENIZER.findall(line)


def _tokenize_words(text: str) -> list[str]:
    """`PunktBaseClass._tokenize_words` without the line and paragraph marks (unused when untrained)."""
    out: list[str] = []
    for line in text.split("\n"):
        if line.strip():
            out.extend(word_tokenize(line))
    return out


def _type_no_period(tok: str) -> str:
    typ = _NUMERIC.sub("##number##", tok.lower())
    return typ[:-1] if len(typ) > 1 and typ[-1] == "." else typ


def _is_break(tok: str, nxt: str) -> bool:
    """Is `tok`, followed by `nxt`, a sentence break? (first and second annotation pass, empty parameters)"""
    if tok in _SENT_END_CHARS:
        return True
    if _ELLIPSIS.match(tok) or not tok.endswith(".") or tok.endswith(".."):
        # An ellipsis is never promoted to a break without orthographic statistics.
        return False
    initial = _INITIAL.match(tok) is not None
    if initial or _type_no_period(tok) == "##number##":
        # The orthographic heuristic: punctuation or a lower-case first letter says "not a sentence
        # start"; otherwise it is unsure, and an initial before an upper-case word is a name.
        if nxt in _PUNCTUATION or nxt[0].islower():
            return False
        if initial and nxt[0].isupper():
            return False
    return True


def text_contains_sentbreak(text: str) -> bool:
    """True when some token of `text` other than the last is a sentence break."""
    toks = _tokenize_words(text)
    return any(_is_break(a, b) for a, b in zip(toks, toks[1:]))


def _last_whitespace_index(text: str) -> int:
    for i in range(len(text) - 1, -1, -1):
        if text[i] in string.whitespace:
            return i
    return 0


def _potential_end_contexts(text: str):
    """`_match_potential_end_contexts`: (match, context) per candidate, overlapping ones dropped."""
    prev_start = prev_stop = 0
    prev_match = None
    for match in _PERIOD_CONTEXT.finditer(text):
        before = text[prev_stop:match.start()]
        i = _last_whitespace_index(before)
        # nltk treats a whitespace at index 0 as "none found", as here.
        start = i + prev_stop + 1 if i else prev_start
        if prev_match is not None and prev_stop <= start:
            yield prev_match, text[prev_start:prev_stop] + prev_match.group() + prev_match.group("after_tok")
        prev_match, prev_start, prev_stop = match, start, match.start()
    if prev_match is not None:
        yield prev_match, text[prev_start:prev_stop] + prev_match.group() + prev_match.group("after_tok")


def _slices(text: str):
    last_break = 0
    for match, context in _potential_end_contexts(text):
        if text_contains_sentbreak(context):
            yield last_break, match.end()
            last_break = match.start("next_tok") if match.group("next_tok") else match.end()
    # The last sentence does not hold the trailing whitespace.
    yield last_break, len(text.rstrip())


def span_tokenize(text: str) -> list[tuple[int, int]]:
    """`PunktSentenceTokenizer().span_tokenize(text)` (realigned boundaries): sentence extents."""
    out: list[tuple[int, int]] = []
    slices = list(_slices(text))
    realign = 0
    for k, (start, stop) in enumerate(slices):
        start += realign
        if k + 1 == len(slices):
            if start < stop:
                out.append((start, stop))
            break
        nstart, nstop = slices[k + 1]
        m = _BOUNDARY_REALIGNMENT.match(text[nstart:nstop])
        if m:
            out.append((start, nstart + len(m.group(0).rstrip())))
            realign = m.end()
        else:
            realign = 0
            if start < stop:
                out.append((start, stop))
    return out
