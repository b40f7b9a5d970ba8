"""The fact finder against facts a person labelled in real text (tests/data/facts), the advice the
audit gives on that text, and the finder on hostile text: bounded, linear, and "no facts" rather than
invented ones."""

import gc
import json
import pathlib
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings, strategies as st

from ragsim.judge.facts import described, detect
from ragsim.wire.audit import audit, corpus_sentence

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "facts"
sys.path.insert(0, str(ROOT / "benchmarks"))
import facts_eval  # noqa: E402  (the benchmark's loader and matcher: one scoring, printed there, held here)

sys.path.insert(0, str(DATA))
import check_labels  # noqa: E402

# The floors measured on the whole set (docs/facts.md has the figures and their history); a change
# that lowers them fails here.
PRECISION_FLOOR = 0.95
RECALL_FLOOR = 0.8


@pytest.fixture(scope="module")
def measured():
    return facts_eval.measure(facts_eval.load("all"))


def test_every_label_is_where_it_says_and_every_passage_is_labelled():
    assert check_labels.problems() == []
    passages = facts_eval.load("all")
    assert len(passages) >= 200 and sum(len(p["facts"]) for p in passages) >= 300
    assert {p["kind"] for p in passages} == {"encyclopedic", "biomedical", "financial", "speech", "chat"}


def test_precision_and_recall_on_the_labelled_set(measured):
    all_ = measured["kinds"]["all"]
    assert all_["precision"] >= PRECISION_FLOOR, measured["falses"]
    assert all_["recall"] >= RECALL_FLOOR
    assert measured["kinds"]["financial"]["recall"] >= 0.95  # every table row's number
    for kind, row in measured["kinds"].items():  # no kind of text is mostly false alarms
        assert row["precision"] >= 0.75, (kind, row)


def test_the_rule_it_replaced_fails_the_same_measure():
    before = facts_eval.measure(facts_eval.load("all"), facts_eval.old_finder().detect)["kinds"]["all"]
    assert before["precision"] < 0.2 and before["recall"] < 0.2  # the measure can fail


def pairs(text):
    return [(text[f.name[0]:f.name[1]], text[f.value[0]:f.value[1]]) for f in detect(text)]


def test_the_studys_sentence_is_read_as_the_study_reads_it():
    text = ("The three main rings are the narrow Adams Ring, 63,000 km from the centre of Neptune, the Le "
            "Verrier Ring, at 53,000 km, and the broader, fainter Galle Ring, at 42,000 km.")
    assert pairs(text) == [("Adams Ring", "63,000 km"), ("Le Verrier Ring", "53,000 km"), ("Galle Ring", "42,000 km")]
    galle = detect(text)[2]
    assert galle.stretch[1] - galle.stretch[0] == len("Galle Ring, at 42,000 km")  # 24 characters, not 134


@pytest.mark.parametrize("text", [
    "Highway 88 runs north. The 10th Arkansas Battalion marched.",  # numbers inside names; an ordinal
    "Foley M, Tilley L  Nucleic Acids Res 2003 31: 3389-3392",  # a reference
    "See Figure S1 and Table 2 for the PMID 12546820 results.",  # labels and ids
    "Released in January 2011 in Japan, Sega sold it in 2012.",  # dates
    "A crowd in Columbus saw the 5 – 2 game on 3 March.",  # a score of no subject team, and a date
])
def test_what_a_rule_might_pair_but_a_reader_would_not(text):
    assert pairs(text) == []


@pytest.mark.parametrize("text, expected", [
    # a table written as lines of "label number", as wikitext keeps one
    ("Long arms in the inventory consisted of :\n M1822 .69 cal ( flintlock ) 5 @,@ 625 \n Hall 's carbines 267 \n"
     " Total 10 @,@ 247 ", [("M1822 .69 cal ( flintlock )", "5 @,@ 625"), ("Hall 's carbines", "267"), ("Total", "10 @,@ 247")]),
    # two such lines are no table; a row of years gives nothing
    ("Hall 's carbines 267\nTotal 10 @,@ 247", []),
    ("Best Picture 1994\nBest Actor 1995\nBest Score 1996", []),
    # the value, then its name
    ("About 90% of Reykjavik 's population is connected to it.", [("Reykjavik", "90%")]),
    ("You know, there are 1,000 billionaires in America.", [("America", "1,000 billionaires")]),
    ("He had 50 minutes of NHL experience.", []),  # the name qualifies a noun: the value is the noun's
    ("Over 10% of the ORFs in the genome are short.", []),  # a plural acronym is a common noun
    ("As few as 315 vehicles traveling east of the Banner line.", []),  # a participle opens a new clause
    # a score that says what it is, with its team as the subject
    ("In the third period Columbus held a 3 – 2 lead with under a minute to play.", [("Columbus", "3 – 2 lead")]),
    ("Later Columbus posted an 18 – 21 – 2 record.", [("Columbus", "18 – 21 – 2 record")]),
])
def test_shapes_added_after_the_first_measurement(text, expected):
    assert pairs(text) == expected


def test_a_wrapped_paragraph_is_one_text_and_a_list_is_not():
    wrapped = ("Containers go to the harbour's container quay, the East Terminal, which\n"
               "handles about 4,200 containers a week, more than any other berth on the coast.")
    assert pairs(wrapped) == [("East Terminal", "4,200 containers")]
    listed = "Berths of the inner harbour, by depth and length:\nNorth Quay\n11 m deep, as dredged in spring"
    assert pairs(listed) == []  # a heading line and a list line are not one sentence
    assert pairs("Reykjavik Energy - \\n\\n 90% of the city") == []  # a chat log's written line break


