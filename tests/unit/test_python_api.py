"""The Python API (docs/python.md): each call gives the JSON its command prints for the same input,
takes the objects a notebook holds (a real LangChain splitter and Documents, a LlamaIndex splitter,
nodes and index, a real Chroma vector store), draws its picture as escaped inline HTML, refuses an
object it does not know in one sentence raised from the call itself, and needs nothing imported first
for dense retrieval, exact tokens and PDFs."""

import io
import json
import pathlib
import subprocess
import sys
import traceback

import pytest

import ragsim
from helpers import cli_env
from pdf_maker import make_pdf

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARBOUR = "examples/harbour.md"
TEXT = (ROOT / HARBOUR).read_text(encoding="utf-8")
PILOT = "The pilot boat leaves the\nnorth quay at nine in the morning and again at four in the afternoon."
QUERY = "When does the pilot boat leave?"


@pytest.fixture(autouse=True)
def _from_the_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples' paths are relative, as the commands take them


@pytest.fixture
def tiktoken_files(monkeypatch):
    """tiktoken's cl100k_base from LlamaIndex's own cache (no network), for the libraries' token splitters."""
    import importlib.util

    package = pathlib.Path(importlib.util.find_spec("llama_index.core").origin).parent  # found, not imported
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(package / "_static" / "tiktoken_cache"))


@pytest.fixture
def cli(capsys, monkeypatch):
    """`python -m ragsim ARGS` run in this process (its `main`, as the console script runs it): what
    it prints on stdout, as JSON; `stdin` is what it reads there."""
    from ragsim.__main__ import main

    def run(*args, stdin: str = "") -> dict:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8"))))
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        assert code == 0, out.err
        return json.loads(out.out)

    return run


def plain(result) -> dict:
    return json.loads(json.dumps(result.to_dict()))


# --- plain values: the same JSON as the command line ----------------------------------------------

