"""The CI gate of `eval` and `inspect` (ragsim.host.commands.gate, docs/ci.md): `--fail-on cut|ranked_out|absent`
and `--min-recall` (precision, IoU alike) exit 1 with one sentence naming what failed and which
questions or phrases, 0 when every rule holds, 2 for a rule that cannot be judged."""

import json
import re

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from helpers import CORE, ROOT, one_line, run_cli

pytestmark = pytest.mark.slow  # the command line, a process per run

# Four sentences of six words: a window of 6 words without overlap holds each one whole, alone.
SENTENCES = ("Lighthouse keepers log weather at dawn.", "Ships wait outside when fog rolls.",
             "Cargo is weighed on north quays.", "Fishermen sell catch near the church.")
TEXT = " ".join(SENTENCES)
WINDOWS = ("--unit", "words", "--size", "6", "--overlap", "0", "--k", "1")


def ref(doc: str, *sentences: str) -> dict:
    start = TEXT.index(sentences[0])
    return {"doc": doc, "start": start, "end": TEXT.index(sentences[-1]) + len(sentences[-1])}


def questions(doc: str, *names: str) -> dict:
    """The question set of `names`: dawn is intact (recall 1), cargo ranked out (its sentence is held
    whole, but the query finds the dawn sentence first: recall 0), span cut (two sentences, two chunks)."""
    every = {"dawn": ("keepers log weather at dawn", ref(doc, SENTENCES[0])),
             "cargo": ("when do keepers log the weather", ref(doc, SENTENCES[2])),
             "span": ("fog cargo", ref(doc, SENTENCES[1], SENTENCES[2]))}
    return {"questions": [{"id": n, "query": every[n][0], "references": [every[n][1]]} for n in names]}


@pytest.fixture()
def corpus(tmp_path):
    """The text as a file, and a writer of question sets over it."""
    doc = tmp_path / "harbour.txt"
    doc.write_text(TEXT, encoding="utf-8")

    def write(*names, doc_id=str(doc)):
        path = tmp_path / f"q-{'-'.join(names)}.json"
        path.write_text(json.dumps(questions(doc_id, *names)), encoding="utf-8")
        return path

    return doc, write


def gate_lines(stderr: str) -> tuple[str, str]:
    """The gate's two lines on stderr: the summary and the verdict, and nothing else."""
    lines = stderr.splitlines()
    assert len(lines) == 2 and "Traceback" not in stderr, stderr
    return lines[0], lines[1]


