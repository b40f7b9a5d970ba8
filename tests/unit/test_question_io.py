"""Question sets in and out: our JSON and the CSV of Chroma's chunking_evaluation, strict and skipping."""

import csv
import io
import json

import pytest

from ragsim.errors import RequestError
from ragsim.wire.question_io import export_questions, find_corpus, import_questions, import_questions_json, read_set, write_csv, write_json

SOTU = "Good evening. The racial wealth gap is the smallest it has been in 20 years. Thank you."
OTHER = "Fifteen million new jobs in just three years."
DOCS = [{"id": "corpora/state_of_the_union.md", "title": "state_of_the_union.md", "text": SOTU},
        {"id": "jobs", "title": "Jobs report", "text": OTHER}]
GAP = (SOTU.index("The racial"), SOTU.index("years.") + 6)


def chroma_csv(rows) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["question", "references", "corpus_id"])
    for question, refs, corpus in rows:
        w.writerow([question, json.dumps(refs), corpus])
    return out.getvalue()


def ref(text, a, b, content=None):
    return {"content": text[a:b] if content is None else content, "start_index": a, "end_index": b}


def test_chroma_csv_reads_with_corpus_id_as_stem_and_multi_span_references():
    text = chroma_csv([
        ("How much has the racial wealth gap decreased?", [ref(SOTU, *GAP)], "state_of_the_union"),
        ("Jobs and thanks?", [ref(SOTU, 0, 13), ref(SOTU, SOTU.index("Thank"), len(SOTU))], "state_of_the_union.md"),
        ("How many jobs?", [ref(OTHER, 0, 24)], "jobs"),
    ])
    questions, problems = read_set(text, DOCS)
    assert problems == []
    assert [q.id for q in questions] == ["1", "2", "3"]  # numbered as the page numbers them
    assert questions[0].refs == ((0, *GAP),) and questions[0].query.startswith("How much")
    assert questions[1].refs == ((0, 0, 13), (0, SOTU.index("Thank"), len(SOTU)))
    assert questions[2].refs == ((1, 0, 24),)


@pytest.mark.parametrize("corpus_id, found", [
    ("jobs", 1), ("Jobs report", 1), ("corpora/state_of_the_union.md", 0), ("state_of_the_union.md", 0),
    ("state_of_the_union", 0), ("other/dir/state_of_the_union.md", 0), ("C:\\data\\state_of_the_union.md", 0),
])
def test_corpus_id_names_a_document_by_id_title_name_stem_or_path(corpus_id, found):
    assert find_corpus(DOCS, corpus_id, "row 2") == found


def test_corpus_id_that_fits_two_documents_or_none_is_refused():
    docs = [{"id": "a/x.md", "title": "", "text": "t"}, {"id": "b/x.md", "title": "", "text": "t"}]
    with pytest.raises(RequestError, match="fits 2 documents"):
        find_corpus(docs, "x", "row 2")
    with pytest.raises(RequestError, match="names no document"):
        find_corpus(DOCS, "budget", "row 2")


BAD_ROWS = chroma_csv([
    ("good", [ref(SOTU, *GAP)], "state_of_the_union"),
    ("moved excerpt", [ref(SOTU, GAP[0] + 1, GAP[1] + 1, content=SOTU[GAP[0]:GAP[1]])], "state_of_the_union"),
    ("no document", [ref(SOTU, 0, 4)], "budget"),
    ("no references", [], "jobs"),
    ("outside", [ref(OTHER, 10, 400, content="")], "jobs"),
    ("also good", [ref(OTHER, 0, 24)], "jobs"),
])


def test_strict_mode_stops_at_the_first_bad_row_naming_it():
    with pytest.raises(RequestError) as e:
        read_set(BAD_ROWS, DOCS)
    assert e.value.field == "question 2 (line 3)" and "is not the text at" in e.value.message
    assert e.value.message.startswith("question 2 (line 3)")


def test_skip_mode_keeps_the_good_rows_and_names_each_bad_one():
    questions, problems = read_set(BAD_ROWS, DOCS, mode="skip")
    assert [q.query for q in questions] == ["good", "also good"]
    assert [p["row"] for p in problems] == [2, 3, 4, 5]
    for p, words in zip(problems, ["is not the text at", "names no document", "no references", "outside its document"]):
        assert words in p["message"] and p["message"].startswith(f"question {p['row']} (line {p['row'] + 1})")


@pytest.mark.parametrize("text, words", [
    ("question,refs\nx,[]\n", "needs the columns question, references and corpus_id, or a question"),
    ('{"questions": [', "not valid JSON"),
    ('{"questions": 3}', '{"questions": ['),
    ("question,references,corpus_id\nq,not json,jobs\n", "references is not a JSON list"),
])
def test_unreadable_sets_are_refused_in_both_modes(text, words):
    for mode in ("strict", "skip"):
        with pytest.raises(RequestError) as e:
            read_set(text, DOCS, mode=mode)
        assert words in e.value.message


