"""The readers, files and outputs around the core, held to the core's standard.

Each reader bounds a line, a record and its parse before the work (item 6); limits are lowered here so
that the files stay small, and the memory a refusal takes is measured (tracemalloc), so a reader that
parsed first and counted after would fail. Every file a command writes is written beside its place
and moved in whole, and an existing one is replaced only when asked (item 8); every failure that was
a traceback is a sentence (item 10), and each sentence says what happened (item 11).
"""

import builtins
import datetime
import decimal
import io
import json
import os
import pathlib
import resource
import signal
import subprocess
import tracemalloc

import pytest

from helpers import bare_env, cli_env, one_line, ragsim_argv, run_cli
from ragsim.errors import RequestError
from ragsim.host import ask, eval_cli, http_client, inspect_cli, jsonl_out, sources, store_files, store_records
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


# --- item 8: every output written beside its place and moved in whole; an existing one replaced only when asked

def no_litter(folder: pathlib.Path, *kept: str) -> None:
    """Only the files `kept` in `folder`: no temporary file, no checkpoint left behind."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(kept)


def test_a_block_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path):
    keep = tmp_path / "keep.jsonl"
    keep.write_text("a user's lines\n", encoding="utf-8")
    keep.chmod(0o640)
    with pytest.raises(TypeError):
        with jsonl_out.replaced(str(keep)) as out:
            out.write("half of it\n")
            json.dumps({"when": object()})  # what a datetime column did to export
    assert keep.read_text(encoding="utf-8") == "a user's lines\n"
    no_litter(tmp_path, "keep.jsonl")
    with jsonl_out.replaced(str(keep)) as out:
        out.write("the new lines\n")
    assert keep.read_text(encoding="utf-8") == "the new lines\n" and keep.stat().st_mode & 0o777 == 0o640
    no_litter(tmp_path, "keep.jsonl")


def test_an_existing_file_is_refused_naming_it_and_force():
    with pytest.raises(ValueError, match=r"^/etc/hostname exists already; give --force to replace it$"):
        jsonl_out.refuse_existing("/etc/hostname", force=False)
    with pytest.raises(ValueError, match=r"give --force to replace it, or --resume to go on from it$"):
        jsonl_out.refuse_existing("/etc/hostname", force=False, resume=False)
    for allowed in ({"force": True}, {"force": False, "resume": True}):
        jsonl_out.refuse_existing("/etc/hostname", **allowed)
    jsonl_out.refuse_existing("-", force=False)  # standard output is never a file to keep


@pytest.mark.slow
def test_inspect_and_export_never_touch_a_file_they_were_not_asked_to_replace(tmp_path):
    """`inspect nope.jsonl --jsonl keep.txt` emptied keep.txt before finding no store; `export -o`
    overwrote without a word. Now: refused naming the file and --force; with --force, a store that
    does not exist still leaves the file as it was; a good one replaces it whole."""
    keep = tmp_path / "keep.txt"
    keep.write_text("notes\n", encoding="utf-8")
    chunks = tmp_path / "c.jsonl"
    chunks.write_text(json.dumps({"text": "The pilot boat leaves at nine.", "metadata": {"source": "a.md"}}) + "\n")
    for args in (["inspect", tmp_path / "nope.jsonl", "--jsonl", keep], ["export", chunks, "-o", keep]):
        out = run_cli(*args, env=bare_env())
        assert out.returncode == 2 and one_line(out.stderr) == f"ragsim {args[0]}: {keep} exists already; give --force to replace it.\n"
        assert keep.read_text(encoding="utf-8") == "notes\n"
    for args in (["inspect", tmp_path / "nope.jsonl", "--jsonl", keep, "--force"],
                 ["export", tmp_path / "nope.jsonl", "-o", keep, "--force"]):
        out = run_cli(*args, env=bare_env())
        assert out.returncode == 2 and "nope.jsonl does not exist" in one_line(out.stderr)
        assert keep.read_text(encoding="utf-8") == "notes\n"
    no_litter(tmp_path, "keep.txt", "c.jsonl")
    out = run_cli("export", chunks, "-o", keep, "--force", env=bare_env())
    assert out.returncode == 0 and json.loads(keep.read_text(encoding="utf-8"))["text"] == "The pilot boat leaves at nine."
    out = run_cli("inspect", chunks, "--jsonl", keep, "--force", env=bare_env())
    assert out.returncode == 0 and json.loads(keep.read_text(encoding="utf-8").splitlines()[-1])["type"] == "summary"
    no_litter(tmp_path, "keep.txt", "c.jsonl")


def small_files():
    """A child process that may write 300 bytes a file at most, and is told so (EFBIG), not killed."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))


