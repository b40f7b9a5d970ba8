"""A mistake on the command line gets one sentence that says what to do: the nearest option named, no
option taken for another by its first letters, a missing file named and never skipped in silence."""

import functools

import pytest

from helpers import bare_env, run_cli

run = functools.partial(run_cli, env=bare_env())  # from the repository root, as a stock machine runs it


@pytest.mark.parametrize("command,wrong,meant", [
    ("eval", "--chunk-size", "--size"), ("eval", "--top-k", "--k"), ("audit", "--top-k", "--top"),
    ("audit", "--chunk_size", "--size"), ("ask", "--sise", "--size"),
])
def test_a_wrong_option_names_the_nearest_one_in_a_line(command, wrong, meant):
    asked = ["--question", "q", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"] if command == "ask" else []
    out = run(command, "examples/harbour.md", *asked, wrong, "3")
    assert out.returncode == 2 and f"{wrong} (did you mean {meant}?)" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "usage:" not in out.stderr


def test_an_option_is_not_taken_for_another_by_its_first_letters():
    out = run("audit", "examples/harbour.md", "--overlap", "20")
    assert out.returncode == 2 and "--overlap (did you mean --overlaps?)" in out.stderr


def test_a_misspelt_file_among_good_ones_fails_the_run_and_is_named():
    out = run("audit", "examples/harbour.md", "examples/harbor.md", "--quiet", "--workers", "1")
    assert out.returncode != 0 and "examples/harbor.md does not exist" in out.stderr and not out.stdout
    out = run("audit", "nope.md", "--quiet")
    assert out.returncode != 0 and "nope.md does not exist" in out.stderr


def test_a_missing_question_set_is_one_sentence_naming_it():
    out = run("eval", "examples/harbour.md", "--questions", "nope.json", "--quiet")
    assert out.returncode == 1 and out.stderr.strip() == "ragsim eval: nope.json cannot be read (No such file or directory)."


def test_every_commands_help_opens_with_a_whole_sentence_and_names_each_setting():
    for command in ("ask", "audit", "eval", "inspect", "export"):
        out = run(command, "--help")
        description = out.stdout.split("\n\n")[1]
        assert out.returncode == 0 and description.count("`") % 2 == 0 and description.rstrip().endswith("."), command
    ask = " ".join(run("ask", "--help").stdout.split())
    for option in ("--size SIZE the chunk size", "--overlap OVERLAP the overlap", "--k K how many chunks"):
        assert option in ask
