"""One reading of a whole index (SPEC section 11's `splitter_index`): the settings that reproduce the
most stored chunks over all its documents, named once, the documents they do not reproduce listed,
and the settings that reproduce as many said (a tie).

`identify` names a splitter per document, and a document of one short chunk reads as any size; so
the candidates are the settings the documents named (or came nearest to), each split over every
document and scored by the chunks it reproduces there (same extent).

LlamaIndex's `SentenceSplitter` and `TokenTextSplitter` take the tokens of each Document's metadata
string off `chunk_size` (`split_text_metadata_aware`; TokenTextSplitter 2 tokens more), so a
document's chunks are reproduced at a size that changes with, say, the length of its file's path.
Where the stored nodes carry their metadata (`metadata_str`, rebuilt by `wire.node_metadata`), the
configured size is tried as well: a document's reproduced size plus its metadata's tokens, and the
library's default sizes, each split at size less that document's metadata tokens. Such a setting is
named as the user configured it, "of which N tokens go to metadata".

Streamed: `IndexReading(rows, metadata)`, then `add(doc, text, extents)` per placed document (only
where `needs_texts`), then `result()`.
"""

from collections import Counter

from ragsim import split as splitters
from ragsim.errors import RequestError
from ragsim.judge.identify_families import LI_SIZES
from ragsim.judge.identify_report import describe
from ragsim.text import tokens
from ragsim.text.index import DocIndex

# the node parsers that split "metadata aware", with the tokens they take off besides the string's
METADATA_AWARE = {"llamaindex-sentence": 0, "llamaindex-token": 2}
LLAMAINDEX_TOKENIZER = "cl100k_base"  # llama_index.core's get_tokenizer(): tiktoken's gpt-3.5-turbo
MAX_CANDIDATES = 12


def metadata_tokens(metadata: dict) -> dict:
    """Each document's metadata string counted in LlamaIndex's tokens: {doc: tokens}; empty where
    none is known or the tokenizer cannot be had."""
    strings = {doc: s for doc, s in metadata.items() if isinstance(s, str)}
    if not strings:
        return {}
    try:
        count = tokens.get(LLAMAINDEX_TOKENIZER).count
    except (RequestError, ValueError):
        return {}
    return {doc: count(s) for doc, s in strings.items()}


def _setting(row: dict) -> dict | None:
    if row.get("strategy"):
        return {"strategy": row["strategy"], **(row.get("fields") or {})}
    near = row.get("nearest")
    return {"strategy": near["strategy"], **(near.get("fields") or {})} if near else None


def _key(setting: dict, aware: bool) -> tuple:
    return aware, tuple(sorted((k, repr(v)) for k, v in setting.items()))


def candidates(rows: list[dict], taken: dict) -> list[tuple[dict, bool]]:
    """(setting, metadata aware) pairs worth trying, the likeliest first: the metadata-aware ones
    (what LlamaIndex does by default), then by how many documents named them, the defaults first."""
    named: Counter = Counter()
    found: dict = {}

    def offer(setting, aware, votes):
        key = _key(setting, aware)
        found.setdefault(key, (setting, aware))
        named[key] += votes

    for row in rows:
        setting = _setting(row)
        if setting is None:
            continue
        offer(setting, False, 1)
        extra = METADATA_AWARE.get(setting["strategy"], 0)
        if setting["strategy"] in METADATA_AWARE and (extra or any(taken.values())) and taken and \
                isinstance(setting.get("size"), int):
            if row["doc"] in taken:
                offer({**setting, "size": setting["size"] + taken[row["doc"]] + extra}, True, 1)
            for size in LI_SIZES:
                if size > setting.get("overlap", 0):
                    offer({**setting, "size": size}, True, 0)

    def rank(key):
        setting, aware = found[key]
        return (not aware, setting.get("size") not in LI_SIZES, -named[key])

    return [found[k] for k in sorted(found, key=rank)][:MAX_CANDIDATES]


def _reproduced(index: DocIndex, chunking: dict, extents: list) -> int:
    try:
        s = splitters.split(index, chunking)
    except RequestError:
        return 0
    have = Counter(zip(s.starts, s.ends))
    count = 0
    for e in extents:
        if have[e] > 0:
            have[e] -= 1
            count += 1
    return count


