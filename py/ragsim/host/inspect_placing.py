"""The streamed inspect's chunks that name no `--source` file (no metadata, a document id that is not
a file's name), placed in the files by their text (`wire.place_by_text`). The loose chunks are read
from the spill in batches of at most BATCH_CHARS characters of text, and for each batch the files are
read one at a time: memory holds one batch and one file, and a store whose loose chunks fit one batch
reads each file once."""

from ragsim.wire.place_by_text import choose, holders

BATCH_CHARS = 50_000_000


def _batches(spill, loose: list[str]):
    batch, held = [], 0
    for seq, doc, record in spill.rows_of(loose):
        text = record.get("text") if isinstance(record, dict) else None
        if not isinstance(text, str):
            continue
        batch.append((seq, doc, text))
        held += len(text)
        if held >= BATCH_CHARS:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def place_loose(spill, source_ids: list[str], read_text) -> None:
    """Move each chunk of a document that is no source to the source holding its text (`read_text(id)`
    gives a source's text); a chunk no source holds stays where it was."""
    known = set(source_ids)
    loose = [doc for doc in spill.docs if doc not in known]
    if not loose or not source_ids:
        return
    found: dict = {}
    group_of: dict = {}
    for batch in _batches(spill, loose):
        for seq, doc, _ in batch:
            group_of[seq], found[seq] = doc, []
        for sid in source_ids:
            body = [(sid, read_text(sid))]
            for seq, _, text in batch:
                found[seq] += holders(text, body)
    moved = choose(found, group_of)
    if moved:
        spill.move(moved)
