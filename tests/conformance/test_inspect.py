"""`python -m ragsim inspect` and `export` (SPEC section 11) on stores the real libraries build
here: LangChain's RecursiveCharacterTextSplitter(1000, 200, add_start_index=True) into langchain-chroma,
LlamaIndex's SentenceSplitter with StorageContext.persist(); and every bad input, one line, exit 2."""

import csv
import io
import json
from pathlib import Path

import pytest

from ragsim.judge.facts import detect

from corpus import TEXTS, TEXTS_DIR
from helpers import cli_env, run_cli
from store_helpers import HashEmbeddings, offline_chroma_model

from langchain_chroma import Chroma
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragsim.__main__ import main
from ragsim.wire import chunk_records
from ragsim.wire.api import simulate
from ragsim.wire.question_io import read_set, to_request

pytestmark = pytest.mark.slow  # real Chroma stores and the command line

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("pydoc_topics.txt", "prose.txt")  # CPython's own documentation text, and a conformance text
LINE = "LangChain RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)"


def texts() -> dict[str, str]:
    return {"pydoc_topics.txt": TEXTS["pydoc_topics"], "prose.txt": (TEXTS_DIR / "prose.txt").read_text()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A Chroma directory of LangChain's chunks of two real texts, the texts as files, a phrase cut by
    a boundary, and a question set (Chroma's CSV) with a question on that phrase."""
    root = tmp_path_factory.mktemp("inspect")
    sources = {}
    for name, text in texts().items():
        sources[name] = root / name
        sources[name].write_bytes(text.encode("utf-8"))
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200, add_start_index=True)
    docs = splitter.split_documents([Document(page_content=t, metadata={"source": n}) for n, t in texts().items()])
    ids = [f"c{i:03d}" for i in range(len(docs))]
    Chroma(collection_name="topics", embedding_function=HashEmbeddings(),
           persist_directory=str(root / "db")).add_documents(docs, ids=ids)
    text = texts()["pydoc_topics.txt"]
    mine = [(i, d) for i, d in zip(ids, docs) if d.metadata["source"] == "pydoc_topics.txt"]
    for (pid, p), (nid, n) in zip(mine, mine[1:]):
        end, start = p.metadata["start_index"] + len(p.page_content), n.metadata["start_index"]
        phrase = text[end - 12 : start + 12].strip()
        if start >= end and text.count(phrase) == 1:
            break
    else:
        raise AssertionError("no boundary without overlap in the text")
    a = text.index(phrase)
    whole = docs[0].page_content[:60].strip()
    rows = [("Where is the cut phrase?", phrase, a), ("What is the assert statement?", whole, text.index(whole))]
    q = io.StringIO()
    w = csv.writer(q)
    w.writerow(["question", "references", "corpus_id"])
    for question, content, at in rows:
        w.writerow([question, json.dumps([{"content": content, "start_index": at, "end_index": at + len(content)}]),
                    "pydoc_topics"])
    (root / "questions.csv").write_text(q.getvalue())
    return {"root": root, "db": root / "db", "docs": docs, "ids": ids, "phrase": phrase, "cut_at": (pid, nid),
            "sources": [str(sources[n]) for n in NAMES], "questions": str(root / "questions.csv")}


def least_keeping_overlap(built) -> int | None:
    """The least overlap at which LangChain's RecursiveCharacterTextSplitter(1000, overlap) keeps the
    cut phrase whole in its document, every overlap below the size tried."""
    text = texts()["pydoc_topics.txt"]
    a = text.index(built["phrase"])
    b = a + len(built["phrase"])
    for overlap in range(1000):
        parts = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=overlap, add_start_index=True) \
            .create_documents([text])
        if any(d.metadata["start_index"] <= a and b <= d.metadata["start_index"] + len(d.page_content) for d in parts):
            return overlap
    return None


def run(*argv):
    """`python -m ragsim ARGV`, with Chroma's telemetry off."""
    return run_cli(*argv, env=cli_env(ANONYMIZED_TELEMETRY="False"))


def inspect_args(built, *extra):
    return ("inspect", f"chroma:{built['db']}", "--source", *built["sources"], "--phrase", built["phrase"],
            "--questions", built["questions"], "--k", "3", *extra)


