"""The commands (`python -m ragsim`, `python -m ragsim audit`) on hostile input: valid UTF-8
JSON out for any valid request, one line and an exit status for anything else, never a traceback,
and inputs read no further than their size limits."""

import io
import json

import pytest

from helpers import CORE, make_request, run_cli
from ragsim import __main__ as cli, limits
from ragsim.host.commands import audit_cli
from ragsim.wire.api import simulate

COLLECTION = "../assets/collection/01-the-authority.md"


def run(args, stdin: bytes = b""):
    """The command run in py/ (COLLECTION is relative to it): (exit status, stdout bytes, stderr text)."""
    done = run_cli(*args, stdin=stdin, cwd=CORE, text=False, timeout=60)
    return done.returncode, done.stdout, done.stderr.decode("utf-8")


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and stderr.count("\n") == 1 and stderr.endswith(".\n"), stderr
    return stderr


def test_a_lone_surrogate_comes_out_as_valid_utf8_json():
    request = make_request("alpha \ud800 beta gamma", query="alpha", size=2, overlap=0, k=1)
    status, out, err = run([], json.dumps(request).encode("ascii"))
    assert status == 0 and err == ""
    text = out.decode("utf-8")  # strict: raises on an unescaped surrogate
    assert "\\ud800" in text and json.loads(text) == json.loads(json.dumps(simulate(request)))


def test_non_ascii_text_stays_readable_in_the_output():
    request = make_request("Straße über Köln", query="straße", size=2, overlap=0, k=1)
    status, out, _ = run([], json.dumps(request, ensure_ascii=False).encode("utf-8"))
    assert status == 0 and "Straße über" in out.decode("utf-8")


def test_deep_nesting_is_one_sentence_not_a_traceback():
    status, out, err = run([], b"[" * 5000)
    assert status == 1 and out == b"" and "nested too deeply" in one_line(err)


def test_invalid_utf8_is_named_not_echoed():
    status, out, err = run([], b'{"query": "\xff\xfe\xfa"}')
    assert status == 1 and out == b""
    assert "not UTF-8" in one_line(err) and "byte 11" in err and "\ufffd" not in err


def test_a_request_error_exits_2_with_one_line():
    status, out, err = run([], json.dumps(make_request("a b c", size=2, overlap=2)).encode())
    assert status == 2 and json.loads(out)["error"]["field"] == "chunking.overlap"
    assert one_line(err).startswith("ragsim: chunking.overlap: ")


def test_stdin_is_read_no_further_than_its_limit(monkeypatch):
    monkeypatch.setattr(limits, "MAX_STDIN_BYTES", 100)
    stream = io.BytesIO(b" " * 10_000 + b"{}")
    with pytest.raises(ValueError, match="larger than"):
        cli.read_request(stream)
    assert stream.tell() == 101  # one byte past the limit tells it is over, and no more is read


def test_audit_of_dev_zero_stops_at_once():
    status, out, err = run(["audit", "/dev/zero"])  # a device is never opened, let alone read
    assert status == 1 and out == b"" and "/dev/zero: is not a regular file" in one_line(err)


@pytest.mark.slow
def test_audit_reads_a_file_no_further_than_its_limit(monkeypatch, tmp_path, capsys):
    big = tmp_path / "big.txt"
    big.write_text("word " * 1000)
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1000)
    assert audit_cli.main([str(big)]) == 1
    assert "larger than" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("flags,named", [
    (["--size", "0"], "--size"),
    (["--strategy", "nope"], "--strategy"),
    (["--unit", "bytes"], "--unit"),
    (["--top", "0"], "--top"),
])
def test_audit_settings_that_cannot_work_exit_2_with_one_line(flags, named):
    status, out, err = run(["audit", COLLECTION, *flags])
    assert status == 2 and out == b"" and one_line(err).startswith(f"ragsim audit: {named} ")


def test_audit_with_every_overlap_refused_is_a_refusal():
    status, out, err = run(["audit", COLLECTION, "--size", "10", "--overlaps", "20,30"])
    assert status == 2 and out == b"" and "every overlap was refused" in one_line(err)


def test_audit_settings_checked_in_process_too():
    """The same checks without a subprocess: every splitter's own refusal comes through as one line."""
    args = type("Args", (), {"size": 10, "top": 3, "strategy": "haystack", "unit": "chars"})()
    assert audit_cli.check_settings(args) is None
    args.strategy, args.size = "langchain-recursive", 5
    assert audit_cli.check_settings(args) is None
    args.strategy = "window"
    args.unit = "words"
    assert audit_cli.check_settings(args) is None


@pytest.mark.parametrize("options", [[], ["--json"], ["--one-request"], ["--one-request", "--json"]])
def test_inspect_takes_a_lone_surrogate_in_a_chunk_id_a_document_name_and_a_text(tmp_path, options):
    """JSON allows "\\ud800"; neither SQLite (where the streamed inspect spills the chunks) nor `print`
    takes it: the streamed inspect stores it as its UTF-8 bytes and reads it back as it was, and the
    report writes it as its backslash escape, the JSON as its JSON escape (the same object either way)."""
    chunks = [{"id": "a\ud800", "page_content": "Ships call the harbour office \ud800 on channel 12.",
               "metadata": {"source": "doc\ud800.md", "start_index": 0}},
              {"id": "b", "page_content": "The pilot boat leaves at nine.", "metadata": {"source": "doc\ud800.md"}}]
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in chunks), encoding="ascii")
    status, out, err = run(["inspect", str(path), *options])
    assert status == 0 and "Traceback" not in err, err
    text = out.decode("utf-8")  # strict: raises on an unescaped surrogate
    if "--json" not in options:
        assert "  doc\\ud800.md: 2 chunks" in text
        return
    got = json.loads(text)
    assert [c["id"] for c in got["chunks"]] == ["a\ud800", "b"]
    assert [d["id"] for d in got["documents"]] == ["doc\ud800.md"] and "\ud800" in got["documents"][0]["text"]
    if "--one-request" not in options:
        assert got == json.loads(run(["inspect", str(path), "--json", "--one-request"])[1])


def test_inspect_without_the_source_says_its_reading_is_of_rebuilt_text_and_how_to_make_it_exact():
    bare = run_cli("inspect", "examples/chunks.jsonl")
    assert bare.returncode == 0, bare.stderr
    assert ("1 document rebuilt from chunks with gaps: the splitter, the cuts and the facts below are read from that "
            "rebuilt text, not the original; give the source files with --source FILE for an exact reading.") in bare.stdout
    assert "(over text rebuilt with gaps: --source would let the splitter be named)" in bare.stdout
    assert "facts: 1 name-value fact found," in bare.stdout  # one fact, not "1 facts"
    exact = run_cli("inspect", "examples/chunks.jsonl", "--source", "examples/harbour.md")
    assert "rebuilt with gaps" not in exact.stdout and "rebuilt from chunks" not in exact.stdout
