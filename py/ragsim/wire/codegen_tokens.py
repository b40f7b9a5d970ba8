""""Equivalent code" for the token strategies: tiktoken and LangChain's token splitters, runnable as is.

`ragsim.wire.codegen.GENERATORS` hands over `window` and `sentences` with `unit: "tokens"`,
`langchain-token` and `langchain-recursive` with `length: "tokens"`. The fields are read by the splitters' own functions,
so the defaults written out are the ones the simulation ran with.
"""

from ragsim.split import langchain_common as lc, langchain_recursive
from ragsim.split.windows import read_size_overlap
from ragsim.text.tokens import read_tokenizer

# LangChain's TokenTextSplitter decodes token windows; where one ends inside a character its text has
# U+FFFD there, while ragsim's chunk holds the whole character (docs/splitters.md, "Tokens").
_DIVERGENCE = [
    "# Where a window boundary falls inside a character (an emoji split across tokens), LangChain",
    "# decodes U+FFFD there; ragsim's chunk holds the whole character (docs/splitters.md, Tokens).",
]


def langchain_tail(keep, size: int, overlap: int, strip: bool) -> list[str]:
    """The arguments both LangChain splitters share, the closing bracket and the split itself."""
    return [
        f"    keep_separator={keep!r},",
        f"    chunk_size={size},",
        f"    chunk_overlap={overlap},",
        f"    strip_whitespace={strip!r},",
        ")",
        "chunks = splitter.split_text(text)",
    ]


def token_lines(chunking: dict) -> list[str]:
    """Lines that leave the chunk texts of one document `text` in `chunks`."""
    name = chunking.get("strategy", "window")
    tokenizer = read_tokenizer(chunking)
    if name == "langchain-token":
        return _token_splitter_lines(chunking, tokenizer)
    if name == "langchain-recursive":
        return _recursive_lines(chunking, tokenizer)
    size, overlap = read_size_overlap(chunking)
    if name == "sentences":
        return _sentences_lines(tokenizer, size, overlap)
    return _window_lines(tokenizer, size, overlap)


def _token_splitter_lines(chunking: dict, tokenizer: str) -> list[str]:
    size, overlap, _ = lc.read_common(chunking)
    return [
        "from langchain_text_splitters import TokenTextSplitter",
        "",
        *_DIVERGENCE,
        "splitter = TokenTextSplitter(",
        f"    encoding_name={tokenizer!r},",
        "    allowed_special=\"all\",  # special tokens as single tokens, as tiktoken's encode(..., allowed_special=\"all\")",
        f"    chunk_size={size},",
        f"    chunk_overlap={overlap},",
        ")",
        "chunks = splitter.split_text(text)",
    ]


def _recursive_lines(chunking: dict, tokenizer: str) -> list[str]:
    size, overlap, strip = lc.read_common(chunking)
    separators, is_regex = langchain_recursive.read_separators(chunking)
    keep = lc.read_keep_separator(chunking, default=True)
    language = chunking.get("language")
    imports = "Language, RecursiveCharacterTextSplitter" if language else "RecursiveCharacterTextSplitter"
    seps = (f"RecursiveCharacterTextSplitter.get_separators_for_language(Language.{language.upper()})"
            if language else repr(list(separators)))
    return [
        f"from langchain_text_splitters import {imports}",
        "",
        "splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(",
        f"    encoding_name={tokenizer!r},",
        f"    separators={seps},",
        f"    is_separator_regex={is_regex!r},",
        *langchain_tail(keep, size, overlap, strip),
    ]


def _sentences_lines(tokenizer: str, size: int, overlap: int) -> list[str]:
    return [
        "# No library packs sentences exactly this way: this is ragsim's own rule, so it calls",
        "# ragsim's standard-library core (the py/ folder of ragsim on sys.path, or pip install ragsim);",
        "# it finds the rank file as the command line does (python3 build.py fetches it).",
        "import ragsim.host",
        "from ragsim.split import split",
        "from ragsim.text.index import DocIndex",
        "",
        "ragsim.host.register()  # CPython's rank files, found as the command line finds them",
        f"packed = split(DocIndex.build(text), {{'strategy': 'sentences', 'unit': 'tokens', 'tokenizer': "
        f"{tokenizer!r}, 'size': {size}, 'overlap': {overlap}}})",
        "chunks = [text[a:b] for a, b in zip(packed.starts, packed.ends)]",
    ]


def _window_lines(tokenizer: str, size: int, overlap: int) -> list[str]:
    step = size - overlap
    return [
        "import tiktoken",
        "",
        f"# Fixed windows of {size} {tokenizer} tokens stepping by {step} (no library call cuts exactly",
        "# these). A chunk runs from the character holding its first token's first byte to the",
        "# character holding its last token's last byte.",
        f"enc = tiktoken.get_encoding({tokenizer!r})",
        'ids = enc.encode(text, allowed_special="all")',
        'char_of = [i for i, ch in enumerate(text) for _ in ch.encode("utf-8")]  # byte -> character',
        "bounds = [0]  # bounds[i]: the first byte of token i",
        "for i in ids:",
        "    bounds.append(bounds[-1] + len(enc.decode_single_token_bytes(i)))",
        "chunks = []",
        f"for a in range(0, len(ids), {step}):",
        f"    b = min(a + {size}, len(ids))",
        "    chunks.append(text[char_of[bounds[a]]:char_of[bounds[b] - 1] + 1])",
        "    if b == len(ids):",
        "        break",
    ]
