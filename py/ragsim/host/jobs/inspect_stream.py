"""`inspect` over a store of any size: the store read a page at a time by its own client
(`stores.store_pages`), each chunk spilled to a temporary SQLite file by the document it names, then
each document placed and checked alone, its source read from `--source` only when its turn comes,
and the per-document parts merged into SPEC section 11's object: the same `documents`, `chunks`,
`unplaced`, `splitter`, `phrases`, `stats` and facts (each one, and those destroyed) as one request
over the same store and sources. Chunk texts are never all in memory; what is kept per chunk is its
report entry (id, document, extent, sizes).

A fact's `found_top_k` ranks its name over every chunk of the store (BM25's collection statistics
over the whole index, or with `--method dense` its cosines): `inspect_facts` does it in more passes
over the placed documents (their extents kept in the spill). A question set's verdicts are computed as one request (`--questions`).

The documents are checked on the run's engine (`corpus.pool`: this machine's processes or a Dask
cluster). With an output (`--jsonl`) each document's line is written as it is checked and its part
of the answer kept beside it (`jsonl_out.Output.keep_part`), so an interrupted run goes on with
`--resume` from the first document not yet checked, to the same answer.
"""

import hashlib
import json

import os
import pickle
import sqlite3
import tempfile
import threading
from collections import Counter

from ragsim.errors import RequestError
from ragsim.host.jobs import inspect_facts
from ragsim.host.jobs.audit_run import Interrupted, content_hash
from ragsim.host.jobs.inspect_placing import place_loose
from ragsim.host.corpus import pool, sources as kb_sources
from ragsim.host.corpus.refused import Refused
from ragsim.host.clients import stores
from ragsim.judge.identify_index import IndexReading
from ragsim.judge.pipeline import overlap_stats
from ragsim.judge.stored import Stored, align, chunks_report, documents_report, read_chunks
from ragsim.judge.stored_checks import phrase_check
from ragsim.rank import dense, reranking
from ragsim.text import tokens as token_counts
from ragsim.wire import inspect as inspection, inspect_compare


