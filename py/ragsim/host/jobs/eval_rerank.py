"""A reranker over a streamed question set (`eval` over files with --rerank-endpoint): the workers keep
each question's best max(k, depth) chunks over the corpus instead of k (`kept`), and the merge puts
the first `depth` in the reranker's order (`rank.reranking`, the client `host.clients.rerank_endpoint`) before
k is taken, as one request does. The chunks' texts are read from their files, a few documents kept."""

from ragsim.host.corpus import sources
from ragsim.rank import reranking

KEPT_DOCUMENTS = 8  # documents' texts kept while reading chunks (each read from its file again after)


def options(retrieval: dict):
    """The reranker the run's retrieval names (rank.reranking.Options), or None."""
    return reranking.read_options(retrieval)


def kept(retrieval: dict) -> int:
    """How many of each question's best chunks the workers keep: k, or the reranker's depth if more."""
    o = options(retrieval)
    return retrieval["k"] if o is None else max(retrieval["k"], o.depth)


class DocumentTexts:
    """`texts(d)`: document d's text (a LazyDocument read from its file, or one read already), the
    last KEPT_DOCUMENTS kept."""

    def __init__(self, docs: list):
        self.docs, self.kept = docs, {}

    def __call__(self, d: int) -> str:
        doc = self.docs[d]
        if "text" in doc:  # read already for a reference
            return doc["text"]
        if d not in self.kept:
            if len(self.kept) >= KEPT_DOCUMENTS:
                self.kept.pop(next(iter(self.kept)))
            self.kept[d] = sources.read(doc.source, doc.pdf_mode)[doc.within]["text"]
        return self.kept[d]


def reordered(retrieval: dict, query: str, ranked: list[int], extents: dict, texts: DocumentTexts):
    """`ranked` (positions, best first) with its first `depth` in the reranker's order, and their new
    places (position -> 1-based rank); (ranked, {}) without a reranker."""
    o = options(retrieval)
    if o is None:
        return ranked, {}

    def text_of(p):
        d, s, e = extents[p]
        return texts(d)[s:e]

    order = reranking.rerank(o, query, ranked, text_of) or ranked  # None: scores the request lacks
    return order, {p: i + 1 for i, p in enumerate(order[: o.depth])}


def best_ranks(ranks: dict, places: dict) -> dict:
    """Each span's best rank (`ranks`: its holding chunks -> rank counted over the corpus) after the
    reranker: the best new place of a holding chunk among the first `depth`, else as counted (a chunk
    past the depth keeps its rank)."""
    return {held: min([places[p] for p in held if p in places], default=r) for held, r in ranks.items()}