@pytest.mark.slow
def test_a_failed_write_leaves_the_old_file_and_one_sentence(tmp_path):
    """A write that fails (here a file size limit: a full disk alike) left a cut-off file, and audit a
    double OSError traceback; now the old file is as it was, nothing is left beside it, one sentence."""
    for i in range(3):
        (tmp_path / f"a{i}.md").write_text(f"The Galle Ring station {i} orbits at 42,000 km. The fee is 40 dollars.\n")
    chunks = tmp_path / "c.jsonl"
    chunks.write_text("".join(json.dumps({"text": f"Chunk {i} of the harbour's notes."}) + "\n" for i in range(20)))
    keep = tmp_path / "keep.jsonl"
    for args in (["audit", tmp_path, "--glob", "*.md", "--size", "100", "-o", keep, "--workers", "1", "--quiet"],
                 ["export", chunks, "-o", keep]):
        keep.write_text("the old output\n", encoding="utf-8")
        done = subprocess.run(ragsim_argv(*args, "--force"), capture_output=True, text=True, env=cli_env(),
                              preexec_fn=small_files, timeout=120)
        assert done.returncode in (1, 2)
        assert one_line(done.stderr) == f"ragsim {args[0]}: {keep} cannot be written (File too large); it was left as it was.\n"
        assert keep.read_text(encoding="utf-8") == "the old output\n"
        no_litter(tmp_path, "a0.md", "a1.md", "a2.md", "c.jsonl", "keep.jsonl")


# --- item 10: a sentence where a traceback was -----------------------------------------------------------

TYPED = {  # a column of each type JSON has no value for, and what the export writes for it (docs/stores.md)
    "when": ([datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), None],
             ["2024-01-02T03:04:05+00:00", None]),
    "day": ([datetime.date(2024, 1, 2), datetime.date(1999, 12, 31)], ["2024-01-02", "1999-12-31"]),
    "price": ([decimal.Decimal("12.50"), decimal.Decimal("-0.01")], ["12.50", "-0.01"]),
    "blob": ([b"\x00\xffab", b""], ["AP9hYg==", ""]),
    "ratio": ([float("nan"), 1.5], [None, 1.5]),
    "took": ([datetime.timedelta(seconds=90), datetime.timedelta(milliseconds=5)], [90.0, 0.005]),
}


def typed_table():
    pa = pytest.importorskip("pyarrow")
    columns = {"text": ["The harbour opens at dawn.", "Ships wait outside when fog rolls in."]}
    columns.update({name: pa.array(values) for name, (values, _) in TYPED.items()})
    columns["price"] = pa.array(TYPED["price"][0], pa.decimal128(10, 2))
    return pa.table(columns)


@pytest.mark.slow
def test_export_of_parquet_and_lancedb_with_dates_decimals_and_bytes(tmp_path):
    """`export ts.parquet -o keep.jsonl` was a TypeError (a datetime is not JSON serializable) after
    emptying keep.jsonl; each type now has its stated JSON value, in LanceDB's tables too."""
    import pyarrow.parquet as pq

    table = typed_table()
    pq.write_table(table, tmp_path / "ts.parquet")
    lancedb = pytest.importorskip("lancedb")
    lancedb.connect(str(tmp_path / "lance")).create_table("chunks", data=table)
    for store in (tmp_path / "ts.parquet", f"lancedb:{tmp_path / 'lance'}"):
        out = run_cli("export", store, "-o", "-", env=bare_env())
        assert out.returncode == 0, out.stderr
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        for name, (_, written) in TYPED.items():
            assert [r["metadata"][name] for r in rows] == written, (store, name)