class Spill:
    """The store's chunks on disk, by document: (seq, record) rows, documents in order of first sight;
    and, in a second file, each placed document's extents (the workers read the first meanwhile)."""

    def __init__(self):
        self.made: list = []  # (path, connection) of each file made, removed by `close` on every way out
        try:
            self.path, self.db = self._database(
                "CREATE TABLE chunk (seq INTEGER PRIMARY KEY, doc BLOB, id BLOB UNIQUE, record BLOB)",
                "CREATE INDEX by_doc ON chunk (doc, seq)")
            self.placed_path, self.placed_db = self._database(
                "CREATE TABLE placed (n INTEGER PRIMARY KEY, doc BLOB, extents BLOB, rebuilt BLOB)")
        except BaseException:
            self.close()
            raise
        self.docs: dict[str, None] = {}
        self.count = 0
        self.digest = hashlib.sha256()  # every record read, for a resumed run's fingerprint

    def _database(self, *schema) -> tuple[str, sqlite3.Connection]:
        fd, path = tempfile.mkstemp(prefix="ragsim-inspect-", suffix=".sqlite")
        os.close(fd)
        self.made.append([path, None])
        db = self.made[-1][1] = sqlite3.connect(path)
        for statement in schema:
            db.execute(statement)
        return path, db

    def add(self, records: list, sources: list[dict]) -> None:
        for record, c in zip(records, read_chunks(records)):
            doc = inspection.source_of(c.doc, sources, inspection.page_of(record)) if sources else c.doc
            kept = pickle.dumps(record)
            self.digest.update(kept)
            try:
                self.db.execute("INSERT INTO chunk VALUES (?, ?, ?, ?)",
                                (self.count, _cell(doc), _cell(c.id), kept))
            except sqlite3.IntegrityError:
                first = self.db.execute("SELECT seq FROM chunk WHERE id = ?", (_cell(c.id),)).fetchone()[0]
                f = f"chunks[{self.count}]"
                raise RequestError(f"{f}.id", f"{f}.id {c.id!r} repeats chunks[{first}]'s; give every chunk its own id.") from None
            self.docs.setdefault(doc, None)
            self.count += 1

    def rows_of(self, docs: list[str]):
        """(seq, doc, record) of the chunks of `docs`, in store order."""
        for doc in docs:
            for seq, record in self.db.execute("SELECT seq, record FROM chunk WHERE doc = ? ORDER BY seq", (_cell(doc),)):
                yield seq, doc, pickle.loads(record)

    def move(self, moved: dict) -> None:
        """Chunks given another document ({seq: doc}); the documents' order of first sight again."""
        self.db.executemany("UPDATE chunk SET doc = ? WHERE seq = ?", [(_cell(d), s) for s, d in moved.items()])
        rows = self.db.execute("SELECT doc FROM chunk GROUP BY doc ORDER BY MIN(seq)")
        self.docs = {_text(doc): None for doc, in rows}

    def keep_placed(self, placed: list) -> None:
        """Each document's placed extents (and a rebuilt document's text), for the facts' passes."""
        self.placed_db.executemany("INSERT INTO placed (doc, extents, rebuilt) VALUES (?, ?, ?)",
                                   [(_cell(doc), pickle.dumps(extents), _cell(rebuilt)) for doc, extents, rebuilt in placed])

    def placed(self, read_source, with_doc=False):
        """Each placed document's (text, extents), in order; a source's text by `read_source(doc)`;
        `with_doc`: (doc, text, extents)."""
        for doc, extents, rebuilt in self.placed_db.execute("SELECT doc, extents, rebuilt FROM placed ORDER BY n"):
            text = _text(rebuilt) if rebuilt is not None else read_source(_text(doc))
            yield (_text(doc), text, pickle.loads(extents)) if with_doc else (text, pickle.loads(extents))

    def close(self) -> None:
        """The files removed (a journal left by a stop mid-write too), whatever stopped the run."""
        for path, db in self.made:
            if db is not None:
                db.close()
            for name in (path, path + "-journal"):
                try:
                    os.remove(name)
                except FileNotFoundError:
                    pass
        self.made = []


def _cell(text: str | None) -> bytes | None:
    """A string as SQLite keeps it here: its UTF-8 bytes, a lone surrogate (JSON allows "\\ud800" in an
    id, a name or a text; SQLite's text refuses it) kept as its own three bytes, so equal strings
    give equal cells and `_text` gives the string back."""
    return None if text is None else text.encode("utf-8", "surrogatepass")


def _text(cell: bytes) -> str:
    return cell.decode("utf-8", "surrogatepass")


_OPEN = threading.local()  # a worker thread's connection to the spill (a Dask worker runs several threads)


def _records(path: str, doc: str) -> tuple[list[int], list]:
    if getattr(_OPEN, "path", None) != path:
        if getattr(_OPEN, "db", None) is not None:
            _OPEN.db.close()
        _OPEN.path, _OPEN.db = path, sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = _OPEN.db.execute("SELECT seq, record FROM chunk WHERE doc = ? ORDER BY seq", (_cell(doc),)).fetchall()
    return [s for s, _ in rows], [pickle.loads(r) for _, r in rows]


def _sources(args) -> tuple[list[dict], dict]:
    """The sources' ids and titles (each file read once, its text let go), and where each is read."""
    found, missing = kb_sources.walk(args.source, args.glob)
    if missing:
        raise RequestError("source", f"--source {missing[0][0]} cannot be read: it {missing[0][1]}; give the source "
                                     "documents' paths.")
    metas, where = [], {}
    for s in found:
        try:
            docs = kb_sources.read(s, args.pdf_mode)
        except OSError as e:
            raise RequestError("source", f"{s.path} cannot be read ({e.strerror}): give the source documents' paths.") from None
        except ValueError as e:
            raise RequestError("source", str(e).rstrip(".") + ".") from None
        for w, d in enumerate(docs):
            if d["id"] in where:
                raise RequestError("documents", f"Document ids must be unique; {d['id']!r} appears twice.")
            metas.append({"id": d["id"], "title": d["title"]})
            where[d["id"]] = (s, w)
    return metas, where


