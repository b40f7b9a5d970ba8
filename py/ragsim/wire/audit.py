"""The corpus audit: every detected fact against every split of an overlap sweep.

For each overlap the audit splits all documents once and asks, per fact, whether some chunk holds
its name-to-value stretch whole (SPEC section 4: otherwise the fact is destroyed), whether the
stretch was no longer than the overlap (fixed windows never destroy those), and, asking the fact's
name as the query, whether a chunk that answers it ranks in the top `precision_k` (default 3).
"""

from ragsim import limits, split as splitters
from ragsim.rank import bm25, reranking
from ragsim.rank import ranking
from ragsim.judge import facts as fact_rules
from ragsim.judge.fact_chunks import answering_chunks, facts_of, stretch_units
from ragsim.rank.corpus import rankable
from ragsim.split import registry
from ragsim.split.session import Session
from ragsim.wire import cost, encode_dense, keys
from ragsim.wire.jsonio import json_call
from ragsim.wire.request import query_terms_for, read_documents, read_given, read_retrieval_options
from ragsim.errors import RequestError
from ragsim.fields import get_int, shown

DEFAULT_OVERLAPS = (0, 25, 50, 100, 150, 300)


def read_overlaps(request: dict) -> list[int]:
    overlaps = request.get("overlaps", list(DEFAULT_OVERLAPS))
    if not isinstance(overlaps, list) or not overlaps:
        raise RequestError("overlaps", "Give overlaps as a list of whole numbers, e.g. [0, 25, 50].")
    for o in overlaps:
        if isinstance(o, bool) or not isinstance(o, int) or o < 0:
            raise RequestError("overlaps", f"Every overlap must be a whole number of at least 0 (got {shown(o)}).")
    out = list(dict.fromkeys(overlaps))  # in order, duplicates dropped, in O(n)
    if len(out) > limits.MAX_OVERLAPS:
        raise RequestError("overlaps", f"An audit runs at most {limits.MAX_OVERLAPS} overlaps (got {len(out):,}); "
                           "give fewer.")
    return out


def audit(request: dict, session: Session | None = None, budget: cost.Budget = cost.INTERACTIVE,
          progress=None) -> dict:
    """Audit request -> table; `{"error": ...}` for a request that breaks the contract or would cost
    more than `budget` (ragsim.wire.cost). `progress(done, overlaps, row)`, when given, is called
    after each overlap (the command line shows it)."""
    try:
        return table(request, session, budget, progress)
    except RequestError as e:
        return e.as_response()


def estimate(request: dict, docs: list[dict]) -> cost.Cost:
    """What an audit costs: each overlap splits and ranks every document again (a sweep of them)."""
    overlaps = request.get("overlaps", list(DEFAULT_OVERLAPS))
    chunking = request.get("chunking") if isinstance(request.get("chunking"), dict) else {}
    return cost.work(docs, chunking, sweep=overlaps[: limits.MAX_OVERLAPS] if isinstance(overlaps, list) else [])


