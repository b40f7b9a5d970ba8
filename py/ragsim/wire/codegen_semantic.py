""""Equivalent code" for the semantic chunkers (SPEC section 12): the library's class, handed an
embeddings object for all-MiniLM-L6-v2, with every field the simulation ran with written out.
The fields are read by the cutters' own readers, so the values shown are the ones ragsim used.
"""

from ragsim.split.semantic_chroma import read_fields as read_chroma
from ragsim.split.semantic_langchain import LANGCHAIN_SENTENCE_REGEX, read_langchain, read_llamaindex

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
CHROMA_SOURCE = "git+https://github.com/brandonstarxel/chunking_evaluation.git@d451fc4"


def langchain_lines(chunking: dict) -> list[str]:
    buffer_size, rule, amount, number_of_chunks, min_size = read_langchain(chunking)
    regex = chunking.get("sentence_split_regex", LANGCHAIN_SENTENCE_REGEX)
    return [
        "# pip install langchain-experimental==0.4.2 langchain-huggingface sentence-transformers",
        "# (langchain-experimental is being sunset; SemanticChunker has no other home yet)",
        "from langchain_experimental.text_splitter import SemanticChunker",
        "from langchain_huggingface import HuggingFaceEmbeddings",
        "",
        f"embeddings = HuggingFaceEmbeddings(model_name={MODEL!r})",
        "splitter = SemanticChunker(",
        "    embeddings,",
        f"    buffer_size={buffer_size!r},",
        f"    breakpoint_threshold_type={rule!r},",
        f"    breakpoint_threshold_amount={amount!r},",
        f"    number_of_chunks={number_of_chunks!r},",
        f"    sentence_split_regex={regex!r},",
        f"    min_chunk_size={min_size!r},",
        ")",
        "# Each chunk is its sentences re-joined with \" \" (not a slice of the text).",
        "chunks = splitter.split_text(text)",
    ]


def llamaindex_lines(chunking: dict) -> list[str]:
    buffer_size, percentile = read_llamaindex(chunking)
    return [
        "# pip install llama-index-core==0.14.25 llama-index-embeddings-huggingface",
        "from llama_index.core import Document",
        "from llama_index.core.node_parser import SemanticSplitterNodeParser",
        "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
        "",
        "parser = SemanticSplitterNodeParser(",
        f"    embed_model=HuggingFaceEmbedding(model_name={MODEL!r}),",
        f"    buffer_size={buffer_size!r},",
        f"    breakpoint_percentile_threshold={percentile!r},",
        ")",
        "chunks = [node.get_content() for node in parser.get_nodes_from_documents([Document(text=text)])]",
    ]


def chroma_lines(chunking: dict) -> list[str]:
    size, min_size, tokenizer = read_chroma(chunking)
    cluster = chunking.get("strategy") == "chroma-cluster"
    cls, size_name = ("ClusterSemanticChunker", "max_chunk_size") if cluster else ("KamradtModifiedChunker", "avg_chunk_size")
    lines = [
        "# chunking_evaluation is not on PyPI: install it from GitHub (the commit ragsim mirrors),",
        f"#   pip install {CHROMA_SOURCE} sentence-transformers",
        f"from chunking_evaluation.chunking import {cls}",
        "from chromadb.utils import embedding_functions",
        "",
        'embed = embedding_functions.SentenceTransformerEmbeddingFunction(model_name="all-MiniLM-L6-v2")',
        f"splitter = {cls}(",
        "    embedding_function=embed,",
        f"    {size_name}={size!r},",
        f"    min_chunk_size={min_size!r},",
    ]
    if tokenizer != "cl100k_base":
        lines[2:2] = ["import tiktoken"]
        lines.append(f"    length_function=lambda s: len(tiktoken.get_encoding({tokenizer!r}).encode(s, disallowed_special=())),")
        if cluster:  # ragsim cuts the pieces by the tokenizer asked for; the library does not
            lines.append("    # (ClusterSemanticChunker still cuts its pieces by cl100k_base: ragsim uses this tokenizer)")
    return lines + [
        ")",
        "# Each chunk is its pieces re-joined with \" \"; sizes count cl100k_base tokens (openai_token_count).",
        "chunks = splitter.split_text(text)",
    ]


GENERATORS = {"langchain-semantic": langchain_lines, "llamaindex-semantic": llamaindex_lines,
              "chroma-cluster": chroma_lines, "chroma-kamradt": chroma_lines}
