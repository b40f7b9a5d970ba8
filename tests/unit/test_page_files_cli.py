"""The page's files on the command line: its "Download state" file is the request the page sends
(UTF-16 offsets turned into code points) and `python -m ragsim` and `eval` take it as it is; a question
set exported from the page is read by `eval` on the downloaded document; eval's errors name the valid
document ids; CSV questions are numbered as the page numbers them."""

import json

import pytest

from helpers import one_line, run_cli
from ragsim.wire import question_io, state_file
from ragsim.wire.api import simulate


TEXT = "🙂 The pilot boat leaves at nine. Fog closes the harbour. Cargo is weighed on the North Quay, at 40 tonnes."


def u16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def saved_state(**settings):
    """A state file as persist.js toSaved writes it: UTF-16 offsets, the page's setting names and values."""
    a = TEXT.index("Fog closes the harbour.")
    pilot = TEXT.index("The pilot boat leaves at nine.")
    name, value = TEXT.index("North Quay"), TEXT.index("40 tonnes")
    off = lambda i: u16(TEXT[:i])  # noqa: E731
    return {
        "ragsim": "state", "version": 1, "saved": "2026-12-01T00:00:00.000Z",
        "docs": [{"id": "doc", "title": "Document", "text": TEXT}], "sel": 0,
        "settings": {"q": "when does the pilot boat leave", "strategy": "window", "unit": "words", "size": 8,
                     "overlap": 2, "k": 1, "method": "bm25", "variant": "lucene", "k1": 1.2, "b": 0.75, "delta": 0.5,
                     "stopwords": False, "stem": False, "count": "", "price": 3, "separators": '["\\n\\n", "\\n", " ", ""]',
                     "keep_separator": "false", **settings},
        "span": {"doc": "doc", "start": off(pilot), "end": off(pilot + 30)},
        "fact": {"doc": "doc", "name": {"start": off(name), "end": off(name + 10)},
                 "value": {"start": off(value), "end": off(value + 9)}},
        "find": "", "expand": "none", "overlaps": [0, 25], "example": None,
        "questions": [{"id": "1", "query": "fog", "refs": [{"doc": "doc", "start": off(a), "end": off(a + 23)}]}],
        "mapSizes": None, "mapOverlaps": None, "map": False,
    }


def test_the_state_file_is_the_pages_request_in_code_points():
    request = state_file.to_request(saved_state())
    assert request["chunking"] == {"strategy": "window", "unit": "words", "size": 8, "overlap": 2}
    assert request["retrieval"] == {"k": 1, "variant": "lucene", "k1": 1.2, "b": 0.75}
    pilot = TEXT.index("The pilot boat leaves at nine.")
    assert request["span"] == {"doc": "doc", "start": pilot, "end": pilot + 30}  # the emoji is 2 UTF-16 units, 1 code point
    assert TEXT[slice(*request["fact"]["name"])] == "North Quay" and TEXT[slice(*request["fact"]["value"])] == "40 tonnes"
    assert request["questions"][0]["references"][0]["start"] == TEXT.index("Fog")
    lc = state_file.to_request(saved_state(strategy="langchain-recursive", size=40, overlap=5, keep_separator="true"))
    assert lc["chunking"] == {"strategy": "langchain-recursive", "size": 40, "overlap": 5,
                              "separators": ["\n\n", "\n", " ", ""], "is_separator_regex": False,
                              "keep_separator": True, "strip_whitespace": True}


def test_python_m_ragsim_takes_the_state_file_as_it_is(tmp_path):
    path = tmp_path / "ragsim-state.json"
    path.write_text(json.dumps(saved_state()), encoding="utf-8")
    out = run_cli(stdin=path.read_text(encoding="utf-8"))
    assert out.returncode == 0, out.stderr
    response = json.loads(out.stdout)
    assert response == json.loads(json.dumps(simulate(state_file.to_request(saved_state()))))
    assert response["verdict"]["kind"] == "intact" and response["questions"][0]["verdict"] in ("intact", "ranked_out")


@pytest.mark.slow
def test_eval_takes_the_state_file_as_it_is(tmp_path):
    path = tmp_path / "ragsim-state.json"
    path.write_text(json.dumps(saved_state()), encoding="utf-8")
    out = run_cli("eval", path, "--json")
    assert out.returncode == 0, out.stderr
    assert [q["id"] for q in json.loads(out.stdout)["questions"]] == ["1"]
    table = run_cli("eval", path).stdout
    assert "1 questions at window size 8 words overlap 2, k 1" in table  # the state's settings
    assert "size 9 words overlap 2" in run_cli("eval", path, "--size", "9").stdout  # an option overrides them


@pytest.mark.slow
def test_a_set_exported_from_the_page_is_read_by_eval_on_the_downloaded_document(tmp_path):
    """The page exports a typed document under its title; its "Download" saves it as "<title>.txt"."""
    docs = [{"id": "doc", "title": "Document", "text": TEXT}]
    a = TEXT.index("Fog closes the harbour.")
    questions = [{"id": "1", "query": "fog", "references": [{"doc": "doc", "start": a, "end": a + 23}]}]
    for fmt in ("json", "csv"):
        exported = question_io.export_questions({"questions": questions, "documents": docs, "format": fmt})["text"]
        assert '"doc": "doc"' not in exported and ",doc\n" not in exported
        (tmp_path / f"q.{fmt}").write_text(exported, encoding="utf-8")
        (tmp_path / "Document.txt").write_text(TEXT, encoding="utf-8")
        out = run_cli("eval", tmp_path / "Document.txt", "--questions", tmp_path / f"q.{fmt}", "--size", "8", "--k", "1")
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines()[1].split()[0] == "1"
    # the page reads its own export back
    back = question_io.import_questions({"text": exported, "documents": docs})
    assert back["questions"][0]["references"][0]["doc"] == "doc" and back["skipped"] == []


@pytest.mark.slow
def test_eval_errors_list_the_valid_document_ids(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b.txt").write_text("Another text.", encoding="utf-8")
    q = {"questions": [{"id": "x", "query": "fog", "references": [{"doc": "doc", "start": 0, "end": 5}]}]}
    (tmp_path / "q.json").write_text(json.dumps(q), encoding="utf-8")
    out = run_cli("eval", tmp_path / "a.txt", tmp_path / "b.txt", "--questions", tmp_path / "q.json")
    assert out.returncode == 2
    err = one_line(out.stderr)
    # each valid id named (a long path by its end, as messages quote it short: its file name shows)
    assert "'doc' names no document" in err and "/a.txt'" in err and "/b.txt'" in err
    csv_text = 'question,references,corpus_id\nq,"[]",nowhere\n'
    (tmp_path / "q.csv").write_text(csv_text, encoding="utf-8")
    err = run_cli("eval", tmp_path / "a.txt", "--questions", tmp_path / "q.csv").stderr
    assert "'nowhere' names no document" in err and "/a.txt'" in err


def test_csv_questions_are_numbered_as_on_the_page():
    a = TEXT.index("Fog closes the harbour.")
    ref = json.dumps([{"content": TEXT[a:a + 23], "start_index": a, "end_index": a + 23}]).replace('"', '""')
    text = "question,references,corpus_id\n" + "".join(f'q{i},"{ref}",doc\n' for i in range(3))
    questions, _ = question_io.read_set(text, [{"id": "doc", "title": "", "text": TEXT}], "csv")
    assert [q.id for q in questions] == ["1", "2", "3"]
