"""Issue 23, the command line (items 13-18): help and unknown commands, unknown keys refused with the
nearest name, the page's files taken as they are, the documented formats and examples, commands that
work on a stock machine, and output that says what it means. The commands run as subprocesses with
this Python (the project's .venv) from the repository root, as the README runs them."""

import copy
import json
import pathlib
import re
import shlex

import pytest

from helpers import make_request, run_cli
from ragsim.host import embed_onnx
from ragsim.split import STRATEGIES
from ragsim.wire import keys, question_io, state_file
from ragsim.wire.api import simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    return stderr


# 13. help and unknown commands ----------------------------------------------------------------

def test_help_lists_every_command_with_an_example_and_an_example_request():
    from ragsim.__main__ import COMMANDS

    out = run_cli("--help")
    assert out.returncode == 0 and out.stderr == ""
    for name in COMMANDS:
        if not name.startswith("-"):
            assert re.search(rf"^  {name} ", out.stdout, re.M), name
            assert f"e.g. python -m ragsim {name} " in out.stdout
    # the example request in the help runs and gives a verdict
    line = next(ln for ln in out.stdout.splitlines() if "| python -m ragsim" in ln)
    request = shlex.split(line.split("|")[0])[1]
    response = json.loads(run_cli(stdin=request).stdout)
    assert response["verdict"]["kind"] in ("intact", "ranked_out", "cut")
    assert run_cli("-h").stdout == out.stdout


def test_the_help_examples_run():
    out = run_cli("--help")
    for line in out.stdout.splitlines():
        if "e.g. python -m ragsim " in line:
            args = shlex.split(line.split("e.g. python -m ragsim ", 1)[1])
            done = run_cli(*args)
            if args[0] == "ask":  # it needs the user's model server: without one, one sentence saying so
                assert done.returncode == 2 and "connection refused" in one_line(done.stderr), (line, done.stderr)
                continue
            assert done.returncode == 0, (line, done.stderr)


def test_an_unknown_command_is_refused_naming_the_known_ones():
    request = json.dumps(make_request("a b c d", size=2, overlap=0))
    out = run_cli("foo", stdin=request)  # a valid request on stdin is not read
    assert out.returncode == 2 and out.stdout == ""
    err = one_line(out.stderr)
    assert "'foo' is not a command" in err and "audit" in err and "eval" in err


@pytest.mark.parametrize("args", [[], ["-"]])
def test_a_request_still_comes_on_stdin(args):
    out = run_cli(*args, stdin=json.dumps(make_request("a b c d", query="c", size=2, overlap=0, k=1)))
    assert out.returncode == 0 and json.loads(out.stdout)["stats"]["chunks"] == 2


# 14. unknown keys -----------------------------------------------------------------------------

def base():
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."
    return make_request(text, query="delta", size=4, overlap=1, k=1, span=(18, 37), fact=((18, 23), (24, 31)))


@pytest.mark.parametrize("change, field, near", [
    (lambda r: r.update(answer=r.pop("span")), "answer", "span"),
    (lambda r: r.update(retreival=r["retrieval"]), "retreival", "retrieval"),
    (lambda r: r["documents"][0].update(titel="x"), "documents[0].titel", "documents[0].title"),
    (lambda r: r["chunking"].update(chunk_size=4), "chunking.chunk_size", "chunking.size"),
    (lambda r: r["chunking"].update(overlapp=1), "chunking.overlapp", "chunking.overlap"),
    (lambda r: r["retrieval"].update(top_k=3), "retrieval.top_k", "retrieval.k"),
    (lambda r: r["retrieval"].update(terms={"stopword": "english"}), "retrieval.terms.stopword", "retrieval.terms.stopwords"),
    (lambda r: r["span"].update(stat=1), "span.stat", "span.start"),
    (lambda r: r["fact"].update(names=[0, 1]), "fact.names", "fact.name"),
    (lambda r: r.update(questions=[{"id": "q", "query": "x", "refs": []}]), "questions[0].refs", "questions[0].references"),
    (lambda r: r.update(questions=[{"id": "q", "query": "x", "references": [{"doc": "d", "start": 18, "ends": 37}]}]),
     "questions[0].references[0].ends", "questions[0].references[0].end"),
    (lambda r: r.update(map={"sizes": [4], "overlap": [0]}), "map.overlap", "map.overlaps"),
    (lambda r: r.update(expand={"neighbors": 1}), "expand.neighbors", "expand.neighbours"),
])
def test_an_unknown_key_is_refused_with_the_nearest_name(change, field, near):
    request = base()
    change(request)
    out = simulate(copy.deepcopy(request))
    assert out["error"]["field"] == field, out
    message = out["error"]["message"]
    assert message.endswith(f"; perhaps you meant {near}.") and message.count(". ") == 0
    done = run_cli(stdin=json.dumps(request))
    assert done.returncode == 2 and one_line(done.stderr).startswith(f"ragsim: {field}: ")