def nested(depth: int) -> dict:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return {"source": "h.md", "x": value}


def test_metadata_nested_too_deeply_is_one_sentence_in_every_reader():
    """500 levels of metadata ended in a RecursionError (pickled to a worker, written with indents);
    past MAX_DEPTH every reader refuses the chunk, naming it, and a chunk at the limit is read."""
    row = {"text": "The harbour opens at dawn.", "metadata": nested(chunk_records.MAX_DEPTH)}
    assert chunk_files.parse("ok.jsonl", json.dumps(row))[1][0]["metadata"] == row["metadata"]
    deep = {"text": "The harbour opens at dawn.", "metadata": nested(500)}
    refusal = r"^store: Line 1 of deep\.jsonl's metadata is nested more than 100 levels deep"
    with pytest.raises(RequestError, match=refusal):
        chunk_files.parse("deep.jsonl", json.dumps(deep))
    docstore = {"docstore/data": {"n1": {"__type__": "1", "__data__": {"text": "a", "metadata": nested(500)}}}}
    with pytest.raises(RequestError, match=r"^store: Node 'n1' in docstore\.json's metadata is nested more"):
        chunk_files.parse("docstore.json", json.dumps(docstore))
    with pytest.raises(RequestError, match=r"^store: Row 3 of t\.parquet's metadata is nested more"):
        store_records.plain({"text": "a", "m": nested(500)}, "Row 3 of t.parquet")
    with pytest.raises(RequestError, match=r"^store: Chroma id 'c1''s metadata is nested more"):
        chunk_records.from_chroma("c1", "a", {"m": nested(500)}, where="Chroma id 'c1'")


@pytest.mark.slow
@pytest.mark.parametrize("depth", [500, 5_000])
def test_a_deep_chunking_object_and_deep_metadata_on_the_command_line(tmp_path, depth):
    (tmp_path / "h.md").write_text("The harbour opens at dawn.\n", encoding="utf-8")
    deep = "[" * depth + "]" * depth
    (tmp_path / "chunking.json").write_text('{"strategy": "window", "size": 5, "x": ' + deep + "}", encoding="utf-8")
    out = run_cli("audit", tmp_path / "h.md", "--chunking-file", tmp_path / "chunking.json", env=bare_env())
    said = one_line(out.stderr)
    assert out.returncode == 2 and ("nested too deeply" in said if depth > 900 else "chunking.x" in said), said
    metadata = '{"source": "h.md", "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"  # json.dumps would recurse
    (tmp_path / "c.jsonl").write_text('{"text": "The harbour opens at dawn.", "metadata": ' + metadata + "}\n")
    for args in (["inspect", tmp_path / "c.jsonl"], ["export", tmp_path / "c.jsonl", "-o", "-"]):
        out = run_cli(*args, env=bare_env())
        assert out.returncode == 2 and "nested" in one_line(out.stderr), out.stderr


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000, b'{"choices": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"])
def test_a_model_reply_nested_too_deeply_is_one_sentence(monkeypatch, body):
    for status in (200, 500):  # the reply, and an error's body the server's sentence is read from
        monkeypatch.setattr(http_client, "fetch", lambda *a, **k: http_client.Reply(status, "OK", {}, body))
        with pytest.raises(ask.AskError) as caught:
            ask.complete("http://127.0.0.1:9/v1", "reader", [{"role": "user", "content": "hi"}])
        said = str(caught.value)
        assert "\n" not in said and ("nested too deeply" in said if status == 200 else "HTTP 500" in said), said


# --- item 11: the right words -----------------------------------------------------------------------------
# Permissions are simulated (open and scandir raising PermissionError), so the tests hold as root too.

def deny(monkeypatch, *paths):
    """Opening, reading or listing any of `paths` (or what lies under them) raises PermissionError."""
    denied = [os.path.abspath(p) for p in paths]

    def guard(path):
        if isinstance(path, (str, os.PathLike)) and any(os.path.abspath(path).startswith(d) for d in denied):
            raise PermissionError(13, "Permission denied", str(path))

    for module, name in ((os, "open"), (os, "scandir"), (builtins, "open"), (io, "open")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda path=".", *a, _real=real, **k: guard(path) or _real(path, *a, **k))


