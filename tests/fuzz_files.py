"""Hostile files from a seed: chunk files (JSON Lines, JSON, CSV, Parquet), LlamaIndex
docstore.json files and question files, built as the tools write them and then bent, for the checks
in tests/fuzz_surfaces.py.

Records carry every shape the readers know (LangChain Documents, `dumpd` wrappers, LlamaIndex nodes
serialised in `_node_content`, ragsim's own export, LangChain's and Haystack's in-memory stores, RAGAS
and LlamaIndex question sets, Chroma's CSV), with values of the wrong kind, offsets past the text, ids
that repeat, lone surrogates, nesting past the parser's depth, cut-off text and bytes that are no
file at all. Texts are small: the aim is every path through the readers, not large inputs.
"""

import csv
import io
import json
import random
import re

from fuzz_requests import LONG, PIECES, any_json

NAMES = {"jsonl": ["chunks.jsonl", "C.JSONL", "dir/x.jsonl"], "json": ["chunks.json", "store.JSON"],
         "csv": ["chunks.csv", "rows.CSV"], "docstore": ["docstore.json", "persist\\docstore.json", "other.json"]}
TEXT_KEYS = ["page_content", "text", "document", "chunk"]
DOC_KEYS = ["source", "file_path", "ref_doc_id", "doc_id"]


def words(rng: random.Random, most: int = 30) -> str:
    return " ".join(rng.choice(PIECES) for _ in range(rng.randrange(most)))


def documents(rng: random.Random) -> list[dict]:
    """The sources: 1-3 small documents, named as files are (the readers match chunks to them by name)."""
    return [{"id": rng.choice([f"d{i}.md", f"notes/d{i}.txt", f"d{i}"]), "title": rng.choice(["", f"T{i}", "# T"]),
             "text": words(rng, 80) or "a cat sat"} for i in range(rng.randrange(1, 4))]


def deep(depth: int) -> str:
    """A stand-in for a value nested `depth` lists deep, which `dumps` writes out (Python's own encoder
    stops at about a thousand; the parser reads a few thousand)."""
    return f"\x00deep{depth}\x00"


DEEP = re.compile(r'"\\u0000deep(\d+)\\u0000"')


def odd(rng: random.Random, good):
    """`good`, or now and then a value of any kind in its place."""
    return any_json(rng) if rng.random() < 0.08 else good


def piece_of(rng: random.Random, docs: list[dict]) -> tuple[str, str, int]:
    """A chunk's text: a stretch of a document (so that it is placed), else any text; (text, doc, start)."""
    d = rng.choice(docs)
    n = len(d["text"])
    if rng.random() < 0.8 and n:
        a = rng.randrange(n)
        b = min(n, a + rng.randrange(1, 40))
        return d["text"][a:b], d["id"], a
    return rng.choice([words(rng, 10), "", " ", "\ud800", LONG[:200], "鼠" * 9]), d["id"], rng.randrange(-2, 500)


def metadata(rng: random.Random, doc: str, start: int, text: str) -> dict:
    m = {}
    if rng.random() < 0.7:
        m[rng.choice(DOC_KEYS)] = odd(rng, rng.choice([doc, doc.rsplit("/", 1)[-1], doc.split(".")[0], "nope", ""]))
    if rng.random() < 0.4:
        m[rng.choice(["start_index", "split_idx_start"])] = odd(rng, rng.choice([start, start + 1, -1, 10**12]))
    if rng.random() < 0.2:
        m["start_char_idx"], m["end_char_idx"] = odd(rng, start), odd(rng, start + len(text))
    if rng.random() < 0.15:
        m["page"] = odd(rng, rng.randrange(-1, 4))
    if rng.random() < 0.1:
        m[rng.choice(["x", "\ud800", "a" * 50])] = any_json(rng)
    if rng.random() < 0.02:
        m["deep"] = deep(rng.choice([50, 200, 900, 3000]))
    return m


