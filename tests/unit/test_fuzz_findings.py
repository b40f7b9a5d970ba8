"""What the fuzz of the files, replies and vectors around the core found (tests/fuzz_surfaces.py),
each as the smallest input that showed it: a traceback, an answer JSON cannot hold, a sentence with
the wrong words, or work the cost guard did not see. Every one is now a response or one sentence.
"""

import argparse
import json

import pytest

from ragsim import fields
from ragsim.errors import RequestError
from ragsim.host.commands import cli_common
from ragsim.host.clients import ask, http_client
from ragsim.wire import chunk_files, cost, jsonio, question_io, state_file
from ragsim.wire.api import simulate, simulate_json
from ragsim.wire.audit import audit
from ragsim.wire.chunk_records import from_chroma, from_row
from ragsim.wire.inspect import inspect

DOC = {"id": "d.md", "title": "", "text": "The fee is 40 dollars. The port opens at nine."}


def refusal(call) -> RequestError:
    with pytest.raises(RequestError) as caught:
        call()
    message = caught.value.message
    assert message == message.strip() and message.endswith((".", ")")), message
    return caught.value


# --- chunk files and docstores ------------------------------------------------------------------------

@pytest.mark.parametrize("metadata", [[1], "x", 3])
def test_a_serialised_node_whose_metadata_is_no_object_keeps_the_rows_own(metadata):
    node = json.dumps({"text": "The fee", "metadata": metadata, "relationships": 2.5})
    chunk = from_row({"_node_content": node, "metadata": {"source": "d.md"}}, "0", candidates=("_node_content",),
                     where="Row 0")
    assert (chunk["text"], chunk["doc"], chunk["metadata"]) == ("The fee", "d.md", {"source": "d.md"})
    chunk = from_chroma("c", "The fee", {"_node_content": node, "source": "d.md"}, where="Chunk c")
    assert (chunk["doc"], chunk["metadata"]) == ("d.md", {"source": "d.md"})


@pytest.mark.parametrize("relationships", [2.5, "1", [1], {"1": "d.md"}])
def test_a_docstore_node_whose_relationships_are_of_another_shape_is_read_without_a_source(relationships):
    store = {"docstore/data": {"n0": {"__type__": "1", "__data__": {"text": "The fee", "relationships": relationships}}}}
    kind, chunks = chunk_files.parse("docstore.json", json.dumps(store))
    assert kind == "llamaindex" and chunks[0]["doc"] == "document"


def test_a_docstore_whose_data_is_no_object_says_so():
    e = refusal(lambda: chunk_files.parse("other.json", json.dumps({"docstore/data": [1]})))
    assert e.message.startswith("other.json's \"docstore/data\" is a JSON list, not the object of nodes")


def test_a_file_without_a_name_is_named_in_words():
    e = refusal(lambda: chunk_files.parse("", "[]"))
    assert e.message.startswith("A file without a name is no chunk file ragsim reads")


@pytest.mark.parametrize("retrieval", [1.5, "bm25", [1]])
def test_inspect_with_a_retrieval_of_another_kind_refuses_it(retrieval):
    r = inspect({"chunks": [{"id": "0", "text": "The fee is 40 dollars.", "doc": "d.md"}], "documents": [DOC],
                 "retrieval": retrieval})
    assert r["error"]["field"].startswith("retrieval"), r


def test_inspect_with_a_question_reference_naming_no_document_leaves_it_out():
    q = {"id": "q", "query": "fee", "references": [{"doc": ["d.md"], "start": 0, "end": 3}]}
    r = inspect({"chunks": [{"id": "0", "text": "The fee is 40 dollars.", "doc": "d.md"}], "documents": [DOC],
                 "questions": [q], "retrieval": {"k": 1}})
    assert "error" in r and r["error"]["field"].startswith("questions")


# --- state files --------------------------------------------------------------------------------------

def state(**extra) -> dict:
    return {"ragsim": "state", "version": 1, "docs": [dict(DOC)], "settings": {"strategy": "window"}, **extra}


@pytest.mark.parametrize("span", [{"doc": {"id": "d.md"}, "start": 0, "end": 3}, {"doc": ["d.md"], "start": 0, "end": 3}])
def test_a_state_files_mark_naming_no_document_is_left_out(span):
    request = state_file.to_request(state(span=span, fact={"doc": [1], "name": span, "value": span},
                                          questions=[{"id": "q", "query": "fee", "refs": [span]}]))
    assert request["span"] is None and request["fact"] is None and "questions" not in request


def test_a_state_files_documents_need_text_ids():
    s = state()
    s["docs"][0]["id"] = ["d.md"]
    assert refusal(lambda: state_file.to_request(s)).field == "docs"


@pytest.mark.parametrize("value", ["[", "[" * 5000])
def test_a_state_files_setting_that_is_not_json_text_is_named(value):
    s = state(settings={"strategy": "langchain-recursive", "separators": value})
    e = refusal(lambda: state_file.to_request(s))
    assert e.field == "settings.separators" and "not the JSON text the page writes" in e.message


# --- --chunking and the audit ---------------------------------------------------------------------------

def test_a_chunking_argument_nested_past_the_parser_is_one_sentence():
    with pytest.raises(ValueError, match=r"^--chunking is nested too deeply to be a chunking object"):
        cli_common.read_chunking(argparse.Namespace(chunking="[" * 5000, chunking_file=None))


def test_a_value_nested_deeper_than_repr_goes_is_shown_by_its_kind():
    # the parser reads a little deeper than repr shows, so a --chunking array 900 deep, refused as no
    # object, failed to be quoted (found under pytest's deeper stack)
    value = []
    for _ in range(5000):
        value = [value]
    assert fields.shown(value) == "a list nested too deeply to show"