def test_an_unknown_key_with_no_near_name_lists_the_valid_ones():
    out = simulate({**base(), "zzz": 1})
    assert out["error"]["field"] == "zzz" and "which takes documents, query, chunking" in out["error"]["message"]


def test_chunking_fields_depend_on_the_strategy():
    request = base()
    request["chunking"] = {"strategy": "haystack", "unit": "words", "size": 4}
    out = simulate(request)
    assert out["error"]["field"] == "chunking.unit" and "the haystack splitter" in out["error"]["message"]
    request["chunking"] = {"strategy": "llamaindex-markdown", "size": 4}
    assert simulate(request)["error"]["field"] == "chunking.size"
    request["chunking"] = {"strategy": "langchain-character", "size": 40, "overlap": 0, "separators": ["\n"]}
    assert simulate(request)["error"]["message"].endswith("perhaps you meant chunking.separator.")


# each strategy's every field at its library default: all read, none refused (the table is the splitters')
ALL_FIELDS = {
    "window": {"unit": "tokens", "size": 4, "overlap": 1, "tokenizer": "cl100k_base"},
    "sentences": {"unit": "words", "size": 8, "overlap": 2, "tokenizer": "cl100k_base"},
    "langchain-character": {"size": 40, "overlap": 0, "separator": "\n\n", "is_separator_regex": False,
                            "keep_separator": False, "strip_whitespace": True},
    "langchain-recursive": {"size": 40, "overlap": 0, "separators": ["\n\n", "\n", " ", ""], "is_separator_regex": False,
                            "keep_separator": True, "strip_whitespace": True, "length": "tokens", "tokenizer": "cl100k_base"},
    "langchain-token": {"size": 8, "overlap": 1, "tokenizer": "cl100k_base"},
    "haystack": {"split_by": "word", "size": 4, "overlap": 1, "split_threshold": 0},
    "llamaindex-sentence": {"size": 64, "overlap": 4, "separator": " ", "paragraph_separator": "\n\n\n",
                            "secondary_chunking_regex": "[^,.;]+[,.;]?|[,.;]", "metadata": "", "tokenizer": "cl100k_base"},
    "llamaindex-token": {"size": 64, "overlap": 4, "separator": " ", "backup_separators": ["\n"], "metadata": "",
                         "tokenizer": "cl100k_base"},
    "llamaindex-markdown": {},
    # SPEC section 12 (issue 25): the semantic chunkers' fields at the libraries' defaults
    "langchain-semantic": {"buffer_size": 1, "breakpoint_threshold_type": "percentile", "breakpoint_threshold_amount": 95,
                           "number_of_chunks": None, "sentence_split_regex": r"(?<=[.?!])\s+", "min_chunk_size": None},
    "llamaindex-semantic": {"buffer_size": 1, "breakpoint_percentile_threshold": 95},
    "chroma-cluster": {"size": 400, "min_chunk_size": 50, "tokenizer": "cl100k_base"},
    "chroma-kamradt": {"size": 400, "min_chunk_size": 50, "tokenizer": "cl100k_base"},
}


