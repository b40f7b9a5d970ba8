"""The answers a request wants (`wire.answers`): named in `"answers": [...]` or, without that field,
those its fields ask for; each written by one writer in wire/, the verdict always."""

import copy
import json

import pytest

from helpers import harbour_questions
from ragsim.wire import answers
from ragsim.wire.api import simulate


def everything() -> dict:
    """The harbour question set with a marked span, every panel's question and a small map."""
    request = harbour_questions()
    text = request["documents"][0]["text"]
    start = text.index("The harbour")
    request.update(query="harbour fee", span={"doc": "harbour", "start": start, "end": start + 40},
                   find="harbour", cuts=True, sweep=[0, 25], expand={"neighbours": 1},
                   map={"sizes": [200, 300], "overlaps": [0, 50]})
    return request


def answered(request: dict, named=None) -> dict:
    request = copy.deepcopy(request)
    if named is not None:
        request["answers"] = named
    return simulate(request)


def test_every_writer_is_a_wire_module_and_the_verdict_comes_first():
    assert answers.ANSWERS[0].name == "verdict" and not answers.ANSWERS[0].asked_by
    assert all(a.write.__module__.startswith("ragsim.wire.") for a in answers.ANSWERS)


@pytest.mark.parametrize("fields, wanted", [
    ({}, ("verdict",)),
    ({"find": "x"}, ("verdict", "panels")),
    ({"cuts": False}, ("verdict", "panels")),  # given, so asked; the panel writes nothing for it
    ({"questions": []}, ("verdict", "questions")),
    ({"map": {}, "expand": {"section": True}}, ("verdict", "panels", "map")),
    ({"map": None, "questions": None}, ("verdict",)),
])
def test_without_answers_the_fields_given_decide(fields, wanted):
    assert answers.read_asks(fields).wanted == wanted


def test_naming_every_answer_gives_the_response_of_naming_none():
    request = everything()
    plain = answered(request)
    assert {"found", "cuts", "sweep", "expanded", "questions", "question_stats", "map"} <= set(plain)
    assert json.dumps(answered(request, ["map", "questions", "panels", "verdict"])) == json.dumps(plain)


def test_a_field_whose_answer_is_not_named_is_neither_read_nor_answered():
    request = everything()
    request["find"] = ""  # refused when read
    request["map"] = {"sizes": "big"}  # refused when read
    assert answered(request)["error"]["field"] == "find"  # no `answers`: every field read (the panels first)
    out = answered(request, ["questions"])
    assert "error" not in out and {"questions", "question_stats"} <= set(out)
    assert not {"found", "cuts", "sweep", "expanded", "map"} & set(out)
    assert out["questions"] == answered(everything())["questions"]
    verdict_only = answered(request, [])
    assert "verdict" in verdict_only and "questions" not in verdict_only and "error" not in verdict_only


def test_the_map_alone_scores_the_question_set():
    request = everything()
    out = answered(request, ["map"])
    assert "questions" not in out and out["map"] == answered(request)["map"]
    del request["questions"]  # without a set, the map's one question is the marked span
    assert answered(request, ["map"])["map"] != out["map"]


@pytest.mark.parametrize("named, field, words", [
    (["questions"], "answers[0]", "answers names questions but the request has no questions (a question set); add it"),
    (["verdict", "panels"], "answers[1]", "has no find, cuts, sweep or expand"),
    (["map"], "answers[0]", 'has no map ({"sizes": [...], "overlaps": [...]}); add it, or take map out of answers.'),
    (["verdict", "maps"], "answers[1]", "answers[1] is 'maps', which is not an answer; perhaps you meant map."),
    ([3], "answers[0]", "use one of verdict, panels, questions, map."),
    ("map", "answers", 'Give answers as a list of names from verdict, panels, questions, map'),
])
def test_a_wrong_answers_field_is_refused_in_one_sentence(named, field, words):
    request = harbour_questions()
    del request["questions"]
    error = answered(request, named)["error"]
    assert error["field"] == field and words in error["message"], error
    assert error["message"].count(". ") == 0 and error["message"].endswith(".")


def test_answer_is_still_the_spans_old_name_not_answers():
    request = harbour_questions()
    request["answer"] = ["questions"]
    assert answered(request)["error"]["message"].endswith("perhaps you meant span.")
