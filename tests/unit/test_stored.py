"""Stored chunks (SPEC section 11): placement, rebuilding, the phrase check and the splitter's stats,
on small fixtures whose offsets can be counted by hand."""

import sys
from pathlib import Path

import pytest

from helpers import DENSE_LONG
from ragsim.judge import stored_search
from ragsim.text import tokens
from ragsim.errors import RequestError
from ragsim.judge.stored import align, overlap, rebuild, to_splits, documents_report, chunks_report
from ragsim.judge.stored_checks import phrase_check, report, splitter_stats
from ragsim.judge.stored_search import View

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402


def chunks(*texts, doc="d", **offsets):
    """Stored chunks c0, c1, ... of one document; offsets as `c1=(start, end)`."""
    out = []
    for i, t in enumerate(texts):
        start, end = offsets.get(f"c{i}", (None, None))
        out.append({"id": f"c{i}", "text": t, "doc": doc, "start": start, "end": end})
    return out


def where(al):
    return [(c.placement, c.start, c.end) for c in al.chunks]


# -- placement -----------------------------------------------------------------------------------

SOURCE = "alpha beta gamma delta"  # alpha 0-5, beta 6-10, gamma 11-16, delta 17-22


def test_offsets_are_used_when_the_text_at_them_is_the_chunk():
    al = align(chunks("beta gamma", "delta", c0=(6, 16), c1=(17, None)), {"d": SOURCE})
    assert where(al) == [("offsets", 6, 16), ("offsets", 17, 22)]  # a start alone: start + length


def test_stale_offsets_fall_back_to_the_text():
    al = align(chunks("beta gamma", "delta", c0=(0, 10), c1=(3, None)), {"d": SOURCE})
    assert where(al) == [("exact", 6, 16), ("exact", 17, 22)]


def test_overlapping_windows_land_on_their_own_offsets():
    text = "abcdefghij"
    al = align(chunks("abcd", "cdef", "efgh", "ghij"), {"d": text})
    assert where(al) == [("exact", 0, 4), ("exact", 2, 6), ("exact", 4, 8), ("exact", 6, 10)]


def test_repeated_passages_land_in_order():
    text = "Intro. Refrain. Verse. Refrain. Outro."  # Refrain. at 7 and 23
    al = align(chunks("Intro.", "Refrain.", "Verse.", "Refrain.", "Outro."), {"d": text})
    assert where(al) == [("exact", 0, 6), ("exact", 7, 15), ("exact", 16, 22), ("exact", 23, 31), ("exact", 32, 38)]


def test_a_chunk_equal_to_its_predecessor_takes_the_next_occurrence():
    text = "Chorus.\n\nChorus.\n\nEnd."
    al = align(chunks("Chorus.", "Chorus.", "End."), {"d": text})
    assert where(al) == [("exact", 0, 7), ("exact", 9, 16), ("exact", 18, 22)]


def test_a_chunk_only_before_the_hint_is_found_anywhere():
    al = align(chunks("gamma delta", "alpha"), {"d": SOURCE})
    assert where(al) == [("exact", 11, 22), ("exact", 0, 5)]


def test_the_walk_follows_store_offsets_even_when_they_are_stale():
    # Stored out of order (as Qdrant lists points); the stale starts still give the order.
    text = "x. x. y. x."
    al = align(chunks("y.", "x.", "x.", c0=(5, None), c1=(0, None), c2=(3, None)), {"d": "  " + text})
    assert where(al) == [("exact", 8, 10), ("exact", 2, 4), ("exact", 5, 7)]


def test_whitespace_insensitive_placement_covers_the_source_characters():
    text = "one two\n\n  three four"  # two 4-7, three 11-16
    al = align(chunks("two three", " two\tthree\n"), {"d": text})
    assert where(al) == [("whitespace", 4, 16), ("whitespace", 4, 16)]
    assert text[4:16] == "two\n\n  three"


def test_whitespace_placement_after_leading_whitespace_and_the_hint():
    text = "\n  a  b\n\nc a b"  # a 3, b 6, c 9, second "a b" 11-14
    al = align(chunks("a\nb", "c", "a\n\nb"), {"d": text})
    assert where(al) == [("whitespace", 3, 7), ("exact", 9, 10), ("whitespace", 11, 14)]