def test_a_chunking_field_nested_deeper_than_the_encoder_goes_is_refused_by_its_splitter():
    value = []
    for _ in range(5000):
        value = [value]
    r = audit({"documents": [DOC], "chunking": {"strategy": value, "size": 5}, "overlaps": [0]})
    assert r["rows"][0]["error"].endswith("(got a list nested too deeply to show).")


@pytest.mark.parametrize("strategy", [["window"], {"a": 1}])
def test_the_audit_refuses_a_strategy_that_is_no_name_at_each_overlap(strategy):
    r = audit({"documents": [DOC], "chunking": {"strategy": strategy, "size": 5}, "overlaps": [0, 1]})
    assert [row["error"][:34] for row in r["rows"]] == ["chunking.strategy must be one of w"] * 2, r


# --- question files -----------------------------------------------------------------------------------

def test_a_chroma_csv_with_references_nested_past_the_parser_names_the_row():
    text = "question,references,corpus_id\nfee," + "[" * 5000 + ",d.md\n"
    e = refusal(lambda: question_io.read_set(text, [DOC], "csv"))
    assert e.field == "question 1 (line 2)" and "nested too deeply" in e.message


def test_question_files_nested_past_the_parser_where_a_format_is_guessed_or_a_cell_read_are_one_sentence():
    e = refusal(lambda: question_io.read_set("[" * 5000 + "\n{}\n", [DOC]))  # JSON Lines or JSON? neither
    assert e.message == "The question set is nested too deeply to read."
    text = "question,answer,reference_contexts\nfee,40," + "[" * 5000 + "\n"  # a cell read as one passage
    e = refusal(lambda: question_io.read_set(text, [DOC], "csv"))
    assert "is in none of the documents" in e.message


def test_a_finetune_dataset_whose_relevant_nodes_are_not_ids_names_the_question():
    data = {"queries": {"q": "fee"}, "corpus": {"n": "The fee is 40 dollars."}, "relevant_docs": {"q": [{"n": 1}]}}
    e = refusal(lambda: question_io.read_set(json.dumps(data), [DOC], "json"))
    assert "reference_contexts must be a list of passages" in e.message


# --- model replies ------------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [200, 500])
def test_a_model_reply_nested_past_the_parser_is_one_sentence(monkeypatch, status):
    body = b"[" * 100_000 + b"]" * 100_000
    monkeypatch.setattr(http_client, "fetch", lambda url, **_: http_client.Reply(status, "R", None, body))
    with pytest.raises(ask.AskError) as caught:
        ask.complete("http://127.0.0.1:9/v1", "m", [{"role": "user", "content": "q"}])
    assert "\n" not in str(caught.value) and str(caught.value).endswith((".", ")", "…", "]"))


# --- the page's embedding vectors ---------------------------------------------------------------------

def semantic_request(chunking: dict, vectors=None) -> dict:
    request = {"documents": [{"id": "d", "title": "", "text": "One fact here. Another one there. A third one."}],
               "query": "fact", "chunking": chunking, "retrieval": {"k": 1}}
    if vectors is not None:
        request["semantic_vectors"] = vectors
    return request


@pytest.fixture
def no_embedder(monkeypatch):
    from ragsim.split import semantic_split

    monkeypatch.setattr(semantic_split, "HOSTS", [])


def needs(chunking: dict) -> dict:
    return simulate(semantic_request(chunking))["semantic_needs"][0]


def test_zero_vectors_under_llamaindexs_cosine_answer_null_distances_in_json(no_embedder):
    chunking = {"strategy": "llamaindex-semantic"}
    need = needs(chunking)
    request = semantic_request(chunking, [{"key": need["key"], "vectors": [[0.0, 0.0]] * need["count"]}])
    r = simulate(request)
    assert r["documents"][0]["semantic"]["distances"] == [None] * (need["count"] - 1)
    assert json.loads(simulate_json(jsonio.dumps(request)))["documents"][0]["semantic"]["threshold"] is None


def test_vectors_too_small_to_have_a_length_under_llamaindexs_cosine_answer_no_infinite_threshold(no_embedder):
    chunking = {"strategy": "llamaindex-semantic"}
    need = needs(chunking)
    vectors = [[5e-324, 5e-324]] + [[1.0, 0.5]] * (need["count"] - 1)  # a norm of 0, a dot product that is not
    request = semantic_request(chunking, [{"key": need["key"], "vectors": vectors}])
    semantic = json.loads(simulate_json(jsonio.dumps(request)))["documents"][0]["semantic"]
    assert semantic["threshold"] is None and semantic["distances"][0] is None


@pytest.mark.parametrize("value", [1e308, -1e39, 10**400])
def test_vectors_past_float32s_range_are_refused(no_embedder, value):
    chunking = {"strategy": "langchain-semantic"}
    need = needs(chunking)
    r = simulate(semantic_request(chunking, [{"key": need["key"], "vectors": [[value, 1.0]] * need["count"]}]))
    assert r["error"]["field"] == "semantic_vectors[0].vectors" and "float32" in r["error"]["message"]


def test_the_cost_guard_sees_chromas_cluster_search():
    text = {"id": "d", "title": "", "text": "Σ one fact, then another. " * 40}  # 1,040 characters, not ASCII
    few = cost.work([text], {"strategy": "chroma-cluster"})
    many = cost.work([text], {"strategy": "chroma-cluster", "min_chunk_size": 1})
    assert few.seconds < 1 and many.seconds > 30 and many.largest().field == "chunking.min_chunk_size"
    r = simulate({"documents": [text], "query": "fact", "chunking": {"strategy": "chroma-cluster", "min_chunk_size": 1},
                  "retrieval": {"k": 1}})
    assert r["error"]["field"] == "chunking.min_chunk_size" and "pieces clustered" in r["error"]["message"]
