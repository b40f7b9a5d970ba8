"""The fact detector on hand-written sentences, with their expected facts and sentences with none."""

import pytest

from ragsim.judge.facts import detect


def pairs(text):
    return [(text[f.name[0] : f.name[1]], text[f.value[0] : f.value[1]]) for f in detect(text)]


@pytest.mark.parametrize("text,expected", [
    ("The Galle Ring station orbits at 42,000 km above the equator.", [("Galle Ring", "42,000 km")]),
    ("Harrow Lock lifts barges 11.5 m in six minutes.", [("Harrow Lock", "11.5 m")]),
    ("The Port of Kells handled 3.2 million tonnes.", [("Port of Kells", "3.2 million")]),
    ("Its rival, Mount Orrin Array, spans 2.5 km.", [("Mount Orrin Array", "2.5 km")]),
    ("The Pier 7 Crane lifts 40 t.", [("Pier 7 Crane", "40 t")]),
    ("Seven Sisters Dam holds 80% of the basin's water.", [("Seven Sisters Dam", "80%")]),
    ("At 1,250 m, Varga Pass is the highest crossing.", [("Varga Pass", "1,250 m")]),
    ("Kestrel Station has 14 crew. Novak Yard builds 3 ships a year.",
     [("Kestrel Station", "14 crew"), ("Novak Yard", "3 ships")]),
    ("Costs at Iron Hill Mine rose to $4.5 million.", [("Iron Hill Mine", "$4.5 million")]),
    ("The Brannock Hill Station, cut into the ridge north of Halvard Reservoir in 1994, can deliver 1,200 MW.",
     [("Brannock Hill Station", "1,200 MW")]),  # a year is no value; the clause's name does not own 1,200 MW
])
def test_expected_facts(text, expected):
    assert pairs(text) == expected


@pytest.mark.parametrize("text", [
    "The station orbits at 42,000 km above the equator.",  # no name
    "Galle Ring is the oldest station in the belt.",  # no number
    "In Europe prices rose by 3 points.",  # "In Europe": one capitalised word after the opener
    "Version 3.12 of the tool was released.",  # a single capitalised word
    "",
])
def test_sentences_without_facts(text):
    assert pairs(text) == []


def test_name_and_value_must_share_a_sentence():
    text = "Galle Ring is old. It orbits at 42,000 km."
    assert pairs(text) == []


def test_offsets_are_code_points_after_emoji():
    text = "🚀🚀 The Galle Ring orbits at 42,000 km."
    (f,) = detect(text)
    assert text[f.name[0] : f.name[1]] == "Galle Ring" and f.stretch == (f.name[0], f.value[1])


def test_the_collection_question_fact_is_found_by_the_rule():
    import json
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2] / "assets" / "collection"
    meta = json.loads((root / "index.json").read_text(encoding="utf-8"))
    text = (root / meta["fact"]["doc"]).read_text(encoding="utf-8")
    assert (meta["fact"]["name"], meta["fact"]["value"]) in pairs(text)