def test_unplaced_and_empty_chunks_are_listed_and_counted():
    al = align(chunks("beta", "zeta", ""), {"d": SOURCE})
    assert where(al) == [("exact", 6, 10), ("unplaced", None, None), ("unplaced", None, None)]
    assert documents_report(al) == [{"id": "d", "chunks": 3, "placed": 1, "unplaced": 2, "rebuilt": False, "gaps": []}]
    s = to_splits(al)["d"]
    assert (s.split.starts, s.split.ends, s.split.units, s.ids, s.unplaced) == ([6], [10], [4], ("c0",), ("c1", "c2"))


def test_documents_follow_the_store_then_sources_without_chunks():
    al = align(chunks("beta", doc="b") + [{"id": "z", "text": "delta", "doc": "a"}],
               {"a": SOURCE, "b": SOURCE, "c": "unused"})
    assert [(d["id"], d["chunks"]) for d in documents_report(al)] == [("b", 1), ("a", 1), ("c", 0)]


def test_view_maps_every_position_back_to_the_text():
    text = " \t a  b\n\nc\u3000\u3000d e  "
    view = View(text)
    assert view.folded == "a b c d e"
    assert [view.to_text(p) for p in range(len(view.folded))] == [3, 4, 6, 7, 9, 10, 12, 13, 14]


def test_the_index_finds_what_a_scan_finds():
    # Long chunks of a long text whose bodies repeat (titles do not): exact in order, exact only
    # before the hint, mangled whitespace, absent; with the index forced on (index_from=0) and off.
    def block(c):
        return "".join(f"Section {c}.{i}.\nThe  value of item {i % 7} is {i * 13 % 97} units.\n\n" for i in range(60))

    text = block(0) + block(1) + block(2)
    picks = [text[100:300], text[250:460], text[4000:4200], text[10:200]]
    seg = text[5000:5300]
    gone = "Nothing like this sentence appears anywhere in the document text at all, not even once, ok."
    stored = chunks(*picks, " ".join(seg.split()), gone)
    with_index = where(align(stored, {"d": text}, index_from=0))
    assert with_index == where(align(stored, {"d": text}, index_from=len(text) + 1))
    assert with_index[:4] == [("exact", 100, 300), ("exact", 250, 460), ("exact", 4000, 4200), ("exact", 10, 200)]
    a, b = 5000 + len(seg) - len(seg.lstrip()), 5300 - (len(seg) - len(seg.rstrip()))
    assert with_index[4] == ("whitespace", a, b)
    assert with_index[5] == ("unplaced", None, None)


# -- rebuilding without sources ------------------------------------------------------------------


def test_overlap_is_the_longest_suffix_prefix():
    assert overlap("abcdef", "defghi") == 3
    assert overlap("aaaa", "aab") == 2
    assert overlap("abc", "xyz") == 0
    assert overlap("", "abc") == 0
    long = "x" * 40 + "0123456789abcdefghij"
    assert overlap(long, "0123456789abcdefghij and on") == 20  # longer than the probe
    assert overlap("abab", "ab") == 2  # at most the shorter length


def test_rebuild_joins_overlaps_and_marks_gaps():
    assert rebuild(["abcdef", "defghi", "ghijkl"]) == ("abcdefghijkl", ())
    assert rebuild(["abc", "xyz", "yz!"]) == ("abcxyz!", (3,))
    assert rebuild([]) == ("", ())


def test_a_rebuilt_document_places_its_chunks_and_says_so():
    al = align(chunks("The cat sat", "sat on the mat.", "A dog ran."))
    d = al.documents[0]
    assert (d.text, d.rebuilt, d.gaps) == ("The cat sat on the mat.A dog ran.", True, (23,))
    assert where(al) == [("exact", 0, 11), ("exact", 8, 23), ("exact", 23, 33)]
    assert documents_report(al)[0]["gaps"] == [23]


def test_a_rebuild_follows_store_offsets_when_there_are_some():
    al = align(chunks("sat on the mat.", "The cat sat", c0=(8, 23), c1=(0, 11)))
    assert al.documents[0].text == "The cat sat on the mat."
    assert where(al) == [("offsets", 8, 23), ("offsets", 0, 11)]


# -- the phrase check ----------------------------------------------------------------------------

