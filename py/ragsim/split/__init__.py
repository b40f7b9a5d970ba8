"""Strategy registry: `chunking.strategy` name -> function(doc: DocIndex, chunking: dict) -> Split.

Each strategy validates its own fields (raising RequestError with the dotted field name) and
returns extents computed while splitting. `window` (SPEC section 2) is the default.
"""

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.text.extents import Split
from ragsim.text.index import DocIndex
from ragsim.split import windows
from ragsim.split import haystack, langchain_character, langchain_recursive, langchain_token, sentences
from ragsim.split import llamaindex_markdown, llamaindex_sentence, llamaindex_token

STRATEGIES = {
    "window": windows.split,
    "langchain-character": langchain_character.split,
    "langchain-recursive": langchain_token.split_recursive_by_length,
    "langchain-token": langchain_token.split,  # tiktoken tokens (issue 12)
    "haystack": haystack.split,
    "sentences": sentences.split,
    # LlamaIndex (llama-index-core 0.14.25): sizes in tiktoken tokens; markdown sections have no size
    "llamaindex-sentence": llamaindex_sentence.split,
    "llamaindex-token": llamaindex_token.split,
    "llamaindex-markdown": llamaindex_markdown.split,
}


def estimate(doc, chunking: dict) -> int:
    """How many chunks `split` will make, counted arithmetically before splitting, for the strategies
    whose chunks are windows over countable units (window over words or chars, haystack); 0 for the
    others and for settings `split` will refuse anyway (the pipeline counts their chunks after)."""
    name = chunking.get("strategy", "window")
    size, overlap = chunking.get("size"), chunking.get("overlap", 0)
    if name == "haystack":
        size = chunking.get("size", 200)
    if not (type(size) is int and type(overlap) is int and 0 <= overlap < size):
        return 0
    if name == "window" and chunking.get("unit", "words") in ("words", "chars"):
        n = doc.n_words if chunking.get("unit", "words") == "words" else len(doc.text)
        step = size - overlap
        return 1 + max(0, -(-(n - size) // step)) if n else 0
    if name == "haystack" and isinstance(chunking.get("split_by", "word"), str):
        delimiter = haystack.SPLIT_BY.get(chunking.get("split_by", "word"), ("", ""))[0]
        if delimiter:
            bounds = doc.memo.get(("haystack", delimiter))
            n = len(bounds) - 1 if bounds is not None else doc.text.count(delimiter) + 1
            return haystack.window_count(n, size, size - overlap) if doc.text else 0
    return 0


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
