"""Question sets in and out: our JSON (SPEC section 8) and the CSV of Chroma's `chunking_evaluation`.

Chroma's CSV has the columns `question`, `references` (a JSON list of `{"content", "start_index",
"end_index"}`) and `corpus_id`, which names the question's document. Here `corpus_id` may name a
document by its id, its title, or its file's name, stem or path (Chroma's own sets say
"state_of_the_union" for `state_of_the_union.md`). A reference whose `content` is not the text at
its offsets is an error naming the row.

Sets kept as a question and its answer as text are read too (`answered`): RAGAS' `user_input`,
`reference` and `reference_contexts` (JSON, JSON Lines or CSV, as `EvaluationDataset` writes them),
LlamaIndex's `LabelledRagDataset` (`examples`: `query`, `reference_contexts`, `reference_answer`)
and `EmbeddingQAFinetuneDataset` (`queries`, `corpus`, `relevant_docs`), and any list or CSV of
`question`/`query` with `answer`. The passages (`reference_contexts`) are placed where they are given,
else the answer, each found in the documents as they write it (`judge.answers`); an answer that is
in none of them, or in several without a `hint`, is a bad row with one sentence.

Two modes: `strict` raises the first bad row (the command line exits 2 with it), `skip` keeps the
good rows and reports every bad one (the page names them and keeps the rest).
Pure: texts in, data out; reading files is the caller's business.
"""

import csv
import io
import json
import pathlib

from ragsim.errors import RequestError
from ragsim.wire.question_answers import answered, answered_columns, finetune_items, is_answered
from ragsim.judge.questions import Question, read_question
from ragsim.fields import shown

FORMATS = ("json", "jsonl", "csv")
MODES = ("strict", "skip")
CSV_COLUMNS = ("question", "references", "corpus_id")


def _names(value: str) -> tuple[str, str, str]:
    """A path-like string's full text, file name and stem (both separators understood)."""
    path = pathlib.PurePosixPath(value.replace("\\", "/"))
    return value, path.name, path.stem


