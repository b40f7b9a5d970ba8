"""`langchain-recursive`: LangChain's `RecursiveCharacterTextSplitter`, chunk for chunk, with extents.

The first separator of the list that occurs in the text splits it; pieces shorter than `size` are
packed by `_merge_splits`, longer ones are split again with the remaining separators, and a piece
that no remaining separator can split becomes a chunk as it stands (over size, not stripped).
`language` picks LangChain's preset list (`get_separators_for_language`), which, as
`RecursiveCharacterTextSplitter.from_language` does, treats every separator as a regular expression.
"""

import re

from ragsim import limits
from ragsim.errors import RequestError
from ragsim.text.extents import Extent, Split
from ragsim.fields import get_bool, shown
from ragsim.split import langchain_common as lc
from ragsim.split.langchain_languages import LANGUAGES  # LangChain's presets, as data

DEFAULT_SEPARATORS = ("\n\n", "\n", " ", "")


def read_separators(chunking: dict) -> tuple[tuple[str, ...], bool]:
    """The separator list and whether it is made of regular expressions."""
    language = chunking.get("language")
    if language is not None:
        if "separators" in chunking:
            raise RequestError("chunking.language", "Give either chunking.language or chunking.separators, not both.")
        if not isinstance(language, str) or language not in LANGUAGES:
            listed = ", ".join(repr(n) for n in LANGUAGES)
            raise RequestError("chunking.language", f"chunking.language must be one of {listed} (got {shown(language)}).")
        if chunking.get("is_separator_regex", True) is not True:
            raise RequestError(
                "chunking.is_separator_regex",
                "LangChain's language presets are regular expressions; leave is_separator_regex out or true.",
            )
        return LANGUAGES[language], True
    separators = chunking.get("separators", list(DEFAULT_SEPARATORS))
    if not isinstance(separators, list) or not all(isinstance(s, str) for s in separators):
        raise RequestError("chunking.separators", "Give chunking.separators as a list of strings, e.g. [\"\\n\\n\", \"\\n\", \" \", \"\"].")
    if len(separators) > limits.MAX_SEPARATORS:
        raise RequestError("chunking.separators", f"Give at most {limits.MAX_SEPARATORS} separators "
                           f"(got {len(separators):,}); LangChain's longest preset has 27.")
    is_regex = get_bool(chunking, "is_separator_regex", "chunking.is_separator_regex", default=False)
    # LangChain: `separators or [defaults]`, so an empty list means the defaults.
    return tuple(separators) or DEFAULT_SEPARATORS, is_regex


def split(doc, chunking: dict) -> Split:
    """`RecursiveCharacterTextSplitter` measuring length in characters (`length: "tokens"` is
    `langchain_token.split_recursive`; the registry picks by `length`)."""
    size, overlap, strip = lc.read_common(chunking)
    separators, is_regex = read_separators(chunking)
    keep = lc.read_keep_separator(chunking, default=True)
    text = doc.text

    compiled = {
        s: lc.compile_separator(s if is_regex else re.escape(s), "chunking.separators", is_regex)
        for s in separators
        if s
    }

    # How a span splits depends on the text and the separators only, never on size or overlap: the
    # results are kept on the index, so a slider move only re-packs. `seps` is always a suffix of
    # `separators`, named by its length.
    memo = doc.memo.setdefault(("langchain-recursive", separators, is_regex, keep), {})

    def pieces_of(a: int, b: int, n_seps: int):
        return split_span(text, separators, compiled, keep, memo, a, b, n_seps)

    out: list = []

    def split_text(a: int, b: int, n_seps: int) -> None:
        """`_split_text(text[a:b], seps)`, appending the chunks' extents to `out`."""
        separator, n_rest, pieces, gaps = pieces_of(a, b, n_seps)
        merge_sep = "" if keep else separator
        if isinstance(pieces, lc.Characters) and size > 1:  # single characters all fit: skip runs by bisection
            cum = lc.Steps(len(pieces) + 1, 1)
            lc.merge(text, pieces, 0, len(pieces), merge_sep, size, overlap, strip, out, gaps, cum)
            return
        good = 0  # pieces[good:i] are the pending pieces shorter than size
        for i, (pa, pb) in enumerate(pieces):
            if pb - pa < size:
                continue
            if i > good:
                lc.merge(text, pieces, good, i, merge_sep, size, overlap, strip, out, gaps)
            good = i + 1
            if not n_rest:
                out.append(Extent(pa, pb, pb - pa))  # LangChain appends it as is: over size, unstripped
                if len(out) > limits.MAX_CHUNKS:
                    limits.check_chunks(len(out))
            else:
                split_text(pa, pb, n_rest)
        if len(pieces) > good:
            lc.merge(text, pieces, good, len(pieces), merge_sep, size, overlap, strip, out, gaps)

    split_text(0, len(text), len(separators))
    return Split(tuple(out), "chars", len(text))


def split_span(text: str, separators, compiled: dict, keep, memo: dict, a: int, b: int, n_seps: int):
    """(separator, remaining separators, pieces, gaps) of `_split_text(text[a:b], seps)`, `seps` being
    the last `n_seps` of `separators`; kept in `memo`."""
    got = memo.get((a, b, n_seps))
    if got is None:
        seps = separators[len(separators) - n_seps :]
        piece_text = text[a:b]
        separator, rest = seps[-1], ()
        for i, s in enumerate(seps):
            if not s:
                separator = s
                break
            if compiled[s].search(piece_text):
                separator, rest = s, seps[i + 1 :]
                break
        pieces = lc.split_with_regex(piece_text, a, compiled.get(separator) if separator else None, keep)
        gaps = lc.inexact_gaps(text, pieces, "" if keep else separator)
        got = memo[(a, b, n_seps)] = (separator, len(rest), pieces, gaps)
    return got
