"""What a notebook holds, read as the request's documents, answer and question set.

Documents come as a text, a file's path (text, Markdown or PDF, read as the commands read them; a
directory's files), a dict with "text", a LangChain `Document` (`page_content`, `metadata`) or a
LlamaIndex `Document`/node (`text`, `metadata`), or a list of any of these. Nothing is imported to
recognise them: an object is read by the attributes it has. A file keeps its path as its id (as
`eval` and `inspect` name it), so a question set written for the files finds its documents.
"""

from __future__ import annotations

import json
import os
import pathlib

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.host.corpus import sources as kb_sources
from ragsim.host.clients import pdf
from ragsim.host.clients.files import read_text_file
from ragsim.wire.question_io import read_set, to_request

DOCUMENT_KINDS = ("a text, a file's path, a dict with \"text\", a LangChain Document, a LlamaIndex Document or "
                  "node, or a list of them")
# Suffixes of files people pass by name: a string ending so that names no file is a wrong path, not a text.
FILE_SUFFIXES = (".md", ".txt", ".pdf", ".rst", ".html", ".htm", ".json", ".jsonl", ".csv")
def kind_of(value) -> str:
    """A value's class for a message, with its article: `a langchain_core.documents.base.Document`, `an int`."""
    cls = type(value)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def is_path(value) -> bool:
    """Whether a value names a file or directory: a `pathlib.Path`, or a one-line string that exists
    (or that looks like a file's name: refused when it names none, instead of read as a text)."""
    if isinstance(value, os.PathLike):
        return True
    if not isinstance(value, str) or "\n" in value or len(value) > 4096 or not value.strip():
        return False
    if os.path.exists(value):
        return True
    return " " not in value and value.lower().endswith(FILE_SUFFIXES)


def read_path(path, field: str) -> list[dict]:
    """The documents of a file (a PDF a document per page, as PyPDFLoader reads it) or of a
    directory's files, each with its path as id and its name as title."""
    given = os.fspath(path)
    found, missing = kb_sources.walk([given])
    if missing:
        raise RequestError(field, f"{missing[0][0]} {missing[0][1]}: give a file's path, or pass the text itself.")
    docs = []
    for source in found:
        try:
            if pdf.is_pdf(source.path):
                docs.extend(pdf.load(source.path))
            else:
                docs.append({"id": source.path, "title": pathlib.Path(source.path).name,
                             "text": read_text_file(source.path)})
        except OSError as e:
            raise RequestError(field, f"{source.path} cannot be read ({e.strerror}).") from None
        except ValueError as e:
            raise RequestError(field, f"{str(e).rstrip('.')}.") from None
    return docs


def _named(metadata: dict, own: str | None, fallback: str) -> tuple[str, str]:
    """(id, title) of a library's document: its file (a PDF page as `path#page=N`, as the commands
    name it), else its own id (which a LlamaIndex node's source names), else `fallback`."""
    for key in ("source", "file_path"):
        name = metadata.get(key)
        if isinstance(name, str) and name:
            page = metadata.get("page")
            if isinstance(page, int) and not isinstance(page, bool) and key == "source":
                return f"{name}#page={page + 1}", f"{pathlib.PurePath(name).name}, page {page + 1}"
            return name, pathlib.PurePath(name).name
    title = metadata.get("file_name") if isinstance(metadata.get("file_name"), str) else None
    return own or title or fallback, title or own or fallback


def library_document(item) -> tuple[str, dict, str | None] | None:
    """(text, metadata, own id) of a LangChain Document or a LlamaIndex Document/node, or None."""
    metadata = getattr(item, "metadata", None)
    metadata = metadata if isinstance(metadata, dict) else {}
    for attr in ("page_content", "text"):  # LangChain, then LlamaIndex
        text = getattr(item, attr, None)
        if isinstance(text, str) and not isinstance(item, (str, dict)):
            own = getattr(item, "id", None) or getattr(item, "id_", None)
            return text, metadata, own if isinstance(own, str) and own else None
    return None


def _one(item, i: int, single: bool, field: str) -> list[dict]:
    fallback = "document" if single else f"document {i + 1}"
    where = field if single else f"{field}[{i}]"
    if is_path(item):
        return read_path(item, where)
    if isinstance(item, str):
        return [{"id": fallback, "title": fallback, "text": item}]
    if isinstance(item, dict):
        if not isinstance(item.get("text"), str):
            raise RequestError(where, f"{where} is a dict without \"text\" (its keys: {shown(sorted(map(str, item)))}); "
                                      f"give each document as {{\"id\": ..., \"text\": ...}}.")
        doc_id = str(item.get("id") or fallback)
        return [{"id": doc_id, "title": str(item.get("title") or doc_id), "text": item["text"]}]
    read = library_document(item)
    if read is None:
        raise RequestError(where, f"{where} is {kind_of(item)}; ragsim takes {DOCUMENT_KINDS}.")
    text, metadata, own = read
    doc_id, title = _named(metadata, own, fallback)
    return [{"id": doc_id, "title": title, "text": text}]


