"""Question-set metrics (SPEC section 8) on hand-computed cases, as Chroma's base_evaluation.py defines them."""

import statistics

import pytest

from ragsim.wire.api import Session
from ragsim.errors import RequestError
from ragsim.text.index import terms
from ragsim.judge.questions import Question, chroma_scores, evaluate, judge, precision_omega, question_stats, read_question_set
from ragsim.rank.queries import Setting, Words

LUCENE = {"variant": "lucene", "k1": 1.2, "b": 0.75, "delta": 0.5, "analyzer": None}
# Two documents cut into character windows of 40 with overlap 10 (step 30):
# doc 0 (100 chars): chunk 0 [0, 40), chunk 1 [30, 70), chunk 2 [60, 100); doc 1 (50 chars): chunk 3 [0, 40), chunk 4 [30, 50)
TEXTS = ["x" * 100, "y" * 50]


def setting_of(texts, chunking, retrieval=LUCENE):
    session = Session()
    return Setting(Words([session.index(t) for t in texts]), chunking, session, retrieval)


@pytest.fixture(scope="module")
def windows():
    s = setting_of(TEXTS, {"unit": "chars", "size": 40, "overlap": 10})
    assert list(zip(s.doc_of, s.starts, s.ends)) == [(0, 0, 40), (0, 30, 70), (0, 60, 100), (1, 0, 40), (1, 30, 50)]
    return s


def scores(refs, top, setting):
    out = chroma_scores(refs, top, setting)
    return out["covered"], out["recall"], out["precision"], out["iou"]


def test_two_spans_from_opposite_ends_both_retrieved(windows):
    # 10 + 10 characters covered of 20; 80 characters retrieved
    assert scores([(0, 5, 15), (0, 65, 75)], [0, 2], windows) == (20, 1.0, 0.25, 0.25)


def test_overlapping_chunks_count_twice_in_precision(windows):
    # [32, 38) lies in chunks 0 and 1: covered once (6), retrieved 40 + 40
    assert scores([(0, 32, 38)], [0, 1], windows) == (6, 1.0, 6 / 80, 6 / 80)


def test_a_chunk_of_another_document_covers_nothing_but_counts_in_precision(windows):
    # chunk 3 spans the same offsets [0, 40) but in document 1
    assert scores([(0, 5, 15)], [3, 0], windows) == (10, 1.0, 10 / 80, 10 / 80)
    assert scores([(0, 5, 15)], [3], windows) == (0, 0.0, 0.0, 0.0)  # iou: 0 / (40 + 10)


def test_part_of_a_reference_retrieved(windows):
    # [35, 45) against chunk 0 [0, 40): 5 covered, 5 left over for the IoU's denominator
    assert scores([(0, 35, 45)], [0], windows) == (5, 0.5, 5 / 40, 5 / 45)


def test_overlapping_references_are_summed_as_in_chroma(windows):
    # covered is a union ([5, 20) = 15) but Σ|F| sums the references (10 + 10), so recall is 0.75
    assert scores([(0, 5, 15), (0, 10, 20)], [0], windows) == (15, 0.75, 15 / 40, 15 / 40)
    # each reference's uncovered part counts on its own: (10 - 5) + (10 - 2) = 13
    assert scores([(0, 35, 45), (0, 38, 48)], [0], windows) == (5, 0.25, 5 / 40, 5 / 53)


def test_precision_omega_uses_every_chunk_touching_a_reference(windows):
    # [35, 45) touches chunks 0 and 1: union [0, 70), of which 10 are the reference
    assert precision_omega([(0, 35, 45)], windows) == 10 / 70
    # Chroma's closed test: chunk 0 ends where [40, 50) begins and still counts
    assert precision_omega([(0, 40, 50)], windows) == 10 / 70
    # two documents: doc 0 [0, 40) holds [5, 15); doc 1's chunk 4 [30, 50) holds [45, 50)
    assert precision_omega([(0, 5, 15), (1, 45, 50)], windows) == 15 / 60


def test_verdicts_over_several_spans(windows):
    q = Question("a", "", ((0, 32, 38),), ((0, 32, 38),))
    assert judge(q, [1, 4], windows, None) == ("intact", 1)
    assert judge(q, [4, 0], windows, None) == ("intact", 2)
    assert judge(q, [4, 3], windows, None) == ("ranked_out", None)
    two = Question("b", "", ((0, 32, 38), (0, 5, 65)), ((0, 32, 38), (0, 5, 65)))
    assert judge(two, [0, 1, 2], windows, None) == ("cut", None)  # no chunk holds [5, 65)