class IndexReading:
    """The per-document readings (`identify`'s rows) gathered into one for the index."""

    def __init__(self, rows: list[dict], metadata: dict | None = None):
        self.rows = [r for r in rows if r.get("chunks")]
        self.taken = metadata_tokens(metadata or {})
        self.candidates = candidates(self.rows, self.taken)
        self.own = {r["doc"]: _key(_setting(r), False) for r in self.rows if _setting(r) is not None}
        self.scores = {r["doc"]: [None] * len(self.candidates) for r in self.rows}
        for r in self.rows:  # a document's own reading is known: `identify` measured it
            for i, (setting, aware) in enumerate(self.candidates):
                if not aware and self.own.get(r["doc"]) == _key(setting, False):
                    self.scores[r["doc"]][i] = r["reproduced"]

    @property
    def needs_texts(self) -> bool:
        """Whether some candidate must still be split over some document."""
        return any(v is None for got in self.scores.values() for v in got)

    def add(self, doc: str, text: str, extents: list) -> None:
        """Score every candidate not yet known on one document (`extents`: its placed chunks)."""
        got = self.scores.get(doc)
        if got is None or all(v is not None for v in got):
            return
        index, extents = DocIndex.build(text), [tuple(e) for e in extents]
        for i, (setting, aware) in enumerate(self.candidates):
            if got[i] is None:
                size = setting.get("size")
                if aware:
                    size -= self.taken.get(doc, 0) + METADATA_AWARE[setting["strategy"]]
                got[i] = _reproduced(index, {**setting, "size": size}, extents) if size and size > 0 else 0

    def result(self) -> dict | None:
        """SPEC section 11's `splitter_index`, or None for an index of no chunks or no candidate."""
        if not self.rows or not self.candidates:
            return None
        totals = [sum(got[i] or 0 for got in self.scores.values()) for i in range(len(self.candidates))]
        best = max(range(len(totals)), key=lambda i: (totals[i], -i))
        chunks = sum(r["chunks"] for r in self.rows)
        setting, aware = self.candidates[best]
        ties = [self._named(i) for i in range(len(totals)) if i != best and totals[i] == totals[best]]
        differ = [{"doc": r["doc"], "reproduced": self.scores[r["doc"]][best] or 0, "chunks": r["chunks"],
                   "line": r.get("line", "")}
                  for r in self.rows if (self.scores[r["doc"]][best] or 0) < r["chunks"]]
        out = {**self._named(best), "reproduced": totals[best], "chunks": chunks, "documents": len(self.rows),
               "differ": differ, "ties": ties, "moves_with_overlap": None}
        out["moves_with_overlap"] = next((r.get("moves_with_overlap") for r in self.rows
                                          if r.get("strategy") == setting["strategy"]), None)
        named = 2 * totals[best] >= chunks
        if not named:
            out.update(strategy=None, fields=None, nearest=self._named(best))
        out["line"] = _line(out, named, setting["strategy"])
        return out

    def _named(self, i: int) -> dict:
        setting, aware = self.candidates[i]
        fields = {k: v for k, v in setting.items() if k != "strategy"}
        taken = None
        if aware:
            extra = METADATA_AWARE[setting["strategy"]]
            counts = [self.taken.get(r["doc"], 0) + extra for r in self.rows]
            taken = {"min": min(counts), "max": max(counts),
                     "documents": {r["doc"]: self.taken.get(r["doc"], 0) + extra for r in self.rows}}
        said = describe(setting)
        if taken is not None:
            share = f"{taken['min']} tokens" if taken["min"] == taken["max"] else f"{taken['min']} to {taken['max']} tokens (by document)"
            said += f", of which {share} go to metadata"
        short = ", ".join(f"{k}={v}" for k, v in fields.items() if k in ("size", "overlap"))
        short = short.replace("size=", "chunk_size=").replace("overlap=", "chunk_overlap=")
        return {"strategy": setting["strategy"], "fields": fields, "metadata_tokens": taken, "described": said,
                "short": f"{short}{'' if aware else ' (metadata not taken off)' if self.taken else ''}"}


def _line(out: dict, named: bool, strategy: str) -> str:
    documents = f"{out['documents']:,} document{'' if out['documents'] == 1 else 's'}"
    said = f"{out['described']}: {out['reproduced']:,} of {out['chunks']:,} chunks exactly over {documents}"
    if not named:
        said = f"No mirrored splitter reproduces half of the index's chunks; the nearest is {said}"
    if out["ties"]:
        also = "; ".join(t["short"] if t["strategy"] == strategy else t["described"] for t in out["ties"][:3])
        also += f" and {len(out['ties']) - 3} more" if len(out["ties"]) > 3 else ""
        one = len(out["ties"]) == 1
        said += f"; {also} reproduce{'s' if one else ''} as many, a tie the chunks cannot settle"
    if out["differ"]:
        said += f"; {len(out['differ']):,} document{'s differ' if len(out['differ']) > 1 else ' differs'}"
    return said
