""""Equivalent code": the few lines of Python that build the same splitter and the same BM25 in the real
libraries (LangChain / Haystack, bm25s) for one request, runnable as is with the text in `text`.

The fields are read by the very functions the splitters use, so the defaults written out are the
ones the simulation ran with. `tests/conformance/test_codegen.py` runs the output against the
installed libraries and compares chunk texts and scores with ragsim's.
"""

from ragsim.text import analyzers
from ragsim.rank import bm25, reranking
from ragsim.errors import RequestError
from ragsim.fields import get_bool, get_choice, get_int, get_number, get_str
from ragsim.split import STRATEGIES, langchain_common as lc, haystack, langchain_recursive, registry
from ragsim.split.langchain_token import read_length
from ragsim.split.windows import read_params
from ragsim.wire.codegen_llamaindex import llamaindex_lines
from ragsim.wire.codegen_rerank import rerank_lines
from ragsim.wire.codegen_semantic import GENERATORS as SEMANTIC_GENERATORS
from ragsim.wire.codegen_tokens import langchain_tail, token_lines  # tiktoken tokens


def _character_lines(chunking: dict) -> list[str]:
    size, overlap, strip = lc.read_common(chunking)
    separator = get_str(chunking, "separator", "chunking.separator", default="\n\n")
    is_regex = get_bool(chunking, "is_separator_regex", "chunking.is_separator_regex", default=False)
    keep = lc.read_keep_separator(chunking, default=False)
    return [
        "from langchain_text_splitters import CharacterTextSplitter",
        "",
        "splitter = CharacterTextSplitter(",
        f"    separator={separator!r},",
        f"    is_separator_regex={is_regex!r},",
        *langchain_tail(keep, size, overlap, strip),
    ]


def _recursive_lines(chunking: dict) -> list[str]:
    size, overlap, strip = lc.read_common(chunking)
    separators, is_regex = langchain_recursive.read_separators(chunking)
    keep = lc.read_keep_separator(chunking, default=True)
    common = langchain_tail(keep, size, overlap, strip)
    language = chunking.get("language")
    if language is not None:
        return [
            "from langchain_text_splitters import Language, RecursiveCharacterTextSplitter",
            "",
            "splitter = RecursiveCharacterTextSplitter.from_language(",
            f"    Language.{language.upper()},",
            *common,
        ]
    return [
        "from langchain_text_splitters import RecursiveCharacterTextSplitter",
        "",
        "splitter = RecursiveCharacterTextSplitter(",
        f"    separators={list(separators)!r},",
        f"    is_separator_regex={is_regex!r},",
        *common,
    ]


def _haystack_lines(chunking: dict) -> list[str]:
    split_by = get_choice(chunking, "split_by", "chunking.split_by", tuple(haystack.SPLIT_BY), default="word")
    length = get_int(chunking, "size", "chunking.size", default=200, minimum=1)
    overlap = get_int(chunking, "overlap", "chunking.overlap", default=0, minimum=0)
    threshold = get_int(chunking, "split_threshold", "chunking.split_threshold", default=0, minimum=0)
    return [
        "from haystack import Document",
        "from haystack.components.preprocessors import DocumentSplitter",
        "",
        "splitter = DocumentSplitter(",
        f"    split_by={split_by!r},",
        f"    split_length={length},",
        f"    split_overlap={overlap},",
        f"    split_threshold={threshold},",
        ")",
        'chunks = [d.content for d in splitter.run(documents=[Document(content=text)])["documents"]]',
    ]


def _sentences_lines(chunking: dict) -> list[str]:
    unit, size, overlap = read_params(chunking)
    return [
        "# No library packs sentences exactly this way: this is ragsim's own rule, so it calls",
        "# ragsim's standard-library core (the py/ folder of ragsim on sys.path, or pip install ragsim).",
        "# LlamaIndex's SentenceSplitter(chunk_size, chunk_overlap) is the nearest library call,",
        "# but it counts tokens and splits sentences differently.",
        "from ragsim.split import split",
        "from ragsim.text.index import DocIndex",
        "",
        f"packed = split(DocIndex.build(text), {{'strategy': 'sentences', 'unit': {unit!r}, 'size': {size}, 'overlap': {overlap}}})",
        "chunks = [text[a:b] for a, b in zip(packed.starts, packed.ends)]",
    ]


def _window_lines(chunking: dict) -> list[str]:
    """No library needed, and none cuts exactly these fixed windows."""
    unit, size, overlap = read_params(chunking)
    step = size - overlap
    if unit == "words":
        return [
            "import re",
            "",
            f"# Fixed windows of {size} words stepping by {step} (no library call cuts exactly these).",
            'words = [(m.start(), m.end()) for m in re.finditer(r"\\S+", text)]',
            "chunks = []",
            f"for a in range(0, len(words), {step}):",
            f"    b = min(a + {size}, len(words))",
            "    chunks.append(text[words[a][0]:words[b - 1][1]])",
            "    if b == len(words):",
            "        break",
        ]
    return [
        f"# Fixed windows of {size} characters stepping by {step} (no library call cuts exactly these).",
        "chunks = []",
        f"for a in range(0, len(text), {step}):",
        f"    chunks.append(text[a:a + {size}])",
        f"    if a + {size} >= len(text):",
        "        break",
    ]


def _by_unit(tokens: bool, lines, chunking: dict) -> list[str]:
    """The token writer (codegen_tokens) where the splitter counts tiktoken tokens, else `lines`."""
    return token_lines(chunking) if tokens else lines(chunking)


