"""Refuse untrusted regular expressions that can backtrack catastrophically.

A LangChain separator with `is_separator_regex` comes from whoever made the link. Python's `re`
backtracks, so `(?:a+)+b` over "aaaa...a!" tries exponentially many ways and never returns. This
module walks the parsed pattern (`re._parser`, the tree `re.compile` itself builds) and refuses
four shapes, the known causes of exponential or high-polynomial searches:

1. **Nested repetition**: a repetition that may run more than once around a part whose width
   varies (`(?:a+)+`, `(?:\\w+\\s?)*`, `(?:a{1,3}){2,}`).
2. **Ambiguous alternation under a repetition**: alternatives that can start with the same
   character, or one that can match nothing, inside a repetition (`(?:ab|a.)+`, `(?:a|ab)+`;
   `(?:foo|bar)+` is fine, and so is `(?:\\s|\\n)+`, which `re` makes one character class).
3. **Overlapping repetitions in a row**: two unbounded repetitions that can take the same
   characters, with only such characters between them, followed by something that can fail
   (`\\s*\\s*x`, `\\d+\\.?\\d+x`); at the very end of the pattern they cannot fail, so `\\n+\\s*` passes.
4. **A long repetition a search can start inside**: a repetition of unbounded (or over 63) count
   whose characters can begin a match, with something after it that can fail (`" *x"`, `a+b`,
   `.*x`). A failed search starts again at the next character, so over a long run of those
   characters each start walks the rest of the run: quadratic (75 s over 200,000 spaces for `" *x"`).
   One the search reaches only after a character it cannot start with is linear (`\\n\\*\\*+\\n`).

Character classes are compared on a sample alphabet (Latin, Greek, Cyrillic, digits and spaces of
several scripts, CJK, an emoji), so an overlap only outside it goes unseen. The check is
conservative: it may refuse a pattern that is in fact harmless, never with a vague reason. A page
worker's deadline remains the backstop, and `compile_pattern` is the one way in for a pattern from a
request: its length bounded, its syntax, its nesting (a recursion limit in the parser or in this
walk is a refusal naming the field) and its shape checked.
"""

import re
import warnings
from functools import lru_cache

try:
    from re import _constants as C, _parser as P
except ImportError:  # Python before 3.11
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

from ragsim import limits
from ragsim.errors import RequestError
from ragsim.fields import shown

# A repetition this long counts as unbounded for shape 4 (a{1,64} walks up to 64 characters a start).
_LONG = 64

_SAMPLE = tuple(sorted(
    set(range(0x250))
    | {0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF}
    | set(range(0x2000, 0x200C))
    | set(range(0x370, 0x3D0)) | set(range(0x400, 0x460))  # Greek, Cyrillic
    | set(range(0x660, 0x66A)) | set(range(0x966, 0x970)) | set(range(0xFF10, 0xFF1A))  # other digits
    | {0x4E00, 0x4E2D, 0x3042, 0x30A2, 0xAC00, 0x1F600}
))
_ALL = frozenset(_SAMPLE)
_CATEGORIES = {
    C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W",
}
_CATEGORY_SETS: dict = {}
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT)  # those that backtrack (possessive ones do not)
_UNBOUNDED = C.MAXREPEAT


def compile_pattern(pattern: str, field: str, noun: str = "pattern") -> re.Pattern:
    """A regular expression from a request, compiled, or RequestError on `field`: too long, not valid,
    nested too deeply to parse, with a capturing group (LangChain's split and LlamaIndex's findall
    would return the group's text), or of a shape that searches slowly (`check`)."""
    if len(pattern) > limits.MAX_PATTERN_CHARS:
        raise RequestError(field, f"A {noun} may be at most {limits.MAX_PATTERN_CHARS} characters long "
                           f"(got {len(pattern):,}); shorten it.")
    try:
        with warnings.catch_warnings():  # "possible nested set": a warning on stderr is no answer
            warnings.simplefilter("ignore")
            compiled = re.compile(pattern)
    except re.error as e:
        raise RequestError(field, f"The {noun} {shown(pattern)} is not a valid regular expression ({e}).") from None
    except (RecursionError, OverflowError, MemoryError):
        raise RequestError(field, f"The {noun} {shown(pattern)} is nested too deeply or repeats too often to "
                           "compile; write a flatter pattern.") from None
    if compiled.groups:
        raise RequestError(field, f"The {noun} {shown(pattern)} has a capturing group; write (?:...) instead.")
    check(pattern, field)
    return compiled


def check(pattern: str, field: str) -> None:
    """Raise RequestError (on `field`) if `pattern`, a valid expression, can backtrack catastrophically
    or search in quadratic time."""
    try:
        problem = _problem(pattern)
    except (RecursionError, OverflowError, MemoryError):
        problem = "is nested too deeply to check; write a flatter pattern"
    if problem:
        raise RequestError(field, f"The pattern {shown(pattern)} {problem}.")


