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


def split(doc, chunking: dict) -> Split:
    """Split one indexed document (`doc.text`) by the strategy the request names."""
    name = chunking.get("strategy", "window")
    try:
        strategy = STRATEGIES[name]
    except (KeyError, TypeError):
        listed = ", ".join(STRATEGIES)  # plain names: the list is long enough already
        raise RequestError("chunking.strategy", f"chunking.strategy must be one of {listed} (got {shown(name)}).") from None
    return strategy(doc, chunking)


def split_and_layout(doc: DocIndex, chunking: dict):
    """A document's split and where its words and terms fall (each chunk's `dl` among them)."""
    chunks = split(doc, chunking)
    return chunks, doc.layout(chunks.starts, chunks.ends, chunks.word_ranges)
