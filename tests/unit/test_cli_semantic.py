"""The semantic chunkers on the command line: `eval`, `audit` and `inspect` take the semantic chunkers, and every
chunking field of any splitter through `--chunking JSON` or `--chunking-file F`; bad JSON and unknown
fields get one line and exit 2. In process, with a hashed embedding as the host (the onnxruntime
model's own conformance is in tests/conformance/test_semantic_conformance.py)."""

import json
import pathlib

import pytest

from helpers import bare_env, hashed, run_cli
from ragsim.host.commands import audit_cli, eval_cli, inspect_cli
from ragsim.split import semantic, semantic_split
from ragsim.wire.api import simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARBOUR = str(ROOT / "examples" / "harbour.md")
QUESTIONS = str(ROOT / "examples" / "questions.json")


class Host:
    def __init__(self):
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return [hashed(t) for t in texts]


@pytest.fixture
def host(monkeypatch):
    # the streamed commands run in this process (one worker), so the host's count is this process's
    monkeypatch.setattr("ragsim.host.corpus.pool.cores", lambda: 1)
    saved, counting = list(semantic_split.HOSTS), Host()
    semantic_split.register_host(lambda: counting)
    yield counting
    semantic_split.HOSTS[:] = saved


def eval_json(capsys, *argv) -> dict:
    assert eval_cli.main([HARBOUR, "--questions", QUESTIONS, "--json", *argv]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def refused(capsys, main, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def test_eval_takes_a_semantic_strategy_by_name_and_says_its_library_call(host, capsys):
    assert eval_cli.main([HARBOUR, "--questions", QUESTIONS, "--strategy", "langchain-semantic", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert "6 questions at LangChain SemanticChunker(), k 2" in out
    assert host.texts == len(semantic.texts_to_embed(pathlib.Path(HARBOUR).read_text(), {"strategy": "langchain-semantic"}))


def test_eval_maps_a_semantic_chunker_over_its_own_axes_embedding_once(host, capsys):
    got = eval_json(capsys, "--chunking", '{"strategy": "langchain-semantic", "breakpoint_threshold_type": '
                    '"interquartile"}', "--map-sizes", "0.5,1.5,3", "--map-overlaps", "0,200")
    assert got["map"]["sizes"] == [0.5, 1.5, 3] and len(got["map"]["cells"][0]) == 2
    first = host.texts
    assert eval_cli.main([HARBOUR, "--questions", QUESTIONS, "--chunking", '{"strategy": "langchain-semantic", '
                          '"breakpoint_threshold_type": "interquartile"}', "--map-sizes", "0.5,1.5,3",
                          "--map-overlaps", "0,200"]) == 0
    text = capsys.readouterr().out
    assert "rows breakpoint_threshold_amount, columns min_chunk_size" in text
    assert host.texts == 2 * first  # each command embeds once, not once per cell


def test_every_field_of_any_splitter_goes_through_a_chunking_file(capsys, tmp_path):
    chunking = {"strategy": "langchain-recursive", "length": "tokens", "tokenizer": "cl100k_base", "size": 40,
                "overlap": 8, "separators": ["\n\n", "\n", ". ", " ", ""], "keep_separator": "end",
                "strip_whitespace": False}
    path = tmp_path / "chunking.json"
    path.write_text(json.dumps(chunking))
    got = eval_json(capsys, "--chunking-file", str(path), "--k", "3")
    docs = [{"id": HARBOUR, "title": "harbour.md", "text": pathlib.Path(HARBOUR).read_text()}]
    request = eval_cli.build_request(eval_cli._parser().parse_args([HARBOUR, "--questions", QUESTIONS, "--k", "3",
                                                                   "--chunking-file", str(path)]),
                                     docs, pathlib.Path(QUESTIONS).read_text(), QUESTIONS)
    assert request["chunking"] == chunking
    want = json.loads(json.dumps(simulate(request)))
    # eval streams a BM25 run: its JSON is the questions and their statistics, as one request's
    assert {k: got[k] for k in ("questions", "question_stats")} == {k: want[k] for k in ("questions", "question_stats")}


@pytest.mark.parametrize("argv, words", [
    (["--chunking", '{"strategy": '], "--chunking is not JSON"),
    (["--chunking", "[1, 2]"], "must be a JSON object"),
    (["--chunking", '{"strategy": "langchain-semantic", "threshold": 9}'], "chunking.threshold is not a field"),
    (["--chunking", '{"strategy": "langchain-semantic"}', "--strategy", "window"], "differs from the strategy"),
    (["--chunking", "{}", "--chunking-file", "x.json"], "not both"),
    (["--chunking-file", "/no/such/file.json"], "cannot be read"),
    (["--chunking", '{"strategy": "chroma-kamradt", "size": 0}'], "chunking.size must be at least 1"),
])
def test_bad_chunking_gets_one_line_and_exit_2(host, capsys, argv, words):
    assert words in refused(capsys, eval_cli.main, [HARBOUR, "--questions", QUESTIONS, *argv])


def test_audit_takes_a_semantic_chunking_as_one_row(host, capsys):
    chunking = '{"strategy": "chroma-kamradt", "size": 100, "min_chunk_size": 20}'
    assert audit_cli.main([HARBOUR, "--chunking", chunking, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [r["overlap"] for r in got["rows"]] == [0] and got["rows"][0]["chunks"] > 1
    assert audit_cli.main([HARBOUR, "--chunking", chunking]) == 0
    assert "Chroma KamradtModifiedChunker(avg_chunk_size=100, min_chunk_size=20)" in capsys.readouterr().out
    assert "not both" in refused(capsys, audit_cli.main, [HARBOUR, "--chunking", chunking, "--size", "5"])
    assert "perhaps you meant chunking.min_chunk_size" in refused(
        capsys, audit_cli.main, [HARBOUR, "--chunking", '{"strategy": "chroma-kamradt", "min_size": 20}'])


def test_inspect_compares_the_stored_chunks_with_a_named_splitter(host, capsys, tmp_path):
    text = pathlib.Path(HARBOUR).read_text()
    chunking = {"strategy": "langchain-semantic", "breakpoint_threshold_amount": 80}
    chunks, _ = semantic.cut(text, chunking, [hashed(t) for t in semantic.texts_to_embed(text, chunking)])
    store = tmp_path / "chunks.jsonl"
    store.write_text("".join(json.dumps({"id": f"c{i}", "text": c[3], "metadata": {"source": HARBOUR}}) + "\n"
                             for i, c in enumerate(chunks)))
    assert inspect_cli.run_inspect([str(store), "--source", HARBOUR, "--chunking", json.dumps(chunking)]) == 0
    out = capsys.readouterr().out
    assert "compared with LangChain SemanticChunker(breakpoint_threshold_amount=80): it makes exactly these chunks" in out
    assert f"{len(chunks)} of {len(chunks)} stored chunks made" in out
    assert inspect_cli.run_inspect([str(store), "--source", HARBOUR, "--json", "--chunking",
                                    '{"strategy": "langchain-semantic", "breakpoint_threshold_amount": 10}']) == 0
    compared = json.loads(capsys.readouterr().out)["compared"]
    assert not compared["same"] and compared["documents"][0]["first_difference"] is not None
    assert "is not JSON" in refused(capsys, inspect_cli.run_inspect, [str(store), "--chunking", "{"])


@pytest.mark.slow
def test_the_command_line_takes_chunking_as_a_subprocess_too():
    done = run_cli("eval", HARBOUR, "--questions", QUESTIONS, "--chunking",
                   '{"strategy": "window", "unit": "chars", "size": 300, "overlap": 50}', env=bare_env())
    assert done.returncode == 0 and "6 questions at window size 300 chars overlap 50" in done.stdout, done.stderr


def test_the_pages_state_file_with_a_semantic_splitter_is_taken_as_it_is(host, capsys, tmp_path):
    text = pathlib.Path(HARBOUR).read_text()
    state = {"ragsim": "state", "version": 1, "docs": [{"id": "harbour.md", "title": "harbour.md", "text": text}],
             "sel": 0, "settings": {"strategy": "langchain-semantic", "breakpoint_threshold_amount": 80,
                                    "min_chunk_size": 0, "number_of_chunks": 0}}
    path = tmp_path / "ragsim-state.json"
    path.write_text(json.dumps(state))
    assert eval_cli.main([str(path), "--questions", QUESTIONS]) == 0
    assert "LangChain SemanticChunker(buffer_size=1, breakpoint_threshold_type='percentile', " \
           "breakpoint_threshold_amount=80" in capsys.readouterr().out
    state["settings"] = {"strategy": "chroma-kamradt", "size": 120}
    path.write_text(json.dumps(state))
    assert eval_cli.main([str(path), "--questions", QUESTIONS, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["question_stats"]["count"] == 6