def node(rng: random.Random, text: str, doc: str, start: int, meta: dict) -> dict:
    """A LlamaIndex TextNode as its JSON (the docstore's `__data__`, a vector store's `_node_content`)."""
    n = {"id_": odd(rng, f"n{rng.randrange(10**6)}"), "text": odd(rng, text),
         "metadata": meta if rng.random() < 0.9 else any_json(rng),
         "relationships": odd(rng, {"1": odd(rng, {"node_id": odd(rng, doc), "node_type": "4"})}),
         "start_char_idx": odd(rng, start), "end_char_idx": odd(rng, start + len(text))}
    return {k: v for k, v in n.items() if rng.random() < 0.92}


def record(rng: random.Random, docs: list[dict], i: int) -> dict:
    """One stored chunk as some tool writes it."""
    text, doc, start = piece_of(rng, docs)
    meta = metadata(rng, doc, start, text)
    shape = rng.random()
    if shape < 0.1:  # a vector store's flat payload with LlamaIndex's serialised node
        content = json.dumps(node(rng, text, doc, start, meta)) if rng.random() < 0.9 else rng.choice(["{", "[]", "1"])
        row = {"_node_content": content, "_node_type": "TextNode", **({"text": text} if rng.random() < 0.5 else {})}
        if rng.random() < 0.5:
            row = {"text": text, "metadata": {**meta, "_node_content": content}}
    elif shape < 0.15:  # LangChain's dumpd() of a Document
        row = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
               "kwargs": odd(rng, {"page_content": text, "metadata": meta})}
    elif shape < 0.25:  # ragsim's own export
        row = {"id": str(i), "doc": odd(rng, doc), "start": odd(rng, start), "end": odd(rng, start + len(text)),
               "placement": odd(rng, rng.choice(["exact", "whitespace", "offsets", "rebuilt"])), "text": text,
               "metadata": meta}
    else:
        row = {rng.choice(TEXT_KEYS): odd(rng, text), "metadata": odd(rng, meta)}
        if rng.random() < 0.2:  # flat: the metadata beside the text (CSV, Parquet, LanceDB)
            row = {rng.choice(TEXT_KEYS): text, **meta}
    if rng.random() < 0.5:
        row[rng.choice(["id", "id_"])] = odd(rng, rng.choice([f"c{i}", f"c{i}", i, f"c{i % 3}", "", True]))
    return row


def records(rng: random.Random, docs: list[dict]) -> list:
    rows = [record(rng, docs, i) for i in range(rng.randrange(0, 9) if rng.random() < 0.2 else rng.randrange(1, 9))]
    if rows and rng.random() < 0.05:
        rows[rng.randrange(len(rows))] = any_json(rng)  # a row that is no object
    return rows


def dumps(rng: random.Random, value) -> str:
    """JSON text, each `deep` stand-in written out as its nesting."""
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
    return DEEP.sub(lambda m: "[" * int(m.group(1)) + "1" + "]" * int(m.group(1)), text)


def spoil(rng: random.Random, text: str) -> str:
    """Now and then: cut short, a byte order mark, CRLF line ends, or junk inserted."""
    r = rng.random()
    if r < 0.04 and text:
        return text[: rng.randrange(len(text))]
    if r < 0.07:
        return "\ufeff" + text
    if r < 0.1:
        return text.replace("\n", "\r\n")
    if r < 0.13 and text:
        at = rng.randrange(len(text))
        return text[:at] + rng.choice(["\x00", "\"", "\n", "{", "\u2028", "\ud800", ",", "]]"]) + text[at:]
    if r < 0.14:
        return rng.choice(["", "   ", "null", "[" * 5000, "{\"a\":" * 3000, "\x00\x01"])
    return text


def jsonl(rng: random.Random, rows: list) -> str:
    lines = [dumps(rng, r) for r in rows]
    if rng.random() < 0.1:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["", " ", "{", "[1]", "null", "\"x\"", "[" * 4000]))
    return spoil(rng, "\n".join(lines) + rng.choice(["", "\n"]))