def test_a_set_with_no_usable_row_is_refused_even_when_skipping():
    text = chroma_csv([("no document", [ref(SOTU, 0, 4)], "budget")])
    with pytest.raises(RequestError, match="no usable question"):
        read_set(text, DOCS, mode="skip")


def test_json_and_csv_round_trip():
    ours = json.dumps({"questions": [
        {"id": "gap", "query": "wealth gap?", "references": [{"doc": "corpora/state_of_the_union.md", "start": GAP[0], "end": GAP[1]}]},
        {"id": "jobs", "query": "jobs?", "references": [{"doc": "jobs", "start": 0, "end": 24}]},
    ]})
    questions, _ = read_set(ours, DOCS)
    assert read_set(write_json(questions, DOCS), DOCS)[0] == questions
    again, _ = read_set(write_csv(questions, DOCS), DOCS)
    assert [(q.query, q.refs) for q in again] == [(q.query, q.refs) for q in questions]
    row = list(csv.DictReader(io.StringIO(write_csv(questions, DOCS))))[0]
    assert json.loads(row["references"]) == [{"content": SOTU[GAP[0]:GAP[1]], "start_index": GAP[0], "end_index": GAP[1]}]


def test_csv_export_refuses_a_question_spanning_two_documents():
    two = json.dumps([{"id": "both", "query": "?", "references": [
        {"doc": "jobs", "start": 0, "end": 7}, {"doc": "corpora/state_of_the_union.md", "start": 0, "end": 4}]}])
    questions, _ = read_set(two, DOCS)
    with pytest.raises(RequestError, match="references in 2 documents"):
        write_csv(questions, DOCS)


def test_duplicate_ids_in_json_are_named():
    dup = json.dumps([{"id": "a", "references": [{"doc": "jobs", "start": 0, "end": 7}]},
                      {"id": "a", "references": [{"doc": "jobs", "start": 8, "end": 15}]}])
    with pytest.raises(RequestError, match="'a' is the id of questions 1 and 2"):
        read_set(dup, DOCS)
    assert len(read_set(dup, DOCS, mode="skip")[0]) == 1


def test_the_page_entries_skip_and_report_and_export():
    answer = import_questions({"text": BAD_ROWS, "documents": DOCS})
    assert [q["query"] for q in answer["questions"]] == ["good", "also good"]
    assert answer["questions"][0]["references"][0]["content"] == SOTU[GAP[0]:GAP[1]]
    assert [s["row"] for s in answer["skipped"]] == [2, 3, 4, 5]
    assert json.loads(import_questions_json(json.dumps({"text": "a,b\n", "documents": DOCS})))["error"]["field"] == "questions"
    assert json.loads(import_questions_json("{oops"))["error"]["field"] == "request"
    text = export_questions({"questions": answer["questions"], "documents": DOCS, "format": "csv"})["text"]
    assert text.splitlines()[0] == "question,references,corpus_id" and len(text.splitlines()) == 3
    assert export_questions({"questions": [], "documents": DOCS})["error"]["field"] == "questions"


# --- answers given as text (RAGAS, LlamaIndex, question and answer) -------------------------------------

NEPTUNE = ("The three main rings are the narrow Adams Ring, 63,000 km from the centre of Neptune, the Le Verrier Ring,\n"
           "at 53,000 km, and the broader, fainter Galle Ring, at 42,000 km. The Adams Ring has five arcs.")
NDOCS = [{"id": "neptune.md", "title": "neptune.md", "text": NEPTUNE}, DOCS[1]]
AT = NEPTUNE.index("Le Verrier Ring,\nat 53,000 km")


def places(questions):
    return [[(NDOCS[d]["id"], s, e) for d, s, e in q.refs] for q in questions]


