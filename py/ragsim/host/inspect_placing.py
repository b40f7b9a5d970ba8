"""The streamed inspect's chunks that name no `--source` file (no metadata, a document id that is not
a file's name), placed in the files by their text (`wire.place_by_text`): the files read one at a
time, each checked against those chunks read from the spill, so no more than one file's text and
the chunks' candidate lists are held at once."""

from ragsim.wire.place_by_text import choose, holders


def place_loose(spill, source_ids: list[str], read_text) -> None:
    """Move each chunk of a document that is no source to the source holding its text (`read_text(id)`
    gives a source's text); a chunk no source holds stays where it was."""
    known = set(source_ids)
    loose = [doc for doc in spill.docs if doc not in known]
    if not loose or not source_ids:
        return
    found: dict = {}
    group_of: dict = {}
    for sid in source_ids:
        body = [(sid, read_text(sid))]
        for seq, doc, record in spill.rows_of(loose):
            text = record.get("text") if isinstance(record, dict) else None
            group_of[seq] = doc
            found.setdefault(seq, []).extend(holders(text, body) if isinstance(text, str) else [])
    moved = choose(found, group_of)
    if moved:
        spill.move(moved)
