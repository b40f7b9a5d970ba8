"""A library's splitter object, read as the request's `chunking` for the splitter ragsim mirrors.

The object's class and module say which library and class it is (walking its bases, so LangChain's
MarkdownTextSplitter reads as the RecursiveCharacterTextSplitter it is); its settings are read from
its own attributes (`_chunk_size`, `_separators`, ... for LangChain; pydantic fields for LlamaIndex;
Haystack's `split_length`). Nothing is imported: a notebook that holds the object has its library.
A setting ragsim does not mirror (a length function other than `len` or a tiktoken encoding, a
subclass with its own `split_text`) is refused in one sentence naming it.
"""

from __future__ import annotations

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.pyapi.inputs import kind_of

def _library(cls) -> str:
    return cls.__module__.split(".")[0]


def _length(splitter, field: str) -> dict:
    """LangChain's length function: `len` (characters) or `from_tiktoken_encoder`'s (tokens)."""
    fn = getattr(splitter, "_length_function", len)
    if fn is len:
        return {}
    cells = dict(zip(getattr(getattr(fn, "__code__", None), "co_freevars", ()), fn.__closure__ or ()))
    enc = cells["enc"].cell_contents if "enc" in cells else None
    if getattr(fn, "__name__", "") == "_tiktoken_encoder" and isinstance(getattr(enc, "name", None), str):
        return {"length": "tokens", "tokenizer": enc.name}
    raise RequestError(field, f"{field} measures chunks with {shown(fn)}, which ragsim does not mirror: it mirrors "
                              f"len (characters) and from_tiktoken_encoder (tiktoken tokens).")


def _sized(s, size="_chunk_size", overlap="_chunk_overlap") -> dict:
    return {"size": getattr(s, size), "overlap": getattr(s, overlap)}


def _lc_common(s) -> dict:
    return {"keep_separator": s._keep_separator, "strip_whitespace": s._strip_whitespace}


def lc_recursive(s, field: str) -> dict:
    out = {"strategy": "langchain-recursive", **_length(s, field), **_sized(s),
           "separators": list(s._separators), "is_separator_regex": s._is_separator_regex, **_lc_common(s)}
    if out.get("length") == "tokens":
        return out
    return {k: v for k, v in out.items() if k != "length"}


def lc_character(s, field: str) -> dict:
    if _length(s, field):
        raise RequestError(field, f"{field} is a CharacterTextSplitter measured in tokens; ragsim mirrors it in "
                                  f"characters only (RecursiveCharacterTextSplitter in either).")
    return {"strategy": "langchain-character", **_sized(s), "separator": s._separator,
            "is_separator_regex": s._is_separator_regex, **_lc_common(s)}


def lc_token(s, field: str) -> dict:
    return {"strategy": "langchain-token", "tokenizer": s._tokenizer.name, **_sized(s)}


def lc_semantic(s, field: str) -> dict:
    out = {"strategy": "langchain-semantic"}
    for name in ("buffer_size", "breakpoint_threshold_type", "breakpoint_threshold_amount", "number_of_chunks",
                 "sentence_split_regex", "min_chunk_size"):
        if getattr(s, name, None) is not None:
            out[name] = getattr(s, name)
    return out


def _li_tokenizer(s, field: str) -> dict:
    """LlamaIndex's tokenizer: tiktoken's `encode` (its default, cl100k_base), named by its encoding."""
    tok = getattr(s, "_tokenizer", None)
    if tok is None:
        return {}
    name = getattr(getattr(getattr(tok, "func", tok), "__self__", None), "name", None)  # partial(Encoding.encode)
    if isinstance(name, str):
        return {"tokenizer": name}
    raise RequestError(field, f"{field} counts tokens with {shown(tok)}, which ragsim does not mirror: it mirrors "
                              f"tiktoken encodings (LlamaIndex's default, cl100k_base).")


def li_sentence(s, field: str) -> dict:
    return {"strategy": "llamaindex-sentence", **_li_tokenizer(s, field), **_sized(s, "chunk_size", "chunk_overlap"),
            "separator": s.separator, "paragraph_separator": s.paragraph_separator,
            "secondary_chunking_regex": s.secondary_chunking_regex}


