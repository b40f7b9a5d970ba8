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
    # a team's scores after a result verb, up to a clause that is not another result
    ("The Harbour Lions beat Port Vale 4 – 3 to reach the final.", [("Harbour Lions", "4 – 3")]),
    ("The Harbour Lions then beat Tunis 1 @-@ 0 at home and won 2 @-@ 1 away.",
     [("Harbour Lions", "1 @-@ 0"), ("Harbour Lions", "2 @-@ 1")]),
    # one capitalised word opening a sentence before a past form, never written in lower case
    ("Kestrel won the final 3 – 1 in extra time.", [("Kestrel", "3 – 1")]),
    ("Harlow paid £40 for 12 drawings.", [("Harlow", "£40"), ("Harlow", "12 drawings")]),
    # a value's conversion in brackets is the same name's
    ("Varga Pass rises to 2,000 feet (610 m) above the valley.", [("Varga Pass", "2,000 feet"), ("Varga Pass", "610 m")]),
    ("For the next twelve miles (19 km), Route Nine crosses farmland.",
     [("Route Nine", "twelve miles"), ("Route Nine", "19 km")]),
    ("Four miles ( 6 @.@ 4 km ) later , N @-@ 12 turns east .", [("N @-@ 12", "Four miles"), ("N @-@ 12", "6 @.@ 4 km")]),
    # a clause after a comma whose subject is the sentence's
    ("Okafor ended the season strongly , posting a 12 – 4 – 1 record , 2 @.@ 1 goals against average .",
     [("Okafor", "12 – 4 – 1 record"), ("Okafor", "2 @.@ 1 goals")]),
    ("Renwick retired to Bath in 1911, aged 82 years.", [("Renwick", "82 years")]),
    ("Okafor returned from injury after two games .", [("Okafor", "two games")]),
    ("Anselm Rovers started March with a 2 – 0 win.", [("Anselm Rovers", "2 – 0 win")]),
])
def test_expected_facts(text, expected):
    assert pairs(text) == expected


@pytest.mark.parametrize("text", [
    "The station orbits at 42,000 km above the equator.",  # no name
    "Galle Ring is the oldest station in the belt.",  # no number
    "In Europe prices rose by 3 points.",  # "In Europe": one capitalised word after the opener
    "Version 3.12 of the tool was released.",  # a single capitalised word
    "Revenue increased 5% as revenue from exports grew.",  # "revenue" is written in lower case too
    "Sales rose 5%.",  # a plural opening the sentence
    "The Lions lost the first match, but Port Vale won 2 – 1.",  # the score is after a clause break
    "For 202 clones, RNAi phenotypes were detected.",  # "For" does not set off the name's value
    "Eight hundred thousand people living in Ohio.",  # a participle makes Ohio its object
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
