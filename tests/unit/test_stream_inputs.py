"""A streamed run's inputs: directories walked in a fixed order with --glob, for audit, eval and inspect's
sources alike."""

import json
import pathlib
import shutil

import pytest

from helpers import run_cli
from ragsim.host.corpus import sources

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_walk_orders_recurses_globs_and_lists_what_it_skips(tmp_path):
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    for name in ("b/c/z.md", "b/a.md", "b/notes.txt", ".hidden/x.md", "b/.dot.md", "top.md"):
        (tmp_path / name).write_text("text", encoding="utf-8")
    found, skipped = sources.walk([str(tmp_path), str(tmp_path / "missing.md")], "*.md")
    assert [pathlib.Path(s.path).relative_to(tmp_path).as_posix() for s in found] == ["b/a.md", "b/c/z.md", "top.md"]
    assert [s.seq for s in found] == [0, 1, 2]
    assert skipped == [(str(tmp_path / "missing.md"), "does not exist")]
    named, _ = sources.walk([str(tmp_path / "b" / "notes.txt")], "*.md")  # a file named is taken as it is
    assert len(named) == 1
    assert [len(b) for b in sources.batches(found, 8)] == [2, 1]


@pytest.mark.slow
def test_inspect_reads_its_sources_from_a_directory(tmp_path):
    shutil.copy(ROOT / "examples" / "harbour.md", tmp_path / "harbour.md")
    (tmp_path / "other.txt").write_text("not a source", encoding="utf-8")

    def inspect(*source):
        out = run_cli("inspect", ROOT / "examples" / "chunks.jsonl", "--source", *source, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    by_dir = inspect(str(tmp_path), "--glob", "*.md")
    by_file = inspect(str(tmp_path / "harbour.md"))
    assert by_dir == by_file and by_dir["stats"]
