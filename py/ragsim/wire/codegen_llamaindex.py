""""Equivalent code" for the LlamaIndex strategies: the lines that leave llama-index-core 0.14.25's chunks
of one document `text` in `chunks`.

The fields are read by the very functions the splitters use, so the values written out are the ones
the simulation ran with. A metadata string goes to `split_text_metadata_aware`, which is what
`get_nodes_from_documents` calls for a document whose metadata reads as that string.
"""

from ragsim.split import llamaindex_common as li, llamaindex_sentence, llamaindex_token
from ragsim.text.tokens import DEFAULT
from ragsim.text.tokens import read_tokenizer


def llamaindex_lines(chunking: dict) -> list[str]:
    name = chunking.get("strategy")
    if name == "llamaindex-markdown":
        return [
            "from llama_index.core import Document",
            "from llama_index.core.node_parser import MarkdownNodeParser",
            "",
            "nodes = MarkdownNodeParser().get_nodes_from_documents([Document(text=text)])",
            "chunks = [n.get_content() for n in nodes]",
        ]
    if name == "llamaindex-sentence":
        size, overlap = li.read_size_overlap(chunking, llamaindex_sentence.SENTENCE_CHUNK_OVERLAP)
        regex = llamaindex_sentence.read_regex(chunking)
        args = [
            f"    separator={li.read_separator(chunking, 'separator', ' ')!r},",
            f"    paragraph_separator={li.read_separator(chunking, 'paragraph_separator', llamaindex_sentence.DEFAULT_PARAGRAPH_SEP)!r},",
            f"    secondary_chunking_regex={regex.pattern if regex is not None else None!r},",
        ]
        cls = "SentenceSplitter"
    else:
        size, overlap = li.read_size_overlap(chunking, llamaindex_token.DEFAULT_CHUNK_OVERLAP)
        args = [
            f"    separator={li.read_separator(chunking, 'separator', ' ')!r},",
            f"    backup_separators={llamaindex_token.read_backups(chunking)!r},",
        ]
        cls = "TokenTextSplitter"
    tokenizer = read_tokenizer(chunking)
    imports = [f"from llama_index.core.node_parser import {cls}"]
    if tokenizer != DEFAULT:
        # LlamaIndex's default counter is cl100k_base (`get_tokenizer()`); another encoding is passed in.
        imports = ["from functools import partial", "", "import tiktoken", *imports]
        args.append(f"    tokenizer=partial(tiktoken.get_encoding({tokenizer!r}).encode, allowed_special=\"all\"),")
    metadata = li.read_metadata(chunking)
    if metadata:
        split = [
            "# What get_nodes_from_documents does for a Document whose metadata string is this one",
            "# (a SimpleDirectoryReader document carries \"file_path: ...\"): its tokens come off the size.",
            f"chunks = splitter.split_text_metadata_aware(text, metadata_str={metadata!r})",
        ]
    else:
        split = ["chunks = splitter.split_text(text)"]
    return [
        *imports,
        "",
        f"splitter = {cls}(",
        f"    chunk_size={size},",
        f"    chunk_overlap={overlap},",
        *args,
        ")",
        *split,
    ]