def json_file(rng: random.Random, rows: list) -> str:
    r = rng.random()
    if r < 0.15:  # LangChain's InMemoryVectorStore.dump
        value = {str(odd(rng, f"k{i}")): {"id": f"k{i}", "vector": [0.1, 0.2], "text": _text(row), "metadata":
                 odd(rng, row.get("metadata", {}) if isinstance(row, dict) else {})} for i, row in enumerate(rows)}
    elif r < 0.3:  # Haystack's InMemoryDocumentStore.save_to_disk
        value = {"type": "haystack.InMemoryDocumentStore", "init_parameters": {},
                 "documents": [odd(rng, {"id": f"h{i}", "content": odd(rng, _text(row)), "meta":
                                         odd(rng, row.get("metadata", {}) if isinstance(row, dict) else {}),
                                         "embedding": None}) for i, row in enumerate(rows)]}
    elif r < 0.35:
        value = any_json(rng)
    else:
        value = rows
    return spoil(rng, dumps(rng, value))


def _text(row) -> str:
    if not isinstance(row, dict):
        return ""
    found = next((row[k] for k in TEXT_KEYS if isinstance(row.get(k), str)), "")
    return found


def csv_file(rng: random.Random, rows: list) -> str:
    flat = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        if isinstance(row.get("kwargs"), dict):
            row = row["kwargs"]
        out = {}
        for k, v in row.items():
            out[k] = v if isinstance(v, str) else json.dumps(v) if rng.random() < 0.7 else str(v)
        flat.append(out)
    columns = sorted({k for row in flat for k in row}) or ["text"]
    if rng.random() < 0.05:
        columns.append(columns[0])  # a column twice
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=rng.choice(["\n", "\r\n"]))
    writer.writerow(columns)
    for row in flat:
        cells = [row.get(c, "") for c in columns]
        if rng.random() < 0.05:
            cells = cells[: rng.randrange(len(cells) + 1)] + (["extra"] if rng.random() < 0.5 else [])
        writer.writerow(cells)
    return spoil(rng, buffer.getvalue())


def docstore(rng: random.Random, docs: list[dict]) -> str:
    """LlamaIndex's docstore.json: nodes under "docstore/data", a Document (type 4) now and then."""
    data = {}
    for i in range(rng.randrange(0, 8)):
        text, doc, start = piece_of(rng, docs)
        body = node(rng, text, doc, start, metadata(rng, doc, start, text))
        if rng.random() < 0.08:
            body = json.dumps(body) if rng.random() < 0.7 else "{not json"  # older LlamaIndex: a JSON string
        entry = {"__type__": odd(rng, rng.choice(["1", "1", "4", 1, "Document"])), "__data__": odd(rng, body)}
        data[str(odd(rng, f"n{i}")) if rng.random() < 0.9 else f"n{i % 2}"] = odd(rng, entry)
    store = {"docstore/data": data, "docstore/metadata": {},
             "docstore/ref_doc_info": {}}
    if rng.random() < 0.1:
        store = odd(rng, {"docstore/data": any_json(rng)}) if rng.random() < 0.5 else any_json(rng)
    return spoil(rng, dumps(rng, store))


def chunk_file(rng: random.Random, docs: list[dict], kind: str) -> tuple[str, str]:
    """(name, text) of a chunk file of `kind`: jsonl, json, csv or docstore."""
    name = rng.choice(NAMES[kind]) if rng.random() < 0.97 else rng.choice(["notes.txt", "", "x.", ".jsonl"])
    if kind == "docstore":
        return name, docstore(rng, docs)
    rows = records(rng, docs)
    return name, {"jsonl": jsonl, "json": json_file, "csv": csv_file}[kind](rng, rows)


# --- Parquet ------------------------------------------------------------------------------------------

