"""The audit of a whole knowledge base, streamed in batches over a process pool or a Dask
cluster, gives every number one request over the same documents gives; progress, JSON Lines,
--resume and Ctrl-C; bad files skipped and listed."""

import gc
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from helpers import cli_env, ctrl_c_as_a_terminal, ragsim_argv, run_cli
from ragsim.host.jobs import audit_run
from ragsim.host.corpus import jsonl_out, pool, sources
from ragsim.host.corpus.progress import Progress
from ragsim.host.corpus.refused import Refused
from ragsim.rank import ranking
from ragsim.errors import RequestError
from ragsim.rank.collection import Collection, document_frequencies
from ragsim.rank.corpus import rankable
from ragsim.split.session import Session
from ragsim.rank.weights import Terms
from ragsim.text.index import DocIndex
from ragsim.wire.audit import audit

pytestmark = pytest.mark.slow  # process pools, a Dask cluster, Ctrl-C on a running command

ROOT = pathlib.Path(__file__).resolve().parents[2]
COLLECTION = sorted(str(p) for p in (ROOT / "assets" / "collection").glob("*.md"))


def one_request(files, chunking, overlaps, k=3):
    docs = [{"id": p, "title": pathlib.Path(p).name, "text": pathlib.Path(p).read_text(encoding="utf-8")} for p in files]
    return audit({"documents": docs, "chunking": chunking, "overlaps": overlaps, "precision_k": k})


def streamed(files, chunking, overlaps, engine, k=3, batch=6000, out_path=None, progress=None, resume=False,
             retrieval=None):
    found, skipped = sources.walk(files)
    plan = audit_run.Plan(chunking=chunking, overlaps=overlaps, retrieval=retrieval or {}, k=k, files=found,
                          batch_bytes=batch,
                          skipped=skipped)
    facts = []
    out = jsonl_out.Output(out_path)
    try:
        summary = audit_run.run(plan, engine, out, progress or Progress(1, 1, quiet=True), resume=resume,
                                on_fact=facts.append)
    finally:
        out.close()
    return summary, facts


def _parts_and_stats(query, chunking, variant="lucene"):
    texts = [pathlib.Path(p).read_text(encoding="utf-8") for p in COLLECTION]
    session = Session()
    indexes = [DocIndex.build(t) for t in texts]
    whole = rankable(indexes, list(range(len(indexes))), session, chunking)
    expected = ranking.score_all(query, whole.lengths, {t: whole.occurrence(t) for t in set(query)}, variant)
    parts = [rankable([ix], [0], session, chunking) for ix in indexes]
    stats = Collection(0, 0, {})
    for part in parts:
        stats = stats.merged(Collection(len(part.starts), sum(part.lengths),
                                        document_frequencies(set(query), part.occurrence, len(part.starts))))
    return parts, stats, expected


QUERY = ["corran", "navigation", "lock", "corran", "the"]


@pytest.mark.parametrize("variant", ["lucene", "robertson", "atire"])
def test_terms_with_the_collections_statistics_give_score_all_bits_over_the_whole_corpus(variant):
    """Each part's weights under the whole corpus's statistics (`Terms(stats=...)`), added in query
    order, have score_all's bits over the whole corpus, chunk for chunk."""
    parts, stats, expected = _parts_and_stats(QUERY, {"unit": "chars", "size": 300, "overlap": 40}, variant)
    got = []
    for part in parts:
        terms = Terms(part.lengths, part.occurrence, variant, 1.2, 0.75, 0.5, stats=stats.stats)
        ms = ranking.MaxScore(terms, QUERY)
        got.extend(ms.score_of(p) for p in range(len(part.starts)))
    assert got == expected and any(got)


def test_each_parts_maxscore_top_k_merged_is_the_whole_corpus_top_k():
    """Each part's exact top k (MaxScore under the collection's statistics), merged by SPEC section 3's
    tie rule, is the top k of one ranking over the whole corpus."""
    parts, stats, expected = _parts_and_stats(QUERY, {"unit": "chars", "size": 300, "overlap": 40})
    for k in (1, 3, 10):
        merged, base = [], 0
        for part in parts:
            ms = ranking.MaxScore(Terms(part.lengths, part.occurrence, "lucene", 1.2, 0.75, 0.5, stats=stats.stats),
                                  QUERY)
            merged.extend((-ms.score_of(p), p + base) for p in ms.top(k))
            base += len(part.starts)
        assert [p for _, p in sorted(merged)[:k]] == ranking.top(expected, k)