# fields that exclude others: LangChain's language presets replace the separators
OTHER_FIELDS = {"langchain-recursive": {"size": 40, "overlap": 0, "language": "markdown", "keep_separator": True}}


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_field_of_every_strategy_is_accepted(strategy):
    assert set(ALL_FIELDS[strategy]) | set(OTHER_FIELDS.get(strategy, {})) == set(keys.CHUNKING_FIELDS[strategy])
    for fields in [ALL_FIELDS[strategy]] + ([OTHER_FIELDS[strategy]] if strategy in OTHER_FIELDS else []):
        request = base()
        request["chunking"] = {"strategy": strategy, **fields}
        assert "error" not in simulate(request), simulate(request)


def test_every_key_the_page_sends_is_accepted():
    """The page's own keys (params.js buildRequest, compute.js, investigate.js, settings-map.js,
    dense-client.js): a request with all of them at once is simulated, not refused."""
    request = base()
    request["documents"][0]["text"] = request["documents"][0]["text"] * 3
    request.update(tokenizer="cl100k_base", wire="binary", scores="top", cuts=True, find="delta", expand={"neighbours": 1},
                   sweep=[0, 1], map={"sizes": [4, 6], "overlaps": [0, 1]},
                   questions=[{"id": "1", "query": "delta", "references": [{"doc": "d", "start": 18, "end": 37}]}])
    request["retrieval"].update(variant="bm25l", k1=1.2, b=0.75, delta=0.5, terms={"stopwords": "english"})
    out = simulate(request)
    assert "error" not in out and {"found", "cuts", "expanded", "sweep", "map", "questions"} <= set(out)
    hybrid = base()
    hybrid["retrieval"].update(method="hybrid", rrf_c=60, weights=[0.5, 0.5], similarities=[],
                               question_similarities={"other": []})
    hybrid["chunking"]["strategy"] = "window"
    assert "error" not in simulate(hybrid)


def test_the_audit_refuses_unknown_keys_too():
    from ragsim.wire.audit import audit

    r = base()
    out = audit({"documents": r["documents"], "chunking": r["chunking"], "overlap": [0]})
    assert out["error"]["field"] == "overlap" and out["error"]["message"].endswith("perhaps you meant overlaps.")


# 15. page to terminal ---------------------------------------------------------------------------

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


def test_eval_takes_the_state_file_as_it_is(tmp_path):
    path = tmp_path / "ragsim-state.json"
    path.write_text(json.dumps(saved_state()), encoding="utf-8")
    out = run_cli("eval", path, "--json")
    assert out.returncode == 0, out.stderr
    assert [q["id"] for q in json.loads(out.stdout)["questions"]] == ["1"]
    table = run_cli("eval", path).stdout
    assert "1 questions at window size 8 overlap 2, k 1" in table  # the state's settings
    assert "size 9 overlap 2" in run_cli("eval", path, "--size", "9").stdout  # an option overrides them


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


def test_eval_errors_list_the_valid_document_ids(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b.txt").write_text("Another text.", encoding="utf-8")
    q = {"questions": [{"id": "x", "query": "fog", "references": [{"doc": "doc", "start": 0, "end": 5}]}]}
    (tmp_path / "q.json").write_text(json.dumps(q), encoding="utf-8")
    out = run_cli("eval", tmp_path / "a.txt", tmp_path / "b.txt", "--questions", tmp_path / "q.json")
    assert out.returncode == 2
    err = one_line(out.stderr)
    # each valid id named (a long path by its end, issue 22's short quotes: its file name shows)
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


# 16. the formats in docs/, the sample set, the README's commands -----------------------------

def blocks(path, lang="json"):
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_docs_cli_shows_a_real_request_and_its_real_response():
    doc = ROOT / "docs" / "cli.md"
    request, response = (json.loads(b) for b in blocks(doc)[:2])
    assert request == json.loads((EXAMPLES / "request.json").read_text(encoding="utf-8"))
    out = run_cli(stdin=json.dumps(request))
    assert out.returncode == 0 and json.loads(out.stdout) == response
    # the refusal it shows is a real one too
    shown = next(ln.strip() for ln in doc.read_text(encoding="utf-8").splitlines() if ln.strip().startswith('{"error"'))
    request["chunking"]["chunk_size"] = 8
    assert json.loads(shown) == simulate(request)


def readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(".venv/bin/python -m ragsim")]


