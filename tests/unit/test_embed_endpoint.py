"""Ranking with the user's own embedding model through an OpenAI-compatible `/embeddings` endpoint
(`host.clients.embed_endpoint`), against a local server started here on 127.0.0.1 (tests/fake_openai.py).

- Served all-MiniLM-L6-v2's vectors (the project's own ONNX model), every rank, score and verdict
  equals the built-in dense path's, in the core and on the command line.
- Served another embedding (a hashed bag of words), the ranks equal an independent numpy cosine
  ranking of those vectors: the endpoint's vectors are the ones used.
- A server that is down, answers another shape, NaN, fewer vectors, varying dimensions, 429 (retried,
  then one sentence) or a redirect to another host: one sentence each.
"""

import json
import pathlib

import numpy as np
import pytest

from fake_openai import FakeOpenAI, closed_port, hashed_vector
from helpers import cli_env, harbour_questions, run_cli
from ragsim.errors import RequestError
from ragsim.host.clients import embed_endpoint
from ragsim.host.clients.embed_endpoint import EndpointEmbedder, EndpointError
from ragsim.wire import api

pytestmark = pytest.mark.slow  # the model's vectors and local servers

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARBOUR = ROOT / "examples" / "harbour.md"
QUESTIONS = ROOT / "examples" / "questions.json"


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def no_endpoint(monkeypatch):
    monkeypatch.delenv(embed_endpoint.ENV_ENDPOINT, raising=False)
    monkeypatch.delenv(embed_endpoint.ENV_MODEL, raising=False)
    embed_endpoint._ONE.clear()
    yield
    embed_endpoint._ONE.clear()


def question_request() -> dict:
    req = harbour_questions(k=3)
    req["query"], req["scores"] = req["questions"][0]["query"], "all"
    req["retrieval"]["method"] = "dense"
    return req


def test_minilm_served_by_an_endpoint_ranks_as_the_built_in_model(server, no_endpoint, monkeypatch):
    built_in = api.simulate(question_request())
    monkeypatch.setenv(embed_endpoint.ENV_ENDPOINT, server.endpoint)
    monkeypatch.setenv(embed_endpoint.ENV_MODEL, "minilm")
    theirs = api.simulate(question_request())
    assert "error" not in built_in and "error" not in theirs
    assert theirs["questions"] == built_in["questions"] and theirs["question_stats"] == built_in["question_stats"]
    assert theirs["verdict"] == built_in["verdict"]
    mine = [c["score"] for c in built_in["chunks"]]
    assert np.allclose([c["score"] for c in theirs["chunks"]], mine, atol=1e-6)
    assert [c["rank"] for c in theirs["chunks"]] == [c["rank"] for c in built_in["chunks"]]


def test_another_models_vectors_are_the_ones_ranked(server, no_endpoint, monkeypatch):
    monkeypatch.setenv(embed_endpoint.ENV_ENDPOINT, server.endpoint)
    monkeypatch.setenv(embed_endpoint.ENV_MODEL, "hashed")
    req = question_request()
    got = api.simulate(req)
    assert "error" not in got
    text = req["documents"][0]["text"]
    chunks = [text[c["start"]:c["end"]] for c in got["chunks"]]

    def unit(v):
        v = np.asarray(v, dtype=np.float64)
        return v / np.linalg.norm(v)

    query = unit(hashed_vector(req["query"]))
    cosines = [float(unit(hashed_vector(t)) @ query) for t in chunks]
    order = sorted(range(len(chunks)), key=lambda i: (-cosines[i], i))
    assert [c["rank"] for c in got["chunks"]] == [order.index(i) + 1 for i in range(len(chunks))]
    assert np.allclose([c["score"] for c in got["chunks"]], cosines, atol=1e-9)
    assert got["dense"]["truncated"] == 0  # the server's model: ragsim does not say where it stops reading


