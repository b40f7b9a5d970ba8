"""Question sets (SPEC section 8): each question ranked on its own query over the same chunks, and
scored with the character-level metrics of Chroma's `chunking_evaluation` (base_evaluation.py).

The metrics, for a question with references `F` (as given, whitespace included) and top-k chunks `R`:

- `covered`: the union over retrieved chunks of the reference's own document of chunk ∩ reference;
- `recall = |covered| / Σ|F|` (a sum: references that overlap count twice, as in Chroma);
- `precision = |covered| / Σ|R|` (a sum: overlapping chunks count twice, other documents' chunks too);
- `iou = |covered| / (Σ|R| + Σ|F_i not covered|)`;
- `precision_omega`: with every chunk that touches a reference instead of `R`, over unions:
  `|covered| / |∪ those chunks ∪ F not covered|`. "Touches" is Chroma's closed test
  `max(starts) <= min(ends)`, so a chunk that merely ends where a reference begins counts.

A zero denominator gives 0, as in Chroma. The verdict uses the references trimmed (section 4).

Each question's ranking is exact top-k with pruning (`topk`), equal to the full ranking.
"""

import math
import statistics
from dataclasses import dataclass

from ragsim.judge import spans
from ragsim.errors import RequestError
from ragsim.fields import get_int, get_str, shown
from ragsim.text.index import terms as bm25_terms
from ragsim.rank.queries import Setting, Words, collection_paused
from ragsim.rank import reranking
from ragsim.rank.ranking import MaxScore

VERDICTS = ("intact", "ranked_out", "cut")


@dataclass(frozen=True)
class Question:
    """One question: `refs` as given and `spans` trimmed, both `(doc position, start, end)`."""

    id: str
    query: str
    refs: tuple
    spans: tuple


# --- reading a question set --------------------------------------------------------------------

def _doc_position(docs: list[dict], doc_id, where: str) -> int:
    for i, d in enumerate(docs):
        if d["id"] == doc_id:
            return i
    raise RequestError(where, f"{where} names no document ({shown(doc_id)}); use one of the documents' ids.")


def _short(s, n: int = 40) -> str:
    s = str(s)
    return repr(s if len(s) <= n else s[: n - 3] + "...")


def read_reference(ref, docs: list[dict], where: str) -> tuple[tuple, tuple]:
    """A reference `{doc, start, end}` -> (as given, trimmed), each `(doc position, start, end)`.
    A reference may carry its `content`, which must then be the text at its offsets."""
    if not isinstance(ref, dict):
        raise RequestError(where, f"Give {where} as {{doc, start, end}}.")
    d = _doc_position(docs, ref.get("doc"), f"{where}.doc")
    start = get_int(ref, "start", f"{where}.start", minimum=0)
    end = get_int(ref, "end", f"{where}.end", minimum=0)
    text = docs[d]["text"]
    if start > end:
        raise RequestError(where, f"{where} ends ({end}) before it starts ({start}); mark the answer again.")
    if end > len(text):
        raise RequestError(where, f"{where} ({start}-{end}) lies outside its document "
                                  f"({len(text)} characters); mark the answer again.")
    if not text[start:end].strip():
        raise RequestError(where, f"{where} is empty once whitespace is trimmed; mark some text.")
    content = ref.get("content")
    if content is not None and content != text[start:end]:
        raise RequestError(where, f"{where}: the content {_short(content)} is not the text at {start}-{end} of "
                                  f"{shown(docs[d]['id'])}, which reads {_short(text[start:end])}; fix the offsets or the content.")
    s, t = spans.trim(text, start, end, where)
    return (d, start, end), (d, s, t)


