"""`inspect` over a store read in pages runs on the corpus engine as audit and eval do: every core
by default (`--workers`), a Dask cluster (`--engine dask --scheduler`), no progress with `--quiet`,
and `--resume`, which goes on from an interrupted run's `--jsonl` output to the report and the lines
of one uninterrupted run, without checking again the documents it holds."""

import json
import pathlib

import pytest

from ragsim.host.commands import inspect_cli
from ragsim.host.corpus import pool
from ragsim.host.jobs import inspect_stream

pytestmark = pytest.mark.slow  # process pools and a Dask cluster

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARBOUR = (ROOT / "examples" / "harbour.md").read_text(encoding="utf-8")  # name-value facts in every section


@pytest.fixture
def argv(tmp_path) -> list[str]:
    """A chunk file of harbour.md's sections as documents, each cut into overlapping 160-character
    chunks, their sources, a phrase and k 1: the options of a streamed inspect of it."""
    sections = ["## " + s for s in HARBOUR.split("\n## ")[1:]]
    lines, names = [], []
    for n, text in enumerate(sections):
        names.append(str(tmp_path / f"section{n}.md"))
        pathlib.Path(names[-1]).write_text(text, encoding="utf-8")
        lines += [{"page_content": text[at:at + 160], "metadata": {"source": names[-1], "start_index": at}}
                  for at in range(0, len(text), 120)]
    (tmp_path / "chunks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return [str(tmp_path / "chunks.jsonl"), "--source", *names, "--phrase", "pilot boat", "--k", "1"]


def run(capsys, *argv) -> tuple[int, str, str]:
    status = inspect_cli.run_inspect(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def counting(monkeypatch, stop_at=None) -> list:
    """The documents `check` is called for; Ctrl-C at the `stop_at`-th."""
    real, calls = inspect_stream.check, []

    def check(shared, doc):
        calls.append(doc)
        if len(calls) == stop_at:
            raise KeyboardInterrupt
        return real(shared, doc)

    monkeypatch.setattr(inspect_stream, "check", check)
    return calls


@pytest.mark.parametrize("shown", [["--json"], []])
def test_an_interrupted_inspect_resumes_to_the_uninterrupted_report_and_lines(argv, shown, tmp_path, capsys,
                                                                               monkeypatch):
    whole, part = tmp_path / "whole.jsonl", tmp_path / "part.jsonl"
    status, expected, _ = run(capsys, *argv, *shown, "--workers", "1", "--jsonl", str(whole))
    assert status == 0 and expected
    documents = sum(1 for line in whole.read_text(encoding="utf-8").splitlines() if json.loads(line)["type"] == "document")
    assert documents == 5
    counting(monkeypatch, stop_at=3)
    status, _, err = run(capsys, *argv, *shown, "--workers", "1", "--jsonl", str(part))
    assert status == 130 and not part.exists()
    assert err == (f"ragsim inspect: interrupted after 2 documents; {part}.part holds them, and the same command "
                   "with --resume goes on from there.\n")
    status, _, err = run(capsys, *argv, *shown, "--workers", "1", "--jsonl", str(part))
    assert (status, err) == (2, f"ragsim inspect: {part}.part holds the lines of an interrupted run; give --resume to "
                                "go on from it, or --force to start over.\n")  # never thrown away unasked
    status, _, err = run(capsys, *argv, *shown, "--k", "2", "--workers", "1", "--jsonl", str(part), "--resume")
    assert status == 2 and "was written for other files or settings" in err  # another run's lines: refused
    calls = counting(monkeypatch)
    status, out, err = run(capsys, *argv, *shown, "--workers", "1", "--jsonl", str(part), "--resume")
    assert (status, err) == (0, "")
    assert out == expected and part.read_bytes() == whole.read_bytes()
    assert len(calls) == documents - 2  # the two documents the output held were not checked again
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("part")] == ["part.jsonl"]
    status, _, err = run(capsys, *argv, *shown, "--jsonl", str(part), "--resume")
    assert status == 2 and "is a finished run" in err


def test_resume_goes_on_from_a_streamed_runs_output_only(argv, capsys):
    status, _, err = run(capsys, *argv, "--resume")
    assert (status, err) == (2, f"ragsim inspect: {inspect_cli.RESUME_NEEDS}\n")
    status, _, err = run(capsys, *argv, "--resume", "--jsonl", "x.jsonl", "--one-request")
    assert (status, err) == (2, f"ragsim inspect: {inspect_cli.RESUME_STREAMED}\n")


def test_every_core_by_default_and_the_same_report_on_any_number(argv, capsys, monkeypatch):
    assert inspect_cli.inspect_parser().parse_args(argv).workers is None
    status, alone, _ = run(capsys, *argv, "--json", "--workers", "1")
    asked, real = [], pool.engine
    monkeypatch.setattr(pool, "engine", lambda *a: asked.append(a) or real(*a))
    monkeypatch.setattr(pool, "cores", lambda: 2)
    status, pooled, _ = run(capsys, *argv, "--json")
    assert status == 0 and pooled == alone and asked == [("local", None, None)]
    status, _, err = run(capsys, *argv, "--workers", "0")
    assert (status, err) == (2, "ragsim inspect: --workers must be at least 1 (got 0).\n")


def test_on_a_dask_cluster_the_same_report(argv, capsys):
    distributed = pytest.importorskip("dask.distributed")
    status, alone, _ = run(capsys, *argv, "--json", "--workers", "1")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                   dashboard_address=None) as cluster:
        status, on_dask, err = run(capsys, *argv, "--json", "--engine", "dask", "--scheduler", cluster.scheduler_address)
    assert (status, err) == (0, ""), err
    assert on_dask == alone


def test_quiet_prints_no_progress(argv, capsys):
    status, _, err = run(capsys, *argv, "--progress", "--workers", "1")
    assert status == 0 and "checked 5 of 5 documents" in err and "chunks" in err
    status, _, err = run(capsys, *argv, "--progress", "--quiet", "--workers", "1")
    assert (status, err) == (0, "")
