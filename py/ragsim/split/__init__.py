"""Splitting: `chunking.strategy` name -> function(doc: DocIndex, chunking: dict) -> Split.

Every strategy is registered once in `registry.SPLITTERS` (its fields, unit, chunk count, grid and
library). Each validates its own fields (raising RequestError with the dotted field name) and
returns extents computed while splitting. `window` (SPEC section 2) is the default.
"""

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.text.extents import Split
from ragsim.text.index import DocIndex
from ragsim.split import registry
from ragsim.split.registry import registry_json  # noqa: F401  the page's table (build.py)

STRATEGIES = {s.name: s.split for s in registry.SPLITTERS}
# the countable splitters' count and size default, looked up once per document of a drag
_COUNTS = {s.name: (s.count, s.field("size").default) for s in registry.SPLITTERS if s.count is not None}


def estimate(doc, chunking: dict) -> int:
    """How many chunks `split` will make, counted arithmetically before splitting, for the strategies
    whose chunks are windows over countable units (the registry's `count`: windows over words or
    chars, haystack); 0 for the others and for settings `split` will refuse anyway (the pipeline
    counts their chunks after)."""
    name = chunking.get("strategy", registry.DEFAULT)
    count, default_size = _COUNTS.get(name, (None, None)) if isinstance(name, str) else (None, None)
    if count is None:
        return 0
    size, overlap = chunking.get("size", default_size), chunking.get("overlap", 0)
    if not (type(size) is int and type(overlap) is int and 0 <= overlap < size):
        return 0
    return count(doc, chunking, size, overlap)


def listed() -> str:
    """The strategies' names, a library's grouped: `langchain-{character,recursive}, ...`."""
    groups: dict = {}
    for name in STRATEGIES:
        head, _, tail = name.partition("-")
        groups.setdefault(head, []).append(tail)
    return ", ".join(h if tails == [""] else f"{h}-{{{','.join(tails)}}}" for h, tails in groups.items())


def split(doc, chunking: dict, embeddings=None) -> Split:
    """Split one indexed document (`doc.text`) by the strategy the request names. A semantic
    strategy (SPEC section 12) takes its vectors from `embeddings` (a session's
    `semantic_split.Embeddings`), else from the registered host, else its split is pending."""
    name = chunking.get("strategy", "window")
    try:
        strategy = STRATEGIES[name]
    except (KeyError, TypeError):
        raise RequestError("chunking.strategy", f"chunking.strategy must be one of {listed()} (got {shown(name)}).") from None
    if name in registry.EMBEDDING:
        return strategy(doc, chunking, embeddings)
    return strategy(doc, chunking)


def split_and_layout(doc: DocIndex, chunking: dict, embeddings=None):
    """A document's split and where its words and terms fall (each chunk's `dl` among them)."""
    chunks = split(doc, chunking, embeddings)
    return chunks, doc.layout(chunks.starts, chunks.ends, chunks.word_ranges)
