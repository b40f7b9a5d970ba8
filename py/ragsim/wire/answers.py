"""The answers a request can want, and the one place that says who writes each into the response.

`ANSWERS` is the table: each answer's name, the request fields that ask for it, the fields its
writer reads besides, and the writer, a function `(req, judged, out, session)` that adds its
fields to the response `out`. `write` runs the wanted answers' writers in the table's order, then
`finish`: the verdict's fields that wait for every other answer (a sweep's runs add chunks to embed;
a question in a document still waiting for its vectors is pending).

A request names its answers in `"answers": [...]`, or, without that field, wants every answer one
of whose fields it holds (not null); the verdict is answered either way. Named, an answer whose
fields are all missing is refused with a sentence saying what to add, and a field whose answer is
not named is not read: it is neither checked nor answered, nor counted by the cost guard (the map
reads the question set as its questions whether "questions" is named or not).
"""

import difflib
from dataclasses import dataclass

from ragsim.errors import RequestError
from ragsim.fields import shown
from ragsim.rank import reranking
from ragsim.wire import encode, encode_dense, investigate, question_out
from ragsim.wire.request import Asks, Request, read_request


def _verdict(req, judged, out: dict, session) -> None:
    out.update(encode.response(req, judged))  # the first writer: `out` is empty until here


@dataclass(frozen=True)
class Answer:
    name: str
    asked_by: tuple  # the request fields that ask for it: any one given asks (none: always answered)
    reads: tuple  # the fields its writer reads besides
    add: str  # what to add when `answers` names it and the request holds none of `asked_by`
    write: object  # (req, judged, out, session) -> None: its fields added to the response `out`


ANSWERS = (
    # SPEC section 6: the chunks, verdict, fact, stats and context; dense's and the reranker's reports
    Answer("verdict", (), (), "", _verdict),
    # the investigation panels (wire.investigate): a phrase found, the cuts at overlap 0, an overlap
    # sweep, context expansion
    Answer("panels", ("find", "cuts", "sweep", "expand"), (), "find, cuts, sweep or expand", investigate.answer),
    # SPEC section 8: the question set's verdicts and metrics, and the settings map (one writer: the
    # map's cell at the request's own setting is the question set's, ranked once)
    Answer("questions", ("questions",), (), "questions (a question set)", question_out.write),
    Answer("map", ("map",), ("questions",), 'map ({"sizes": [...], "overlaps": [...]})', question_out.write),
)
NAMES = tuple(a.name for a in ANSWERS)


def read(request) -> Request:
    """`request.read_request`'s Request with the answers it wants (`Request.asks`), or RequestError
    naming the first wrong field: the request's own fields first, then `answers`."""
    req = read_request(request)
    req.asks = read_asks(request)
    return req


def read_asks(request: dict) -> Asks:
    """The answers `request` wants (its `answers`, else those its fields ask for) and their fields."""
    named = request.get("answers")
    if named is None:
        wanted = tuple(a.name for a in ANSWERS
                       if not a.asked_by or any(request.get(f) is not None for f in a.asked_by))
    else:
        wanted = _named(named, request)
    inputs = {f: request[f] for a in ANSWERS if a.name in wanted for f in (*a.asked_by, *a.reads)
              if request.get(f) is not None}
    return Asks(wanted, inputs)


def _named(named, request: dict) -> tuple:
    if not isinstance(named, list):
        raise RequestError("answers", f"Give answers as a list of names from {', '.join(NAMES)}, "
                                      'such as ["verdict", "questions"].')
    for i, name in enumerate(named):
        answer = next((a for a in ANSWERS if a.name == name), None)
        if answer is None:
            near = difflib.get_close_matches(name, NAMES, n=1) if isinstance(name, str) else []
            hint = f"perhaps you meant {near[0]}" if near else f"use one of {', '.join(NAMES)}"
            raise RequestError(f"answers[{i}]", f"answers[{i}] is {shown(name)}, which is not an answer; {hint}.")
        if answer.asked_by and all(request.get(f) is None for f in answer.asked_by):
            raise RequestError(f"answers[{i}]", f"answers names {name} but the request has no {answer.add}; "
                                                f"add it, or take {name} out of answers.")
    return tuple(a.name for a in ANSWERS if not a.asked_by or a.name in named)


def write(req: Request, judged, session) -> dict:
    """The response: each wanted answer's writer in the table's order (a writer shared by two
    answers runs once), then `finish`."""
    out: dict = {}
    done = []
    for a in ANSWERS:
        if a.name in req.asks.wanted and a.write not in done:
            done.append(a.write)
            a.write(req, judged, out, session)
    finish(req, judged, out, session)
    return out


def finish(req: Request, judged, out: dict, session) -> None:
    """The verdict's fields written after every other answer: the chunks dense retrieval still needs
    embedded (a sweep's runs add theirs), the reranker's report, and SPEC section 12's
    `semantic_needs` with the verdicts (a question's too) pending while a document waits for vectors."""
    encode_dense.needs(req, out)
    if req.retriever.rerank is not None:
        out["rerank"] = reranking.report(req.retriever.rerank)
    encode.semantic(req, judged, out, session.semantic, req.asks.inputs.get("questions"))
