"""What a caller holds between requests: indexed texts and their splits, in bounded caches.

A `Session` keeps a small, bounded cache of indexed documents and splits so that a slider drag
re-uses the index (a drag never re-tokenizes the text); without one (`Fresh`), everything is
computed afresh and the response is identical.
"""

import json
from collections import OrderedDict

from ragsim import limits
from ragsim.split import split_and_layout
from ragsim.split.semantic_split import Embeddings
from ragsim.text.index import DocIndex


class _LRU:
    """A dict that forgets its least recently used entries beyond `limit` entries, or beyond a total
    `weight` of `budget` (the newest entry is always kept, whatever it weighs)."""

    def __init__(self, limit: int, budget: int | None = None, weight=None):
        self.limit = limit
        self.data: OrderedDict = OrderedDict()
        self.budget, self.weight, self.weights, self.total = budget, weight, {}, 0

    def get(self, key, make):
        try:
            self.data.move_to_end(key)
            return self.data[key]
        except KeyError:
            value = make()
            self.data[key] = value
            if self.weight is not None:
                self.weights[key] = w = self.weight(value)
                self.total += w
            while len(self.data) > self.limit or (self.budget is not None and self.total > self.budget
                                                  and len(self.data) > 1):
                old, _ = self.data.popitem(last=False)
                self.total -= self.weights.pop(old, 0)
            return value

    def forget(self, key) -> None:
        if key in self.data:
            del self.data[key]
            self.total -= self.weights.pop(key, 0)


def _pending(split_layout) -> bool:
    """A semantic split still waiting for its vectors (never kept: the next request brings them)."""
    return getattr(split_layout[0], "semantic", None) is not None and split_layout[0].semantic["pending"]


class Session:
    """What a caller holds between requests: up to 8 indexed texts and 32 splits of them, or, for a
    request with more documents, all of its documents and 8 splits of each (see `hold`)."""

    def __init__(self, documents: int = 8, splits: int = 32):
        # Bounded in memory too: the characters indexed and the chunks split (ragsim.limits).
        self._indexes = _LRU(documents, limits.CACHE_CHARS, lambda index: len(index.text))
        self._splits = _LRU(splits, limits.CACHE_CHUNKS, lambda split_layout: len(split_layout[0]))
        self._least = (documents, splits)
        self.semantic = Embeddings()  # SPEC section 12: semantic chunkers' kept distances, by key

    def hold(self, documents: int) -> None:
        """Make room for a request's `documents`, so a collection larger than the bounds is indexed
        once rather than once per request; the bounds fall back when smaller requests follow."""
        grow = documents > self._least[0]  # within the bounds, the caller's bounds stand
        self._indexes.limit = documents if grow else self._least[0]
        self._splits.limit = max(self._least[1], 8 * documents) if grow else self._least[1]

    def index(self, text: str, analyzer=None) -> DocIndex:
        key = (text, None if analyzer is None else analyzer.key)
        return self._indexes.get(key, lambda: DocIndex.build(text, analyzer))

    def split(self, doc: DocIndex, chunking: dict):
        try:
            key = (doc.text, doc.analyzer_key, json.dumps(chunking, sort_keys=True))
        except RecursionError:  # a field nested deeper than the encoder goes: the splitter refuses it, uncached
            return split_and_layout(doc, chunking, self.semantic)
        got = self._splits.get(key, lambda: split_and_layout(doc, chunking, self.semantic))
        if _pending(got):
            self._splits.forget(key)
        return got


class Fresh(Session):
    """No caching at all: the from-scratch path the tests compare the cached one against (a semantic
    chunker's distances are kept for the life of the object, one request, so that its map and
    question set do not embed again)."""

    def index(self, text, analyzer=None):
        return DocIndex.build(text, analyzer)

    def split(self, doc, chunking):
        return split_and_layout(doc, chunking, self.semantic)
