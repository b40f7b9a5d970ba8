"""The documented commands are real: docs/cli.md's request and response are what the command gives, every
`.venv/bin/python -m ragsim` line in the README runs, the sample question set scores the sample document,
and the README and the install hints name the checkout's .venv and an extra that exists (commands that
work on a stock machine, where the system Python refuses pip)."""

import json
import pathlib
import re
import shlex

import pytest

from helpers import run_cli
from ragsim.host.clients import embed_onnx
from ragsim.wire.api import simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


# --- the formats in docs/, the sample set, the README's commands ----------------------------------

def blocks(path, lang="json"):
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


@pytest.mark.slow
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


@pytest.mark.slow
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
    out = run_cli("eval", "examples/harbour.md", "--questions", "examples/questions.json", "--unit", "words", "--size", "40", "--overlap", "10",
              "--k", "2", "--json")
    stats = json.loads(out.stdout)["question_stats"]
    assert stats["count"] == 6 and stats["intact"] >= 4 and stats["cut"] >= 1  # the example shows a cut too


# --- commands and hints that work on a stock machine ----------------------------------------------

def test_the_readme_runs_the_project_venv_not_the_system_python():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python3 -m ragsim" not in text and "cd py &&" not in text
    assert '.venv/bin/pip install -e ".[dense]"' in text


def test_the_install_hints_name_the_checkouts_venv_and_an_extra_that_exists():
    assert embed_onnx.INSTALL.startswith('.venv/bin/pip install -e ".[dense]"')
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^dense = \[", pyproject, re.M)
    for path in (ROOT / "py" / "ragsim" / "host").rglob("*.py"):
        assert 'pip install "ragsim[dense]"' not in path.read_text(encoding="utf-8"), path