@pytest.mark.slow
def test_import_ragsim_loads_nothing_above_the_core_until_a_call_is_named():
    code = ("import sys, ragsim; a = [m in sys.modules for m in ('ragsim.pyapi', 'ragsim.host')]; ragsim.simulate; "
            "print(a, 'ragsim.pyapi' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.stdout.strip() == "[False, False] True", out.stderr


def test_simulate_gives_the_response_of_python_m_ragsim(cli):
    r = ragsim.simulate(HARBOUR, QUERY, PILOT, unit="words", size=40, overlap=10, k=2)
    at = TEXT.index(PILOT)
    request = {"documents": [{"id": HARBOUR, "title": "harbour.md", "text": TEXT}], "query": QUERY,
               "chunking": {"strategy": "window", "unit": "words", "size": 40, "overlap": 10}, "retrieval": {"k": 2},
               "span": {"doc": HARBOUR, "start": at, "end": at + len(PILOT)}}
    assert plain(r) == cli(stdin=json.dumps(request))
    assert r.verdict == r["verdict"]["kind"] == "intact"
    assert repr(r).startswith("Present and intact: Chunk ")


def test_simulate_defaults_are_the_commands_and_a_cut_answer_says_which_chunks():
    r = ragsim.simulate(TEXT, QUERY, PILOT, size=250, k=1)
    assert r["stats"]["unit"] == "chars" and r["stats"]["k"] == 1
    assert r.verdict == "cut"
    assert "Cut in half: No chunk holds the whole sentence: it is split across chunks 1 and 2" in repr(r)


def test_evaluate_gives_what_eval_json_prints(cli):
    e = ragsim.evaluate(HARBOUR, "examples/questions.json", unit="words", size=40, overlap=10, k=2)
    assert plain(e) == cli("eval", HARBOUR, "--questions", "examples/questions.json", "--unit", "words",
                                "--size", "40", "--overlap", "10", "--k", "2", "--json")
    assert repr(e).splitlines()[-2].startswith("6 questions at window size 40 words overlap 10, k 2:")


def test_evaluate_takes_questions_as_dicts_with_their_answers_text():
    asked = json.loads((ROOT / "examples/questions.json").read_text(encoding="utf-8"))["questions"]
    listed = [{"id": q["id"], "query": q["query"], "answer": [r["content"] for r in q["references"]]} for q in asked]
    by_text = ragsim.evaluate(HARBOUR, listed, size=300, overlap=50)
    by_file = ragsim.evaluate(HARBOUR, "examples/questions.json", size=300, overlap=50)
    assert by_text.to_dict() == by_file.to_dict()


@pytest.mark.slow
def test_evaluate_map_is_the_commands_map(cli):
    e = ragsim.evaluate(HARBOUR, "examples/questions.json", unit="words", size=40, k=2, map_sizes=[20, 40],
                        map_overlaps=[0, 10])
    cli = cli("eval", HARBOUR, "--questions", "examples/questions.json", "--unit", "words", "--size", "40",
                   "--k", "2", "--map-sizes", "20,40", "--map-overlaps", "0,10", "--json")
    assert plain(e) == cli and len(cli["map"]["cells"]) == 2


def test_audit_gives_what_audit_json_prints(cli):
    a = ragsim.audit(HARBOUR, unit="words", size=40, overlaps=[0, 10])
    assert plain(a) == cli("audit", HARBOUR, "--unit", "words", "--size", "40", "--overlaps", "0,10", "--json")
    assert "Destroyed facts (1)" in repr(a)


def test_inspect_gives_what_inspect_json_prints(cli):
    i = ragsim.inspect("examples/chunks.jsonl", sources=HARBOUR, phrases=["closes the entrance"])
    assert plain(i) == cli("inspect", "examples/chunks.jsonl", "--source", HARBOUR, "--phrase", "closes the entrance", "--json")
    assert "RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=50)" in repr(i)


# --- the objects a notebook holds -----------------------------------------------------------------

def test_a_langchain_splitter_and_documents():
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    docs = [Document(page_content=TEXT, metadata={"source": HARBOUR})]
    splitter = RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=50, add_start_index=True)
    chunks = splitter.split_documents(docs)
    r = ragsim.simulate(docs, QUERY, PILOT, splitter=splitter, k=2)
    assert [(c["doc"], c["start"], c["end"]) for c in r["chunks"]] == [
        (HARBOUR, c.metadata["start_index"], c.metadata["start_index"] + len(c.page_content)) for c in chunks]
    assert r.to_dict() == ragsim.simulate(HARBOUR, QUERY, PILOT, strategy="langchain-recursive", size=200,
                                          overlap=50, k=2).to_dict()
    i = ragsim.inspect(chunks, sources=docs, splitter=splitter)
    assert i["splitter"][0]["reproduced"] == len(chunks) and i["compared"]["same"] is True


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    lambda m: m.MarkdownTextSplitter(chunk_size=300, chunk_overlap=30),
    lambda m: m.CharacterTextSplitter(separator="\n", chunk_size=150, chunk_overlap=20),
    lambda m: m.TokenTextSplitter(encoding_name="cl100k_base", chunk_size=50, chunk_overlap=5),
    lambda m: m.RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base", chunk_size=60,
                                                                     chunk_overlap=10),
], ids=["markdown", "character", "token", "tiktoken-length"])
def test_each_langchain_splitter_is_read_with_its_settings(make, tiktoken_files):
    import langchain_text_splitters

    def words(texts):  # a CharacterTextSplitter re-joins its pieces: only what stood between them differs
        return [" ".join(t.split()) for t in texts]

    splitter = make(langchain_text_splitters)
    r = ragsim.simulate(TEXT, "pilot", splitter=splitter)
    assert words(TEXT[c["start"]:c["end"]] for c in r["chunks"]) == words(splitter.split_text(TEXT))


@pytest.mark.slow
def test_a_llamaindex_splitter_nodes_and_index(tmp_path, tiktoken_files):
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.node_parser import SentenceSplitter

    doc = Document(text=TEXT, metadata={"file_name": "harbour.md"})
    splitter = SentenceSplitter(chunk_size=64, chunk_overlap=8)
    r = ragsim.simulate(doc, "pilot", splitter=splitter)
    assert [TEXT[c["start"]:c["end"]] for c in r["chunks"]] == splitter.split_text(TEXT)
    nodes = splitter.get_nodes_from_documents([doc])
    from_nodes = ragsim.inspect(nodes, sources=[doc])
    assert [c["placement"] for c in from_nodes["chunks"]] == ["offsets"] * len(nodes)
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    index.storage_context.persist(str(tmp_path))
    in_memory = plain(ragsim.inspect(index, sources=[doc]))
    on_disk = plain(ragsim.inspect(f"llamaindex:{tmp_path}", sources=[doc]))
    assert in_memory["store"] == {**on_disk["store"], "path": None}
    assert {**in_memory, "store": None} == {**on_disk, "store": None}
    assert plain(ragsim.inspect(index.storage_context, sources=[doc])) == in_memory