@lru_cache(maxsize=256)
def _problem(pattern: str) -> str | None:
    seq = P.parse(pattern)
    problem = _walk(seq, tail_can_fail=False)
    if problem:
        return f"backtracks catastrophically: {problem}"
    problem = _restarts(seq, _first(seq)[0], tail_can_fail=False)
    return f"searches in quadratic time: {problem}" if problem else None


# --- characters ----------------------------------------------------------------------------------

def _category(code) -> frozenset:
    if code not in _CATEGORY_SETS:
        rx = re.compile(_CATEGORIES[code]) if code in _CATEGORIES else None
        _CATEGORY_SETS[code] = _ALL if rx is None else frozenset(c for c in _SAMPLE if rx.match(chr(c)))
    return _CATEGORY_SETS[code]


def _same_letter(code: int) -> frozenset:
    """A character and its case variants (case is folded always: over-approximating is safe)."""
    ch = chr(code)
    return frozenset({code} | {ord(v) for v in (ch.lower(), ch.upper()) if len(v) == 1})


def _class(items) -> frozenset:
    """The sample characters an `IN` node (a character class) matches."""
    out, negate = set(), False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            out |= _same_letter(av)
        elif op is C.CATEGORY:
            out |= _category(av)
        elif op in (C.RANGE, getattr(C, "RANGE_UNI_IGNORE", C.RANGE)):
            lo, hi = av
            out |= {c for c in _SAMPLE if lo <= c <= hi}
            out |= {v for c in range(lo, min(hi, 0x24F) + 1) for v in _same_letter(c)}
        else:
            return _ALL  # anything unforeseen: assume it matches everything
    return _ALL - out if negate else frozenset(out)


def _single(op, av) -> frozenset | None:
    """The characters a one-character node matches, or None if the node is not one."""
    if op is C.LITERAL:
        return _same_letter(av)
    if op is C.NOT_LITERAL:
        return _ALL - _same_letter(av)
    if op is C.ANY:
        return _ALL
    if op is C.IN:
        return _class(av)
    return None


def _children(op, av) -> list:
    """The sub-sequences of a node."""
    if op is C.SUBPATTERN:
        return [av[-1]]
    if op in _REPEATS or op is getattr(C, "POSSESSIVE_REPEAT", None):
        return [av[2]]
    if op is C.BRANCH:
        return list(av[1])
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [av[1]]
    if op is getattr(C, "ATOMIC_GROUP", None):
        return [av]
    if op is C.GROUPREF_EXISTS:
        return [p for p in av[1:] if p is not None]
    return []


def _chars(op, av) -> frozenset:
    """Every sample character the node can consume anywhere."""
    one = _single(op, av)
    if one is not None:
        return one
    if op in (C.ASSERT, C.ASSERT_NOT, C.AT):
        return frozenset()  # zero width
    if op is C.GROUPREF:
        return _ALL
    return frozenset().union(*(_chars(o, a) for seq in _children(op, av) for o, a in seq))


def _width(seq, node) -> tuple[int, int]:
    return P.SubPattern(seq.state, [node]).getwidth()


def _first(seq, start: int = 0) -> tuple[frozenset, bool]:
    """The characters the sequence `seq[start:]` can begin with, and whether it can match empty."""
    out = frozenset()
    for node in seq.data[start:]:
        op, av = node
        one = _single(op, av)
        if one is not None:
            return out | one, False
        if op in (C.ASSERT, C.ASSERT_NOT, C.AT):
            continue
        if op is C.GROUPREF:
            return _ALL, True
        firsts = [_first(s) for s in _children(op, av)]
        out |= frozenset().union(*(f for f, _ in firsts))
        if _width(seq, node)[0] > 0:
            return out, False
    return out, True


# --- the three shapes ----------------------------------------------------------------------------

def _walk(seq, tail_can_fail: bool) -> str | None:
    """The first dangerous shape in `seq` (and below), described, or None."""
    nodes = seq.data
    for i, (op, av) in enumerate(nodes):
        if op in _REPEATS and av[1] > 1:
            if _varies(av[2]):
                return ("nested repetition, a repeated part whose own length varies, can split a long run "
                        "of text in exponentially many ways; repeat one fixed-width part instead (a+ rather than (?:a+)+)")
            if _ambiguous(av[2]):
                return ("inside a repetition, alternatives that can match the same text make a long run "
                        "ambiguous in exponentially many ways; make the alternatives start with different characters")
        inner_fail = tail_can_fail or i < len(nodes) - 1
        for child in _children(op, av):
            problem = _walk(child, inner_fail)
            if problem:
                return problem
    return _in_a_row(seq, tail_can_fail)


def _varies(seq) -> bool:
    """Whether `seq` holds, at any depth, a backtracking repetition of variable count."""
    for op, av in seq.data:
        if op in _REPEATS and av[0] != av[1]:
            return True
        if op is not getattr(C, "POSSESSIVE_REPEAT", None) and op is not getattr(C, "ATOMIC_GROUP", None):
            if any(_varies(child) for child in _children(op, av)):
                return True
    return False