def test_inspect_json_names_the_splitter_the_cut_phrase_and_the_engine_s_verdicts(built):
    got = run(*inspect_args(built, "--json"))
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    n = len(built["docs"])
    assert out["store"] == {"kind": "chroma", "path": str(built["db"]), "collection": "topics", "chunks": n}
    by_doc = {s["doc"]: s for s in out["splitter"]}
    assert set(by_doc) == set(built["sources"])
    for s in out["splitter"]:
        assert (s["strategy"], s["fields"]["size"], s["fields"]["overlap"]) == ("langchain-recursive", 1000, 200)
        assert s["reproduced"] == s["chunks"] and s["line"].startswith(f"{LINE}: {s['chunks']} of {s['chunks']} chunks exactly")
        assert s["moves_with_overlap"] is True
    assert sum(s["chunks"] for s in out["splitter"]) == n
    assert [c["id"] for c in out["chunks"]] == built["ids"] and {c["placement"] for c in out["chunks"]} == {"offsets"}
    phrase = [p for p in out["phrases"] if p["source"] == "phrase"]
    assert len(phrase) == 1 and phrase[0]["verdict"] == "absent" and phrase[0]["chunks"] == []
    assert phrase[0]["overlap_needed"] == phrase[0]["overlap_advice"]["overlap"]
    # the advice: the least overlap at which LangChain's own splitter, at the store's size, keeps it whole
    assert phrase[0]["overlap_advice"]["overlap"] == least_keeping_overlap(built) and phrase[0]["overlap_advice"]["unit"] == "characters"
    assert [(c["end_of"], c["start_of"]) for c in phrase[0]["cut_by"]] == [built["cut_at"]]
    # the question set's verdicts are the engine's on the same stored extents
    documents = [{"id": p, "title": Path(p).name, "text": texts()[Path(p).name]} for p in built["sources"]]
    questions, _ = read_set(Path(built["questions"]).read_text(), documents, "csv")
    extents = {p: [[d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content)]
                   for d in built["docs"] if d.metadata["source"] == Path(p).name] for p in built["sources"]}
    want = simulate({"documents": documents, "query": "", "retrieval": {"k": 3},
                     "chunking": {"strategy": "stored", "chunks": extents},
                     "questions": to_request(questions, documents)})
    assert [{k: v for k, v in q.items() if k not in ("retrieved_ids", "query")} for q in out["questions"]] == want["questions"]
    assert out["question_stats"] == want["question_stats"]
    assert out["questions"][0]["verdict"] == "cut" and out["question_stats"]["cut"] == 1
    # the facts are the finder's, every one of each placed document (these texts state few: SPEC section 4)
    assert out["facts"]["count"] == sum(len(detect(d["text"])) for d in documents)
    assert all({"name", "value", "doc", "sentence", "quote_text"} <= set(f) for f in out["facts"]["facts"])


def test_inspect_plain_report(built):
    got = run(*inspect_args(built))
    assert got.returncode == 0, got.stderr
    text = got.stdout
    n = len(built["docs"])
    assert f"store: chroma {built['db']}, collection 'topics': {n} chunks" in text
    assert f"{n} chunks placed, 0 unplaced" in text
    # one reading of the index, named once for its two documents
    assert text.count(f"{LINE}:") == 1 and f"splitter: {LINE}: {n} of {n} chunks exactly over 2 documents" in text
    assert "moves its later cuts when only the overlap changes" in text
    pid, nid = built["cut_at"]
    least = least_keeping_overlap(built)
    assert f"(end of {pid}, start of {nid}); an overlap of {least} characters keeps it whole with this splitter" in text
    assert "questions (bm25, k 3): 2 questions:" in text and "1 cut" in text
    assert got.stderr == ""  # progress only on a terminal or with --progress