def table(request: dict, session: Session | None = None, budget: cost.Budget = cost.INTERACTIVE,
          progress=None) -> dict:
    """`audit`'s table, or RequestError naming the first wrong field (`wire.inspect` calls this)."""
    session = session if session is not None else Session()
    if not isinstance(request, dict):
        raise RequestError("request", "The request must be a JSON object.")
    keys.check(request, keys.AUDIT_REQUEST)
    docs = read_documents(request)
    session.hold(len(docs))
    chunking = request.get("chunking")
    if not isinstance(chunking, dict):
        raise RequestError("chunking", "Give chunking as an object with unit and size.")
    overlaps = read_overlaps(request)
    cost.guard(estimate(request, docs), budget)
    given = read_given(chunking, docs)  # chunks read back from an index (SPEC 11): one split, no sweep
    strategy = chunking.get("strategy")  # checked by the splitter: here it may be any JSON
    if given is not None or (isinstance(strategy, str) and strategy in registry.EMBEDDING):  # a semantic chunker has no overlap
        overlaps = overlaps[:1]
    retrieval = read_retrieval_options(request.get("retrieval") or {})
    retrieval["rerank"] = reranking.read_options(request.get("retrieval") or {})  # None without a reranker
    ranker = _dense_ranker(request.get("retrieval") or {}, docs, session)  # None for BM25
    precision_k = get_int(request, "precision_k", "precision_k", default=3, minimum=1)
    texts = [d["text"] for d in docs]
    indexes = [session.index(t, retrieval["analyzer"]) for t in texts]
    found = [(di, f) for di, index in enumerate(indexes) for f in facts_of(index)]

    rows = []
    per_fact = [{"destroyed_at": [], "found_at": [], "answering": {}} for _ in found]
    baseline_found = None
    for o in overlaps:
        try:
            row, answered, in_top = _one_overlap(indexes, found, dict(chunking, overlap=o), o, retrieval, precision_k, session,
                                                 ranker, given)
        except RequestError as e:
            rows.append({"overlap": o, "error": e.message})
            if progress is not None:
                progress(len(rows), len(overlaps), rows[-1])
            continue
        if baseline_found is None:
            baseline_found = in_top
        row["dropped_top_k"] = sum(1 for i in baseline_found if i not in in_top and answered[i])
        rows.append(row)
        if progress is not None:
            progress(len(rows), len(overlaps), row)
        for i, numbers in enumerate(answered):
            per_fact[i]["answering"][str(o)] = numbers
            if not numbers:
                per_fact[i]["destroyed_at"].append(o)
            if i in in_top:
                per_fact[i]["found_at"].append(o)

    facts_out = _facts_table(docs, texts, found, per_fact)
    out = {"facts": facts_out, "rows": rows, "precision_k": precision_k, "overlaps": overlaps}
    if ranker is not None:
        encode_dense.questions(ranker.report(), out)
    if retrieval["rerank"] is not None:
        out["rerank"] = reranking.report(retrieval["rerank"])
    return out


def _facts_table(docs, texts, found, per_fact) -> list[dict]:
    """Each fact found: where its name, value and sentence are, their texts, the part of the sentence to
    show, and at which overlaps it was destroyed or found."""
    return [{"doc": docs[di]["id"], **fact_rules.described(texts[di], f), **extra} for (di, f), extra in zip(found, per_fact)]


def _dense_ranker(r: dict, docs: list[dict], session):
    """Dense or hybrid (SPEC section 10): each fact's name is a query of its own, ranked by its cosines
    (from the host, or from the page's `retrieval.question_similarities` keyed by the name's text)."""
    from ragsim.rank import dense

    options = dense.read_options(r)
    if options.method == "bm25":
        return None

    class Req:  # what QuestionRanker reads of a simulate request
        retriever, query = options, ""

    Req.docs = docs
    return dense.QuestionRanker(Req, session)


def _one_overlap(indexes, found, chunking, overlap, retrieval, precision_k, session, ranker=None, given=None):
    """One row of the table, the chunk numbers answering each fact, and the facts found in the top k
    (`given`: each document's stored chunks as a Split, SPEC section 11, instead of splitting)."""
    corpus = rankable(indexes, list(range(len(indexes))), session, chunking, given)
    columns = [corpus.doc_columns(d) for d in range(len(indexes))]
    answered, destroyed, destroyed_within = [], 0, 0
    for di, f in found:
        a, z = f.stretch
        chunks = [c + corpus.first_chunk[di] for c in answering_chunks(*columns[di], a, z)]
        answered.append([c + 1 for c in chunks])
        if not chunks:
            destroyed += 1
            size = stretch_units(indexes[di], corpus.unit, a, z, chunking)
            if size is not None and size <= overlap:
                destroyed_within += 1
    in_top = _found_in_top(indexes, found, answered, corpus, columns, retrieval, precision_k, ranker)
    row = {
        "overlap": overlap,
        "unit": corpus.unit,
        "chunks": len(corpus.starts),
        "units_stored": sum(corpus.units),
        "facts": len(found),
        "destroyed": destroyed,
        "destroyed_within_overlap": destroyed_within,
        "found_top_k": len(in_top),
        "error": None,
    }
    return row, answered, in_top