def find_corpus(docs: list[dict], corpus_id: str, where: str) -> int:
    """The document a `corpus_id` names: by id, then title, then file name, then stem; an id that
    names no document, or two at the best level, is refused."""
    wanted = _names(corpus_id)
    levels = (
        lambda d: corpus_id == d["id"],
        lambda d: corpus_id == d["title"],
        lambda d: wanted[1] in (_names(d["id"])[1], _names(d["title"])[1]),
        lambda d: wanted[2] in (_names(d["id"])[2], _names(d["title"])[2]),
    )
    for match in levels:
        found = [i for i, d in enumerate(docs) if match(d)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise RequestError(where, f"corpus_id {shown(corpus_id)} fits {len(found)} documents "
                                      f"({shown(docs[found[0]]['id'])}, {shown(docs[found[1]]['id'])}); name one by its id.")
    raise RequestError(where, f"corpus_id {shown(corpus_id)} names no document; give the id, title, file name or path of one "
                              f"of {valid_ids(docs)}.")


def valid_ids(docs: list[dict], count: int = 10) -> str:
    """The documents' ids for a message: `'a.txt', 'b.txt'` (the first ten, and how many more)."""
    # an id is quoted whole up to 60 characters, else by its end (a path's file name tells them apart)
    ids = ", ".join(repr(d["id"]) if len(d["id"]) <= 60 else repr("…" + d["id"][-59:]) for d in docs[:count])
    return ids + (f" and {len(docs) - count} more" if len(docs) > count else "")


def export_name(docs: list[dict], d: int) -> str:
    """How an exported set names document `d`, so that `eval` on the files finds it (find_corpus):
    its id when that is a file's name (the page gives a file's document its name), else its title
    when no other document has it (the page downloads a typed document as "<title>.txt"), else its id."""
    doc = docs[d]
    if pathlib.PurePosixPath(doc["id"].replace("\\", "/")).suffix or not doc["title"]:
        return doc["id"]
    same = [e for e in docs if doc["title"] in (e["id"], e["title"])]
    return doc["title"] if len(same) == 1 else doc["id"]


def resolve_references(q, docs: list[dict], where: str):
    """A JSON question whose references name their documents as find_corpus does (id, title, file
    name or stem), with each `doc` replaced by the document's id; the question as it is otherwise."""
    if not isinstance(q, dict) or not isinstance(q.get("references"), list):
        return q
    ids = {d["id"] for d in docs}
    refs = []
    for j, r in enumerate(q["references"]):
        if isinstance(r, dict) and isinstance(r.get("doc"), str) and r["doc"] not in ids:
            rwhere = f"{where}.references[{j}].doc"
            try:
                r = {**r, "doc": docs[find_corpus(docs, r["doc"], rwhere)]["id"]}
            except RequestError as e:
                if "names no" not in e.message:  # it fits two documents: that message names them
                    raise
                raise RequestError(rwhere, f"{rwhere} {shown(r['doc'])} names no document; give the id, title, file "
                                           f"name or path of one of {valid_ids(docs)}.") from None
        refs.append(r)
    return {**q, "references": refs}


def _offset(value, where: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(where, f"{where} must be a whole number (got {shown(value)}).")
    return value


def _csv_row(row: dict, docs: list[dict], n: int, line: int, every: bool = False) -> Question:
    """CSV data row `n` (1-based, as the page numbers questions; its first line is `line` in the file)
    as question `n`; every error names the question and the line."""
    where = f"question {n} (line {line})"
    return _as_row_error(lambda: _read_csv_row(row, docs, n, where, every), where)


def _read_csv_row(row: dict, docs: list[dict], n: int, where: str, every: bool = False) -> Question:
    if "references" not in row and is_answered(row):
        return read_question(answered(row, docs, where, n, every, find_corpus), docs, where, str(n))
    corpus_id = (row.get("corpus_id") or "").strip()
    if not corpus_id:
        raise RequestError(where, f"{where}: corpus_id is empty; name the question's document.")
    d = find_corpus(docs, corpus_id, where)
    try:
        refs = json.loads(row.get("references") or "")
    except ValueError as e:
        raise RequestError(where, f"{where}: references is not a JSON list ({e}).") from None
    except RecursionError:
        raise RequestError(where, f"{where}: references is nested too deeply to be a list of references.") from None
    if not isinstance(refs, list):
        raise RequestError(where, f"{where}: references must be a JSON list of {{content, start_index, end_index}}.")
    ours = []
    for j, ref in enumerate(refs):
        rwhere = f"{where}, reference {j + 1}"
        if not isinstance(ref, dict):
            raise RequestError(where, f"{rwhere} must be an object with content, start_index and end_index.")
        start = _offset(ref.get("start_index"), f"{rwhere}: start_index")
        end = _offset(ref.get("end_index"), f"{rwhere}: end_index")
        ours.append({"doc": docs[d]["id"], "start": start, "end": end, "content": ref.get("content")})
    # Chroma's rows carry no id: a question is named by its number, 1 for the first row under the header
    q = {"id": str(n), "query": row.get("question") or "", "references": ours}
    return read_question(q, docs, where, str(n))


def _as_row_error(read, where: str):
    """Run a reader; its error keeps the row's name in front of the field it names."""
    try:
        return read()
    except RequestError as e:
        message = e.message if e.message.startswith(where) else f"{where}: {e.message}"
        raise RequestError(where, message.replace(f"{where}.", f"{where}, ")) from None


def _csv_rows(text: str):
    """`(first line of the row, row dict)` for every data row; refuses a file without the columns."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    columns = reader.fieldnames or []
    missing = [c for c in CSV_COLUMNS if c not in columns]
    if missing and not answered_columns(columns):
        raise RequestError("questions", f"The CSV needs the columns question, references and corpus_id, or a question "
                                        f"(question, query or user_input) and its answer (answer, reference or "
                                        f"reference_contexts); it lacks {', '.join(missing)}.")
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise RequestError(f"row {line}", f"row {line}: the CSV cannot be read ({e}).") from None
        yield line, row


def _json_items(text: str, lines: bool = False):
    """The set's items: ours (`{"questions": [...]}` or a list), JSON Lines (one item a line, as RAGAS
    writes them), or LlamaIndex's two dataset files, each turned into a list of items."""
    try:
        data = [json.loads(line) for line in text.splitlines() if line.strip()] if lines else json.loads(text)
    except ValueError as e:
        raise RequestError("questions", f"The question set is not valid {'JSON Lines' if lines else 'JSON'} ({e}).") from None
    except RecursionError:
        raise RequestError("questions", "The question set is nested too deeply to read.") from None
    if isinstance(data, dict):
        if isinstance(data.get("examples"), list):  # LlamaIndex LabelledRagDataset
            data = [{k: v for k, v in ex.items() if k in ("query", "reference_contexts", "reference_answer")}
                    if isinstance(ex, dict) else ex for ex in data["examples"]]
        elif all(isinstance(data.get(k), dict) for k in ("queries", "corpus", "relevant_docs")):
            data = finetune_items(data)  # LlamaIndex EmbeddingQAFinetuneDataset
        else:
            data = data.get("questions")
    if not isinstance(data, list):
        raise RequestError("questions", 'Give the question set as {"questions": [{id, query, references}, ...]}, or '
                                        "as questions and answers (RAGAS, LlamaIndex, question and answer).")
    return data


def read_set(text: str, docs: list[dict], fmt: str = "auto", mode: str = "strict",
             every: bool = False) -> tuple[list[Question], list[dict]]:
    """A question set from its file's text -> (questions, problems).

    `fmt` is "json", "jsonl", "csv" or "auto" (JSON when the text starts with `{` or `[`, JSON Lines
    when its first two lines each hold an object). `every`: an answer given as text that occurs
    several times is placed at every occurrence, not refused. In `strict` mode
    the first bad row raises RequestError; in `skip` mode bad rows are left out and each is reported
    as `{"row", "field", "message"}` (row: the question's 1-based position, CSV or JSON). A file that cannot be
    read at all (no CSV columns, not JSON) raises in both modes, as does an empty result.
    """
    if fmt == "auto":
        fmt = "json" if text.lstrip("\ufeff \t\r\n")[:1] in ("{", "[") else "csv"
        if fmt == "json" and _json_lines(text):
            fmt = "jsonl"
    if fmt not in FORMATS or mode not in MODES:
        raise RequestError("format", f"Read question sets as 'json', 'jsonl' or 'csv', strict or skip (got {shown(fmt)}, "
                                      f"{shown(mode)}).")
    if fmt == "csv":
        items = [(n, (lambda row=row, n=n, line=line: _csv_row(row, docs, n, line, every)))
                 for n, (line, row) in enumerate(_csv_rows(text), 1)]
    else:
        items = [(i + 1, (lambda q=q, i=i: _json_question(q, docs, i, every)))
                 for i, q in enumerate(_json_items(text.lstrip("\ufeff"), lines=fmt == "jsonl"))]
    questions, problems, seen = [], [], {}
    for row, read in items:
        try:
            q = read()
            if q.id in seen:
                raise RequestError(f"question {row}", f"Question ids must be unique; {shown(q.id)} is the id of questions "
                                                      f"{seen[q.id]} and {row}.")
        except RequestError as e:
            if mode == "strict":
                raise
            problems.append({"row": row, "field": e.field, "message": e.message})
            continue
        seen[q.id] = row
        questions.append(q)
    if not questions:
        detail = f" ({len(problems)} bad rows; the first: {problems[0]['message']})" if problems else ""
        raise RequestError("questions", f"The question set holds no usable question{detail}.")
    return questions, problems


def format_of(name: str) -> str:
    """The format a question file's name says: "json", "jsonl", "csv", else "auto" (read from the text)."""
    return {"json": "json", "jsonl": "jsonl", "csv": "csv"}.get(str(name).rsplit(".", 1)[-1].lower(), "auto")


def _json_lines(text: str) -> bool:
    """Whether the text is JSON Lines: its first two non-empty lines each a whole JSON object."""
    lines = [line for line in text.lstrip("\ufeff").splitlines()[:50] if line.strip()][:2]
    if len(lines) < 2:
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in lines)
    except (ValueError, RecursionError):
        return False


