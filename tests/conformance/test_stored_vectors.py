"""`inspect --questions` over the vectors already in the index (host.clients.stored_vectors): stores built here by
the real libraries (chromadb, qdrant-client's local mode, LanceDB) with vectors given explicitly, the
queries embedded by a local endpoint (tests/fake_openai.py, its `hashed` model). The stored vectors are
the hashed vectors of the chunks' texts with a fixed perturbation, so a ranking over them differs from one
over the texts re-embedded: the ranks equal a numpy cosine ranking of the stored vectors against the
query's vector. A dimension that differs from the endpoint's is one sentence naming both; stored
vectors of another dimension without an endpoint are said and the texts embedded as before."""

from pathlib import Path

import pytest

from fake_openai import FakeOpenAI
from helpers import run_cli
from vector_helpers import IDS, META, QUESTIONS, TEXTS, check_ranks, inspect, stored

pytestmark = pytest.mark.slow  # real stores, a local server and the command line


def chroma(root: Path, vectors) -> str:
    import chromadb

    client = chromadb.PersistentClient(path=str(root / "chroma"))
    col = client.create_collection("harbour", embedding_function=None)
    col.add(ids=IDS, documents=TEXTS, metadatas=META, embeddings=[list(map(float, v)) for v in vectors])
    return f"chroma:{root / 'chroma'}"


def qdrant(root: Path, vectors) -> str:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(root / "qdrant"))
    client.create_collection("harbour", vectors_config=models.VectorParams(size=vectors.shape[1],
                                                                            distance=models.Distance.COSINE))
    client.upsert("harbour", [models.PointStruct(id=i, vector=list(map(float, v)), payload={
        "page_content": t, "metadata": m}) for i, (t, m, v) in enumerate(zip(TEXTS, META, vectors))])
    client.close()
    return f"qdrant:{root / 'qdrant'}"


def lance(root: Path, vectors) -> str:
    import lancedb

    db = lancedb.connect(str(root / "lance"))
    db.create_table("harbour", [{"id": i, "text": t, "source": "harbour.md", "vector": list(map(float, v))}
                                for i, t, v in zip(IDS, TEXTS, vectors)])
    return f"lancedb:{root / 'lance'}"


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as s:
        yield s


@pytest.mark.parametrize("build", [chroma, qdrant, lance])
def test_questions_are_ranked_over_the_stored_vectors(build, server, tmp_path):
    vectors = stored()
    out = inspect(build(tmp_path, vectors), "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    kind = {"chroma": "chroma", "qdrant": "qdrant", "lance": "lancedb"}[build.__name__]
    assert out["ranked_over"] == {"vectors": len(IDS), "dimension": 64, "queries_by": "hashed", "store": kind}
    check_ranks(out, vectors)


def test_the_report_says_it(server, tmp_path):
    spec = chroma(tmp_path, stored())
    got = run_cli("inspect", spec, "--source", "examples/harbour.md", "--questions", "examples/questions.json",
                  "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    assert got.returncode == 0, got.stderr
    assert f"ranked over the {len(IDS)} vectors stored in the index (64 dimensions), queries embedded by hashed" \
        in got.stdout


def test_a_dimension_that_differs_is_one_sentence(server, tmp_path):
    got = run_cli("inspect", chroma(tmp_path, stored(32)), "--source", "examples/harbour.md", "--questions",
                  "examples/questions.json", "--embed-endpoint", server.endpoint, "--embed-model", "hashed")
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "stored vectors have 32 dimensions and hashed gives 64" in got.stderr and got.stderr.count("\n") == 1


def test_without_an_endpoint_vectors_of_another_dimension_are_said(tmp_path):
    out = inspect(chroma(tmp_path, stored()), "--method", "dense")
    assert "64 dimensions, not the built-in all-MiniLM-L6-v2's 384" in out["ranked_over"]["note"]
    assert out["question_stats"]["count"] == len(QUESTIONS)
