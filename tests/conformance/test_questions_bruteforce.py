"""Question-set results against an independent brute-force implementation written here: each question
ranked by its own `simulate` call (the single-query path), and Chroma's metrics counted over sets of
characters, straight from base_evaluation.py's definitions."""

import random
import re

import pytest

from corpus import load_texts
from ragsim.wire.api import Session, simulate

SENTENCE = re.compile(r"[A-Z][^.!?]{20,200}[.!?]")
CHUNKINGS = [
    {"unit": "words", "size": 40, "overlap": 10},
    {"unit": "chars", "size": 300, "overlap": 60},
    {"strategy": "langchain-recursive", "size": 400, "overlap": 80},
    {"strategy": "sentences", "unit": "words", "size": 50, "overlap": 12},
]


@pytest.fixture(scope="module")
def docs():
    texts = load_texts()
    return [{"id": name, "title": name, "text": texts[name]} for name in ("prose.txt", "markdown.md", "pydoc_topics")]


def question_set(docs, count=36, seed=3):
    """Sentences as references (some pairs, some overlapping, some with whitespace around, one pair
    across two documents) and queries made of their words."""
    rng = random.Random(seed)
    found = [[m.span() for m in SENTENCE.finditer(d["text"])] for d in docs]
    out = []
    for i in range(count):
        d = rng.randrange(len(docs))
        a, b = rng.choice(found[d])
        refs = [(d, a, b)]
        if i % 4 == 1:
            refs.append((d, *rng.choice(found[d])))
        if i % 6 == 2:
            refs.append((d, max(0, a - 5), min(b, a + 30)))  # overlaps the first
        if i % 5 == 3:
            refs[0] = (d, max(0, a - 2), min(len(docs[d]["text"]), b + 2))  # whitespace or neighbours included
        if i == 7:
            e = (d + 1) % len(docs)
            refs.append((e, *found[e][0]))
        words = re.findall(r"\w+", docs[d]["text"][a:b])
        query = " ".join(rng.sample(words, min(4, len(words)))) + " what is the"
        out.append({"id": f"q{i}", "query": query,
                    "references": [{"doc": docs[r[0]]["id"], "start": r[1], "end": r[2]} for r in refs]})
    return out


def trimmed(text, a, b):
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def brute_force(docs, q, chunking, k, session, retrieval=None):
    """One question: its ranking from simulate, then every metric over sets of (document, character)."""
    r = simulate({"documents": docs, "query": q["query"], "chunking": chunking,
                  "retrieval": {"k": k, **(retrieval or {})}}, session)
    chunks = r["chunks"]
    retrieved = sorted((c for c in chunks if c["retrieved"]), key=lambda c: c["rank"])
    refs = [(ref["doc"], ref["start"], ref["end"]) for ref in q["references"]]
    ref_chars = [{(d, i) for i in range(a, b)} for d, a, b in refs]
    sent = {(c["doc"], i) for c in retrieved for i in range(c["start"], c["end"])}
    covered = set().union(*ref_chars) & sent
    sum_f = sum(b - a for _, a, b in refs)
    sum_r = sum(c["end"] - c["start"] for c in retrieved)
    unused = sum(len(chars - covered) for chars in ref_chars)
    touching = [c for c in chunks if any(c["doc"] == d and max(c["start"], a) <= min(c["end"], b) for d, a, b in refs)]
    touched = {(c["doc"], i) for c in touching for i in range(c["start"], c["end"])}
    omega_num = len(set().union(*ref_chars) & touched)
    omega_den = len(touched | set().union(*ref_chars))
    best = []
    for d, a, b in refs:
        s, t = trimmed(next(doc["text"] for doc in docs if doc["id"] == d), a, b)
        best.append(min((c["rank"] for c in chunks if c["doc"] == d and c["start"] <= s and t <= c["end"]), default=None))
    if None in best:
        verdict, needed = "cut", None
    else:
        needed = max(best)
        verdict = "intact" if needed <= k else "ranked_out"
    return {
        "id": q["id"], "verdict": verdict, "needed_k": needed,
        "recall": len(covered) / sum_f, "precision": len(covered) / sum_r if sum_r else 0,
        "iou": len(covered) / (sum_r + unused) if sum_r + unused else 0,
        "precision_omega": omega_num / omega_den if omega_num else 0,
        "covered": len(covered), "retrieved": [c["number"] for c in retrieved],
    }


@pytest.mark.parametrize("chunking", CHUNKINGS, ids=lambda c: f"{c.get('strategy', 'window')}-{c.get('unit', '')}")
def test_every_question_matches_brute_force(docs, chunking):
    questions = question_set(docs)
    session = Session()
    k = 4
    r = simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": {"k": k},
                  "questions": questions}, session)
    assert "error" not in r, r
    expected = [brute_force(docs, q, chunking, k, session) for q in questions]
    got = [{key: q[key] for key in expected[0]} for q in r["questions"]]
    assert got == expected
    kinds = {e["verdict"] for e in expected}
    assert len(kinds) >= 2, kinds  # the set really exercises more than one verdict
    st = r["question_stats"]
    assert (st["intact"], st["ranked_out"], st["cut"]) == tuple(
        sum(e["verdict"] == v for e in expected) for v in ("intact", "ranked_out", "cut"))
    assert st["recall_mean"] == pytest.approx(sum(e["recall"] for e in expected) / len(expected), abs=1e-12)


def test_map_cells_match_brute_force(docs):
    questions = question_set(docs, count=12, seed=5)
    sizes, overlaps = [30, 60], [0, 10, 45]
    session = Session()
    r = simulate({"documents": docs, "query": "", "chunking": {"unit": "words", "size": 40}, "retrieval": {"k": 3},
                  "questions": questions, "map": {"sizes": sizes, "overlaps": overlaps}}, session)
    assert r["map"]["sizes"] == sizes and r["map"]["overlaps"] == overlaps
    for size, row in zip(sizes, r["map"]["cells"]):
        for overlap, cell in zip(overlaps, row):
            if overlap >= size:
                assert cell is None
                continue
            chunking = {"unit": "words", "size": size, "overlap": overlap}
            expected = [brute_force(docs, q, chunking, 3, session) for q in questions]
            one = simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": {"k": 3}}, session)
            assert cell["chunks"] == one["stats"]["chunks"] and cell["units_stored"] == one["stats"]["units_stored"]
            for v in ("intact", "ranked_out", "cut"):
                assert cell[v] == sum(e["verdict"] == v for e in expected)
            assert cell["recall_mean"] == pytest.approx(sum(e["recall"] for e in expected) / len(questions), abs=1e-12)
            assert cell["iou_mean"] == pytest.approx(sum(e["iou"] for e in expected) / len(questions), abs=1e-12)


@pytest.mark.parametrize("retrieval", [
    {"variant": "robertson"},
    {"variant": "bm25+"},
    {"k1": 2.0, "b": 0.3, "terms": {"stopwords": "english"}},
], ids=["robertson", "bm25+", "stopwords"])
def test_other_retrievers_match_brute_force(docs, retrieval):
    questions = question_set(docs, count=16, seed=11)
    chunking = {"unit": "words", "size": 60, "overlap": 15}
    session = Session()
    r = simulate({"documents": docs, "query": "", "chunking": chunking, "retrieval": {"k": 3, **retrieval},
                  "questions": questions}, session)
    expected = [brute_force(docs, q, chunking, 3, session, retrieval) for q in questions]
    assert [{key: q[key] for key in expected[0]} for q in r["questions"]] == expected