def test_eval_passes_when_every_rule_holds(corpus):
    doc, write = corpus
    out = run_cli("eval", doc, "--questions", write("dawn"), *WINDOWS, "--fail-on", "cut,ranked_out",
                  "--min-recall", "1", "--min-precision", "0.5", "--min-iou", "0.5", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["question_stats"]["intact"] == 1  # stdout is still the report alone
    summary, verdict = gate_lines(out.stderr)
    assert summary == "ragsim eval: 1 question: 1 intact, 0 ranked out, 0 cut; recall 1.000, precision 1.000, IoU 1.000"
    assert verdict == ("ragsim eval: gate held: no question cut, no question ranked out, mean recall 1.000 is at "
                       "least 1, mean precision 1.000 is at least 0.5, mean IoU 1.000 is at least 0.5.")


@pytest.mark.parametrize("names, fail_on, said", [
    (("dawn", "span"), ["--fail-on", "cut"], 'gate failed: 1 of 2 questions cut: span ("fog cargo").'),
    (("dawn", "cargo"), ["--fail-on", "ranked_out"],
     'gate failed: 1 of 2 questions ranked out: cargo ("when do keepers log the weather").'),
    (("cargo", "span"), ["--fail-on", "cut", "--fail-on", "ranked-out"],
     'gate failed: 1 of 2 questions cut: span ("fog cargo"); 1 of 2 questions ranked out: cargo ("when do '
     'keepers log the weather").'),
])
def test_eval_fails_on_each_verdict_naming_the_questions(corpus, names, fail_on, said):
    doc, write = corpus
    out = run_cli("eval", doc, "--questions", write(*names), *WINDOWS, *fail_on)
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith("id ")  # the table, as without a gate
    assert gate_lines(out.stderr)[1] == f"ragsim eval: {said}"


def test_eval_passes_a_verdict_it_was_not_asked_to_fail_on(corpus):
    doc, write = corpus
    out = run_cli("eval", doc, "--questions", write("dawn", "cargo"), *WINDOWS, "--fail-on", "cut")
    assert out.returncode == 0 and gate_lines(out.stderr)[1] == "ragsim eval: gate held: no question cut."


@pytest.mark.parametrize("least, code", [("0.5", 0), ("0.50", 0), ("0.5001", 1), ("0", 0)])
def test_min_recall_holds_at_the_mean_itself(corpus, least, code):
    doc, write = corpus  # recall 1 and 0: the mean is 0.5 exactly
    out = run_cli("eval", doc, "--questions", write("dawn", "cargo"), *WINDOWS, "--min-recall", least)
    assert out.returncode == code, out.stderr
    summary, verdict = gate_lines(out.stderr)
    assert "recall 0.500," in summary
    if code:
        assert verdict == "ragsim eval: gate failed: mean recall 0.500 is below --min-recall 0.5001."
    else:
        assert verdict == f"ragsim eval: gate held: mean recall 0.500 is at least {float(least):g}."


def test_the_one_request_path_gates_alike(corpus, tmp_path):
    """A page's state file makes eval one request (not streamed): the same gate, the same sentence."""
    _, write = corpus
    state = {"ragsim": "state", "version": 1, "docs": [{"id": "harbour", "title": "harbour", "text": TEXT}],
             "settings": {"size": 6, "overlap": 0, "k": 1}}
    (tmp_path / "state.json").write_text(json.dumps(state), encoding="utf-8")
    out = run_cli("eval", tmp_path / "state.json", "--questions", write("dawn", "span", doc_id="harbour"),
                  "--fail-on", "cut", "--min-recall", "0.9")
    assert out.returncode == 1, out.stderr
    # span's top chunk is the fog sentence (a tie broken by document order): that share of the reference
    recall = (1 + len(SENTENCES[1]) / (len(SENTENCES[1]) + 1 + len(SENTENCES[2]))) / 2
    assert gate_lines(out.stderr)[1] == ('ragsim eval: gate failed: 1 of 2 questions cut: span ("fog cargo"); '
                                         f'mean recall {recall:.3f} is below --min-recall 0.9.')


@pytest.mark.parametrize("args, words", [
    (["--min-recall", "1.5"], "--min-recall takes a number from 0 to 1, the least mean recall that passes (got '1.5')."),
    (["--min-recall", "high"], "--min-recall takes a number from 0 to 1"),
    (["--min-recall", "nan"], "(got 'nan')"),
    (["--min-iou", "-0.1"], "--min-iou takes a number from 0 to 1"),
    (["--fail-on", "cut,rankedout"], "--fail-on takes cut or ranked_out, repeated or as a comma list (got 'rankedout'; "
                                     "did you mean ranked_out?)."),
    (["--fail-on", "absent"], "--fail-on absent judges phrases, which this command does not check"),
])
def test_eval_refuses_a_rule_it_cannot_judge_in_one_sentence(corpus, args, words):
    doc, write = corpus
    out = run_cli("eval", doc, "--questions", write("dawn"), *args)
    assert out.returncode == 2 and out.stdout == ""
    assert words in one_line(out.stderr)


# --- inspect: LangChain's chunks of the text, as a JSON Lines export of its Documents -----------------


@pytest.fixture()
def store(corpus, tmp_path):
    """RecursiveCharacterTextSplitter(40, 0) chunks of the text (each sentence whole, alone), in a file."""
    doc, write = corpus
    splitter = RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0, add_start_index=True)
    chunks = splitter.split_documents([Document(page_content=TEXT, metadata={"source": str(doc)})])
    assert [c.page_content for c in chunks] == list(SENTENCES)
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps({"page_content": c.page_content, "metadata": c.metadata}) + "\n" for c in chunks),
                    encoding="utf-8")
    return path, doc, write