def documents(value, field: str = "documents") -> list[dict]:
    """The request's documents, `[{"id", "title", "text"}]`, from any of DOCUMENT_KINDS; ids made
    unique by a `#2`, `#3` suffix where two documents name the same file."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise RequestError(field, f"{field} is empty: give {DOCUMENT_KINDS}.")
    docs = [d for i, item in enumerate(items) for d in _one(item, i, len(items) == 1, field)]
    seen: dict[str, int] = {}
    for d in docs:
        seen[d["id"]] = seen.get(d["id"], 0) + 1
        if seen[d["id"]] > 1:
            d["id"] = f"{d['id']}#{seen[d['id']]}"
    return docs


def find_text(text: str, docs: list[dict], field: str) -> dict:
    """`{"doc", "start", "end"}` of the first place a text occurs in the documents (code points)."""
    if not isinstance(text, str) or not text:
        raise RequestError(field, f"{field} must be the answer's text (got {shown(text)}).")
    for d in docs:
        at = d["text"].find(text)
        if at >= 0:
            return {"doc": d["id"], "start": at, "end": at + len(text)}
    raise RequestError(field, f"{field} {shown(text)} is in none of the documents; copy it from the text exactly.")


def span(answer, docs: list[dict], field: str = "answer") -> dict | None:
    """The answer as the request's span: its text (first found), `(doc, start, end)` or a dict."""
    if answer is None or isinstance(answer, dict):
        return answer
    if isinstance(answer, tuple) and len(answer) == 3:
        return {"doc": answer[0], "start": answer[1], "end": answer[2]}
    return find_text(answer, docs, field)


def _question(item, i: int, docs: list[dict]) -> dict:
    """One question of a list: our JSON's shape, or `{"query", "answer": text or [texts]}`."""
    where = f"questions[{i}]"
    if not isinstance(item, dict):
        raise RequestError(where, f"{where} is {kind_of(item)}; give each question as a dict "
                                  f"{{\"query\": ..., \"answer\": \"the text that answers it\"}} or with \"references\".")
    if "answer" not in item:
        return item
    if not docs:
        raise RequestError(f"{where}.answer", "an answer given as text is found in the sources: give sources= (the "
                                              "documents the chunks came from), or the answer's references with offsets.")
    answers = item["answer"] if isinstance(item["answer"], list) else [item["answer"]]
    rest = {k: v for k, v in item.items() if k != "answer"}
    return {"id": str(i + 1), **rest, "references": [find_text(a, docs, f"{where}.answer") for a in answers]}


def question_file(value, docs: list[dict], field: str = "questions") -> dict:
    """A question set as a file's `{"name", "text"}` (what `eval --questions` and `inspect
    --questions` read): a .json or .csv file's path, or a list of dicts (or `{"questions": [...]}`)
    whose answers given as text are found in `docs`."""
    if is_path(value):
        path = os.fspath(value)
        try:
            return {"name": path, "text": read_text_file(path)}
        except OSError as e:
            raise RequestError(field, f"{path} cannot be read ({e.strerror}): give the question set's path.") from None
        except ValueError as e:
            raise RequestError(field, f"{str(e).rstrip('.')}.") from None
    items = value.get("questions") if isinstance(value, dict) else value
    if not isinstance(items, (list, tuple)):
        raise RequestError(field, f"{field} is {kind_of(value)}; give a list of questions "
                                  f"({{\"query\", \"answer\"}} dicts) or a .json or .csv file's path.")
    read = [_question(q, i, docs) for i, q in enumerate(items)]
    try:
        return {"name": "questions.json", "text": json.dumps({"questions": read})}
    except (TypeError, ValueError) as e:
        raise RequestError(field, f"{field} holds a value that is not plain data ({e}); give texts and numbers.") from None


def questions(value, docs: list[dict], field: str = "questions") -> list[dict]:
    """The request's question set (SPEC section 8) of `question_file`'s inputs, read as `eval` reads it."""
    file = question_file(value, docs, field)
    fmt = {".json": "json", ".csv": "csv"}.get(pathlib.Path(file["name"]).suffix.lower(), "auto")
    read, _ = read_set(file["text"], docs, fmt, "strict")
    return to_request(read, docs)