@pytest.mark.slow
def test_a_chroma_vector_store_reads_as_the_command_line_reads_its_folder(tmp_path, cli):
    from langchain_chroma import Chroma
    from langchain_core.documents import Document
    from langchain_core.embeddings import FakeEmbeddings
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=50, add_start_index=True)
    chunks = splitter.split_documents([Document(page_content=TEXT, metadata={"source": HARBOUR})])
    store = Chroma.from_documents(chunks, FakeEmbeddings(size=8), persist_directory=str(tmp_path),
                                  collection_name="harbour")
    i = ragsim.inspect(store, sources=HARBOUR, phrases=["closes the entrance"])
    assert plain(i) == cli("inspect", f"chroma:{tmp_path}", "--source", HARBOUR, "--phrase", "closes the entrance", "--json")
    assert i["store"]["kind"] == "chroma" and i["splitter"][0]["reproduced"] == len(chunks)
    assert plain(ragsim.inspect(store._collection, sources=HARBOUR, phrases=["closes the entrance"])) == plain(i)
    memory = ragsim.inspect(InMemoryVectorStore.from_documents(chunks, FakeEmbeddings(size=8)), sources=HARBOUR)
    assert memory["store"]["kind"] == "langchain-inmemory" and memory["splitter"] == i["splitter"]


@pytest.mark.slow
def test_a_langchain_faiss_store_in_memory_reads_as_its_saved_folder(tmp_path):
    from langchain_community.vectorstores import FAISS
    from langchain_core.documents import Document
    from langchain_core.embeddings import FakeEmbeddings
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=50, add_start_index=True)
    store = FAISS.from_documents(splitter.split_documents([Document(page_content=TEXT, metadata={"source": HARBOUR})]),
                                 FakeEmbeddings(size=8))
    store.save_local(str(tmp_path))
    in_memory, saved = (plain(ragsim.inspect(s, sources=HARBOUR)) for s in (store, f"faiss:{tmp_path}"))
    assert in_memory["store"] == {"kind": "faiss", "path": None, "collection": None, "chunks": 16}
    assert {**in_memory, "store": None} == {**saved, "store": None}


# --- the pictures, and bad input ------------------------------------------------------------------

HOSTILE = "<script>alert('x')</script>"


def test_the_html_draws_the_verdict_and_the_picture_and_escapes_every_text():
    text = f"{HOSTILE} The pilot boat leaves at nine. {HOSTILE} Fog closes the harbour."
    docs = [{"id": HOSTILE, "title": HOSTILE, "text": text}]
    shown = [ragsim.simulate(docs, HOSTILE, "The pilot boat leaves at nine.", unit="words", size=4, overlap=1, k=1),
             ragsim.evaluate(docs, [{"id": HOSTILE, "query": HOSTILE, "answer": "leaves at nine"}], unit="words", size=4),
             ragsim.inspect([{"text": text, "metadata": {"source": HOSTILE}}], phrases=[HOSTILE])]
    for result in shown:
        html = result._repr_html_()
        assert "<script" not in html.lower() and "&lt;script&gt;" in html
        assert "<svg" in html and "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "Cut in half" in shown[0]._repr_html_() and shown[0].verdict == "cut"


class Unknown:
    pass


def _own_splitter():
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    class Mine(RecursiveCharacterTextSplitter):
        def split_text(self, text):
            return [text]

    return Mine()