def read_question(q, docs: list[dict], where: str, fallback_id: str) -> Question:
    """One question object `{id, query, references: [...]}`, or RequestError naming the field."""
    if not isinstance(q, dict):
        raise RequestError(where, f"Give {where} as {{id, query, references}}.")
    qid = get_str(q, "id", f"{where}.id", default=fallback_id)
    if not qid:
        raise RequestError(f"{where}.id", f"{where}.id is empty; give every question an id.")
    query = get_str(q, "query", f"{where}.query", default="")
    refs = q.get("references")
    if not isinstance(refs, list) or not refs:
        raise RequestError(f"{where}.references",
                           f"Question {shown(qid)} has no references; mark at least one answer span for it.")
    read = [read_reference(r, docs, f"{where}.references[{j}]") for j, r in enumerate(refs)]
    return Question(qid, query, tuple(r for r, _ in read), tuple(s for _, s in read))


def read_question_set(value, docs: list[dict], field: str = "questions") -> list[Question]:
    """The request's `questions`: a non-empty list with unique ids."""
    if not isinstance(value, list):
        raise RequestError(field, f"Give {field} as a list of {{id, query, references}} objects.")
    if not value:
        raise RequestError(field, "The question set is empty; add at least one question or leave it out.")
    out, seen = [], {}
    for i, q in enumerate(value):
        where = f"{field}[{i}]"
        question = read_question(q, docs, where, str(i + 1))
        if question.id in seen:
            raise RequestError(f"{where}.id", f"Question ids must be unique; {shown(question.id)} is used by "
                                              f"{field}[{seen[question.id]}] and {where}.")
        seen[question.id] = i
        out.append(question)
    return out


# --- the metrics -------------------------------------------------------------------------------

def union_length(intervals) -> int:
    """Characters in the union of `(start, end)` intervals."""
    iv = [(s, e) for s, e in intervals if s < e]
    if not iv:
        return 0
    return spans.covered(iv, min(s for s, _ in iv), max(e for _, e in iv))


def _by_doc(refs) -> dict:
    out: dict = {}
    for d, a, b in refs:
        out.setdefault(d, []).append((a, b))
    return out


def _merged(intervals) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def chroma_scores(refs, top, setting: Setting) -> dict:
    """covered, recall, precision, iou of references `refs` against retrieved positions `top`."""
    sum_f = sum(b - a for _, a, b in refs)
    sum_r = sum(setting.ends[c] - setting.starts[c] for c in top)
    covered = ref_covered = 0
    for d, rs in _by_doc(refs).items():
        sent = [(setting.starts[c], setting.ends[c]) for c in top if setting.doc_of[c] == d]
        if not sent:
            continue
        covered += sum(spans.covered(sent, a, b) for a, b in _merged(rs))
        ref_covered += sum(spans.covered(sent, a, b) for a, b in rs)
    unused = sum_f - ref_covered  # each reference's characters outside the covered union
    return {
        "covered": covered,
        "recall": covered / sum_f if sum_f else 0,
        "precision": covered / sum_r if sum_r else 0,
        "iou": covered / (sum_r + unused) if sum_r + unused else 0,
    }


def precision_omega(refs, setting: Setting) -> float:
    """The IoU of perfect retrieval: every chunk touching a reference retrieved, over unions."""
    num = den = 0
    for d, rs in _by_doc(refs).items():
        chunks = {e for a, b in rs for e in setting.touching(d, a, b)}
        if not chunks:
            den += union_length(rs)
            continue
        within = sum(spans.covered(list(chunks), a, b) for a, b in _merged(rs))
        num += within
        den += union_length(chunks) + union_length(rs) - within
    return num / den if num else 0


def judge(question: Question, top: list[int], setting: Setting, query: MaxScore | None) -> tuple[str, int | None]:
    """The verdict over the trimmed spans, and needed_k (the worst of their best ranks; None when cut).

    Without a `query` (a map cell) a ranked-out question's needed_k is not computed."""
    ranks_in_top = {c: i + 1 for i, c in enumerate(top)}
    wholes = []
    for d, s, t in question.spans:
        whole = setting.whole_range(d, s, t)
        if not whole:
            return "cut", None
        wholes.append(whole)
    best = [min((ranks_in_top[c] for c in whole if c in ranks_in_top), default=None) for whole in wholes]
    if None not in best:
        return "intact", max(best)
    if query is None:
        return "ranked_out", None
    needed = max(r if r is not None else query.best_rank(whole) for whole, r in zip(wholes, best))
    return "ranked_out", needed