def li_token(s, field: str) -> dict:
    if getattr(s, "keep_whitespaces", False):
        raise RequestError(field, f"{field} keeps whitespace (keep_whitespaces=True); ragsim mirrors LlamaIndex's "
                                  f"TokenTextSplitter with keep_whitespaces=False only.")
    return {"strategy": "llamaindex-token", **_li_tokenizer(s, field), **_sized(s, "chunk_size", "chunk_overlap"),
            "separator": s.separator, "backup_separators": list(s.backup_separators)}


def li_markdown(s, field: str) -> dict:
    return {"strategy": "llamaindex-markdown"}


def li_semantic(s, field: str) -> dict:
    return {"strategy": "llamaindex-semantic", "buffer_size": s.buffer_size,
            "breakpoint_percentile_threshold": s.breakpoint_percentile_threshold}


def haystack_splitter(s, field: str) -> dict:
    if getattr(s, "respect_sentence_boundary", False) or getattr(s, "splitting_function", None) is not None:
        raise RequestError(field, f"{field} splits by sentence boundaries or its own function; ragsim mirrors "
                                  f"Haystack's DocumentSplitter with split_by word, passage, line, period or page only.")
    return {"strategy": "haystack", "split_by": s.split_by, "size": s.split_length, "overlap": s.split_overlap,
            "split_threshold": s.split_threshold}


MIRRORED = {
    ("langchain_text_splitters", "RecursiveCharacterTextSplitter"): lc_recursive,
    ("langchain_text_splitters", "CharacterTextSplitter"): lc_character,
    ("langchain_text_splitters", "TokenTextSplitter"): lc_token,
    ("langchain_experimental", "SemanticChunker"): lc_semantic,
    ("llama_index", "SentenceSplitter"): li_sentence,
    ("llama_index", "TokenTextSplitter"): li_token,
    ("llama_index", "MarkdownNodeParser"): li_markdown,
    ("llama_index", "SemanticSplitterNodeParser"): li_semantic,
    ("haystack", "DocumentSplitter"): haystack_splitter,
}
LISTED = ("LangChain's RecursiveCharacterTextSplitter (and its subclasses), CharacterTextSplitter, TokenTextSplitter, "
          "SemanticChunker; LlamaIndex's SentenceSplitter, TokenTextSplitter, MarkdownNodeParser, "
          "SemanticSplitterNodeParser; Haystack's DocumentSplitter")
OWN_SPLIT = ("split_text", "_split_text", "_parse_nodes", "run")  # a class defining one splits its own way


def mirrored(splitter):
    """(the reader of the mirrored class it is, that class, the subclass between them that splits
    its own way or None); (None, None, None) for a class ragsim does not mirror."""
    mro = type(splitter).__mro__
    for depth, cls in enumerate(mro):
        read = MIRRORED.get((_library(cls), cls.__name__))
        if read is None and _library(cls) == "langchain":  # langchain's re-export of the splitters
            read = MIRRORED.get(("langchain_text_splitters", cls.__name__))
        if read is not None:
            own = [c for c in mro[:depth] if any(name in vars(c) for name in OWN_SPLIT)]
            return read, cls, own[0] if own else None
    return None, None, None


def chunking_of(splitter, field: str = "splitter") -> dict:
    """The request's `chunking` for a library's splitter object (RequestError naming it otherwise)."""
    if isinstance(splitter, dict):
        return dict(splitter)
    read, cls, own = mirrored(splitter)
    if own is not None:
        raise RequestError(field, f"{field} is {kind_of(splitter)}, a {cls.__name__} whose subclass {own.__name__} "
                                  f"splits text its own way; ragsim mirrors {LISTED}.")
    if read is None:
        raise RequestError(field, f"{field} is {kind_of(splitter)}, which ragsim does not mirror; give one of "
                                  f"{LISTED}, or a chunking dict.")
    try:
        return read(splitter, field)
    except AttributeError as e:  # another version of the library, without the attribute read here
        raise RequestError(field, f"{field} is {kind_of(splitter)} without the setting {e.name!r} ragsim reads; "
                                  f"this version of its library is not one ragsim mirrors.") from None
