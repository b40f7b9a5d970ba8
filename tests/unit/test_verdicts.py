"""Each verdict kind, the fact verdict, the context and its token and cost estimate (SPEC 4 and 5)."""

from helpers import make_request
from ragsim.wire.api import simulate

# 12 words; with size 4 / overlap 0 the chunks are words 0-3, 4-7, 8-11.
TEXT = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"


def span_of(phrase):
    s = TEXT.index(phrase)
    return (s, s + len(phrase))


def test_intact_when_a_retrieved_chunk_holds_the_span_whole():
    r = simulate(make_request(TEXT, query="zeta", size=4, overlap=0, k=1, span=span_of("epsilon zeta")))
    v = r["verdict"]
    assert v["kind"] == "intact" and v["best_rank"] == 1 and v["coverage_sent"] == 1.0
    assert [c["holds"] for c in r["chunks"]] == [None, "whole", None]
    assert r["stats"]["chunks_whole"] == 1 and r["stats"]["chunks_part"] == 0


def test_ranked_out_when_the_holding_chunk_is_outside_top_k():
    r = simulate(make_request(TEXT, query="kappa", size=4, overlap=0, k=1, span=span_of("epsilon zeta")))
    v = r["verdict"]
    assert v["kind"] == "ranked_out"
    assert v["best_rank"] == 3  # chunk 3 ranks first; zero-score ties go by document order: 1, then 2
    assert v["coverage_sent"] == 0.0


def test_cut_reports_parts_parts_retrieved_and_coverage_sent():
    span = span_of("theta iota")  # theta ends chunk 2, iota opens chunk 3
    r = simulate(make_request(TEXT, query="theta", size=4, overlap=0, k=1, span=span))
    v = r["verdict"]
    assert v["kind"] == "cut" and v["best_rank"] is None
    assert (v["parts"], v["parts_retrieved"]) == (2, 1)
    assert v["part_chunks"] == [2, 3] and v["parts_retrieved_chunks"] == [2]
    assert v["coverage_sent"] == len("theta") / len("theta iota")


def test_overlap_saves_the_cut_span():
    span = span_of("theta iota")
    r = simulate(make_request(TEXT, query="theta", size=4, overlap=1, k=1, span=span))
    assert r["verdict"]["kind"] == "intact"


def test_span_whitespace_is_trimmed():
    s, e = span_of("epsilon zeta")
    r = simulate(make_request(TEXT, query="zeta", size=4, overlap=0, k=1, span=(s - 1, e + 1)))
    assert r["verdict"]["kind"] == "intact"  # the spaces around it would otherwise reach chunk 1 and 3


def test_fact_destroyed_ranked_out_and_intact():
    name = (TEXT.index(" eta ") + 1, TEXT.index(" eta ") + 4)  # word 6, in chunk 2 at 4/0
    value = span_of("iota")  # word 8, in chunk 3 at 4/0
    cut = simulate(make_request(TEXT, query="eta", size=4, overlap=0, k=1, fact=(name, value)))
    assert cut["fact"] == {"kind": "destroyed", "answering": [], "best_rank": None}
    # At 4/2 chunks 3 (words 4-7) and 4 (words 6-9) tie on "eta"; only chunk 4 holds both.
    kept = simulate(make_request(TEXT, query="eta", size=4, overlap=2, k=2, fact=(name, value)))
    assert kept["fact"] == {"kind": "intact", "answering": [4], "best_rank": 2}
    tight = simulate(make_request(TEXT, query="eta", size=4, overlap=2, k=1, fact=(name, value)))
    assert tight["fact"]["kind"] == "ranked_out"
    out = simulate(make_request(TEXT, query="alpha", size=4, overlap=2, k=1, fact=(name, value)))
    assert out["fact"]["kind"] == "ranked_out" and out["fact"]["answering"] == kept["fact"]["answering"]


def test_context_tokens_and_cost():
    r = simulate(make_request(TEXT, query="alpha mu", size=4, overlap=0, k=2, price_per_million=2.5))
    assert r["context"] == "alpha beta gamma delta\n\niota kappa lambda mu"
    assert r["stats"]["context_chars"] == 44  # 22 + 2 + 20
    assert r["stats"]["context_tokens"] == 11  # ceil(44 / 4)
    assert r["stats"]["cost"] == 11 * 2.5 / 1_000_000


def test_context_is_in_rank_order():
    r = simulate(make_request(TEXT, query="mu mu alpha", size=4, overlap=0, k=2))
    assert r["context"].startswith("iota kappa lambda mu\n\n")


def test_overlap_achieved_in_characters():
    r = simulate(make_request(TEXT, size=4, overlap=1, k=1))
    shared = [c["overlap_prev"] for c in r["chunks"]]
    assert shared[0] is None
    # neighbours share exactly one word
    for prev, c in zip(r["chunks"], r["chunks"][1:]):
        assert TEXT[c["start"] : prev["end"]] in ("delta", "eta", "kappa")
    assert r["stats"]["boundaries_without_overlap"] == 0
    zero = simulate(make_request(TEXT, size=4, overlap=0, k=1))["stats"]
    assert zero["overlap_max"] == 0 and zero["boundaries_without_overlap"] == 2


def test_overlap_prev_is_clamped_at_zero_across_gaps_and_equals_the_stats():
    """A fuzz finding, pinned, not left to a property test's luck. Word windows at overlap 0 leave the gap
    between two words (prev.end - next.start = -1, -3) and must report 0, never a negative count; a
    shared word reports its characters; a document's first chunk has none. The stats are these numbers."""
    docs = [{"id": "a", "title": "", "text": "one two   three four"}, {"id": "b", "title": "", "text": "alpha beta gamma delta"}]
    splits = [{"unit": "words", "size": 2, "overlap": 0},  # fixed windows
              {"strategy": "langchain-character", "separator": "   ", "size": 10, "overlap": 0},  # the generic clamp
              {"strategy": "sentences", "unit": "words", "size": 2, "overlap": 0}]
    for wire, chunking in [(w, c) for w in ("objects", "columns") for c in splits]:
        gaps = simulate({"documents": [docs[0], {**docs[1], "text": "alpha beta   gamma delta"}], "query": "two",
                         "chunking": chunking, "retrieval": {"k": 1}, "wire": wire})
        shared = (gaps["chunk_columns"]["overlap_prev"] if wire == "columns" else
                  [c["overlap_prev"] for c in gaps["chunks"]])
        assert shared == [None, 0, None, 0]
        assert (gaps["stats"]["overlap_min"], gaps["stats"]["overlap_max"]) == (0, 0)
        assert gaps["stats"]["boundaries_without_overlap"] == 2
    words = simulate({"documents": docs[1:], "query": "beta", "chunking": {"unit": "words", "size": 3, "overlap": 1},
                      "retrieval": {"k": 1}})
    assert [c["overlap_prev"] for c in words["chunks"]] == [None, len("gamma")]
    assert (words["stats"]["overlap_min"], words["stats"]["overlap_median"], words["stats"]["overlap_max"],
            words["stats"]["boundaries_without_overlap"]) == (5, 5, 5, 0)
