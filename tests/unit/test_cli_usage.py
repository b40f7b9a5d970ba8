"""The command line's own words: `--help` lists every command with an example that runs, an unknown
command is refused naming the known ones, a request still comes on stdin, and the output says what it
means (the audit's columns and destroyed facts, each option's help a sentence). The commands run as
subprocesses with this Python (the project's .venv) from the repository root, as the README runs them."""

import json
import re
import shlex

import pytest

from helpers import make_request, one_line, run_cli


# --- help and unknown commands --------------------------------------------------------------------

@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("args", [[], ["-"]])
def test_a_request_still_comes_on_stdin(args):
    out = run_cli(*args, stdin=json.dumps(make_request("a b c d", query="c", size=2, overlap=0, k=1)))
    assert out.returncode == 0 and json.loads(out.stdout)["stats"]["chunks"] == 2


# --- output that says what it means ---------------------------------------------------------------

@pytest.mark.slow
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


@pytest.mark.slow
def test_unit_help_lists_tokens_and_eval_help_is_sentences():
    assert "words, chars or tokens" in " ".join(run_cli("audit", "--help").stdout.split())
    help_text = " ".join(run_cli("eval", "--help").stdout.split())
    assert "Score a question set over text files at one setting" in help_text and "of settings): each" in help_text
    from ragsim.host.commands import eval_cli

    parser = eval_cli._parser()
    assert parser.description.endswith(".")
    for action in parser._actions:
        if action.dest != "help":
            assert action.help and action.help[0].isupper() and action.help.endswith("."), action.dest
