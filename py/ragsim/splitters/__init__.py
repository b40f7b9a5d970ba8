"""Strategy registry: `chunking.strategy` name -> function(doc: DocIndex, chunking: dict) -> Split.

Each strategy validates its own fields (raising RequestError with the dotted field name) and
returns extents computed while splitting. `window` (SPEC section 2) is the default.
"""

from ..errors import RequestError
from ..extents import Split
from .. import windows
from . import haystack, langchain_character, langchain_recursive, langchain_token, sentences
from . import llamaindex_markdown, llamaindex_sentence, llamaindex_token

STRATEGIES = {
    "window": windows.split,
    "langchain-character": langchain_character.split,
    "langchain-recursive": langchain_recursive.split,
    "langchain-token": langchain_token.split,  # tiktoken tokens (issue 12)
    "haystack": haystack.split,
    "sentences": sentences.split,
    # LlamaIndex (llama-index-core 0.14.25): sizes in tiktoken tokens; markdown sections have no size
    "llamaindex-sentence": llamaindex_sentence.split,
    "llamaindex-token": llamaindex_token.split,
    "llamaindex-markdown": llamaindex_markdown.split,
}


def split(doc, chunking: dict) -> Split:
    """Split one indexed document (`doc.text`) by the strategy the request names."""
    name = chunking.get("strategy", "window")
    try:
        strategy = STRATEGIES[name]
    except (KeyError, TypeError):
        listed = ", ".join(STRATEGIES)  # plain names: the list is long enough already
        raise RequestError("chunking.strategy", f"chunking.strategy must be one of {listed} (got {name!r}).") from None
    return strategy(doc, chunking)