def _ambiguous(seq) -> bool:
    """Whether `seq` holds, at any depth, alternatives that can begin alike or one that can match empty
    (`re` factors a common start out, so `(?:a|ab)` arrives as `a(?:|b)`)."""
    for op, av in seq.data:
        if op is C.BRANCH:
            firsts = [_first(b) for b in av[1]]
            if any(empty for _, empty in firsts):
                return True
            for x in range(len(firsts)):
                for y in range(x + 1, len(firsts)):
                    if firsts[x][0] & firsts[y][0]:
                        return True
        if any(_ambiguous(child) for child in _children(op, av)):
            return True
    return False


def _in_a_row(seq, tail_can_fail: bool) -> str | None:
    """Two unbounded parts of variable width that can share characters, with only shared characters
    between them, and something after them that can fail."""
    nodes = seq.data
    open_ = [i for i, n in enumerate(nodes) if _unbounded(seq, n)]
    for x, i in enumerate(open_):
        for j in open_[x + 1:]:
            shared = _chars(*nodes[i]) & _chars(*nodes[j])
            for between in nodes[i + 1:j]:
                if _width(seq, between)[0] > 0:
                    shared &= _chars(*between)
            if shared and (tail_can_fail or any(_can_fail(seq, n) for n in nodes[j + 1:])):
                return ("two repetitions in a row can take the same characters, so a search that fails "
                        "after them tries every way of sharing a run between them; merge them into one")
    return None


def _unbounded(seq, node) -> bool:
    lo, hi = _width(seq, node)
    return lo != hi and hi >= _UNBOUNDED and node[0] is not getattr(C, "POSSESSIVE_REPEAT", None)


def _can_fail(seq, node) -> bool:
    """Whether matching `node` can fail (anything but a part that may match empty text)."""
    return node[0] in (C.AT, C.ASSERT, C.ASSERT_NOT) or _width(seq, node)[0] > 0


def _ends_inside(seq, rest, run: frozenset, starts: frozenset, tail_can_fail: bool) -> bool:
    """Whether a repetition over `run` is followed by nothing but one character `T` the run holds, with
    every start character the run holds being a `T` (`\\n\\s*\\n`): a search that starts inside a run
    then meets the next start character as its `T` and matches, so at most one start a run fails and
    the search is linear."""
    if tail_can_fail or len(rest) != 1 or _width(seq, rest[0]) != (1, 1):
        return False
    tail = _single(*rest[0])
    return tail is not None and tail <= run and (starts & run) <= tail


def _restarts(seq, starts: frozenset, tail_can_fail: bool, prefix: tuple = ()) -> str | None:
    """Shape 4: a long repetition over characters a search can start with (`starts`, the pattern's
    first characters), followed by something that can fail, that a search starting inside a run of
    those characters can reach (`_guarded`: `prefix` is what the pattern must match before `seq`)."""
    nodes = seq.data
    for i, (op, av) in enumerate(nodes):
        after_can_fail = tail_can_fail or any(_can_fail(seq, n) for n in nodes[i + 1:])
        lo, hi = _width(seq, (op, av))
        before = prefix + tuple((*_width(seq, n), _chars(*n)) for n in nodes[:i])
        if after_can_fail and hi != lo and hi >= _LONG and _chars(op, av) & starts \
                and not _ends_inside(seq, nodes[i + 1:], _chars(op, av), starts, tail_can_fail) \
                and not _guarded(before, _chars(op, av)):
            return ("a search that fails starts again at the next character and walks the same run again, "
                    "quadratic over a long run of the repeated characters; begin the pattern with a character "
                    "the repetition cannot take, or end it with the repetition")
        inner = before + ((0, C.MAXREPEAT, _ALL),) if op in _REPEATS else before  # an earlier turn of the loop
        for child in _children(op, av):
            problem = _restarts(child, starts, after_can_fail, inner)
            if problem:
                return problem
    return None


def _guarded(prefix: tuple, run: frozenset) -> bool:
    """Whether a search must match, before it reaches a repetition over `run`, a part that always
    consumes and takes none of `run` (a guard), while every unbounded part before the repetition has
    a guard of its own earlier on. A search starting inside a run then fails at the guard before the
    repetition, and only a bounded number of starts reach each run: each guard's place is fixed by
    the run of the part after it. So the search is linear (LangChain's Visual Basic 6 separator
    `\\n(?!End\\s)(?:Public|...)\\s+?Property\\s+(?:Get|Let|Set)\\s+`); `a*Z\\s+x` and `\\nP.*Q\\s+x`
    stay refused, since many starts reach one run through the `a*` or the `.*`."""

    def guard(upto: int, chars: frozenset) -> bool:
        return any(lo >= 1 and not (c & chars) for lo, _, c in prefix[:upto])

    return guard(len(prefix), run) and all(guard(k, c) for k, (_, hi, c) in enumerate(prefix) if hi >= _LONG)