def test_export_reads_back_as_the_same_report(built, tmp_path, capsys):
    assert main(["export", f"chroma:{built['db']}", "--source", *built["sources"], "-o", str(tmp_path / "c.jsonl"),
                 "--progress"]) == 0
    n = len(built["ids"])
    assert f"read {n} of {n} chunks\n" in capsys.readouterr().err  # asked for: progress on stderr
    lines = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == built["ids"]
    assert set(lines[0]) == {"id", "doc", "start", "end", "placement", "text", "metadata"}
    capsys.readouterr()
    reports = []
    for store in (f"chroma:{built['db']}", str(tmp_path / "c.jsonl")):
        assert main(["inspect", store, "--source", *built["sources"], "--phrase", built["phrase"],
                     "--questions", built["questions"], "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        out.pop("store")
        reports.append(out)
    assert reports[0] == reports[1]
    # without the sources the export holds the rebuilt documents' extents, and reads back the same
    assert main(["export", f"chroma:{built['db']}", "-o", str(tmp_path / "r.jsonl")]) == 0
    capsys.readouterr()
    rebuilt = []
    for store in (f"chroma:{built['db']}", str(tmp_path / "r.jsonl")):
        assert main(["inspect", store, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        out.pop("store")
        rebuilt.append(out)
    assert rebuilt[0] == rebuilt[1] and all(d["rebuilt"] for d in rebuilt[0]["documents"])
    # neighbours that share nothing leave gaps (the separator between them is not in any chunk)
    assert any(d["gaps"] for d in rebuilt[0]["documents"])


def test_llamaindex_persist_dir_names_sentence_splitter(tmp_path, capsys):
    from llama_index.core import Document as LIDocument
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.node_parser import SentenceSplitter

    text = texts()["pydoc_topics.txt"]
    (tmp_path / "pydoc_topics.txt").write_text(text)
    index = VectorStoreIndex.from_documents([LIDocument(text=text, id_="pydoc_topics.txt")],
                                            transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=20)],
                                            embed_model=MockEmbedding(embed_dim=8))
    index.storage_context.persist(str(tmp_path / "li"))
    n = len(index.docstore.docs)
    assert main(["inspect", f"llamaindex:{tmp_path / 'li'}", "--source", str(tmp_path / "pydoc_topics.txt"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [s] = out["splitter"]
    # SentenceSplitter(256, 20) and (250, 20) cut this text alike: both reproduce every chunk
    assert s["strategy"] == "llamaindex-sentence" and s["fields"]["overlap"] == 20 and s["reproduced"] == n > 3
    assert out["documents"][0]["placed"] == n and {c["placement"] for c in out["chunks"]} == {"offsets"}


def test_chroma_s_own_query_beside_dense(built, tmp_path, monkeypatch, capsys):
    import chromadb

    offline_chroma_model(monkeypatch, tmp_path / "model")
    client = chromadb.PersistentClient(path=str(tmp_path / "own"))
    col = client.create_collection("own")  # Chroma's default embedding function: all-MiniLM-L6-v2
    col.add(ids=built["ids"], documents=[d.page_content for d in built["docs"]],
            metadatas=[d.metadata for d in built["docs"]])
    assert main(["inspect", f"chroma:{tmp_path / 'own'}", "--source", *built["sources"], "--questions",
                 built["questions"], "--method", "dense", "--k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    own = out["chroma_query"]
    assert set(own) == {q["id"] for q in out["questions"]}
    for q in out["questions"]:
        assert len(own[q["id"]]["retrieved_ids"]) == 3
        assert own[q["id"]]["verdict"] in ("intact", "ranked_out", "cut")
        if q["verdict"] == "cut":
            assert own[q["id"]]["verdict"] == "cut"  # no ranking holds a destroyed answer
    # the same model in Chroma and in ragsim: the same top 3
    assert [own[q["id"]]["retrieved_ids"] for q in out["questions"]] == [q["retrieved_ids"] for q in out["questions"]]


def refused(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_bad_input_one_line_each(built, tmp_path, capsys, monkeypatch):
    assert "is no store ragsim reads" in refused(capsys, "inspect", str(built["sources"][0]))
    assert "does not exist" in refused(capsys, "inspect", f"chroma:{tmp_path / 'nothing'}")
    err = refused(capsys, "inspect", f"chroma:{built['db']}", "--collection", "other")
    assert "no collection 'other'" in err and "topics" in err
    (tmp_path / "nofield.jsonl").write_text('{"body": "a chunk", "metadata": {}}\n')
    err = refused(capsys, "inspect", str(tmp_path / "nofield.jsonl"))
    assert "body" in err and "--text-field" in err
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "docstore.json").write_text('{"nodes": []}')
    assert "not a docstore.json" in refused(capsys, "inspect", f"llamaindex:{tmp_path / 'other'}")
    with open(tmp_path / "huge.jsonl", "wb") as handle:
        handle.truncate(200_000_001)
    # one request holds every chunk at once: its limits (a store read in pages has none: test_inspect_stream.py)
    assert "200 MB" in refused(capsys, "inspect", str(tmp_path / "huge.jsonl"), "--one-request")
    # read in pages, its one line of 200 MB is refused once it is longer than a record
    assert "Line 1 of huge.jsonl holds more than 20,000,000 characters" in refused(capsys, "inspect", str(tmp_path / "huge.jsonl"))
    monkeypatch.setattr(chunk_records, "MAX_CHUNKS", 3)
    err = refused(capsys, "inspect", f"chroma:{built['db']}", "--one-request")
    assert "over the 3 ragsim reads" in err and "--collection" in err
    assert main(["inspect", f"chroma:{built['db']}"]) == 0 and "store: chroma" in capsys.readouterr().out
    monkeypatch.undo()
    err = refused(capsys, "inspect", f"chroma:{built['db']}", "--source", str(tmp_path / "missing.txt"))
    assert "missing.txt cannot be read" in err


def test_unplaced_chunks_are_counted_and_listed(built, tmp_path, capsys):
    rows = [{"id": "a", "page_content": texts()["prose.txt"][:300], "metadata": {"source": "prose.txt"}},
            {"id": "b", "page_content": "A sentence that no source holds.", "metadata": {"source": "prose.txt"}}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["inspect", str(tmp_path / "c.jsonl"), "--source", built["sources"][1]]) == 0
    text = capsys.readouterr().out
    assert "1 chunks placed, 1 unplaced: b" in text
