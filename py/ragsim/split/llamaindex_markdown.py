r"""`llamaindex-markdown`: LlamaIndex's `MarkdownNodeParser` (llama-index-core 0.14.25), node for node, with extents.

One chunk per section: a section starts at each heading line (`^(#+)\s(.*)` on a line of
`text.split("\n")`, outside ``` fences, a line whose stripped start is ``` opening or closing one)
and runs to the next heading. Each section is stripped, and a blank one (text before the first
heading that is only whitespace) dropped. There is no size: a section is as long as it is.
`units` counts characters, so this strategy needs no tokenizer.

LlamaIndex rebuilds the heading line as `"#" * level + " " + title`, so where the whitespace after
the `#`s is not a space (a tab, say), its chunk has a space there. The extent is the section in the
document; docs/splitters.md records this.
"""

import re

from ragsim.text.extents import Split
from ragsim.split.llamaindex_common import stripped

_HEADING = re.compile(r"^(#+)\s(.*)")


def split(doc, chunking: dict) -> Split:
    text = doc.text
    got = doc.memo.get("llamaindex-markdown")
    if got is None:
        got = doc.memo["llamaindex-markdown"] = tuple((a, b, b - a) for a, b in sections(text))
    return Split(got, "chars", len(text))


def sections(text: str) -> list[tuple[int, int]]:
    """`MarkdownNodeParser.get_nodes_from_node`'s sections as stripped extents of `text`."""
    out: list[tuple[int, int]] = []
    start = 0  # where the current section starts
    pos = 0  # where the current line starts
    code_block = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            code_block = not code_block
        elif not code_block and _HEADING.match(line):
            _close(text, start, pos, out)
            start = pos
        pos += len(line) + 1
    _close(text, start, len(text), out)
    return out


def _close(text: str, a: int, b: int, out: list) -> None:
    a, b = stripped(text, a, b)
    if b > a:
        out.append((a, b))
