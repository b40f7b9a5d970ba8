"""`langchain-character`: LangChain's `CharacterTextSplitter`, chunk for chunk, with extents.

One separator (default a blank line, "\\n\\n"); the pieces between separators are packed up to
`size` characters by LangChain's `_merge_splits` (see `_langchain.py` for the quirks reproduced).
"""

import re

from ragsim.text.extents import Split
from ragsim.fields import get_bool, get_str
from ragsim.split import langchain_common as lc


def split(doc, chunking: dict) -> Split:
    size, overlap, strip = lc.read_common(chunking)
    separator = get_str(chunking, "separator", "chunking.separator", default="\n\n")
    is_regex = get_bool(chunking, "is_separator_regex", "chunking.is_separator_regex", default=False)
    keep = lc.read_keep_separator(chunking, default=False)

    text = doc.text
    # The pieces depend on the text and the separator only: kept on the index for the next move.
    key = ("langchain-character", separator, is_regex, keep)
    # The separator is put back between pieces unless it was kept on them or is a zero-width lookaround.
    lookaround = is_regex and separator.startswith(lc.LOOKAROUND_PREFIXES)
    merge_sep = "" if (keep or lookaround) else separator
    got = doc.memo.get(key)
    if got is None:
        pattern_text = separator if is_regex else re.escape(separator)
        pattern = lc.compile_separator(pattern_text, "chunking.separator", is_regex) if pattern_text else None
        pieces = lc.split_with_regex(text, 0, pattern, keep)
        got = doc.memo[key] = (pieces, lc.inexact_gaps(text, pieces, merge_sep), lc.piece_sums(pieces, merge_sep))
    pieces, gaps, cum = got
    out: list = []
    lc.merge(text, pieces, 0, len(pieces), merge_sep, size, overlap, strip, out, gaps, cum)
    return Split(tuple(out), "chars", len(text))
