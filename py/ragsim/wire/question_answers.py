"""Question sets kept as questions with their answers as text (`wire.question_io` reads the files):
RAGAS' `user_input`/`reference`/`reference_contexts`, LlamaIndex's `LabelledRagDataset` and
`EmbeddingQAFinetuneDataset`, a question with its `answer`. Each passage, else the answer, is placed
in the documents by `judge.answers.locate`."""

import ast
import json

from ragsim.errors import RequestError
from ragsim.judge.answers import locate


def finetune_items(data: dict) -> list:
    """LlamaIndex's generated QA pairs: each query with the texts of its relevant nodes as passages."""
    corpus = data["corpus"]
    out = []
    for qid, query in data["queries"].items():
        nodes = data["relevant_docs"].get(qid) or []
        out.append({"id": str(qid), "query": query,
                    "reference_contexts": [corpus.get(str(n)) for n in nodes] if isinstance(nodes, list) else nodes})
    return out


QUERY_KEYS = ("query", "question", "user_input")
ANSWER_KEYS = ("answer", "reference", "reference_answer", "ground_truth", "expected_output")
CONTEXT_KEYS = ("reference_contexts",)


def answered_columns(columns) -> bool:
    """Whether a CSV's columns hold a question and its answer as text."""
    return any(c in columns for c in QUERY_KEYS) and any(c in columns for c in ANSWER_KEYS + CONTEXT_KEYS)


def is_answered(item) -> bool:
    """Whether an item gives its answer as text rather than as offsets (`references`)."""
    return isinstance(item, dict) and "references" not in item and any(k in item for k in QUERY_KEYS) \
        and any(item.get(k) not in (None, "", []) for k in ANSWER_KEYS + CONTEXT_KEYS)


def _first(item: dict, keys: tuple):
    return next((item[k] for k in keys if item.get(k) not in (None, "", [])), None)


def _contexts(value, where: str) -> list:
    """A list of passages: a list, or (a CSV cell) its JSON or Python literal text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            try:
                value = ast.literal_eval(value)  # pandas writes a list column as its Python repr; literals only
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                value = [value]  # one passage, as written
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RequestError(where, f"{where}.reference_contexts must be a list of passages (texts).")
    return value


def answered(item: dict, docs: list[dict], where: str, number: int, every: bool, find_corpus) -> dict:
    """An item that gives its answer as text, as ours: `{id, query, references}` with each passage
    (else the answer) placed in the documents (`judge.answers.locate`); a `doc` or `corpus_id` limits
    the search to that document (`find_corpus(docs, name, where)`: question_io's)."""
    query = _first(item, QUERY_KEYS)
    named = item.get("doc", item.get("corpus_id"))
    pool = docs if named in (None, "") else [docs[find_corpus(docs, str(named), where)]]
    contexts = item.get("reference_contexts")
    texts = _contexts(contexts, where) if contexts not in (None, "", []) else [_first(item, ANSWER_KEYS)]
    label = "passage" if contexts not in (None, "", []) else "answer"
    refs = []
    for j, text in enumerate(texts):
        at = f"{where}: the {label}" + (f" {j + 1}" if len(texts) > 1 else "")
        try:
            found = locate(pool, text, at, item.get("hint"), every)
        except RequestError as e:
            raise RequestError(where, e.message) from None  # the row is the field; the message says which text
        refs += [{"doc": pool[d]["id"], "start": start, "end": end} for d, start, end in found]
    return {"id": str(item.get("id", number)), "query": query if isinstance(query, str) else "", "references": refs}
