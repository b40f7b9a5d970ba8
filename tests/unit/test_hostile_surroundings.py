"""Issue 43: the readers, files and outputs around the core, held to the core's standard.

Each reader bounds a line, a record and its parse before the work (item 6); limits are lowered here so
that the files stay small, and the memory a refusal takes is measured (tracemalloc), so a reader that
parsed first and counted after would fail.
"""

import json
import tracemalloc

import pytest

from ragsim.errors import RequestError
from ragsim.host import store_files
from ragsim.wire import chunk_files, chunk_records


def refused(call, *args, **kwargs) -> tuple[str, int]:
    """The sentence `call` refuses with, and the most memory (bytes) it took before refusing."""
    tracemalloc.start()
    try:
        with pytest.raises(RequestError) as caught:
            call(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.field == "store" and "\n" not in caught.value.message
    return caught.value.message, peak


# --- item 6: every reader bounds a line, a record and its parse before the work ------------------------

def test_a_json_list_of_millions_of_objects_is_refused_before_it_is_parsed(monkeypatch):
    """`[{}, {}, ...]`: 50 million objects in 200 MB took 5 GB before the chunk count refused them.
    Here 2 million over a limit of 1,000: refused with a few kilobytes, not the 200 MB the parse takes."""
    monkeypatch.setattr(chunk_records, "MAX_JSON_VALUES", 1_000)
    text = "[" + "{}, " * 2_000_000 + "{}]"
    message, peak = refused(chunk_files.parse, "chunks.json", text)
    assert message.startswith("chunks.json holds about 4,000,00") and "over the 1,000 ragsim parses" in message
    assert peak < len(text)  # json.loads would have built 2 million dicts first (over 100 MB)
    for name in ("chunks.jsonl", "docstore.json"):  # the same for JSON Lines and LlamaIndex's docstore
        assert "over the 1,000" in refused(chunk_files.parse, name, text)[0]


def test_commas_and_brackets_inside_strings_are_not_counted(monkeypatch):
    """The quick count takes every comma; over the limit, the strings are taken out and counted again."""
    monkeypatch.setattr(chunk_records, "MAX_JSON_VALUES", 100)
    rows = [{"text": 'a, b: [c] {d} \\" e' * 200, "metadata": {"source": "a.md"}} for _ in range(3)]
    kind, chunks = chunk_files.parse("chunks.json", json.dumps(rows))
    assert kind == "json" and [c["text"] for c in chunks] == [r["text"] for r in rows]


def test_a_csv_field_bomb_is_refused_before_the_csv_module_gathers_it(monkeypatch):
    """One field of 20 million characters (quoted, so line breaks would not end it), over a record
    limit of 1,000: the csv module holds a field at four bytes a character (a 200 MB field took 3 GB);
    the row is refused while it is read, with a fraction of the text's own size."""
    monkeypatch.setattr(chunk_records, "MAX_RECORD_CHARS", 1_000)
    for field in ('"' + "x" * 20_000_000 + '"', '"' + "line\n" * 4_000_000 + '"'):
        text = f"text,source\n{field},a.md\n"
        message, peak = refused(chunk_files.parse, "bomb.csv", text)
        assert message.startswith("A row of bomb.csv holds more than 1,000 characters")
        assert peak < 1_000_000
    kind, chunks = chunk_files.parse("fine.csv", 'text,source\n"' + "y" * 900 + '",a.md\n')
    assert kind == "csv" and chunks[0]["text"] == "y" * 900  # a row within the limit is read


def test_csv_lines_end_where_a_file_opened_with_newline_empty_ends_them():
    """The rows are cut into lines by the reader itself now (to count them): at \\n, \\r\\n and a lone
    \\r, as before, quoted line breaks kept in their field."""
    kind, chunks = chunk_files.parse("c.csv", '\ufefftext,source\n"a, ""q""\nline",a.md\r\nb,c.md\n')
    assert [(c["text"], c["doc"]) for c in chunks] == [('a, "q"\nline', "a.md"), ("b", "c.md")]
    kind, chunks = chunk_files.parse("mac.csv", 'text,source\r"a\rb",a.md\rb,c.md\re,f.md')  # lone CRs
    assert [(c["text"], c["doc"]) for c in chunks] == [("a\rb", "a.md"), ("b", "c.md"), ("e", "f.md")]


def test_a_jsonl_line_over_a_record_is_refused_unread(tmp_path, monkeypatch):
    """A line of JSON Lines is read no further than a record may hold, in the streamed reader too:
    a 20 MB line under a 1,000-character limit is refused after reading about 1,000 characters."""
    monkeypatch.setattr(chunk_records, "MAX_RECORD_CHARS", 1_000)
    path = tmp_path / "long.jsonl"
    path.write_text('{"text": "ok"}\n{"text": "' + "x" * 20_000_000 + '"}\n', encoding="utf-8")

    def read_all():
        _, pages = store_files.pages("file", path)
        return [c for page in pages for c in page]

    message, peak = refused(read_all)
    assert message.startswith("Line 2 of long.jsonl holds more than 1,000 characters") and peak < 1_000_000
    assert refused(store_files.read, "file", path)[0].startswith("Line 2 of long.jsonl holds more than 1,000")


def test_a_jsonl_line_or_a_serialised_node_of_millions_of_values_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(chunk_records, "MAX_RECORD_VALUES", 1_000)
    path = tmp_path / "wide.jsonl"
    path.write_text('{"text": "a", "metadata": {"x": [' + "0," * 100_000 + '0]}}\n', encoding="utf-8")
    _, pages = store_files.pages("file", path)
    with pytest.raises(RequestError, match=r"Line 1 of wide\.jsonl holds about 100,00\d JSON values"):
        list(pages)
    node = json.dumps({"text": "a", "metadata": {"x": [0] * 100_000}})
    row = json.dumps({"page_content": "a", "metadata": {"_node_content": node}})
    with pytest.raises(RequestError, match=r"Line 1 of n\.jsonl's _node_content holds about"):
        chunk_files.parse("n.jsonl", row)