def check(shared: dict, doc: str) -> dict:
    """One document placed and checked alone (on a worker): its parts of the answer."""
    seqs, records = _records(shared["spill"], doc)
    text = None
    if doc in shared["where"]:
        source, w = shared["where"][doc]
        text = kb_sources.read(source, shared["pdf_mode"])[w]["text"]
    al = align([Stored(c.id, c.text, doc, c.start, c.end) for c in read_chunks(records)], {doc: text} if text is not None else {})
    count = token_counts.get(shared["tokenizer"], "tokenizer").count if shared["tokenizer"] else None
    report = chunks_report(al, count)
    inspection.exported_placements(records, report)
    part = {"seqs": seqs, "report": report, "unplaced": [(s, c.id) for s, c in zip(seqs, al.chunks) if c.start is None],
            "documents": documents_report(al), "overlaps": Counter(), "splitter": inspection.splitters(al),
            "chars": Counter(len(c.text) for c in al.chunks), "tokens": Counter(e["tokens"] for e in report if e["tokens"] is not None),
            "truncated": sum(e is not None for e in dense.read_ends([c.text for c in al.chunks])), "phrases": {}, "placed": [],
            "metadata_str": inspection.node_metadata(records, [Stored(c.id, c.text, doc, None, None) for c in read_chunks(records)])}
    keys = inspect_facts.FoundTopK(shared["k"], shared["retrieval"])
    for d, entry in zip(al.documents, part["documents"]):
        if d.rebuilt:
            entry["text"] = d.text
        rows = al.placed(d.id)
        part["overlaps"].update(max(0, p.end - n.start) for p, n in zip(rows, rows[1:]))
        if d.text:
            part["placed"].append((d.id, sorted((c.start, c.end) for c in rows), d.text if d.rebuilt else None))
            keys.keys_of(d.text)
    part["keys"] = list(keys.keys)
    for i, p in enumerate(shared["phrases"]):
        if isinstance(p, str) and p.strip() and any(p.strip() in t for t in al.texts().values()):
            part["phrases"][i] = [{**e, "source": "phrase"} for e in phrase_check(al, p, f"phrases[{i}]")]
            inspection.advise(part["phrases"][i], part["splitter"], al)
    documents = [{"id": d.id, "title": shared["titles"].get(d.id) or d.id, "text": d.text} for d in al.documents if d.text]
    part["facts"] = inspection.facts({"retrieval": {"k": shared["k"]}}, al, documents, rank=False)["facts"]
    if shared.get("chunking") is not None:  # --chunking: does that splitter make this document's chunks?
        part["compared"] = inspect_compare.rows(shared["chunking"], al)
    return part