def test_inspect_fails_on_an_absent_phrase_and_passes_a_present_one(store):
    path, doc, _ = store
    out = run_cli("inspect", path, "--source", doc, "--phrase", "fog rolls. Cargo is", "--phrase", "Ships wait",
                  "--fail-on", "absent")
    assert out.returncode == 1, out.stderr
    summary, verdict = gate_lines(out.stderr)
    assert summary == "ragsim inspect: 2 phrases: 1 present, 1 absent"
    assert verdict == 'ragsim inspect: gate failed: 1 of 2 phrases absent: "fog rolls. Cargo is".'
    out = run_cli("inspect", path, "--source", doc, "--phrase", "Ships wait", "--fail-on", "absent")
    assert out.returncode == 0 and gate_lines(out.stderr)[1] == "ragsim inspect: gate held: no phrase absent."


def test_inspect_fails_on_its_questions(store):
    path, doc, write = store
    out = run_cli("inspect", path, "--source", doc, "--questions", write("dawn", "cargo", "span"), "--k", "1",
                  "--fail-on", "cut,ranked_out,absent", "--min-recall", "0.2")
    assert out.returncode == 1, out.stderr
    summary, verdict = gate_lines(out.stderr)
    assert summary.startswith("ragsim inspect: 3 questions: 1 intact, 1 ranked out, 1 cut; recall 0.502,")
    assert summary.endswith("; 3 phrases: 2 present, 1 absent")  # the answers' references
    assert verdict == ('ragsim inspect: gate failed: 1 of 3 questions cut: span ("fog cargo"); 1 of 3 questions '
                       'ranked out: cargo ("when do keepers log the weather"); 1 of 3 phrases absent: "Ships wait '
                       'outside when fog rolls.…" (question span).')


@pytest.mark.parametrize("args, words", [
    (["--fail-on", "cut"], "--fail-on cut judges a question set: give it with --questions FILE."),
    (["--min-recall", "0.5", "--fail-on", "ranked_out"],
     "--fail-on ranked_out, --min-recall judges a question set: give it with --questions FILE."),
    (["--fail-on", "absent"], "--fail-on absent judges phrases: give them with --phrase TEXT"),
    (["--phrase", "Ships", "--fail-on", "intact"], "--fail-on takes cut, ranked_out or absent"),
    (["--phrase", "Ships", "--min-precision", "2"], "--min-precision takes a number from 0 to 1"),
])
def test_inspect_refuses_a_gate_with_nothing_to_judge(store, args, words):
    path, doc, _ = store
    out = run_cli("inspect", path, "--source", doc, *args)
    assert out.returncode == 2 and out.stdout == ""
    assert words in one_line(out.stderr)


# --- docs/ci.md shows real runs -------------------------------------------------------------------------


def test_docs_ci_shows_a_real_failure_and_a_pytest_test_that_passes(monkeypatch):
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    out = run_cli("eval", "examples/harbour.md", "--questions", "examples/questions.json", "--unit", "words", "--size", "40", "--overlap",
                  "10", "--k", "2", "--fail-on", "cut,ranked_out", "--min-recall", "0.95")
    assert out.returncode == 1
    for line in gate_lines(out.stderr):
        assert f"    {line}\n" in text
    [example] = re.findall(r"```python\n(.*?)```", text, re.S)
    namespace = {}
    exec(compile(example, "docs/ci.md", "exec"), namespace)
    monkeypatch.chdir(ROOT)  # as the page says: run from the repository's root, this checkout's core
    monkeypatch.setenv("PYTHONPATH", str(CORE))
    namespace["test_hard_questions_are_answered_whole"]()
    namespace["test_no_hard_question_is_cut_or_ranked_out"]()
