"""The follow-up questions: verdict at several k, exact phrase in the index, cuts, sweep, expansion."""

from helpers import make_request
from ragsim.wire.api import simulate

# 60 words w0..w59; at size 10 / overlap 0 the chunks are words 0-9, 10-19, ... 50-59.
TEXT = " ".join(f"w{i}" for i in range(60))


def span(first, last):
    s = TEXT.index(f"w{first} ")
    e = TEXT.index(f"w{last}", s) + len(f"w{last}")
    return s, e


def test_verdict_at_k_side_by_side():
    r = simulate(make_request(TEXT, query="w1 w50", size=10, overlap=0, k=2, span=span(20, 23)))
    # chunks 1 and 6 score; the span's chunk 3 ranks 4th (zero-score ties in document order: 2, 3)
    assert r["verdict"]["best_rank"] == 4
    assert [(row["k"], row["span"]) for row in r["at_k"]] == [  # 4: the least k that sends it, named as the fix
        (1, "ranked_out"), (2, "ranked_out"), (3, "ranked_out"), (4, "intact"), (5, "intact"), (10, "intact")]
    cut = simulate(make_request(TEXT, query="w1", size=10, overlap=0, k=2, span=span(18, 21)))
    assert {row["span"] for row in cut["at_k"]} == {"cut"}


def test_find_phrase_tells_destroyed_from_absent():
    req = make_request(TEXT, query="w19", size=10, overlap=0, k=1, find="w19 w20")
    found = simulate(req)["found"]
    assert found["occurrences"] == 1 and found["chunks"] == [] and found["verdict"] == "destroyed"
    req["chunking"]["overlap"] = 2
    assert simulate(req)["found"]["verdict"] == "in_chunks"
    req["find"] = "w99"
    assert simulate(req)["found"]["verdict"] == "absent"


def test_cuts_move_with_the_overlap_for_fixed_windows():
    r = simulate(make_request(TEXT, size=10, overlap=3, k=1, cuts=True))
    c = r["cuts"]
    assert c["at_zero"][:2] == [len(" ".join(f"w{i}" for i in range(10))), len(" ".join(f"w{i}" for i in range(20)))]
    assert c["moves"] is True and c["at_current"] != c["at_zero"]


def test_sweep_reports_each_overlap_and_refuses_impossible_ones_in_line():
    r = simulate(make_request(TEXT, query="w19", size=10, overlap=0, k=1, span=span(19, 20), sweep=[0, 1, 5, 10]))
    rows = r["sweep"]
    # at 10/5 the chunk of words 10-19 ties with the one holding w19 w20 (15-24) and wins on order
    assert [row["span"] for row in rows[:3]] == ["cut", "intact", "ranked_out"]
    assert [row["chunks"] for row in rows[:3]] == [6, 7, 11]
    assert rows[3]["error"].startswith("Overlap must be smaller")


def test_context_expansion_saves_a_cut_span_at_a_price():
    req = make_request(TEXT, query="w19", size=10, overlap=0, k=1, span=span(19, 20), expand={"neighbours": 1})
    r = simulate(req)
    assert r["verdict"]["kind"] == "cut"
    x = r["expanded"]
    assert x["span"] == "intact"
    assert x["context"] == " ".join(f"w{i}" for i in range(30))  # chunks 1-3 around chunk 2
    assert x["context_chars"] > r["stats"]["context_chars"] and x["cost"] > r["stats"]["cost"]


def test_section_expansion_sends_the_markdown_section():
    text = "# A\nalpha beta gamma\n\n# B\ndelta epsilon zeta eta\n\n# C\ntheta"
    r = simulate(make_request(text, query="epsilon", size=2, overlap=0, k=1, expand={"section": True}))
    assert r["expanded"]["context"] == "# B\ndelta epsilon zeta eta\n\n"