def test_each_text_is_embedded_once_in_batches(server):
    model = EndpointEmbedder(server.endpoint, "hashed", batch=3)
    model.embed(["a", "b", "c", "d", "a"])
    model.embed(["d", "e"])
    assert model.requests == 3  # [a b c] [d] then [e]: every text once
    assert model.dimension == 64


@pytest.mark.parametrize("model, said", [
    ("nan", "holding NaN or infinity"),
    ("short", "returned 2 vectors for 3 texts"),
    ("ragged", "vectors of varying or no dimension"),
    ("flood", "answered HTTP 429 after 3 retries"),
    ("nosuch", "answered HTTP 404 (check the model's name"),
    ("moved", "redirects to another origin, http://127.0.0.2"),
])
def test_a_bad_endpoint_is_one_sentence(server, model, said):
    with pytest.raises(EndpointError) as e:
        EndpointEmbedder(server.endpoint, model, sleep=lambda s: None).embed(["one", "two", "three"])
    assert isinstance(e.value, RequestError) and said in e.value.message and "\n" not in e.value.message


def test_429_is_retried_after_the_servers_wait(server):
    server.busy = 0  # the `busy` model refuses its first two requests from here
    waits = []
    model = EndpointEmbedder(server.endpoint, "busy", sleep=waits.append)
    assert model.embed(["one", "two"]).shape == (2, 64)
    assert waits == [0.0, 0.0] and model.requests == 3


def test_a_server_that_is_down_is_one_sentence():
    port = closed_port()
    with pytest.raises(EndpointError) as e:
        EndpointEmbedder(f"http://127.0.0.1:{port}/v1", "hashed", timeout=5).embed(["x"])
    assert "127.0.0.1" in e.value.message


def test_eval_on_the_command_line_with_the_endpoint_gives_the_built_in_verdicts(server):
    args = (str(HARBOUR), "--questions", str(QUESTIONS), "--size", "300", "--overlap", "50", "--k", "3", "--json")
    built_in = run_cli("eval", *args, "--method", "dense")
    theirs = run_cli("eval", *args, "--embed-endpoint", server.endpoint, "--embed-model", "minilm")
    assert built_in.returncode == 0 and theirs.returncode == 0, theirs.stderr
    assert json.loads(theirs.stdout)["questions"] == json.loads(built_in.stdout)["questions"]
    bad = run_cli("eval", *args, "--embed-endpoint", "ftp://x", "--embed-model", "m", env=cli_env())
    assert bad.returncode == 2 and "is not an http:// or https:// URL" in bad.stderr and "Traceback" not in bad.stderr


def test_audit_ask_and_inspect_take_the_endpoint(server, tmp_path):
    """Each command that ranks takes --embed-endpoint and --embed-model (and sends the endpoint its
    texts); a half-given pair is refused."""

    def embedded():
        return sum(r["path"] == "/v1/embeddings" for r in server.requests)

    before = embedded()
    audit = run_cli("audit", str(HARBOUR), "--size", "300", "--overlaps", "0,50", "--embed-endpoint", server.endpoint,
                    "--embed-model", "hashed", "--json", "--quiet", "--workers", "1")
    assert audit.returncode == 0, audit.stderr
    assert embedded() > before
    before = embedded()
    inspect = run_cli("inspect", "examples/chunks.jsonl", "--source", "examples/harbour.md", "--questions",
                      "examples/questions.json", "--embed-endpoint", server.endpoint, "--embed-model", "hashed", "--json")
    assert inspect.returncode == 0, inspect.stderr
    assert json.loads(inspect.stdout)["question_stats"]["count"] == 6 and embedded() > before
    half = run_cli("ask", str(HARBOUR), "--question", "when", "--endpoint", server.endpoint, "--model", "reader",
                   "--embed-endpoint", server.endpoint)
    assert half.returncode == 2 and "Give --embed-endpoint URL and --embed-model NAME together." in half.stderr
