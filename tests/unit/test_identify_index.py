"""ragsim.judge.identify_index: one reading of an index from its documents' own readings, on LangChain's
chunks of CPython's help topics; and chunk_records.lookup, the nested keys a document is named by."""

import json

import pydoc_data.topics
from llama_index.core.schema import MetadataMode
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragsim.judge.identify import identify
from ragsim.judge.identify_index import IndexReading
from ragsim.wire.chunk_records import document_of, lookup, offsets

TOPICS = sorted(pydoc_data.topics.topics)
TEXTS = {"long": "\n\n".join(pydoc_data.topics.topics[k] for k in TOPICS[:12])[:9000],
         "other": "\n\n".join(pydoc_data.topics.topics[k] for k in TOPICS[12:30])[:7000],
         "short": "A single short paragraph, one chunk whatever the size."}


def extents(text, chunks):
    out, previous = [], 0
    for chunk in chunks:
        at = text.find(chunk, previous)
        out.append((at, at + len(chunk)))
        previous = at
    return out


def reading(size=1000, overlap=200) -> tuple[dict, list[dict]]:
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    rows, placed = [], {}
    for doc, text in TEXTS.items():
        chunks = splitter.split_text(text)
        placed[doc] = extents(text, chunks)
        rows.append(identify(text, placed[doc], chunks, doc=doc, tokenizers=()))
    whole = IndexReading(rows)
    for doc, text in TEXTS.items():
        whole.add(doc, text, placed[doc])
    return whole.result(), rows


def test_a_one_chunk_document_does_not_split_the_reading():
    whole, rows = reading()
    by_doc = {r["doc"]: r for r in rows}
    assert by_doc["short"]["chunks"] == 1 and by_doc["short"]["fields"]["size"] != 1000  # alone: any size
    assert (whole["strategy"], whole["fields"]) == ("langchain-recursive", {"size": 1000, "overlap": 200})
    assert whole["reproduced"] == whole["chunks"] == sum(r["chunks"] for r in rows)
    assert whole["differ"] == [] and whole["documents"] == 3 and whole["metadata_tokens"] is None
    assert whole["line"].startswith("LangChain RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200): "
                                    f"{whole['chunks']} of {whole['chunks']} chunks exactly over 3 documents")


def test_ties_are_said_and_a_document_that_differs_is_listed():
    rows = [{"doc": "a", "strategy": "langchain-recursive", "fields": {"size": 900, "overlap": 0}, "reproduced": 4,
             "chunks": 4, "line": "a's own"},
            {"doc": "b", "strategy": "langchain-recursive", "fields": {"size": 902, "overlap": 0}, "reproduced": 3,
             "chunks": 3, "line": "b's own"}]
    whole = IndexReading(rows)
    whole.scores["a"] = [4, 4]  # both sizes reproduce both documents' chunks
    whole.scores["b"] = [3, 3]
    got = whole.result()
    assert got["reproduced"] == 7 and [t["fields"]["size"] for t in got["ties"]] == [902]
    assert "chunk_size=902, chunk_overlap=0 reproduces as many, a tie the chunks cannot settle" in got["line"]
    whole.scores["a"], whole.scores["b"] = [4, 0], [1, 3]
    got = whole.result()
    assert got["fields"]["size"] == 900 and got["differ"] == [{"doc": "b", "reproduced": 1, "chunks": 3, "line": "b's own"}]
    assert got["line"].endswith("; 1 document differs")


def test_nested_and_dotted_keys_name_the_document():
    haystack = {"meta": {"file_path": "a.txt", "split_idx_start": 120}, "blob": None}
    assert document_of(haystack, None, None, "A point") == "a.txt"
    assert document_of(haystack, "meta.file_path", None, "A point") == "a.txt"
    assert offsets("chunk", haystack) == (120, 125)
    assert document_of({"file_name": "b.md", "ref_doc_id": "x"}, None, None, "A node") == "b.md"
    assert lookup({"a.b": 1, "a": {"b": 2}}, "a.b") == 1 and lookup({"a": {"b": 2}}, "a.b") == 2
    assert offsets("chunk", {"start_index": 7.0}) == (7, 12)  # Pinecone's numbers are floats


def test_the_metadata_string_is_llamaindexs_and_a_stored_template_is_never_run():
    from llama_index.core.schema import TextNode

    from ragsim.wire.node_metadata import metadata_str

    node = TextNode(text="x", metadata={"file_path": "/a/b.txt", "file_name": "b.txt", "size": 12},
                    excluded_embed_metadata_keys=["file_name"], excluded_llm_metadata_keys=["size"])
    stored = json.loads(node.model_dump_json())
    longer = max((node.get_metadata_str(m) for m in (MetadataMode.EMBED, MetadataMode.LLM)), key=len)
    assert metadata_str(stored) == longer
    for hostile in ("{value:>999999999}", "{key.__class__}", "{value!r}", "{0}"):
        assert metadata_str({**stored, "metadata_template": hostile}) is None
    assert metadata_str({"metadata": {"a": 1}}) is None  # no LlamaIndex node