def test_an_unreadable_store_cannot_be_read_not_written(tmp_path, monkeypatch, capfd):
    chunks = tmp_path / "c.jsonl"
    chunks.write_text(json.dumps({"text": "The pilot boat leaves at nine."}) + "\n", encoding="utf-8")
    deny(monkeypatch, chunks)
    for command, argv in ((inspect_cli.run_inspect, [str(chunks)]),
                          (inspect_cli.run_export, [str(chunks), "-o", str(tmp_path / "out.jsonl")])):
        assert command(argv) == 2
        said = capfd.readouterr().err
        assert said.endswith(f"{chunks} cannot be read (Permission denied); check its permissions, or give a copy "
                             "you can read.\n") and "written" not in said, said
    assert not (tmp_path / "out.jsonl").exists()


def test_eval_names_the_file_it_may_not_read(tmp_path, monkeypatch, capfd):
    (tmp_path / "h.md").write_text("The harbour opens at dawn.\n", encoding="utf-8")
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps({"questions": []}), encoding="utf-8")
    deny(monkeypatch, questions)
    for method in ("bm25", "hybrid"):  # streamed, and one request
        assert eval_cli.main([str(tmp_path / "h.md"), "--questions", str(questions), "--method", method]) == 1
        assert capfd.readouterr().err == f"ragsim eval: {questions} cannot be read (Permission denied).\n"


def test_a_folder_that_cannot_be_read_is_said_not_passed_over(tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    (kb / "closed").mkdir(parents=True)
    (kb / "a.md").write_text("The harbour opens at dawn.\n", encoding="utf-8")
    (kb / "closed" / "b.md").write_text("Ships wait outside.\n", encoding="utf-8")
    deny(monkeypatch, kb / "closed")
    found, skipped = sources.walk([str(kb)])
    assert [s.path for s in found] == [str(kb / "a.md")]
    assert skipped == [(str(kb / "closed"), "is a folder that cannot be read (Permission denied), so its files "
                                            "were not read")]
    deny(monkeypatch, kb)
    assert sources.walk([str(kb)]) == ([], [(str(kb), "is a folder that cannot be read (Permission denied), so its "
                                                      "files were not read")])


def test_a_chroma_server_that_accepts_and_stays_silent_is_one_sentence_within_the_deadline(monkeypatch, capsys):
    """`chroma+http://`: Chroma's own client waits for ever on a server that accepts and says nothing
    (its requests have no timeout); ragsim asks first, with a deadline, and then gives each of the
    client's requests one."""
    import socket
    import threading
    import time

    pytest.importorskip("chromadb")
    from ragsim.host import inspect_cli, store_safety

    monkeypatch.setattr(store_safety, "SERVER_DEADLINE", 1.0)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    port = listener.getsockname()[1]
    began = time.monotonic()
    try:
        code = inspect_cli.run_inspect([f"chroma+http://127.0.0.1:{port}"])
    finally:
        listener.close()
    err = capsys.readouterr().err
    assert code == 2 and time.monotonic() - began < 10
    assert f"chroma+http://127.0.0.1:{port} could not be reached (nothing answered within 1 s): check that `chroma run` " \
           "serves there." in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_parquet_column_that_decompresses_past_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """A compression bomb: a megabyte on disk that pyarrow would unpack whole to read one batch. The
    file's own metadata says how large each column of a row group unpacks; past the bound, one sentence."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from ragsim.host import store_files

    path = tmp_path / "bomb.parquet"
    pq.write_table(pa.table({"page_content": ["a" * 3_000_000], "source": ["x.md"]}), path, compression="zstd")
    assert path.stat().st_size < 100_000  # small on disk
    monkeypatch.setattr(store_files, "MAX_UNPACKED", 2_000_000)
    done = run_cli("inspect", str(path), env=cli_env())
    assert done.returncode == 0  # the bound is the module's: a subprocess reads with the real one
    with pytest.raises(RequestError, match=r"column 'page_content' of row group 1 decompresses to [\d,]+ bytes"):
        list(store_files._parquet_rows(path))