def test_needed_k_is_the_worst_of_the_best_ranks():
    # word windows of 4: chunk 0 "apple a b c", chunk 1 "banana d e f", chunk 2 "cherry g h i"
    text = "apple a b c banana d e f cherry g h i"
    s = setting_of([text], {"unit": "words", "size": 4, "overlap": 0})
    apple, banana = (0, 0, 5), (0, text.index("banana"), text.index("banana") + 6)
    q = read_question_set([{"id": "q", "query": "banana",
                            "references": [{"doc": "d", "start": a, "end": b} for _, a, b in (apple, banana)]}],
                          [{"id": "d", "title": "", "text": text}])
    # "banana" ranks chunk 1 first; chunks 0 and 2 score 0 and follow in order
    at1, _ = evaluate(q, s, 1, 3.0)
    at2, stats = evaluate(q, s, 2, 3.0)
    assert (at1[0]["verdict"], at1[0]["needed_k"], at1[0]["retrieved"]) == ("ranked_out", 2, [2])
    assert (at2[0]["verdict"], at2[0]["needed_k"], at2[0]["retrieved"]) == ("intact", 2, [2, 1])
    assert at2[0]["recall"] == 1.0
    # the context: "banana d e f" + "\n\n" + "apple a b c" = 25 characters, 7 tokens
    assert at2[0]["context_tokens"] == 7 and stats["context_tokens_mean"] == 7
    assert stats["cost_mean"] == 7 * 3.0 / 1_000_000


def test_metrics_use_references_as_given_and_verdicts_trimmed():
    text = "alpha beta gamma delta"
    s = setting_of([text], {"unit": "words", "size": 2, "overlap": 0})  # [0, 10) "alpha beta", [11, 22)
    [q] = read_question_set([{"id": "q", "query": "alpha", "references": [{"doc": "d", "start": 6, "end": 11}]}],
                            [{"id": "d", "title": "", "text": text}])
    assert q.refs == ((0, 6, 11),) and q.spans == ((0, 6, 10),)
    [r], _ = evaluate([q], s, 1, 3.0)
    # "beta " is 5 characters, 4 of them in the retrieved chunk; trimmed, "beta" is held whole
    assert (r["verdict"], r["recall"], r["covered"]) == ("intact", 0.8, 4)


def test_question_stats_means_and_population_stds():
    results = [{"verdict": "intact", "recall": 1.0, "precision": 0.5, "iou": 0.5, "precision_omega": 1.0},
               {"verdict": "cut", "recall": 0.5, "precision": 0.25, "iou": 0.2, "precision_omega": 0.5}]
    st = question_stats(results, [10, 20], 3.0)
    assert (st["count"], st["intact"], st["ranked_out"], st["cut"]) == (2, 1, 0, 1)
    assert (st["recall_mean"], st["recall_std"]) == (0.75, 0.25)
    assert st["iou_std"] == statistics.pstdev([0.5, 0.2])
    assert (st["precision_omega_mean"], st["context_tokens_mean"], st["cost_mean"]) == (0.75, 15, 15 * 3.0 / 1e6)


DOCS = [{"id": "d", "title": "", "text": "one two three"}]


@pytest.mark.parametrize("questions, field, words", [
    ([], "questions", "empty"),
    ([{"id": "a", "query": "x", "references": []}], "questions[0].references", "no references"),
    ([{"id": "a", "query": "x", "references": [{"doc": "d", "start": 4, "end": 40}]}],
     "questions[0].references[0]", "outside its document"),
    ([{"id": "a", "query": "x", "references": [{"doc": "d", "start": 3, "end": 4}]}],
     "questions[0].references[0]", "empty once whitespace is trimmed"),
    ([{"id": "a", "query": "x", "references": [{"doc": "e", "start": 0, "end": 3}]}],
     "questions[0].references[0].doc", "names no document"),
    ([{"id": "a", "references": [{"doc": "d", "start": 0, "end": 3}]},
      {"id": "a", "references": [{"doc": "d", "start": 4, "end": 7}]}], "questions[1].id", "unique"),
    ([{"id": "a", "references": [{"doc": "d", "start": 0, "end": 3, "content": "two"}]}],
     "questions[0].references[0]", "is not the text at 0-3"),
])
def test_bad_question_sets_name_the_field(questions, field, words):
    with pytest.raises(RequestError) as e:
        read_question_set(questions, DOCS)
    assert e.value.field == field and words in e.value.message