def _json_question(q, docs: list[dict], i: int, every: bool) -> Question:
    where = f"questions[{i}]"
    if is_answered(q):
        return read_question(answered(q, docs, where, i + 1, every, find_corpus), docs, where, str(i + 1))
    return read_question(resolve_references(q, docs, where), docs, where, str(i + 1))


def _id(docs: list[dict], d: int) -> str:
    return docs[d]["id"]


def to_request(questions: list[Question], docs: list[dict], name=_id) -> list[dict]:
    """Questions as the request's `questions` field (SPEC section 8), each reference with its content
    and its document named by `name(docs, position)` (its id unless asked otherwise)."""
    return [{"id": q.id, "query": q.query,
             "references": [{"doc": name(docs, d), "start": a, "end": b, "content": docs[d]["text"][a:b]}
                            for d, a, b in q.refs]}
            for q in questions]


def write_json(questions: list[Question], docs: list[dict]) -> str:
    """Our JSON: `{"questions": [...]}`, each document named as `eval` finds it (export_name);
    reading it back gives the same questions."""
    return json.dumps({"questions": to_request(questions, docs, export_name)}, ensure_ascii=False, indent=1)


def write_csv(questions: list[Question], docs: list[dict]) -> str:
    """Chroma's CSV. Its rows name one document each, so a question whose references lie in two
    documents is refused, naming it."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for q in questions:
        doc_set = {d for d, _, _ in q.refs}
        if len(doc_set) != 1:
            raise RequestError("questions", f"Question {shown(q.id)} has references in {len(doc_set)} documents; "
                                            "Chroma's CSV holds one document per question, so export it as JSON.")
        d = doc_set.pop()
        refs = [{"content": docs[d]["text"][a:b], "start_index": a, "end_index": b} for _, a, b in q.refs]
        writer.writerow([q.query, json.dumps(refs), export_name(docs, d)])
    return out.getvalue()


def import_questions(payload: dict) -> dict:
    """For the page: `{"text", "format"?, "documents"}` -> `{"questions": [...], "skipped": [...]}`,
    bad rows skipped and reported; or `{"error": {field, message}}` when nothing can be used."""
    from ragsim.wire.request import read_documents

    try:
        if not isinstance(payload, dict) or not isinstance(payload.get("text"), str):
            raise RequestError("text", "Give the question set's file content as text.")
        docs = read_documents(payload)
        questions, problems = read_set(payload["text"], docs, payload.get("format", "auto"), "skip",
                                       payload.get("every_occurrence") is True)
    except RequestError as e:
        return e.as_response()
    return {"questions": to_request(questions, docs), "skipped": problems}


def export_questions(payload: dict) -> dict:
    """For the page: `{"questions", "documents", "format"}` -> `{"text"}` (the file's content)."""
    from ragsim.judge.questions import read_question_set
    from ragsim.wire.request import read_documents

    try:
        if not isinstance(payload, dict):
            raise RequestError("request", "The request must be a JSON object.")
        docs = read_documents(payload)
        questions = read_question_set(payload.get("questions"), docs)
        fmt = payload.get("format", "json")
        if fmt not in ("json", "csv"):
            raise RequestError("format", f"format must be 'json' or 'csv' (got {shown(fmt)}).")
        return {"text": write_json(questions, docs) if fmt == "json" else write_csv(questions, docs)}
    except RequestError as e:
        return e.as_response()


def import_questions_json(payload_json: str) -> str:
    """`import_questions`, string to string, for the worker."""
    from ragsim.wire.api import json_call

    return json_call(import_questions, payload_json)


def export_questions_json(payload_json: str) -> str:
    """`export_questions`, string to string, for the worker."""
    from ragsim.wire.api import json_call

    return json_call(export_questions, payload_json)
