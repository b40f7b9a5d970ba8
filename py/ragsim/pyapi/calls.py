"""The four calls of the Python API: each builds the request its command builds, runs the same core
function, and answers the JSON the command prints, wrapped in a result object (`pyapi.results`).

    simulate(documents, query, answer, ...)   python -m ragsim < request.json
    evaluate(documents, questions, ...)       python -m ragsim eval FILES --questions Q --json
    audit(documents, ...)                     python -m ragsim audit FILES --json
    inspect(store, sources, ...)              python -m ragsim inspect STORE --source FILES --json

Settings are the commands' (900-character windows, overlap 0, k 5 unless told), given as keywords or
as a library's splitter object (`splitter=`, `pyapi.splitters`); documents, answers and question
sets as `pyapi.inputs` reads them; stores as `pyapi.stores` reads them. CPython's hosts (tiktoken's
rank files, the onnxruntime model, pypdf) are registered on the first call, so dense retrieval,
exact tokens and PDFs need nothing imported first; under Pyodide nothing is registered.
"""

from __future__ import annotations

import functools
import sys

from ragsim.errors import RequestError
from ragsim.host.commands import cli_common
from ragsim.pyapi import inputs, splitters, stores
from ragsim.pyapi.results import Audit, Evaluation, Inspection, Simulation
from ragsim.judge.fact_chunks import stretch_units
from ragsim.split import registry
from ragsim.text.index import DocIndex
from ragsim.wire import api as wire_api, audit as wire_audit, cost, inspect as inspection


def _hosts() -> None:
    if sys.platform != "emscripten":  # the page's worker provides its own rank files and vectors
        from ragsim import host

        host.register()


def public(call):
    """A call of the API: the hosts registered first; bad input raised as one RequestError from the
    call itself (`field: sentence`), not from deep inside."""

    @functools.wraps(call)
    def run(*args, **kwargs):
        _hosts()
        try:
            return call(*args, **kwargs)
        except RequestError as e:
            error = RequestError(e.field, e.message)
        raise error from None

    return run


def _checked(response: dict) -> dict:
    if "error" in response:
        raise RequestError(response["error"]["field"], response["error"]["message"])
    return response


def setting(splitter=None, strategy=None, size=None, overlap=None, unit=None, chunking=None) -> dict:
    """The request's chunking, as `eval` builds it: a splitter object's (or `chunking`'s) settings,
    else `strategy` at the commands' defaults (900 characters, overlap 0), with the keywords given on top."""
    if splitter is not None and chunking is not None:
        raise RequestError("splitter", "Give splitter= (a library's splitter) or chunking= (a dict), not both.")
    if splitter is not None or chunking is not None:
        base = splitters.chunking_of(splitter if splitter is not None else chunking,
                                     "splitter" if splitter is not None else "chunking")
        if strategy is not None and strategy != base.get("strategy", "window"):
            raise RequestError("strategy", f"strategy={strategy!r} differs from the splitter's "
                                           f"{base.get('strategy', 'window')!r}; give one of them.")
    else:
        base = cli_common.chunking_for(strategy or "window", cli_common.DEFAULT_SIZE, 0)
        if cli_common.picks_unit(base["strategy"]):
            base["unit"] = cli_common.DEFAULT_UNIT
    for name, value in (("size", size), ("overlap", overlap), ("unit", unit)):
        if value is not None:
            base[name] = value
    return base


def _retrieval(k, method, retrieval) -> dict:
    return {"k": k, **({} if method == "bm25" else {"method": method}), **(retrieval or {})}


@public
def simulate(documents, query: str = "", answer=None, *, splitter=None, strategy=None, size=None, overlap=None,
             unit=None, chunking=None, k: int = 5, method: str = "bm25", retrieval=None, tokenizer=None,
             price_per_million=None) -> Simulation:
    """One simulation: the documents split, ranked for `query`, and the `answer` (its text, found in
    the documents, or `(doc, start, end)`) judged intact, ranked out or cut."""
    docs = inputs.documents(documents)
    request = {"documents": docs, "query": query, "chunking": setting(splitter, strategy, size, overlap, unit, chunking),
               "retrieval": _retrieval(k, method, retrieval), "span": inputs.span(answer, docs)}
    if tokenizer is not None:
        request["tokenizer"] = tokenizer
    if price_per_million is not None:
        request["price_per_million"] = price_per_million
    return Simulation(_checked(wire_api.simulate(request, budget=cost.BATCH)), request)