def context_tokens(top: list[int], setting: Setting, count=None) -> int:
    """Tokens of the context the top chunks make, joined by blank lines: `count(context)` when given
    (a request's top-level tokenizer, SPEC section 9), else the estimate of SPEC section 5."""
    if count is not None:
        texts = setting.words.indexes
        return count("\n\n".join(texts[setting.doc_of[c]].text[setting.starts[c]:setting.ends[c]] for c in top))
    chars = sum(setting.ends[c] - setting.starts[c] for c in top) + 2 * max(0, len(top) - 1)
    return math.ceil(chars / 4)


def query_terms(question: Question, analyzer) -> list[str]:
    ts = bm25_terms(question.query)
    return analyzer(ts) if analyzer is not None else ts


def rank_question(q: Question, setting: Setting, analyzer=None):
    """The question's ranking at `setting`: BM25's (ranking.MaxScore), or the dense or hybrid one when the
    setting's retrieval carries a `dense` ranker (dense.QuestionRanker, SPEC section 10)."""
    terms = query_terms(q, analyzer)
    ranker = setting.retrieval.get("dense")
    ranked = ranker.query(setting, q.query, terms) if ranker is not None else setting.query(terms)
    rerank = setting.retrieval.get("rerank")  # a reranker over the first chunks (reranking.Options)
    if rerank is None or getattr(ranker, "pending", False):
        return ranked
    texts = setting.words.indexes
    return reranking.Reranked(ranked, rerank, q.query,
                              lambda p: texts[setting.doc_of[p]].text[setting.starts[p]:setting.ends[p]])


def reranked_out(q: Question, verdict: str, query, setting: Setting, k: int) -> dict:
    """`{"after_reranking": bool}` for a question ranked with a reranker (whether it was within k
    before the reranker moved it out), else {}."""
    if not isinstance(query, reranking.Reranked) or query.pending:
        return {}
    wholes = [setting.whole_range(d, s, t) for d, s, t in q.spans]
    return {"after_reranking": reranking.after_reranking(verdict, wholes, query.before.top(k))}


def evaluate(questions: list[Question], setting: Setting, k: int, price: float, analyzer=None,
             count=None) -> tuple[list, dict]:
    """Per-question results (input order) and `question_stats` at one setting."""
    with collection_paused():
        return _evaluate(questions, setting, k, price, analyzer, count)


def _evaluate(questions, setting, k, price, analyzer, count):
    out = []
    tokens = []
    for q in questions:
        query = rank_question(q, setting, analyzer)
        top = query.top(k)
        verdict, needed = judge(q, top, setting, query)
        scores = chroma_scores(q.refs, top, setting)
        tokens.append(context_tokens(top, setting, count))
        out.append({"id": q.id, "verdict": verdict, "needed_k": needed, "recall": scores["recall"],
                    "precision": scores["precision"], "iou": scores["iou"],
                    "precision_omega": precision_omega(q.refs, setting), "covered": scores["covered"],
                    "retrieved": [c + 1 for c in top], "context_tokens": tokens[-1],
                    **reranked_out(q, verdict, query, setting, k)})
    return out, question_stats(out, tokens, price)


def question_stats(results: list[dict], tokens: list[int], price: float) -> dict:
    """Counts per verdict, means and population standard deviations over the set."""

    def mean(key):
        return statistics.fmean(r[key] for r in results) if results else None

    def std(key):
        return statistics.pstdev([float(r[key]) for r in results]) if results else None

    token_mean = statistics.fmean(tokens) if tokens else None
    return {
        "count": len(results),
        **{v: sum(1 for r in results if r["verdict"] == v) for v in VERDICTS},
        "recall_mean": mean("recall"), "recall_std": std("recall"),
        "precision_mean": mean("precision"), "precision_std": std("precision"),
        "iou_mean": mean("iou"), "iou_std": std("iou"),
        "precision_omega_mean": mean("precision_omega"),
        "context_tokens_mean": token_mean,
        "cost_mean": None if token_mean is None else token_mean * price / 1_000_000,
    }
