"""ragsim.wire.place_by_text and host.inspect_placing: chunks that name no given file go to the file
holding their text; one held by several goes where its document's other chunks went."""

from ragsim.host import inspect_placing
from ragsim.judge.stored import Stored
from ragsim.wire.place_by_text import by_text, choose

SOURCES = [{"id": "a.txt", "title": "a.txt", "text": "alpha beta gamma. shared line. delta"},
           {"id": "b.txt", "title": "b.txt", "text": "epsilon zeta. shared line. eta theta"}]


def test_a_chunk_held_by_several_goes_where_its_document_went():
    got = choose({1: ["b.txt"], 2: ["a.txt", "b.txt"], 3: []}, {1: "doc-2", 2: "doc-2", 3: "doc-2"})
    assert got == {1: "b.txt", 2: "b.txt"}  # 3 is held by none: it stays
    assert choose({2: ["a.txt", "b.txt"]}, {2: "x"}) == {2: "a.txt"}  # no other chunk: the first


def test_by_text_moves_only_chunks_that_name_no_source():
    stored = [Stored("1", "alpha beta", "document", None, None), Stored("2", "epsilon zeta", "document", 0, 12),
              Stored("3", "not in any", "document", None, None), Stored("4", "delta", "a.txt", 32, 37)]
    got = by_text(stored, SOURCES, Stored)
    assert [c.doc for c in got] == ["a.txt", "b.txt", "document", "a.txt"]
    assert got[1].start == 0 and got[3] is stored[3]


class FakeSpill:
    def __init__(self, rows):
        self.rows, self.docs, self.moved = rows, {d: None for _, d, _ in rows}, None

    def rows_of(self, docs):
        return [r for r in self.rows if r[1] in docs]

    def move(self, moved):
        self.moved = moved


def test_streamed_placing_in_batches_reads_each_file_per_batch(monkeypatch):
    monkeypatch.setattr(inspect_placing, "BATCH_CHARS", 12)  # two batches
    spill = FakeSpill([(0, "document", {"text": "alpha beta"}), (1, "document", {"text": "shared line"}),
                       (2, "document", {"text": "eta theta"}), (3, "a.txt", {"text": "delta"})])
    reads = []

    def read_text(sid):
        reads.append(sid)
        return next(s["text"] for s in SOURCES if s["id"] == sid)

    inspect_placing.place_loose(spill, ["a.txt", "b.txt"], read_text)
    assert spill.moved == {0: "a.txt", 1: "a.txt", 2: "b.txt"}
    assert reads == ["a.txt", "b.txt", "a.txt", "b.txt"]