# The line-writer of every registered strategy (tests/unit/test_registry.py: one each, no other).
GENERATORS = {
    "window": lambda c: _by_unit(c.get("unit") == "tokens", _window_lines, c),
    "langchain-character": _character_lines,
    "langchain-recursive": lambda c: _by_unit(read_length(c) == "tokens", _recursive_lines, c),
    "langchain-token": token_lines,
    "haystack": _haystack_lines,
    "sentences": lambda c: _by_unit(c.get("unit") == "tokens", _sentences_lines, c),
    "llamaindex-sentence": llamaindex_lines,
    "llamaindex-token": llamaindex_lines,
    "llamaindex-markdown": llamaindex_lines,
    **SEMANTIC_GENERATORS,  # SPEC section 12: the library's class and an all-MiniLM-L6-v2 embeddings object
}


def _splitter_lines(chunking: dict) -> list[str]:
    """Lines that leave the chunk texts of one document `text` in `chunks`."""
    splitter = registry.of(chunking)
    if chunking.get("strategy") == "stored":
        raise RequestError("chunking.strategy", "Stored chunks were made by your own pipeline, so there is no "
                           "splitter code to show; simulate the splitter inspect names and ask again.")
    if splitter is None:
        get_choice(chunking, "strategy", "chunking.strategy", tuple(STRATEGIES))  # raises the usual error
    return GENERATORS[splitter.name](chunking)


def _bm25_lines(retrieval: dict, query: str) -> list[str]:
    variant = get_choice(retrieval, "variant", "retrieval.variant", tuple(bm25.VARIANTS), default="lucene")
    k1 = get_number(retrieval, "k1", "retrieval.k1", default=1.2, minimum=0)
    b = get_number(retrieval, "b", "retrieval.b", default=0.75, minimum=0)
    delta = get_number(retrieval, "delta", "retrieval.delta", default=0.5, minimum=0)
    k = get_int(retrieval, "k", "retrieval.k", minimum=1)
    stopwords, stemmer = analyzers.read_options(retrieval)
    lines = ["", "import re", "", "import bm25s"]
    if stemmer:
        lines.append("import snowballstemmer")
    lines += ["", "", "def terms(t):", "    # ragsim's terms: lower-cased \\w+ runs (bm25s.tokenize would drop 1-letter words)"]
    body = 're.findall(r"\\w+", t.lower())'
    if not (stopwords or stemmer):
        lines.append(f"    return {body}")
    else:
        lines.append(f"    tokens = {body}")
        if stopwords:
            lines.append("    tokens = [w for w in tokens if w not in bm25s.stopwords.STOPWORDS_EN]  # stop words first,")
        if stemmer:
            lines.append('    tokens = [stem(w) for w in tokens]  # then stems, as bm25s.tokenize does')
        lines.append("    return tokens")
        if stemmer:
            lines[lines.index("def terms(t):"):lines.index("def terms(t):")] = [
                'stem = snowballstemmer.stemmer("english").stemWord',
                "",
                "",
            ]
    lines += [
        "",
        "",
        f"retriever = bm25s.BM25(method={variant!r}, k1={k1!r}, b={b!r}, delta={delta!r}, dtype=\"float64\")",
        "retriever.index([terms(c) for c in chunks], show_progress=False)",
        f"query = {query!r}",
        "query_terms = terms(query)",
        "# bm25s's get_scores needs at least one term; a repeated term counts once per occurrence.",
        "scores = retriever.get_scores(query_terms) if query_terms else [0.0] * len(chunks)",
        f"top = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:{k}]",
    ]
    return lines


def equivalent_code(request: dict) -> str:
    """Python source that builds the request's splitter and BM25 in the real libraries."""
    if not isinstance(request, dict):
        raise RequestError("request", "The request must be a JSON object.")
    chunking = request.get("chunking")
    if not isinstance(chunking, dict):
        raise RequestError("chunking", "Give chunking as an object with at least a size.")
    retrieval = request.get("retrieval")
    if not isinstance(retrieval, dict):
        raise RequestError("retrieval", "Give retrieval as an object with at least k.")
    query = get_str(request, "query", "query", default="")
    head = [
        "# `text` holds one document's text; for several documents, split each one and",
        "# concatenate their chunks in document order before indexing.",
    ]
    method = retrieval.get("method", "bm25")
    lines = _splitter_lines(chunking)
    k = get_int(retrieval, "k", "retrieval.k", minimum=1)
    rerank = reranking.read_options(retrieval)
    if rerank is not None:  # the retriever's lines keep the chunks the reranker reads
        retrieval = {**retrieval, "k": max(k, rerank.depth)}
    if method != "dense":
        lines += _bm25_lines(retrieval, query)
    if method != "bm25":  # dense or hybrid (SPEC section 10)
        from ragsim.wire.codegen_dense import dense_lines

        lines += dense_lines(retrieval, query)
    if rerank is not None:
        lines += rerank_lines(rerank, chunking, query, k)
    return "\n".join(head + _hoist_imports(lines)) + "\n"


def _hoist_imports(lines: list[str]) -> list[str]:
    """Every top-level import once, at the top (standard library first), then the code without
    the blank lines the removed imports leave at its start."""
    imports = list(dict.fromkeys(l for l in lines if l.startswith(("import ", "from "))))
    body = [l for l in lines if not l.startswith(("import ", "from "))]
    while body and not body[0].strip():
        body.pop(0)
    # where an import stood between blank lines, keep at most two blank lines in a row
    body = [l for i, l in enumerate(body) if l.strip() or i < 2 or body[i - 1].strip() or body[i - 2].strip()]
    stdlib = [l for l in imports if l in ("import re", "import json", "import math")]
    others = [l for l in imports if l not in stdlib]
    return stdlib + ([""] if stdlib and others else []) + others + ["", ""] + body