class Merged:
    """The per-document parts gathered into one request's answer."""

    def __init__(self, phrases: list):
        self.phrases = phrases
        self.documents, self.chunks, self.unplaced, self.splitter, self.facts = [], [], [], [], []
        self.compared, self.metadata = [], {}
        self.found = [[] for _ in phrases]
        self.chars, self.tokens, self.overlaps, self.truncated = Counter(), Counter(), Counter(), 0

    def add(self, part: dict) -> None:
        self.chunks += zip(part["seqs"], part["report"])
        self.unplaced += part["unplaced"]
        self.documents += part["documents"]
        self.splitter += part["splitter"]
        for name in ("chars", "tokens", "overlaps"):
            getattr(self, name).update(part[name])
        self.truncated += part["truncated"]
        for i, entries in part["phrases"].items():
            self.found[i] += entries
        self.facts += part["facts"]
        self.compared += part.get("compared", [])
        self.metadata.update(part["metadata_str"])

    def result(self, store: dict, k: int, found: list[bool], chunking: dict | None = None) -> dict:
        for i, p in enumerate(self.phrases):
            if not self.found[i]:  # refused in one request's words (found nowhere, or no phrase at all)
                phrase_check(align([], {}), p, f"phrases[{i}]")
        for f, top in zip(self.facts, found):  # ranked over the whole index (inspect_facts)
            f["found_top_k"] = top
        spread = {}
        for name, counts in (("chars", self.chars), ("tokens", self.tokens)):
            got = overlap_stats(counts)
            spread.update({f"{name}_{m}": got[f"overlap_{m}"] for m in ("min", "median", "max")})
        out = {"store": {**store, "chunks": len(self.chunks)}, "documents": self.documents,
                "chunks": [c for _, c in sorted(self.chunks, key=lambda x: x[0])],
                "phrases": [e for entries in self.found for e in entries],
                "stats": {**spread, **overlap_stats(self.overlaps), "truncated": self.truncated},
                "unplaced": [i for _, i in sorted(self.unplaced)], "splitter": self.splitter,
                "verdict": None, "questions": None, "question_stats": None,
                "facts": {"count": len(self.facts), "destroyed": [f for f in self.facts if f["destroyed"]],
                          "found_top_k": sum(found), "precision_k": k, "facts": self.facts}}
        if chunking is not None:
            out["compared"] = inspect_compare.compared(chunking, self.compared)
        return out


COUNTERS = ("chars", "tokens", "overlaps")


def part_record(part: dict) -> dict:
    """A document's part of the answer as one JSON line (kept beside the output for --resume)."""
    return {**part, **{n: sorted(part[n].items()) for n in COUNTERS}, "phrases": sorted(part["phrases"].items())}


def part_of(record: dict) -> dict:
    """A part back from its JSON line, as `check` made it."""
    return {**record, **{n: Counter(dict(record[n])) for n in COUNTERS}, "phrases": dict(record["phrases"]),
            "unplaced": [tuple(u) for u in record["unplaced"]],
            "placed": [(doc, [tuple(e) for e in extents], rebuilt) for doc, extents, rebuilt in record["placed"]],
            "keys": [inspect_facts.key_of(k) for k in record["keys"]]}


def fingerprint(args, chunking, spill: Spill, where: dict) -> str:
    """What a resumed run must match: the options that shape the answer, every record the store
    gave, and each source file's path, size and the hash of its bytes."""
    files = sorted({(s.path, s.size, content_hash(s.path) or "") for s, _ in where.values()})
    reranker = [getattr(args, n, None) for n in ("rerank_endpoint", "rerank_model", "rerank_depth")]
    described = json.dumps([args.store, args.collection, args.text_field, args.doc_field, args.phrase, args.k,
                            args.method, args.tokenizer, args.pdf_mode, chunking, files, spill.digest.hexdigest(), reranker])
    return hashlib.sha256(described.encode("utf-8", "backslashreplace")).hexdigest()


class Checked:
    """The documents' parts gathered as they come; with an output, each document's line written and
    its part kept beside it, and the checkpoint moved on."""

    def __init__(self, spill: Spill, merged: Merged, ranked, out):
        self.spill, self.merged, self.ranked, self.out = spill, merged, ranked, out
        self.state = None

    def begin(self, fingerprint: str, resume: bool) -> int:
        """The first document to check: past those an interrupted run's output holds (`resume`)."""
        if self.out is None:
            return 0
        state = self.out.resume_state(fingerprint) if resume else None
        if state is not None and state.get("complete"):
            raise Refused(f"{self.out.path} is a finished run, so there is nothing to go on with; give --force "
                              "instead of --resume to run it again.")
        self.state = state or self.out.start(fingerprint)
        for record in self.out.kept_parts():
            self._take(part_of(record))
        return self.state["batches_done"]

    def _take(self, part: dict) -> None:
        self.merged.add(part)
        self.spill.keep_placed(part["placed"])
        self.ranked.keys.update(dict.fromkeys(part["keys"]))

    def add(self, part: dict, done: int) -> None:
        self._take(part)
        if self.out is not None:
            self.out.line({"type": "document", **part["documents"][-1], "chunk_entries": part["report"]})
            self.out.keep_part(part_record(part))
            self.state["batches_done"] = self.state["documents"] = done
            self.out.checkpoint(self.state)

    def interrupted(self) -> None:
        """Ctrl-C: with an output, its lines and parts kept for --resume (Interrupted says so)."""
        if self.out is None or self.state is None:
            raise KeyboardInterrupt
        where = self.out.interrupted(self.state)
        raise Interrupted(f"interrupted after {self.state['batches_done']:,} documents; {where}, and the same "
                          "command with --resume goes on from there") from None

    def finish(self, result: dict) -> None:
        if self.out is not None:
            self.out.finish({"type": "summary", **{k: v for k, v in result.items() if k != "chunks"}})


