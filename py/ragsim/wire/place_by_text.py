"""Chunks whose metadata names no given source (raw chromadb without metadatas, read as one document
"document"; a LlamaIndex docstore whose document ids are not the files' names), placed in the
`--source` files by their text: each such chunk goes to a source that holds its text verbatim, the
one most of its document's other chunks went to where several hold it. A chunk found in none keeps
the document it named (rebuilt from its chunks). Pure: the one-request inspect calls `by_text`; the
streamed one gathers the candidates a source at a time and calls `choose`."""

from collections import Counter


def holders(text: str, sources: list[tuple[str, str]]) -> list[str]:
    """The ids of the sources (id, text) holding `text` verbatim, in order."""
    return [sid for sid, body in sources if text.strip() and text in body]


def choose(found: dict, group_of: dict) -> dict:
    """{chunk key: source id}: `found[key]` the sources holding that chunk, `group_of[key]` the
    document it named. A chunk held by one source goes there; one held by several goes where most of
    its document's singly held chunks went, else to the first."""
    votes: dict = {}
    for key, ids in found.items():
        if len(ids) == 1:
            votes.setdefault(group_of[key], Counter())[ids[0]] += 1
    out = {}
    for key, ids in found.items():
        if not ids:
            continue
        counted = votes.get(group_of[key], Counter())
        out[key] = max(ids, key=lambda sid: (counted[sid], -ids.index(sid)))
    return out


def by_text(stored: list, sources: list[dict], stored_type) -> list:
    """`stored` (Stored chunks) with each chunk that names no source moved to the source holding its
    text (`choose`); the others as they are. `stored_type` builds a chunk (id, text, doc, start, end)."""
    ids = {d["id"] for d in sources}
    loose = [i for i, c in enumerate(stored) if c.doc not in ids]
    if not loose or not sources:
        return stored
    bodies = [(d["id"], d["text"]) for d in sources]
    chosen = choose({i: holders(stored[i].text, bodies) for i in loose}, {i: stored[i].doc for i in loose})
    out = list(stored)
    for i, sid in chosen.items():
        c = stored[i]
        out[i] = stored_type(c.id, c.text, sid, c.start, c.end)  # offsets that do not hold its text are not trusted
    return out