TEXT = "The warranty lasts two years from the date of purchase."
# Windows of 20 characters with 5 of overlap: [0,20) [15,35) [30,50) [45,55)
WINDOWS = [(0, 20), (15, 35), (30, 50), (45, 55)]


def window_al():
    stored = [{"id": f"w{i}", "text": TEXT[a:b], "doc": "t", "start": a, "end": b} for i, (a, b) in enumerate(WINDOWS)]
    return align(stored, {"t": TEXT})


def test_a_phrase_inside_one_chunk_is_present():
    [e] = phrase_check(window_al(), "two years")  # 19..28, inside [15, 35)
    assert e == {"text": "two years", "doc": "t", "start": 19, "end": 28, "verdict": "present",
                 "chunks": ["w1"], "cut_by": [], "overlap_needed": 9}


def test_a_phrase_across_a_boundary_is_absent_with_the_cuts():
    [e] = phrase_check(window_al(), "lasts two years from the")  # 13..37
    assert (e["start"], e["end"], e["verdict"], e["chunks"], e["overlap_needed"]) == (13, 37, "absent", [], 24)
    # w0 ends at 20 inside it; w2 starts at 30 inside it (w1 ends at 35 inside it too)
    assert e["cut_by"] == [{"end_of": "w0", "start_of": "w1", "at": 20}, {"end_of": "w1", "start_of": "w2", "at": 35}]


def test_a_span_phrase_is_judged_at_that_span_trimmed():
    [e] = phrase_check(window_al(), {"doc": "t", "start": 28, "end": 52})  # " from the date of purcha"
    assert (e["text"], e["start"], e["end"], e["verdict"]) == ("from the date of purcha", 29, 52, "absent")
    assert e["cut_by"] == [{"end_of": "w1", "start_of": "w2", "at": 35}, {"end_of": "w2", "start_of": "w3", "at": 50}]


def test_a_text_phrase_is_judged_where_a_chunk_holds_it():
    text = "ab cut here. ab cut here."
    # the first "cut here" is split between c0 and c1, the second lies inside c2
    stored = [{"id": "c0", "text": "ab cu", "doc": "x"}, {"id": "c1", "text": "t here. ", "doc": "x"},
              {"id": "c2", "text": "ab cut here.", "doc": "x"}]
    [e] = phrase_check(align(stored, {"x": text}), "cut here")
    assert (e["start"], e["verdict"], e["chunks"]) == (16, "present", ["c2"])
    [first] = phrase_check(align(stored[:2], {"x": text}), "cut here")
    assert (first["start"], first["verdict"]) == (3, "absent")
    assert first["cut_by"] == [{"end_of": "c0", "start_of": "c1", "at": 5}]


def test_a_phrase_at_the_document_edge_has_open_boundaries():
    stored = [{"id": "c0", "text": "warranty lasts", "doc": "t"}]
    [e] = phrase_check(align(stored, {"t": TEXT}), "The warranty")  # chunk starts at 4, inside it
    assert e["cut_by"] == [{"end_of": None, "start_of": "c0", "at": 4}]


def test_a_phrase_found_nowhere_is_an_error_that_quotes_it():
    with pytest.raises(RequestError) as e:
        phrase_check(window_al(), "lifetime warranty " * 10)
    assert e.value.field == "phrase"
    assert "'lifetime warranty lifetime" in e.value.message and "…'" in e.value.message
    assert len(e.value.message) < 200


@pytest.mark.parametrize("phrase, field", [
    ("   ", "phrase"), ({"doc": "nope", "start": 0, "end": 3}, "phrase.doc"),
    ({"doc": "t", "start": 0, "end": 99}, "phrase.end"), ({"doc": "t", "start": 3, "end": 4}, "phrase"),
    ({"doc": ["t"], "start": 0, "end": 3}, "phrase.doc"), (7, "phrase"),
])
def test_bad_phrases_name_their_field(phrase, field):
    with pytest.raises(RequestError) as e:
        phrase_check(window_al(), phrase)
    assert e.value.field == field


# -- stats, splits, reports, input ---------------------------------------------------------------