@pytest.mark.parametrize("call, expected", [
    (lambda: ragsim.simulate(Unknown(), "q"), "documents is a test_python_api.Unknown; ragsim takes a text"),
    (lambda: ragsim.simulate(TEXT, "q", splitter=Unknown()), "splitter is a test_python_api.Unknown, which ragsim"),
    (lambda: ragsim.simulate(TEXT, "q", splitter=_own_splitter()), "a RecursiveCharacterTextSplitter whose subclass Mine splits text its own way"),
    (lambda: ragsim.inspect(Unknown()), "store is a test_python_api.Unknown; ragsim reads a store's path"),
    (lambda: ragsim.evaluate(TEXT, 42), "questions is an int; give a list of questions"),
    (lambda: ragsim.simulate(TEXT, "q", "not in the text"), "answer 'not in the text' is in none of the documents"),
    (lambda: ragsim.simulate("missing.md", "q"), "missing.md does not exist"),
    (lambda: ragsim.simulate(TEXT, "q", size=0), "chunking.size"),
    (lambda: ragsim.inspect("examples/chunks.jsonl", questions=[{"query": "q", "answer": "pilot"}]),
     "an answer given as text is found in the sources: give sources="),
    (lambda: ragsim.inspect([{"text": "a chunk"}], collection="c"), "collection names a collection of a store's path"),
], ids=["documents", "splitter", "own-split", "store", "questions", "answer", "path", "core", "no-sources",
        "collection"])
def test_bad_input_is_one_sentence_raised_from_the_call(call, expected):
    with pytest.raises(ragsim.RequestError) as caught:
        call()
    message = caught.value.message
    assert expected in str(caught.value)
    assert "\n" not in message and message.endswith(".") and len(message) <= 400
    frames = [pathlib.Path(f.filename).name for f in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-1] == "calls.py" and set(frames[:-1]) == {"test_python_api.py"}  # no frame from deeper inside


@pytest.mark.slow
def test_dense_exact_tokens_and_pdfs_need_nothing_imported_first(tmp_path):
    pdf = tmp_path / "harbour.pdf"
    pdf.write_bytes(make_pdf([["The pilot boat leaves the north quay at nine.", "Fog closes the harbour."],
                              ["Cargo is weighed on the North Quay."]]))
    code = ("import ragsim, sys; r = ragsim.simulate(sys.argv[1], 'when does the pilot boat leave', "
            "'The pilot boat leaves', size=200, method='dense', tokenizer='cl100k_base'); "
            "print(r.verdict, r['stats']['tokenizer'], [d['id'] for d in r['documents']])")
    out = subprocess.run([sys.executable, "-c", code, str(pdf)], capture_output=True, text=True, env=cli_env(),
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == ["intact", "cl100k_base"] and f"{pdf}#page=2" in out.stdout


def test_the_examples_of_docs_python_md_give_what_it_shows():
    import doctest

    got = doctest.testfile(str(ROOT / "docs" / "python.md"), module_relative=False, verbose=False,
                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert got.failed == 0 and got.attempted >= 20


# --- the notebook ---------------------------------------------------------------------------------

NOTEBOOK = ROOT / "examples" / "python_api.ipynb"
RERUN = ".venv/bin/python tools/run_notebook.py"


def text_outputs(nb) -> list[str]:
    return [o["data"]["text/plain"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "text/plain" in o.get("data", {})]


@pytest.mark.slow
def test_the_notebook_runs_as_jupyter_runs_it_and_shows_what_it_holds(monkeypatch):
    """examples/python_api.ipynb executed by a Jupyter kernel (nbclient) from its folder: every cell
    runs, the pictures come as HTML with their verdicts, the values are right, and the outputs kept in
    the file (what GitHub shows) are the ones it gives now."""
    import nbclient
    import nbformat

    monkeypatch.setenv("PYTHONPATH", str(ROOT / "py"))  # the kernel imports this checkout's core
    kept = nbformat.read(NOTEBOOK, as_version=4)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    html = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "text/html" in o.get("data", {})]
    assert len(html) == 6 and all("<svg" in h and "<script" not in h for h in html[:2])
    assert "Cut in half" in html[0] and "Present and intact" in html[1]
    values = text_outputs(nb)
    assert "('cut', 7)" in values and "(5, 1)" in values
    assert "'LangChain RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=50): 16 of 16 chunks exactly'" in values
    assert text_outputs(kept) == values, f"the notebook's kept outputs are out of date: {RERUN}"
