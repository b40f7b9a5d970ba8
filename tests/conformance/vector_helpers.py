"""What the stored-vector tests share: the example's chunks (examples/chunks.jsonl, placed in
examples/harbour.md), the vectors the stores keep (each chunk's `hashed` vector of tests/fake_openai.py
plus a fixed perturbation, so a ranking over them differs from one over the texts re-embedded), the
independent numpy cosine ranking the ranks must equal, and `inspect --questions` on the command line."""

import json
from pathlib import Path

import numpy as np

from fake_openai import hashed_vector
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = [json.loads(line) for line in (ROOT / "examples" / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
QUESTIONS = json.loads((ROOT / "examples" / "questions.json").read_text(encoding="utf-8"))["questions"]
IDS = [f"c{i:02d}" for i in range(len(CHUNKS))]
TEXTS = [c["page_content"] for c in CHUNKS]
META = [{"source": "harbour.md", "start_index": c["metadata"]["start_index"]} for c in CHUNKS]


def stored(dimension: int = 64) -> np.ndarray:
    """The vectors the stores keep: each chunk's hashed vector plus a fixed perturbation (seeded)."""
    noise = np.random.default_rng(7).normal(0, 0.8, (len(TEXTS), 64))
    vectors = np.asarray([hashed_vector(t) for t in TEXTS]) + noise
    return vectors[:, :dimension]


def expected_ids(query: str, vectors: np.ndarray) -> list[str]:
    """Every chunk's id, best first, by the cosine of its stored vector with the query's hashed vector."""
    q = np.asarray(hashed_vector(query), dtype=np.float64)
    q /= np.linalg.norm(q)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ q
    return [IDS[i] for i in sorted(range(len(IDS)), key=lambda i: (-cosines[i], i))]


def inspect(spec: str, *extra) -> dict:
    got = run_cli("inspect", spec, "--source", "examples/harbour.md", "--questions", "examples/questions.json",
                  "--k", str(len(IDS)), "--json", *extra)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def check_ranks(out: dict, vectors: np.ndarray) -> None:
    """Every question's ranking (all placed chunks) equals the numpy ranking of the stored vectors,
    and differs from one over the texts re-embedded: the stored vectors are the ones used. A chunk is
    known by where it was placed (each starts elsewhere), whatever id its store gave it."""
    starts = [m["start_index"] for m in META]
    ours = {c["id"]: IDS[starts.index(c["start"])] for c in out["chunks"] if c["start"] is not None}
    placed = set(ours.values())
    assert len(placed) > 10
    asked = {q["id"]: q["query"] for q in QUESTIONS}
    assert [q["id"] for q in out["questions"]] == [q["id"] for q in QUESTIONS]
    for q in out["questions"]:
        expected = [i for i in expected_ids(asked[q["id"]], vectors) if i in placed]
        assert [ours[i] for i in q["retrieved_ids"]] == expected
    texts = [expected_ids(asked[q["id"]], np.asarray([hashed_vector(t) for t in TEXTS])) for q in out["questions"]]
    assert texts != [expected_ids(asked[q["id"]], vectors) for q in out["questions"]]