def run(args, chunking=None, progress=None, on_document=None, engine=None, out=None, rerank=None) -> dict:
    """SPEC section 11's object for the store `args.store`, read and checked a document at a time on
    `engine` (`pool.Local(1)`: this process), its chunks compared with the splitter `chunking` (None:
    none); `on_document(entry, chunks, n, total)` sees each document's report as it is made. `out` (a
    `jsonl_out.Output`, or None) gets a line per document and the summary; with `args.resume` the
    run goes on from where an interrupted one's output stops. `rerank`: the request's `retrieval.rerank`
    (a reranker over each fact's ranking, `inspect_facts`), or None."""
    if chunking is not None:
        inspect_compare.check(chunking)
    metas, where = _sources(args)
    store, pages = stores.store_pages(args.store, collection=args.collection, text_field=args.text_field,
                                      doc_field=args.doc_field, progress=progress)
    spill = Spill()
    try:
        for page in pages:
            spill.add(page, metas)
        place_loose(spill, [m["id"] for m in metas], lambda doc: kb_sources.read(where[doc][0], args.pdf_mode)[where[doc][1]]["text"])
        spill.db.commit()  # the workers read it
        if not spill.count:
            raise RequestError("chunks", "The store holds no chunks: there is nothing to inspect.")
        retrieval = {**({} if args.method == "bm25" else {"method": args.method}), **({"rerank": rerank} if rerank else {})}
        checked = Checked(spill, Merged(args.phrase), inspect_facts.FoundTopK(args.k, retrieval), out)
        order = list(spill.docs) + [m["id"] for m in metas if m["id"] not in spill.docs]
        shared = {"spill": spill.path, "where": where, "titles": {m["id"]: m["title"] for m in metas},
                  "pdf_mode": args.pdf_mode, "tokenizer": args.tokenizer, "phrases": args.phrase, "k": args.k,
                  "retrieval": retrieval, "chunking": chunking}
        first = checked.begin(out is not None and fingerprint(args, chunking, spill, where), getattr(args, "resume", False))

        def read_source(doc):
            source, w = where[doc]
            return kb_sources.read(source, args.pdf_mode)[w]["text"]

        try:
            for n, part in (engine or pool.Local(1)).map(check, shared, order[first:]):
                if isinstance(part, pool.Failed):
                    raise RequestError("store", f"The chunks of {order[first + n]!r} could not be checked: {part.reason}.")
                checked.add(part, first + n + 1)
                if on_document is not None:
                    on_document(part["documents"][-1], part["report"], first + n + 1, len(order))
            checked.ranked.count(spill.placed(read_source))
            checked.ranked.rank(spill.placed(read_source))
            checked.ranked.rerank(spill.placed(read_source))
            reading = IndexReading(checked.merged.splitter, checked.merged.metadata)
            for doc, text, extents in spill.placed(read_source, with_doc=True) if reading.needs_texts else ():
                reading.add(doc, text, extents)
        except KeyboardInterrupt:
            checked.interrupted()
        result = {**checked.merged.result(store, args.k, checked.ranked.found(), chunking),
                  "splitter_index": reading.result()}
        if checked.ranked.reranker is not None:
            result["rerank"] = reranking.report(checked.ranked.reranker)
        checked.finish(result)
        return result
    finally:
        spill.close()
