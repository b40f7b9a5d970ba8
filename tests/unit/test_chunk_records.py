"""ragsim.wire.chunk_records: one stored record as one chunk, the rules every reader shares, on records
made by hand (the readers' conformance tests read what the real libraries write)."""

import json

from ragsim.wire.chunk_records import from_chroma, from_row


def node_content(**metadata) -> str:
    """LlamaIndex's serialised node (`node_to_metadata_dict`) with its own copy of the metadata."""
    return json.dumps({"id_": "n1", "text": "The fee is 40 dollars.", "metadata": metadata,
                       "start_char_idx": 0, "end_char_idx": 22})


def test_the_stores_own_metadata_wins_over_the_nodes_serialised_copy():
    # a payload edited after it was stored (a source renamed, a page set) keeps what the store says;
    # keys only the node holds are kept too
    node = node_content(source="old.md", page=1, section="Fees")
    chunk = from_row({"_node_content": node, "text": "The fee is 40 dollars.", "source": "new.md", "page": 3},
                     "0", candidates=("text",), where="Row 0")
    assert chunk["doc"] == "new.md" and chunk["metadata"] == {"source": "new.md", "page": 3, "section": "Fees"}
    nested = from_row({"text": "The fee is 40 dollars.", "metadata": {"_node_content": node, "source": "new.md"}},
                      "0", candidates=("text",), where="Row 0")  # LanceDB's metadata column
    assert nested["doc"] == "new.md" and nested["metadata"] == {"source": "new.md", "page": 1, "section": "Fees"}
    chroma = from_chroma("c1", "The fee is 40 dollars.", {"_node_content": node, "source": "new.md"}, where="c1")
    assert chroma["doc"] == "new.md" and chroma["metadata"] == {"source": "new.md", "page": 1, "section": "Fees"}