def parquet_table(rng: random.Random, docs: list[dict]):
    """A pyarrow table of chunk rows: a text column (or none), metadata as a struct, a JSON string or
    flat columns, ids of several kinds, a vector column, nulls; None when pyarrow is missing."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    n = rng.randrange(0, 7)
    pieces = [piece_of(rng, docs) for _ in range(n)]
    columns = {}
    key = rng.choice(TEXT_KEYS + ["body"])
    pieces = [(t.encode("utf-8", "replace").decode("utf-8"), d, s) for t, d, s in pieces]  # Parquet holds UTF-8
    columns[key] = pa.array([t if rng.random() < 0.95 else None for t, _, _ in pieces], pa.string())
    if rng.random() < 0.6:
        doc_key = rng.choice(DOC_KEYS)
        columns[doc_key] = pa.array([d if rng.random() < 0.9 else None for _, d, _ in pieces], pa.string())
    if rng.random() < 0.4:
        columns["start_index"] = pa.array([odd_int(rng, s) for _, _, s in pieces], pa.int64())
    if rng.random() < 0.3:
        columns["metadata"] = pa.array([{"source": d, "page": rng.randrange(3)} if rng.random() < 0.9 else None
                                        for _, d, _ in pieces])
    if rng.random() < 0.2:
        columns["metadata"] = pa.array([json.dumps({"source": d}) for _, d, _ in pieces], pa.string())
    if rng.random() < 0.3:
        columns["id"] = pa.array([str(i) if rng.random() < 0.8 else None for i in range(n)], pa.string()) \
            if rng.random() < 0.5 else pa.array([i % 2 for i in range(n)], pa.int64())
    if rng.random() < 0.3:
        columns["vector"] = pa.array([[0.1, 0.2] for _ in range(n)], pa.list_(pa.float32(), 2))
    if rng.random() < 0.2:
        columns["tags"] = pa.array([[rng.choice(["a", "b"])] for _ in range(n)], pa.list_(pa.string()))
    if rng.random() < 0.2:
        columns["_node_content"] = pa.array([json.dumps(node(rng, t, d, s, {})) for t, d, s in pieces], pa.string())
    if rng.random() < 0.1:
        columns["score"] = pa.array([rng.choice([0.5, float("nan"), float("inf"), None]) for _ in range(n)],
                                    pa.float64())
    if rng.random() < 0.15:  # values JSON has no kind for: read as JSON's nearest (docs/stores.md)
        import datetime
        import decimal

        name, values, kind = rng.choice([
            ("created", [datetime.datetime(2024, 1, 2, 3, 4, 5)] * n, pa.timestamp("us", tz=rng.choice([None, "UTC"]))),
            ("day", [datetime.date(2024, 1, 2)] * n, pa.date32()), ("raw", [b"\x00\xff"] * n, pa.binary()),
            ("price", [decimal.Decimal("1.10")] * n, pa.decimal128(5, 2)),
            ("took", [datetime.timedelta(seconds=1.5)] * n, pa.duration("ms"))])
        columns[name] = pa.array(values, kind)
    return pa.table(columns)


def odd_int(rng: random.Random, value: int):
    return rng.choice([value, value, -1, None, 2**62])


def parquet_bytes(rng: random.Random, docs: list[dict]) -> bytes | None:
    """A Parquet file's bytes (now and then cut short or not Parquet at all)."""
    table = parquet_table(rng, docs)
    if table is None:
        return None
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=rng.choice([1, 2, 1000]))
    data = buffer.getvalue()
    r = rng.random()
    if r < 0.05:
        return data[: rng.randrange(len(data))]
    if r < 0.08:
        return rng.choice([b"", b"PAR1", b"PAR1" + b"\x00" * 40 + b"PAR1", b"{\"text\": \"a\"}"])
    return data


# --- question files ----------------------------------------------------------------------------------

def answer_text(rng: random.Random, docs: list[dict]) -> str:
    """An answer as text: a stretch of a document (found once, several times or nowhere), or not text."""
    d = rng.choice(docs)["text"].split(" ")
    if len(d) > 1 and rng.random() < 0.8:  # a run of the document's words, as a set writes an answer
        a = rng.randrange(len(d))
        return " ".join(d[a:a + rng.randrange(2, 8)])
    return odd(rng, rng.choice(["", "  ", "the", "not in any document", LONG[:300], "\ud800"]))


def reference(rng: random.Random, docs: list[dict]) -> dict:
    d = rng.choice(docs)
    n = len(d["text"])
    a = rng.randrange(n + 1)
    b = rng.choice([min(n, a + rng.randrange(1, 20)), a, n + 3, a - 1])
    ref = {"doc": odd(rng, rng.choice([d["id"], d["title"], d["id"].rsplit("/", 1)[-1], "nope"])),
           "start": odd(rng, a), "end": odd(rng, b)}
    if rng.random() < 0.5:
        ref["content"] = odd(rng, d["text"][a:b] if 0 <= a <= b else "x")
    return ref