def test_shifted_variants_are_refused_with_the_collections_statistics():
    with pytest.raises(RequestError) as e:
        Terms([3, 4], lambda t: ([], []), "bm25l", 1.2, 0.75, 0.5, stats=(10, 40, {}))
    assert e.value.field == "retrieval.variant" and "lucene, robertson or atire" in e.value.message


@pytest.mark.parametrize("chunking,overlaps", [
    ({"strategy": "window", "unit": "chars", "size": 900}, [0, 50, 150, 900]),
    ({"strategy": "window", "unit": "words", "size": 60}, [0, 8, 25]),
])
def test_streamed_audit_equals_one_request(chunking, overlaps):
    expected = one_request(COLLECTION, chunking, overlaps)
    summary, facts = streamed(COLLECTION, chunking, overlaps, pool.Local(1))
    assert facts == expected["facts"]
    assert summary["rows"] == expected["rows"]
    assert summary["documents"] == len(COLLECTION) and summary["facts"] == len(expected["facts"])
    pooled, pooled_facts = streamed(COLLECTION, chunking, overlaps, pool.Local(2))
    assert pooled_facts == facts and pooled["rows"] == summary["rows"]
    assert pooled["sentence"] == summary["sentence"]


def many_destroyed_facts(folder: pathlib.Path, n: int) -> str:
    """A file of `n` facts ("The Galle Dam Ba handles about 1,007 containers a year."), each destroyed
    by windows of 4 words: its name and value lie 7 words apart."""
    firsts, kinds = ("Harrow", "Galle", "Varga", "Brannock", "Kessel", "Orlin", "Tamsin"), ("Lock", "Dam", "Quay")
    path = folder / "facts.txt"
    path.write_text(" ".join(f"The {firsts[i % 7]} {kinds[i % 3]} {chr(65 + i % 26)}{chr(97 + i // 26)} handles "
                             f"about {1000 + 7 * i:,} containers a year." for i in range(n)), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("n", [50, 51, 90])
def test_the_first_50_destroyed_facts_are_kept_for_the_text_and_the_rest_counted(tmp_path, n):
    # the test corpora destroy fewer than 50 facts: the bound on those kept for the text was never reached
    path = many_destroyed_facts(tmp_path, n)
    summary, facts = streamed([path], {"unit": "words", "size": 4}, [0, 1], pool.Local(1))
    assert summary["destroyed_facts"] == len(facts) == n
    assert summary["destroyed_listed"] == [f for f in facts if f["destroyed_at"]][:audit_run.LISTED]
    assert audit_run.LISTED == 50
    out = run_cli("audit", path, "--unit", "words", "--size", "4", "--overlaps", "0,1").stdout
    named = [line for line in out.splitlines() if line.startswith("  ") and "; overlap 0, 1)" in line]
    assert len(named) == 50 and f"Destroyed facts ({n})" in out
    more = f"and {n - 50} more (the fact lines of --jsonl list every fact)."
    assert out.rstrip().endswith(more) == (n > 50) and out.count(" more (") == (n > 50)


def test_the_corpus_sentence_says_it_in_the_studys_words():
    summary, facts = streamed(COLLECTION, {"unit": "chars", "size": 900}, [0, 50, 150, 300], pool.Local(1))
    gap = max(f["stretch"][1] - f["stretch"][0] for f in facts)
    rows = summary["rows"]
    assert summary["sentence"] == (f"{len(facts)} facts of this shape across {len(COLLECTION)} documents; chunking destroys "
                                   f"{rows[0]['destroyed']} at overlap 0 and {rows[-1]['destroyed']} at 300; the "
                                   f"longest name-to-value gap is {gap} characters, so an overlap above it loses none")


def test_dask_local_cluster_gives_the_same_results():
    distributed = pytest.importorskip("dask.distributed")
    chunking, overlaps = {"unit": "chars", "size": 900}, [0, 150]
    expected = one_request(COLLECTION, chunking, overlaps)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        engine = pool.Dask(cluster.scheduler_address)
        try:
            summary, facts = streamed(COLLECTION, chunking, overlaps, engine)
            paused = list(engine.map(_collector_state, None, range(4)))
            after = engine.client.run(gc.isenabled)
        finally:
            engine.close()
    assert facts == expected["facts"] and summary["rows"] == expected["rows"]
    assert paused == [(i, (False, False)) for i in range(4)] and set(after.values()) == {True}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_cluster_whose_workers_lack_ragsim_is_one_sentence_naming_the_version_to_install():
    """A scheduler and a worker (started here, on 127.0.0.1) whose Python cannot import ragsim: the run
    stops at once with what to install where, not with every file "skipped"."""
    distributed = pytest.importorskip("dask.distributed")
    import ragsim

    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    worker = ("import sys; sys.path[:] = [p for p in sys.path if not p.rstrip('/').endswith('/py')]; "
              "import importlib.util; assert importlib.util.find_spec('ragsim') is None; "
              "from distributed.cli.dask_worker import main; "
              f"sys.argv = ['dask-worker', {address!r}, '--nthreads', '1', '--no-dashboard', '--no-nanny']; main()")
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":", 1)[1], "--no-dashboard"], env=env, cwd="/",
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        time.sleep(1)
        procs.append(subprocess.Popen([sys.executable, "-c", worker], env=env, cwd="/",
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=60)
        out = run_cli("audit", COLLECTION[0], "--engine", "dask", "--scheduler", address, "--quiet", timeout=120)
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
    assert out.returncode == 2
    assert out.stderr == (f"ragsim audit: the Dask workers at {address} cannot import ragsim (No module named 'ragsim'): "
                          f"install ragsim {ragsim.__version__} on every worker, in the Python environment the worker "
                          "runs (pip install the project, or put its py/ folder on the workers' PYTHONPATH), and run "
                          "again.\n")


def test_workers_of_another_ragsim_version_stop_the_run_naming_both(monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    import ragsim

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        theirs = ragsim.__version__
        monkeypatch.setattr(ragsim, "__version__", "9.9.9")  # this command's version; the worker keeps its own
        engine = pool.Dask(cluster.scheduler_address)
        try:
            with pytest.raises(Refused, match=rf"run ragsim {theirs}, this command ragsim 9\.9\.9: install "):
                list(engine.map(_collector_state, None, range(2)))
        finally:
            engine.close()


def _collector_state(shared, item):
    """Whether Python's cyclic collector runs during a batch, before and after a second thread (as in
    a Dask worker of two threads) has paused and resumed it around a batch of its own."""
    during = gc.isenabled()
    side = threading.Thread(target=pool._paused, args=(lambda s, i: None, shared, item))
    side.start()
    side.join()
    return during, gc.isenabled()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_batch_runs_with_the_cyclic_collector_paused_and_restored_after(workers):
    assert list(pool.Local(workers).map(_collector_state, None, range(4))) == [(i, (False, False)) for i in range(4)]
    assert gc.isenabled()


def test_an_unreachable_scheduler_is_one_sentence_and_exit_2():
    out = run_cli("audit", COLLECTION[0], "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", "--quiet", timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "cannot be reached" in out.stderr


def test_a_scheduler_that_is_silent_or_speaks_nonsense_is_one_sentence_within_the_deadline():
    """Servers on 127.0.0.1 that accept and say nothing, or send eight bytes claiming exabytes: each
    refused in one sentence within the 10 s deadline (Dask's own connect waited minutes, or asked for
    3 EiB); a tls:// address is refused at once."""
    import socket
    import threading

    def serve(reply: bytes):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        held = []

        def accept():
            try:
                conn, _ = listener.accept()
                held.append(conn)
                if reply:
                    conn.sendall(reply)
            except OSError:
                pass

        threading.Thread(target=accept, daemon=True).start()
        return listener, held

    for reply, said in ((b"", "said nothing within"), (b"\xff" * 8, "does not speak Dask's protocol")):
        listener, held = serve(reply)
        try:
            started = time.monotonic()
            out = run_cli("audit", COLLECTION[0], "--engine", "dask", "--scheduler",
                          f"tcp://127.0.0.1:{listener.getsockname()[1]}", "--quiet", timeout=60)
            assert time.monotonic() - started < 30
            assert out.returncode == 2 and out.stderr.count("\n") == 1 and said in out.stderr, out.stderr
        finally:
            listener.close()
            for conn in held:
                conn.close()
    out = run_cli("audit", COLLECTION[0], "--engine", "dask", "--scheduler", "tls://127.0.0.1:8786", "--quiet",
                  timeout=60)
    assert out.returncode == 2 and "tcp:// only" in out.stderr and "Traceback" not in out.stderr


def _dies_on_three(shared, item):
    if item == 3:
        os._exit(1)
    return item * shared


def test_a_worker_that_dies_is_retried_then_its_batch_reported():
    engine = pool.Local(2)
    got = list(engine.map(_dies_on_three, 10, range(6)))
    assert [i for i, _ in got] == list(range(6))
    assert [r for _, r in got if not isinstance(r, pool.Failed)] == [0, 10, 20, 40, 50]
    assert isinstance(got[3][1], pool.Failed) and "died" in got[3][1].reason and engine.retried >= 2


def test_unreadable_and_binary_files_are_skipped_and_listed(tmp_path):
    kb = tmp_path / "kb"
    (kb / "deeper").mkdir(parents=True)
    for p in COLLECTION[:2]:
        shutil.copy(p, kb / "deeper" / pathlib.Path(p).name)
    (kb / "image.md").write_bytes(b"\x89PNG\x00\x00binary")
    (kb / "latin.md").write_bytes(b"caf\xe9 \xff")
    (kb / "notes.txt").write_text("The Galle Ring orbits at 42,000 km.", encoding="utf-8")
    out = run_cli("audit", kb, "--glob", "*.md", "--size", "900", "--overlaps", "0,150", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "image.md" in out.stderr and "looks binary" in out.stderr and "latin.md" in out.stderr
    assert "not UTF-8" in out.stderr and "notes.txt" not in out.stdout + out.stderr
    assert out.stdout.startswith("2 documents,")


def _lines(path):
    return [json.loads(line) for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines()]


class StopAfter(Progress):
    """Ctrl-C as the run's progress reports its `n`-th batch judged."""

    def __init__(self, n):
        super().__init__(1, 1, quiet=True)
        self.n = n

    def advance(self, files, nbytes):
        if self.phase == "rank":
            self.n -= 1
            if self.n == 0:
                raise KeyboardInterrupt


def test_resume_after_an_interruption_gives_the_uninterrupted_output(tmp_path):
    chunking, overlaps = {"unit": "chars", "size": 900}, [0, 50, 150]
    whole = tmp_path / "whole.jsonl"
    streamed(COLLECTION, chunking, overlaps, pool.Local(1), out_path=str(whole))
    part = tmp_path / "part.jsonl"
    with pytest.raises(audit_run.Interrupted, match="part.jsonl.part holds them.*--resume"):
        streamed(COLLECTION, chunking, overlaps, pool.Local(1), out_path=str(part), progress=StopAfter(2))
    assert not part.exists()  # the output is moved into place whole: till then its lines are beside it
    written = _lines(pathlib.Path(f"{part}.part"))
    assert written and all(line["type"] == "document" for line in written)
    assert len(written) < len(COLLECTION)
    streamed(COLLECTION, chunking, overlaps, pool.Local(1), out_path=str(part), resume=True)
    assert part.read_bytes() == whole.read_bytes()
    assert _lines(whole)[-1]["type"] == "summary"
    assert not pathlib.Path(f"{part}.resume").exists() and not pathlib.Path(f"{part}.part").exists()


def test_ctrl_c_leaves_a_valid_partial_output_and_says_how_to_resume(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    copies = 48  # enough that the rank pass is still going when its first lines are written (under load too)
    for i in range(copies):
        for p in COLLECTION:
            shutil.copy(p, kb / f"{i:02d}-{pathlib.Path(p).name}")
    out = tmp_path / "out.jsonl"
    args = ["audit", kb, "--size", "900", "--overlaps", "0,150", "--workers", "1", "--batch-kb", "8", "--quiet",
            "--jsonl", out]
    run = subprocess.Popen(ragsim_argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
                           preexec_fn=ctrl_c_as_a_terminal)
    deadline = time.monotonic() + 60
    lines = pathlib.Path(f"{out}.part")  # the output's lines until it is whole
    while time.monotonic() < deadline and (not lines.exists() or lines.stat().st_size < 200):
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "Traceback" not in err and err.count("\n") == 1 and "--resume" in err
    assert not out.exists()
    partial = _lines(lines)
    assert partial and all(line["type"] == "document" for line in partial)
    resumed = run_cli(*args, "--resume", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    lines = _lines(out)
    assert lines[-1]["type"] == "summary" and lines[-1]["documents"] == copies * len(COLLECTION)
    assert [d["file"] for d in lines if d["type"] == "document"] == sorted(str(p) for p in kb.iterdir())


class Terminal:
    """A stderr that says it is a terminal, keeping what is written."""

    def __init__(self, tty=True):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_shows_files_rate_and_time_left_only_on_a_terminal():
    shown = Terminal()
    p = Progress(4_000_000, 4, stream=shown, every=0)
    p.start("rank")
    p.advance(1, 1_000_000)
    p.advance(3, 3_000_000)
    p.end()
    assert "rank: 1 of 4 files, 1.0 MB" in shown.text and "MB/s" in shown.text and "s left" in shown.text
    assert "4 of 4 files" in shown.text and shown.text.endswith("\n")
    for quiet, tty in ((True, True), (False, False)):
        silent = Terminal(tty)
        p = Progress(10, 1, quiet=quiet, stream=silent, every=0)
        p.start("read")
        p.advance(1, 10)
        p.end()
        assert silent.text == ""


def test_a_zero_scoring_best_chunks_rank_comes_from_the_kept_best_alone():
    """A fact whose best answering chunk scores 0 ranks after every positive chunk and the zero ones
    before it; the run keeps only each query's best k positive chunks, and that is enough: fewer
    than k positive chunks in all means every one of them is kept. Checked against the full ranking."""
    import random

    rng = random.Random(26)
    for _ in range(300):
        n, k = rng.randrange(1, 12), rng.randrange(1, 5)
        scores = [rng.choice([0.0, 0.0, 0.0, 0.5, 1.0, 1.5]) for _ in range(n)]
        kept = sorted((-s, p) for p, s in enumerate(scores) if s > 0)[:k]  # the merged best k
        state = {"best": {"0": {"7": kept}}}
        for p in (p for p, s in enumerate(scores) if s == 0):
            at = {"best": [0.0, p], "answering": [p + 1]}
            assert audit_run._in_top(at, state, "0", "7", k) == (ranking.rank_of(scores, p) <= k)


def test_resume_trusts_no_damaged_checkpoint_nor_an_edited_file(tmp_path):
    """A checkpoint pointing past the output, cut short, of another shape, or an edit of a file that
    keeps its size: one sentence each, and the output is not padded or run again on stale results."""
    kb = tmp_path / "kb"
    kb.mkdir()
    for p in COLLECTION:
        shutil.copy(p, kb / pathlib.Path(p).name)
    files = sorted(str(p) for p in kb.iterdir())
    chunking, overlaps = {"unit": "chars", "size": 900}, [0, 50]
    part = tmp_path / "part.jsonl"
    mark = pathlib.Path(str(part) + ".resume")
    lines = pathlib.Path(f"{part}.part")

    def interrupted():
        for p in (lines, mark):
            p.unlink(missing_ok=True)
        with pytest.raises(audit_run.Interrupted):
            streamed(files, chunking, overlaps, pool.Local(1), out_path=str(part), progress=StopAfter(2))
        return json.loads(mark.read_text(encoding="utf-8"))

    state = interrupted()
    size = lines.stat().st_size
    for damaged in (json.dumps({**state, "offset": size + 5_000_000}), json.dumps(state)[:40], "[1, 2]",
                    json.dumps({**state, "best": None}), "[" * 100_000):
        mark.write_text(damaged, encoding="utf-8")
        with pytest.raises(Refused, match="not a checkpoint"):
            streamed(files, chunking, overlaps, pool.Local(1), out_path=str(part), resume=True)
        assert lines.stat().st_size == size  # nothing padded, nothing cut
    interrupted()
    first = pathlib.Path(files[0])
    text = first.read_text(encoding="utf-8")
    first.write_text(text.replace("a", "e", 1), encoding="utf-8")  # the same size, other words
    with pytest.raises(Refused, match="other files or settings"):
        streamed(files, chunking, overlaps, pool.Local(1), out_path=str(part), resume=True)
