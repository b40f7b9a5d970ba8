"""The built-in collection (assets/collection): original articles on one subject, and its question.

The collection's promise: the fact named in index.json has its name and value in
one sentence of one article; a 900-character window at zero overlap cuts them apart (the fact is
`destroyed`), and at `overlap_fix` some chunk holds both and ranks in the top k for the question
with BM25 over every chunk of every article (the fact is `intact`).
"""

import json
import pathlib
import re

import pytest

from ragsim.wire.api import simulate

COLLECTION = pathlib.Path(__file__).resolve().parents[2] / "assets" / "collection"


def load():
    index = json.loads((COLLECTION / "index.json").read_text(encoding="utf-8"))
    documents = []
    for name in index["documents"]:
        text = (COLLECTION / name).read_text(encoding="utf-8")
        first = text.split("\n", 1)[0]
        assert first.startswith("# "), f"{name} must open with '# Title' on line 1"
        documents.append({"id": name, "title": first[2:].strip(), "text": text})
    return index, documents


def fact_spans(index, documents):
    """The fact's name and value as [start, end) spans: each by its first occurrence in its document."""
    fact = index["fact"]
    text = next(d["text"] for d in documents if d["id"] == fact["doc"])
    name_start = text.find(fact["name"])
    value_start = text.find(fact["value"])
    assert name_start >= 0, "the fact's name is not in its document"
    assert value_start >= 0, "the fact's value is not in its document"
    return text, [name_start, name_start + len(fact["name"])], [value_start, value_start + len(fact["value"])]


def request(index, documents, name, value, overlap):
    return {
        "documents": documents,
        "query": index["question"],
        "chunking": {"unit": index["unit"], "size": index["size"], "overlap": overlap},
        "retrieval": {"k": index["k"]},
        "span": None,
        "fact": {"doc": index["fact"]["doc"], "name": name, "value": value},
        "price_per_million": 3.0,
    }


def test_index_lists_exactly_the_articles_on_disk():
    index, documents = load()
    on_disk = sorted(p.name for p in COLLECTION.glob("*.md"))
    assert sorted(index["documents"]) == on_disk
    assert len(documents) >= 5
    assert all(re.fullmatch(r"\d\d-[a-z0-9-]+\.md", d["id"]) for d in documents)
    assert index["unit"] == "chars" and index["size"] == 900 and index["overlap"] == 0
    assert index["k"] == 3 and index["overlap_fix"] > index["overlap"]


@pytest.mark.parametrize("name", json.loads((COLLECTION / "index.json").read_text(encoding="utf-8"))["documents"])
def test_each_article_has_500_to_1500_words(name):
    words = len((COLLECTION / name).read_text(encoding="utf-8").split())
    assert 500 <= words <= 1500, f"{name} has {words} words"


def test_titles_are_distinct():
    _, documents = load()
    titles = [d["title"] for d in documents]
    assert len(set(titles)) == len(titles) and all(titles)


def test_fact_name_and_value_share_one_sentence_and_a_zero_overlap_window_cuts_them():
    index, documents = load()
    text, name, value = fact_spans(index, documents)
    assert name[1] <= value[0], "the name comes before the value"
    between = text[name[1]:value[0]]
    assert "\n" not in between and not re.search(r"[.!?]\s", between), "name and value are in one sentence"
    # At step 900 a window boundary (a multiple of the size) falls strictly inside the stretch.
    size = index["size"]
    assert any(name[0] < b < value[1] for b in range(size, len(text), size))
    # The stretch fits the fixing overlap, so no fixed window of that overlap can destroy it.
    assert value[1] - name[0] <= index["overlap_fix"]


def test_fact_is_destroyed_at_zero_overlap():
    index, documents = load()
    _, name, value = fact_spans(index, documents)
    response = simulate(request(index, documents, name, value, index["overlap"]))
    assert "error" not in response, response
    assert response["fact"]["kind"] == "destroyed"
    assert response["fact"]["answering"] == []
    # BM25 still ranks the whole collection: k chunks are sent, drawn from all the articles.
    assert response["stats"]["retrieved"] == index["k"]
    assert {c["doc"] for c in response["chunks"]} == {d["id"] for d in documents}


def test_fact_is_intact_at_the_fixing_overlap():
    index, documents = load()
    _, name, value = fact_spans(index, documents)
    response = simulate(request(index, documents, name, value, index["overlap_fix"]))
    assert "error" not in response, response
    assert response["fact"]["kind"] == "intact"
    assert 1 <= response["fact"]["best_rank"] <= index["k"]


@pytest.mark.parametrize("overlap", [150, 300])
def test_fact_survives_the_sweep_overlaps_that_cover_its_stretch(overlap):
    index, documents = load()
    _, name, value = fact_spans(index, documents)
    response = simulate(request(index, documents, name, value, overlap))
    assert response["fact"]["kind"] == "intact", (overlap, response["fact"])