def test_the_readme_points_to_docs_not_spec():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    cli = text[text.index("## The command line"):text.index("## Choices the contract leaves open")]
    assert "SPEC.md" not in cli and "docs/cli.md" in cli and (ROOT / "docs" / "cli.md").exists()


def test_the_readme_commands_run():
    commands = readme_commands()
    assert any(" eval examples/harbour.md --questions examples/questions.json" in c for c in commands)
    for command in commands:
        command = command.split("#")[0].strip()
        words = shlex.split(command.split("<")[0])[3:]  # after ".venv/bin/python -m ragsim"
        stdin = (ROOT / command.split("<")[1].strip()).read_text(encoding="utf-8") if "<" in command else None
        out = run_cli(*words, stdin=stdin)
        assert out.returncode == 0, (command, out.stderr)
        assert out.stdout.strip()


def test_the_sample_set_scores_every_question_of_the_sample_document():
    out = run_cli("eval", "examples/harbour.md", "--questions", "examples/questions.json", "--size", "40", "--overlap", "10",
              "--k", "2", "--json")
    stats = json.loads(out.stdout)["question_stats"]
    assert stats["count"] == 6 and stats["intact"] >= 4 and stats["cut"] >= 1  # the example shows a cut too


# 17. commands and hints that work on a stock machine ---------------------------------------------

def test_the_readme_runs_the_project_venv_not_the_system_python():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python3 -m ragsim" not in text and "cd py &&" not in text
    assert '.venv/bin/pip install -e ".[dense]"' in text


def test_the_install_hints_name_the_checkouts_venv_and_an_extra_that_exists():
    assert embed_onnx.INSTALL.startswith('.venv/bin/pip install -e ".[dense]"')
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^dense = \[", pyproject, re.M)
    for path in (ROOT / "py" / "ragsim" / "host").glob("*.py"):
        assert 'pip install "ragsim[dense]"' not in path.read_text(encoding="utf-8"), path


# 18. output that says what it means -----------------------------------------------------------

def test_audit_names_the_destroyed_facts_and_explains_its_columns():
    out = run_cli("audit", "examples/harbour.md", "--unit", "chars", "--size", "100", "--overlaps", "0,20,40")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("1 document, 2 facts, window chars size 100")
    assert "dropped top 3: facts found in the top 3 at the first overlap" in " ".join(lines)
    assert "Destroyed facts (2)" in out.stdout
    assert "'East Terminal' = '4,200 containers'  (examples/harbour.md; overlap 0, 40)" in out.stdout
    # each with its sentence, the name and the value marked (a wrapped line is no sentence end)
    assert "Containers go to the ⟦East Terminal⟧, which handles about ⟦4,200 containers⟧ a week." in out.stdout


def test_unit_help_lists_tokens_and_eval_help_is_sentences():
    assert "words, chars or tokens" in " ".join(run_cli("audit", "--help").stdout.split())
    help_text = " ".join(run_cli("eval", "--help").stdout.split())
    assert "Score a question set over text files at one setting" in help_text and "of settings): each" in help_text
    from ragsim.host import eval_cli

    parser = eval_cli._parser()
    assert parser.description.endswith(".")
    for action in parser._actions:
        if action.dest != "help":
            assert action.help and action.help[0].isupper() and action.help.endswith("."), action.dest


def test_no_stray_print_from_the_conformance_tests():
    for path in (ROOT / "tests" / "conformance").glob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        assert "capsys.disabled()" not in text, path
