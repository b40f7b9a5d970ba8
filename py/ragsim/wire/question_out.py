"""The question set's and the settings map's answers (SPEC section 8): `wire.answers` calls `write`
once when the request wants either. The judging is `judge.questions.evaluate` and
`judge.settings_map.settings_map`; this module reads their inputs and writes their fields.
"""

from ragsim.errors import RequestError
from ragsim.judge.pipeline import context_tokens as exact_tokens
from ragsim.judge.questions import Question, evaluate, read_question_set
from ragsim.judge.settings_map import read_map, settings_map
from ragsim.rank.dense import QuestionRanker
from ragsim.rank.queries import Setting, Words
from ragsim.wire import encode_dense


def write(req, judged, out: dict, session) -> None:
    """Add `questions` and `question_stats` (when the request wants "questions") and `map` (when it
    wants "map") to the response `out`. The map scores the request's question set when it has one,
    wanted or not, else one question: the marked span with the request's query."""
    wanted, inputs = req.asks.wanted, req.asks.inputs
    raw = inputs.get("questions")
    grid = read_map(inputs, req.chunking) if "map" in wanted else None
    questions = read_question_set(raw, req.docs) if raw is not None else None
    retrieval, ranker = _retrieval(req, session)
    words = Words([session.index(d["text"], req.analyzer) for d in req.docs])
    count = None
    if req.tokenizer is not None:  # SPEC section 9: exact tokens of each context
        def count(text):
            return exact_tokens(req, text)
    setting = None
    if grid is not None and req.given is not None:
        raise RequestError("map", "The map varies a splitter's size and overlap; stored chunks have neither. "
                                  "Simulate the splitter that made them (inspect names it) to map its settings.")
    if questions is not None and "questions" in wanted:
        setting = Setting(words, req.chunking, session, retrieval, req.given)
        out["questions"], out["question_stats"] = evaluate(questions, setting, req.k, req.price, req.analyzer, count)
    if grid is not None:
        if questions is None:
            if req.span is None:
                raise RequestError("map", "The map scores a question set or the marked answer; "
                                          "mark an answer or add questions first.")
            questions = [Question("span", req.query, (req.span,), (req.span,))]
        out["map"] = settings_map(words, req.chunking, retrieval, req.k, questions, req.price, *grid, session, count,
                                  known=setting)
    if ranker is not None:
        encode_dense.questions(ranker.report(), out)
    if setting is not None:
        setting.release()


def _retrieval(req, session) -> tuple[dict, QuestionRanker | None]:
    """The retrieval every question is ranked by (a Setting's), and its dense ranker (None for BM25)."""
    retrieval = {"variant": req.variant, "k1": req.k1, "b": req.b, "delta": req.delta, "analyzer": req.analyzer}
    ranker = None
    if req.retriever.method != "bm25":  # dense or hybrid (SPEC section 10): each question's query embedded
        ranker = retrieval["dense"] = QuestionRanker(req, session)
    if req.retriever.rerank is not None:  # each question's first chunks reordered by the reranker
        retrieval["rerank"] = req.retriever.rerank
    return retrieval, ranker