def question_items(rng: random.Random, docs: list[dict], style: str) -> list:
    items = []
    for i in range(rng.randrange(1, 6) if rng.random() < 0.9 else 0):
        qid = odd(rng, rng.choice([f"q{i}", f"q{i}", f"q{i % 2}", i]))
        query = odd(rng, words(rng, 6))
        if style == "ours":
            item = {"id": qid, "query": query, "references": odd(rng, [reference(rng, docs)
                                                                      for _ in range(rng.randrange(0, 3))])}
        elif style == "ragas":
            item = {"user_input": query}
            if rng.random() < 0.6:
                item["reference"] = answer_text(rng, docs)
            if rng.random() < 0.5:
                item["reference_contexts"] = odd(rng, [answer_text(rng, docs) for _ in range(rng.randrange(0, 3))])
        else:  # question,answer
            item = {"question": query, "answer": answer_text(rng, docs)}
        if rng.random() < 0.15:
            item[rng.choice(["hint", "doc", "corpus_id"])] = odd(rng, rng.choice([words(rng, 3), docs[0]["id"], ""]))
        items.append(item)
    if items and rng.random() < 0.05:
        items[0] = any_json(rng)
    return items


def question_file(rng: random.Random, docs: list[dict]) -> tuple[str, str]:
    """(name, text) of a question set in one of the formats read (and a few that are none)."""
    style = rng.choice(["ours", "ragas", "answers"])
    items = question_items(rng, docs, style)
    form = rng.choice(["json", "json", "jsonl", "csv", "labelled", "finetune", "chroma"])
    if form == "json":
        value = {"questions": items} if rng.random() < 0.7 else items
        return rng.choice(["q.json", "q", "set.JSON"]), spoil(rng, dumps(rng, value))
    if form == "jsonl":
        return rng.choice(["q.jsonl", "q"]), spoil(rng, "\n".join(dumps(rng, x) for x in items))
    if form == "labelled":  # LlamaIndex's LabelledRagDataset
        examples = [{"query": odd(rng, words(rng, 5)), "reference_contexts": odd(rng, [answer_text(rng, docs)]),
                     "reference_answer": answer_text(rng, docs), "query_by": None} for _ in range(rng.randrange(4))]
        return "rag_dataset.json", spoil(rng, dumps(rng, {"examples": odd(rng, examples)}))
    if form == "finetune":  # LlamaIndex's EmbeddingQAFinetuneDataset
        corpus = {f"n{j}": answer_text(rng, docs) for j in range(3)}
        queries = {f"q{j}": odd(rng, words(rng, 5)) for j in range(rng.randrange(4))}
        relevant = {q: odd(rng, [rng.choice(list(corpus) + ["gone"])]) for q in queries}
        value = {"queries": queries, "corpus": odd(rng, corpus), "relevant_docs": relevant, "mode": "text"}
        return "qa.json", spoil(rng, dumps(rng, value))
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    if form == "chroma":  # Chroma's chunking_evaluation CSV
        writer.writerow(["question", "references", "corpus_id"])
        for _ in range(rng.randrange(4)):
            refs = [reference(rng, docs) for _ in range(rng.randrange(1, 3))]
            cell = json.dumps([{"content": r.get("content", ""), "start_index": r["start"], "end_index": r["end"]}
                               for r in refs]) if rng.random() < 0.9 else rng.choice(["[", "", "1", "[" * 3000])
            writer.writerow([words(rng, 5), cell, odd(rng, refs[0]["doc"])])
    else:
        columns = sorted({k for x in items if isinstance(x, dict) for k in x}) or ["question", "answer"]
        writer.writerow(columns)
        for x in items:
            row = x if isinstance(x, dict) else {}
            writer.writerow([v if isinstance(v, str) else json.dumps(v) for v in (row.get(c, "") for c in columns)])
    return rng.choice(["q.csv", "q"]), spoil(rng, buffer.getvalue())