@public
def evaluate(documents, questions, *, splitter=None, strategy=None, size=None, overlap=None, unit=None,
             chunking=None, k: int = 5, method: str = "bm25", retrieval=None, map_sizes=None,
             map_overlaps=None) -> Evaluation:
    """A question set's verdicts, recall, precision and IoU over the documents at one setting (and a
    map of settings with `map_sizes` and `map_overlaps`)."""
    docs = inputs.documents(documents)
    request = {"documents": docs, "query": "", "chunking": setting(splitter, strategy, size, overlap, unit, chunking),
               "retrieval": _retrieval(k, method, retrieval), "questions": inputs.questions(questions, docs)}
    if (map_sizes is None) != (map_overlaps is None):
        raise RequestError("map_sizes", "Give map_sizes and map_overlaps together.")
    if map_sizes is not None:
        request["map"] = {"sizes": list(map_sizes), "overlaps": list(map_overlaps)}
    response = _checked(wire_api.simulate(request, budget=cost.BATCH))
    shown = {key: response[key] for key in ("questions", "question_stats", "map") if key in response}
    return Evaluation({**shown, "skipped": []}, response, request)


@public
def audit(documents, *, splitter=None, strategy=None, size=None, unit=None, chunking=None,
          overlaps=wire_audit.DEFAULT_OVERLAPS, top: int = 3, method: str = "bm25", retrieval=None) -> Audit:
    """Every name-value fact of the documents, checked at each overlap: destroyed by a boundary, and
    found in the top `top` when its name is asked."""
    docs = inputs.documents(documents)
    chunking = setting(splitter, strategy, size, None, unit, chunking)
    chunking.pop("overlap", None)  # each row sets its own
    sp = registry.of(chunking)
    overlaps = list(overlaps)[:1] if sp is not None and sp.embeds else list(overlaps)  # a semantic chunker: one row
    request = {"documents": docs, "chunking": chunking, "overlaps": overlaps, "precision_k": top,
               "retrieval": {**({} if method == "bm25" else {"method": method}), **(retrieval or {})}}
    result = _checked(wire_audit.audit(request, budget=cost.BATCH))
    if result["rows"] and all(row.get("error") for row in result["rows"]):
        raise RequestError("overlaps", f"every overlap was refused; the first: {result['rows'][0]['error']}")
    return Audit({**result, "sentence": _audit_sentence(result, docs, chunking), "skipped": []})


def _audit_sentence(result: dict, docs: list[dict], chunking: dict) -> str:
    """The audit's sentence as the streamed command says it, with the longest name-to-value stretch
    of a fact in the split's unit (`audit_stream` measures it with the same `stretch_units`)."""
    unit = next((r["unit"] for r in result["rows"] if not r.get("error")), None)
    texts = {d["id"]: d["text"] for d in docs}
    indexes: dict = {}
    sizes = [stretch_units(indexes.setdefault(f["doc"], DocIndex.build(texts[f["doc"]])), unit, *f["stretch"], chunking)
             for f in result["facts"]] if unit is not None else []
    gap = max((n for n in sizes if n is not None), default=None)
    size = chunking.get("size") if isinstance(chunking.get("size"), int) else None
    return wire_audit.corpus_sentence(result["rows"], len(result["facts"]), len(docs), gap, unit,
                                      chunking.get("strategy", "window") == "window", size)


@public
def inspect(store, sources=None, *, phrases=(), questions=None, k: int = 5, method: str = "bm25", splitter=None,
            tokenizer=None, collection=None, text_field=None, doc_field=None) -> Inspection:
    """Your own index: its chunks placed in their `sources` (else rebuilt from the chunks), the
    splitter that made them, each phrase present or cut, the facts it destroyed, and a question set's
    verdicts over those chunks. `splitter`: a splitter to compare the chunks with."""
    read = stores.stored(store, collection=collection, text_field=text_field, doc_field=doc_field)
    docs = inputs.documents(sources, "sources") if sources is not None else []
    if isinstance(phrases, str):
        phrases = [phrases]
    request = {"chunks": read["chunks"], "phrases": list(phrases), "retrieval": _retrieval(k, method, None)}
    if docs:
        request["documents"] = docs
    if tokenizer is not None:
        request["tokenizer"] = tokenizer
    if splitter is not None:
        request["chunking"] = splitters.chunking_of(splitter)
    if questions is not None:
        request["question_file"] = inputs.question_file(questions, docs)
    result = {"store": read["store"], **_checked(inspection.inspect(request))}
    rebuilt = [{"id": d["id"], "text": d["text"]} for d in result["documents"] if d.get("rebuilt")]
    return Inspection(result, docs + rebuilt, method, k)
