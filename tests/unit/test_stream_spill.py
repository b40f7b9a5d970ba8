"""What one pass of a streamed audit or eval keeps for the next (`host.corpus.spill`): the results
are the same whether it was kept or made again from the files (a worker that cannot read it, as a
Dask worker on another machine), and the run leaves nothing behind."""

import contextlib
import os

import pytest

from ragsim.host.corpus import pool, spill
from test_stream_audit import COLLECTION, one_request, streamed
from test_stream_eval import question_set, streamed as streamed_eval
import test_stream_eval


@contextlib.contextmanager
def _nowhere(prefix):
    yield None  # no directory: every pass makes its work again from the files


def _watched(made, monkeypatch):
    """`spill.directory` noting the directories made, and `spill.load` the results read back."""
    real, load = spill.directory, spill.load

    def counted(path):
        value = load(path)
        made.append(value is not None)
        return value
    monkeypatch.setattr(spill, "load", counted)

    @contextlib.contextmanager
    def directory(prefix):
        with real(prefix) as path:
            made.append(path)
            yield path
    return directory


def test_a_kept_result_is_read_back_once_and_none_is_kept_without_a_directory(tmp_path):
    assert spill.keep({}, "x", [1]) is None and spill.load(None) is None
    assert spill.keep({"spill": str(tmp_path / "absent")}, "x", [1]) is None  # cannot be written: None, no error
    path = spill.keep({"spill": str(tmp_path)}, "x", {"a": [1, 2]})
    assert path and spill.load(path) == {"a": [1, 2]}
    assert not os.path.exists(path) and spill.load(path) is None  # removed once read


@pytest.mark.slow
def test_the_audit_is_the_same_kept_or_made_again_and_leaves_nothing(monkeypatch):
    chunking, overlaps = {"strategy": "window", "unit": "chars", "size": 700}, [0, 100, 700]
    expected = one_request(COLLECTION, chunking, overlaps)
    made = []
    monkeypatch.setattr(spill, "directory", _watched(made, monkeypatch))
    kept, kept_facts = streamed(COLLECTION, chunking, overlaps, pool.Local(1))
    paths, loads = [p for p in made if isinstance(p, str)], [x for x in made if isinstance(x, bool)]
    assert paths and not any(os.path.exists(p) for p in paths)
    assert loads and all(loads)  # each batch's facts and judging work read back, none made again
    monkeypatch.setattr(spill, "directory", _nowhere)
    again, again_facts = streamed(COLLECTION, chunking, overlaps, pool.Local(2))
    assert kept_facts == again_facts == expected["facts"]
    assert kept["rows"] == again["rows"] == expected["rows"] and kept["sentence"] == again["sentence"]


@pytest.mark.slow
def test_the_question_set_is_the_same_kept_or_made_again_and_leaves_nothing(monkeypatch):
    chunking, k = {"strategy": "window", "unit": "words", "size": 50, "overlap": 5}, 2
    questions = question_set()
    expected = test_stream_eval.one_request(chunking, k, questions)
    made = []
    monkeypatch.setattr(spill, "directory", _watched(made, monkeypatch))
    kept = streamed_eval(chunking, k, questions, pool.Local(1))
    paths, loads = [p for p in made if isinstance(p, str)], [x for x in made if isinstance(x, bool)]
    assert paths and not any(os.path.exists(p) for p in paths)
    assert loads and all(loads)
    monkeypatch.setattr(spill, "directory", _nowhere)
    again = streamed_eval(chunking, k, questions, pool.Local(2))
    assert kept["questions"] == again["questions"] == expected["questions"]
    assert kept["question_stats"] == again["question_stats"] == expected["question_stats"]