def _found_in_top(indexes, found, answered, corpus, columns, retrieval, precision_k, ranker) -> set:
    """Precision: the facts whose answering chunk ranks within `precision_k` with the fact's name as
    the query. Facts sharing a name share one ranking."""
    by_name: dict[tuple, list[int]] = {}
    rerank = retrieval.get("rerank")
    for i, (di, f) in enumerate(found):
        if answered[i]:
            name = indexes[di].text[f.name[0] : f.name[1]]
            key = tuple(query_terms_for(name, retrieval["analyzer"]))
            plain = ranker is None and rerank is None  # dense and a reranker: the text is the query
            by_name.setdefault(key if plain else (key, name), []).append(i)
    in_top = set()
    for key, members in by_name.items():
        q = list(key if ranker is None and rerank is None else key[0])
        occ = {t: corpus.occurrence(t) for t in dict.fromkeys(q)}
        scores = ranking.score_all(q, corpus.lengths, occ, retrieval["variant"], retrieval["k1"], retrieval["b"],
                                   retrieval["delta"])
        if ranker is not None:
            scores = ranker.scores_over(key[1], indexes, *map(list, zip(*columns)), scores)
        if rerank is not None:  # the first chunks reordered by the reranker, the name as the query
            def text_of(p):
                return indexes[corpus.doc_of[p]].text[corpus.starts[p]:corpus.ends[p]]

            order = ranking.rank(scores)
            ranks = {p: r for r, p in enumerate(reranking.rerank(rerank, key[1], order, text_of) or order, 1)}
            in_top.update(i for i in members if min(ranks[n - 1] for n in answered[i]) <= precision_k)
            continue
        ordered = sorted(scores)
        for i in members:
            best = min(answered[i], key=lambda number: (-scores[number - 1], number)) - 1
            if ranking.rank_of(scores, best, ordered) <= precision_k:
                in_top.add(i)
    return in_top


def audit_json(request_json: str, session: Session | None = None) -> str:
    """The audit, string to string, for the worker."""
    return json_call(audit, request_json, session)


GAP_UNITS = {"chars": "characters", "words": "words", "tokens": "tokens"}


def corpus_sentence(rows: list[dict], facts: int, documents: int, gap: int | None, unit: str | None,
                    window: bool = True, size: int | None = None) -> str:
    """The audit in the study's words: how many facts of this shape across how many documents, how
    many chunking destroys at the first and the last overlap audited, and the longest name-to-value
    stretch of a fact found, in the split's unit (a fixed window whose overlap is no shorter never
    cuts it: SPEC section 2). A stretch longer than the chunk `size` fits in no chunk: then the
    sentence says a larger size, not an overlap, is what would keep it."""
    def count(n, word):
        return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"

    if not facts:
        return f"No facts of this shape found across {count(documents, 'document')}"
    said = f"{count(facts, 'fact')} of this shape across {count(documents, 'document')}"
    ok = [r for r in rows if not r.get("error")]
    if ok:
        said += f"; chunking destroys {ok[0]['destroyed']:,} at overlap {ok[0]['overlap']}"
        if len(ok) > 1:
            said += f" and {ok[-1]['destroyed']:,} at {ok[-1]['overlap']}"
    if gap is not None and unit in GAP_UNITS:
        said += f"; the longest name-to-value gap is {count(gap, GAP_UNITS[unit][:-1])}"
        if size is not None and gap > size:
            said += (f", longer than the chunk size of {size:,}: no overlap keeps that fact whole, only a chunk size "
                     f"above {gap:,} would")
        elif window:
            said += ", so an overlap above it loses none"
    return said