def documents_of_real_text():
    """The labelled passages of each kind joined into one document: real text no one here wrote."""
    docs = {}
    for p in facts_eval.load("all"):
        docs.setdefault(p["kind"], []).append(p["text"])
    return [{"id": kind, "title": kind, "text": "\n\n".join(texts)} for kind, texts in sorted(docs.items())]


def test_the_advice_holds_on_real_text():
    docs = documents_of_real_text()
    for unit, size, overlaps in (("chars", 900, [0, 25, 50, 100, 150, 300]), ("words", 150, [0, 5, 10, 25, 40])):
        r = audit({"documents": docs, "chunking": {"unit": unit, "size": size}, "overlaps": overlaps})
        assert len(r["facts"]) > 250
        assert all(row["destroyed_within_overlap"] == 0 for row in r["rows"])  # fixed windows keep them
        gap = max((f["stretch"][1] - f["stretch"][0]) if unit == "chars" else 0 for f in r["facts"])
        if unit == "chars":
            assert gap < size  # the longest real fact fits in a chunk, so an overlap can keep it
            above = audit({"documents": docs, "chunking": {"unit": unit, "size": size}, "overlaps": [gap]})
            assert above["rows"][0]["destroyed"] == 0  # "an overlap above it loses none"
            assert r["rows"][0]["destroyed"] > 0


def test_the_sentence_says_when_no_overlap_can_keep_a_fact():
    rows = [{"overlap": 0, "destroyed": 3, "error": None}, {"overlap": 50, "destroyed": 1, "error": None}]
    said = corpus_sentence(rows, 10, 2, 120, "chars", True, size=100)
    assert "longer than the chunk size of 100" in said and "overlap above it loses none" not in said
    assert corpus_sentence(rows, 10, 2, 60, "chars", True, size=100).endswith("so an overlap above it loses none")
    assert corpus_sentence([], 0, 4, None, "chars") == "No facts of this shape found across 4 documents"


def test_the_command_line_sentence_on_real_text(tmp_path):
    for doc in documents_of_real_text():
        (tmp_path / f"{doc['id']}.md").write_text(doc["text"], encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "ragsim", "audit", str(tmp_path), "--size", "900", "--workers", "1",
                          "--quiet"], capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT / "py"),
                                                                                     "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if "of this shape" in x)
    gap = int(line.split("the longest name-to-value gap is ")[1].split(" ")[0].replace(",", ""))
    assert gap < 900 and line.endswith("so an overlap above it loses none.")
    assert "and 0 at 300" in line  # the longest real fact is shorter than 300: nothing lost there


def test_each_fact_carries_its_sentence_with_name_and_value_inside():
    text = "Intro line.\nThe narrow Adams Ring, 63,000 km from Neptune, is dark. Kestrel Station has 14 crew."
    for f in detect(text):
        d = described(text, f)
        s, e = d["sentence"]
        assert s <= d["name"][0] and d["value"][1] <= e and d["quote"][0] >= s and d["quote"][1] <= e
        assert d["quote_text"] == text[d["quote"][0]:d["quote"][1]]
        assert "\n" not in text[s:e]


# -- hostile text: bounded, linear, and no facts made up ------------------------------------------------

HOSTILE = {
    "ten MB of digits": lambda n: "7" * n,
    "digits and spaces": lambda n: "1 " * (n // 2),
    "a name of many words": lambda n: "Galle " * (n // 6) + "has 42 km.",
    "one sentence of names and values": lambda n: "Galle Ring has 42 km, " * (n // 22),
    "a table of nonsense": lambda n: "a | 1 | 2\n" * (n // 10),
    "one table row": lambda n: "label" + " | 12" * (n // 5),
    "code": lambda n: "x = 3; y = 4 " * (n // 13),
    "capitals and commas": lambda n: "Aa, " * (n // 4) + "12 km",
    "clauses": lambda n: "Galle Ring, cut in, has 5 km " * (n // 30),
    "capitals then lower case": lambda n: "Aa bb " * (n // 6) + "12 km",
    "possessives": lambda n: "Aa 's " * (n // 6) + "12 km",
    "values before names": lambda n: "At 12 m, Aa " * (n // 12),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_is_linear(name):
    make = HOSTILE[name]

    def cost(n):
        text = make(n)
        best = float("inf")
        gc.disable()  # the collector's passes grow with the heap: the finder's own work is what is held
        try:
            for _ in range(3):
                t = time.process_time()
                detect(text)
                best = min(best, time.process_time() - t)
        finally:
            gc.enable()
        return best

    small, large = cost(50_000), cost(400_000)
    # 8x the text: linear work takes about 8x, quadratic 64x; the margin absorbs a loaded machine
    assert large <= 24 * max(small, 0.002)


def test_ten_megabytes_of_digits_and_a_long_name_give_no_facts():
    assert detect("7" * 10_000_000) == []
    assert detect(" ".join(["Galle"] * 10_000) + " has 42 km.") == []  # a run of 10,000 capitals is no name
    assert detect("|" * 100_000) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("Aa Bb 12,.:;()|\n-–@%$ ") + ["Ring", " has ", " km", "The ", " at ", " two ",
                                                                  " 's ", "At ", "\\n", " paid ", " beat ", " @-@ ",
                                                                  " ( ", " for ", " , posting a ", " later , "]),
                max_size=120).map("".join))
def test_facts_are_well_formed_on_any_text(text):
    for f in detect(text):
        (ns, ne), (vs, ve), (ss, se) = f.name, f.value, f.sentence
        assert 0 <= ss <= ns < ne <= se <= len(text) and ss <= vs < ve <= se
        assert ne <= vs or ve <= ns  # name and value do not overlap
        json.dumps(described(text, f))