@pytest.mark.parametrize("text, fmt", [
    # RAGAS EvaluationDataset.to_jsonl: a sample a line, the fields it writes
    ("\n".join(json.dumps(s) for s in [
        {"user_input": "How far out is the Le Verrier Ring?", "retrieved_contexts": ["unrelated"], "reference_contexts": None,
         "response": "about 53,000 km", "reference": "Le Verrier Ring, at 53,000 km"},
        {"user_input": "Which ring is the broader one?", "reference": "Galle Ring"}]), "auto"),
    # the same as a JSON list (EvaluationDataset.to_list), with the passage instead of the answer
    (json.dumps([{"user_input": "How far out is the Le Verrier Ring?", "reference": "53 thousand km",
                  "reference_contexts": ["the Le Verrier Ring, at 53,000 km"]},
                 {"user_input": "Which ring is the broader one?", "reference": "Galle Ring"}]), "json"),
    # RAGAS to_csv (pandas writes a list column as its Python repr)
    ('user_input,reference_contexts,reference\n"How far out is the Le Verrier Ring?","[\'Le Verrier Ring, at 53,000 km\']",x\n'
     '"Which ring is the broader one?",,Galle Ring\n', "csv"),
    # a CSV of question,answer
    ("question,answer\nHow far out is the Le Verrier Ring?,\"Le Verrier Ring, at 53,000 km\"\n"
     "Which ring is the broader one?,Galle Ring\n", "auto"),
])
def test_answers_given_as_text_are_placed_where_the_document_writes_them(text, fmt):
    questions, problems = read_set(text, NDOCS, fmt)
    assert problems == [] and [q.query for q in questions] == ["How far out is the Le Verrier Ring?",
                                                                "Which ring is the broader one?"]
    (le_verrier,), (galle,) = places(questions)
    assert le_verrier[0] == "neptune.md" and NEPTUNE[le_verrier[1]:le_verrier[2]].split()[-2:] == ["53,000", "km"]
    assert le_verrier[1] >= AT - 4 and NEPTUNE[galle[1]:galle[2]] == "Galle Ring"  # across the line break


def test_llamaindexs_two_dataset_files_are_read_as_they_are_saved():
    labelled = {"examples": [{"query": "How far out is the Galle Ring?", "query_by": {"model_name": "gpt-4", "type": "ai"},
                              "reference_contexts": ["the broader, fainter Galle Ring, at 42,000 km."],
                              "reference_answer": "42,000 km", "reference_answer_by": None}]}
    finetune = {"queries": {"q-1": "How far out is the Galle Ring?"},
                "corpus": {"node-7": "fainter Galle Ring, at 42,000 km. The Adams"}, "relevant_docs": {"q-1": ["node-7"]},
                "mode": "text"}
    (a,), _ = read_set(json.dumps(labelled), NDOCS)
    (b,), _ = read_set(json.dumps(finetune), NDOCS)
    assert NEPTUNE[a.refs[0][1]:a.refs[0][2]] == "the broader, fainter Galle Ring, at 42,000 km."
    assert b.id == "q-1" and NEPTUNE[b.refs[0][1]:b.refs[0][2]] == "fainter Galle Ring, at 42,000 km. The Adams"


def test_an_answer_in_several_places_needs_a_hint_or_every_occurrence():
    item = {"query": "Which ring has arcs?", "answer": "Adams Ring"}
    with pytest.raises(RequestError) as e:
        read_set(json.dumps([item]), NDOCS)
    assert e.value.message == (f"questions[0]: the answer 'Adams Ring' occurs 2 times ('neptune.md' at 36, 'neptune.md' at "
                               f"{NEPTUNE.rindex('Adams Ring')}); give a hint (text near the right one), or take every "
                               "occurrence.")
    (q,), _ = read_set(json.dumps([{**item, "hint": "five arcs"}]), NDOCS)
    assert [s for _, s, _ in q.refs] == [NEPTUNE.rindex("Adams Ring")]
    (q,), _ = read_set(json.dumps([item]), NDOCS, every=True)
    assert len(q.refs) == 2
    assert read_set(json.dumps([{"query": "x", "answer": "Adams"}]), NDOCS, every=True)[0][0].refs[0][1] == 36


@pytest.mark.parametrize("item, said", [
    ({"query": "x", "answer": "a paraphrase of the answer"}, "is in none of the documents; give the words as the document"),
    ({"query": "x", "answer": "Ring", "hint": "Jupiter"}, "the hint 'Jupiter' is in none of the documents"),
    ({"query": "x", "answer": "Galle", "doc": "jobs"}, "is in none of the documents"),  # not in the document named
    ({"query": "x", "reference_contexts": [3]}, "must be a list of passages"),
    ({"query": "x", "answer": "ring"}, "is in none of the documents"),  # case kept; not inside "rings"
])
def test_an_answer_that_cannot_be_placed_is_one_sentence(item, said):
    with pytest.raises(RequestError) as e:
        read_set(json.dumps([item]), NDOCS)
    assert e.value.field == "questions[0]" and said in e.value.message and e.value.message.count(". ") <= 1


def test_the_page_imports_answer_text_keeping_the_rows_it_can_place():
    text = "question,answer\nWhere?,Galle Ring\nWhat?,not written anywhere\nWhich?,Adams Ring\n"
    out = import_questions({"text": text, "documents": NDOCS})
    assert [q["query"] for q in out["questions"]] == ["Where?"]
    assert [(p["row"], "none of the documents" in p["message"] or "occurs 2 times" in p["message"]) for p in out["skipped"]] \
        == [(2, True), (3, True)]
    every = import_questions({"text": text, "documents": NDOCS, "every_occurrence": True})
    assert [q["query"] for q in every["questions"]] == ["Where?", "Which?"]