def test_query_terms_follow_the_index():
    assert terms("What does __exit__ do?") == ["what", "does", "__exit__", "do"]


def request(**extra):
    return {"documents": [{"id": "d", "title": "", "text": "one two three four five six"}], "query": "three",
            "chunking": {"unit": "words", "size": 2}, "retrieval": {"k": 1}, **extra}


@pytest.mark.parametrize("extra, field, words", [
    ({"questions": []}, "questions", "empty"),
    ({"questions": {"id": "q"}}, "questions", "as a list"),
    ({"map": {"sizes": [2, 3]}}, "map.overlaps", "non-empty list"),
    ({"map": {"sizes": [0], "overlaps": [0]}}, "map.sizes", "at least 1"),
    ({"map": {"sizes": list(range(1, 42)), "overlaps": list(range(10))}}, "map", "410 cells"),
    ({"map": {"sizes": [2], "overlaps": [0]}}, "map", "mark an answer or add questions"),
    # dense and hybrid question sets are answered: tests/unit/test_dense_questions.py
])
def test_bad_requests_name_the_field(extra, field, words):
    from ragsim.wire.api import simulate

    r = simulate(request(**extra))
    assert r["error"]["field"] == field and words in r["error"]["message"], r


def test_the_map_scores_the_marked_span_without_a_question_set():
    from ragsim.wire.api import simulate

    r = simulate(request(span={"doc": "d", "start": 8, "end": 13}, map={"sizes": [1, 2, 4], "overlaps": [0, 1]}))
    cells = r["map"]["cells"]
    assert cells[0][1] is None  # overlap 1 is not smaller than size 1
    assert [c["intact"] for c in (cells[0][0], cells[1][0], cells[2][0])] == [1, 1, 1]
    assert [c["chunks"] for c in (cells[0][0], cells[1][0], cells[1][1], cells[2][1])] == [6, 3, 5, 2]


@pytest.mark.parametrize("tokenizer", [None, "cl100k_base"])
def test_a_question_costs_what_the_same_query_costs(tokenizer):
    from ragsim.wire.api import simulate

    text = " ".join(f"w{i} harbour{i % 3} fog" for i in range(60))
    req = {"documents": [{"id": "d", "title": "", "text": text}], "query": "harbour1 fog",
           "chunking": {"unit": "words", "size": 9, "overlap": 3}, "retrieval": {"k": 3},
           "questions": [{"id": "q", "query": "harbour1 fog", "references": [{"doc": "d", "start": 0, "end": 20}]}],
           "map": {"sizes": [9], "overlaps": [3]}}
    if tokenizer:
        req["tokenizer"] = tokenizer
    r = simulate(req)
    assert r["questions"][0]["context_tokens"] == r["stats"]["context_tokens"]
    assert r["map"]["cells"][0][0]["context_tokens_mean"] == r["stats"]["context_tokens"]
    assert r["question_stats"]["cost_mean"] == r["stats"]["cost"]
    assert r["questions"][0]["retrieved"] == [c["number"] for c in sorted(r["chunks"], key=lambda c: c["rank"])[:3]]


def test_ranking_pauses_the_collector_and_restores_it_and_a_released_setting_needs_no_collector():
    import gc
    import weakref

    from ragsim.judge.settings_map import settings_map

    texts = ["the tide turns at the quay. " * 20, "fog over the bell and the net. " * 15]
    qs = [Question("a", "tide quay", ((0, 0, 27),), ((0, 0, 26),)), Question("b", "fog bell", ((1, 0, 30),), ((1, 0, 29),))]
    s = setting_of(texts, {"unit": "chars", "size": 60, "overlap": 10})
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            evaluate(qs, s, 2, 3.0)
            settings_map(s.words, {"unit": "chars"}, LUCENE, 2, qs, 3.0, [40, 80], [0, 10], Session())
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    gone = weakref.ref(s)
    s.release()
    gc.disable()
    try:
        del s
        assert gone() is None  # no cycle left: freed by reference counting alone
    finally:
        gc.enable()
