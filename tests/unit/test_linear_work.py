"""Find-phrase and context expansion do work linear in occurrences plus chunks: shown by
counting how often they read a chunk's start or end, not by a clock."""

from ragsim.text import explore
from ragsim.wire.api import simulate


class Counted(list):
    """A list that counts reads of single items (bisect and indexing both read through here)."""

    reads = 0

    def __getitem__(self, i):
        Counted.reads += 1
        return super().__getitem__(i)


def columns(words: int):
    text = "the " * words
    starts = Counted(range(0, 4 * words, 4))
    ends = Counted(s + 3 for s in starts)  # one chunk per word
    return [text], starts, ends, [0] * words


def test_find_phrase_with_50000_occurrences_reads_each_chunk_a_few_times():
    texts, starts, ends, doc_of = columns(50_000)
    Counted.reads = 0
    found = explore.find_phrase(texts, starts, ends, doc_of, "the")
    assert found["occurrences"] == 50_000 and len(found["chunks"]) == 50_000 and found["verdict"] == "in_chunks"
    assert len(found["where"]) == explore.PHRASE_LIMIT
    # each chunk: one read of its start, one of its end (the old loop read 2 * 50,000 per occurrence)
    assert Counted.reads <= 4 * 50_000


def test_expansion_of_50000_retrieved_chunks_is_not_quadratic():
    texts, starts, ends, doc_of = columns(50_000)
    order = list(range(0, 50_000, 2)) + list(range(1, 50_000, 2))
    Counted.reads = 0
    pieces = explore.expand(order, starts, ends, doc_of, [0], [50_000], texts, neighbours=1)
    assert pieces == [[0, 0, 4 * 50_000 - 1]]  # neighbours of every chunk join into one piece
    assert Counted.reads <= 10 * 50_000
    sectioned = "".join(f"# {i}\nthe the\n" for i in range(5_000))
    r = simulate({"documents": [{"id": "d", "text": sectioned}], "query": "the",
                  "chunking": {"unit": "words", "size": 1, "overlap": 0}, "retrieval": {"k": 20_000},
                  "find": "the", "expand": {"section": True}, "wire": "columns"})
    assert r["found"]["occurrences"] == 10_000 and len(r["expanded"]["pieces"]) == 1