def test_splitter_stats_count_sizes_overlaps_and_truncation():
    stats = splitter_stats(window_al(), count_tokens=lambda t: len(t.split()))
    assert stats == {"chars_min": 10, "chars_median": 20.0, "chars_max": 20,
                     "tokens_min": 1, "tokens_median": 4.5, "tokens_max": 5,
                     "overlap_min": 5, "overlap_median": 5, "overlap_max": 5, "boundaries_without_overlap": 0,
                     "truncated": 0}
    [w0, w1, w2, w3] = [TEXT[a:b] for a, b in WINDOWS]
    assert [w.split() for w in (w0, w1, w2, w3)] == [
        ["The", "warranty", "lasts", "t"], ["sts", "two", "years", "from", "t"], ["rom", "the", "date", "of", "purc"],
        ["purchase."]]


def test_stats_without_a_tokenizer_or_neighbours_and_with_a_long_chunk():
    al = align([{"id": "long", "text": DENSE_LONG, "doc": "l"}, {"id": "gone", "text": "zz", "doc": "l"}],
               {"l": DENSE_LONG})
    stats = splitter_stats(al)
    assert (stats["tokens_min"], stats["overlap_min"], stats["boundaries_without_overlap"]) == (None, None, 0)
    assert (stats["chars_min"], stats["chars_max"], stats["truncated"]) == (2, len(DENSE_LONG), 1)


def test_exact_tokens_from_the_core_tiktoken():
    tokens.provide("cl100k_base", build.tiktoken_rank_files()["cl100k_base"])
    al = align([{"id": "h", "text": "hello world", "doc": "d"}], {"d": "say hello world"})
    assert chunks_report(al, tokens.get("cl100k_base").count)[0]["tokens"] == 2  # [15339, 1917]
    assert splitter_stats(al, "cl100k_base")["tokens_max"] == 2


def test_an_unknown_tokenizer_is_a_request_error():
    with pytest.raises(RequestError) as e:
        splitter_stats(window_al(), "p50k_base")
    assert e.value.field == "tokenizer" and "'cl100k_base'" in e.value.message


def test_report_counts_each_text_once_and_agrees_with_the_stats():
    seen = []

    def count(text):
        seen.append(text)
        return len(text.split())

    r = report(window_al(), [], count)
    assert [c["tokens"] for c in r["chunks"]] == [4, 5, 5, 1] and r["stats"]["tokens_median"] == 4.5
    assert len(seen) == 4


def test_report_has_the_spec_shapes():
    r = report(window_al(), ["two years", {"doc": "t", "start": 13, "end": 37}])
    assert list(r) == ["documents", "chunks", "phrases", "stats"]
    assert list(r["chunks"][0]) == ["id", "doc", "start", "end", "placement", "chars", "tokens"]
    assert [p["verdict"] for p in r["phrases"]] == ["present", "absent"]
    assert r["chunks"][3] == {"id": "w3", "doc": "t", "start": 45, "end": 55, "placement": "offsets",
                              "chars": 10, "tokens": None}


def test_to_splits_gives_document_order_and_char_units():
    stored = chunks("cdef", "abcd", "ghij")
    s = to_splits(align(stored, {"d": "abcdefghij"}))["d"]
    assert (s.split.starts, s.split.ends, s.split.units, s.split.unit) == ([0, 2, 6], [4, 6, 10], [4, 4, 4], "chars")
    assert (s.ids, s.split.units_in_document) == (("c1", "c0", "c2"), 10)


@pytest.mark.parametrize("raw, field", [
    ("nope", "chunks"), ([1], "chunks[0]"), ([{"id": 1, "text": "a", "doc": "d"}], "chunks[0].id"),
    ([{"id": "a", "text": None, "doc": "d"}], "chunks[0].text"),
    ([{"id": "a", "text": "a", "doc": "d", "start": -1}], "chunks[0].start"),
    ([{"id": "a", "text": "a", "doc": "d", "start": 4, "end": 2}], "chunks[0].end"),
    ([{"id": "a", "text": "a", "doc": "d"}, {"id": "a", "text": "b", "doc": "d"}], "chunks[1].id"),
])
def test_bad_chunks_name_their_field(raw, field):
    with pytest.raises(RequestError) as e:
        align(raw)
    assert e.value.field == field


def test_sources_must_be_texts():
    with pytest.raises(RequestError) as e:
        align(chunks("a"), {"d": 3})
    assert e.value.field == "sources['d']"


def test_the_search_thresholds_make_sense():
    assert stored_search.SAMPLE + stored_search.GRAM - 1 < 200  # ordinary chunks use the index
