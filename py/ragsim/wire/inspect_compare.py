"""Your index against a splitter you name (`inspect --chunking`): does this chunking make
exactly the chunks the store holds? Per document, how many stored chunk texts the splitter makes
too, and the first stored chunk it does not make. It answers for any registered splitter, the
semantic chunkers included (which `identify` cannot search: their cuts depend on the embeddings);
their vectors come from the session's host (CPython: onnxruntime), else the document is pending.
"""

from collections import Counter

from ragsim.errors import RequestError
from ragsim.split import registry
from ragsim.split.session import Session
from ragsim.wire import keys


def compare(chunking, al, session: Session | None = None) -> dict:
    """`{"chunking", "described", "same", "documents": [{doc, stored, made, reproduced, first_difference, pending}]}`."""
    check(chunking)
    return compared(chunking, rows(chunking, al, session))


def check(chunking) -> None:
    """RequestError when `chunking` is no splitter to compare with."""
    if not isinstance(chunking, dict):
        raise RequestError("chunking", 'Give chunking as an object, e.g. {"strategy": "langchain-semantic"}.')
    keys.check({"chunking": chunking})  # an unknown field is named with the nearest valid one
    if chunking.get("strategy") == "stored":
        raise RequestError("chunking.strategy", "Compare the stored chunks with a splitter, not with themselves.")


def rows(chunking: dict, al, session: Session | None = None) -> list[dict]:
    """Per document of `al` holding stored chunks: its row (a store checked a document at a time
    gathers them: `host.jobs.inspect_stream`)."""
    session = session or Session()
    rows = []
    for d in al.documents:
        stored = al.of(d.id)
        if not stored or not d.text:
            continue
        split, _ = session.split(session.index(d.text), chunking)
        texts = getattr(split, "texts", None) or [d.text[s:e] for s, e in zip(split.starts, split.ends)]
        made = Counter(texts)
        first, reproduced = None, 0
        for c in stored:
            if made[c.text] > 0:
                made[c.text] -= 1
                reproduced += 1
            elif first is None:
                first = c.id
        semantic = getattr(split, "semantic", None)
        rows.append({"doc": d.id, "stored": len(stored), "made": len(split), "reproduced": reproduced,
                     "first_difference": first, "pending": bool(semantic and semantic["pending"])})
    return rows


def compared(chunking: dict, rows: list[dict]) -> dict:
    """The answer from the documents' rows, in order."""
    sp = registry.of(chunking)
    return {"chunking": chunking, "described": sp.describe(chunking) if sp else str(chunking.get("strategy")),
            "same": all(r["reproduced"] == r["stored"] == r["made"] for r in rows), "documents": rows}
