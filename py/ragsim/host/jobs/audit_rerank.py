"""A reranker over the streamed corpus audit (`audit --rerank-endpoint`): one request's audit asks each
fact's name as a query of its own and reorders the first `depth` chunks of its ranking with the
reranker before k is taken (`wire.audit`); streamed, the workers keep each query's best max(k, depth)
chunks over the corpus with their extents (`audit_stream.with_extents`), and the finish reranks them
here, the chunks' texts read from their files, a few documents kept. A BM25 query with fewer positive
chunks than that is followed by the corpus's first chunks, as one request ranks them. Each (overlap,
query) is reranked once; the reranker's client keeps each list it was asked (`host.clients.rerank_endpoint`).
"""

from ragsim.host.corpus import sources
from ragsim.rank import reranking

KEPT_DOCUMENTS = 8  # documents' texts kept while reading chunks


def kept(retrieval: dict, k: int) -> int:
    """How many of each query's best chunks the workers keep: k, or the reranker's depth if more."""
    o = reranking.read_options(retrieval)
    return k if o is None else max(k, o.depth)


def name_of(key) -> str:
    """The text a reranker reads as the query: the fact's name (a dense key, or the second half of
    BM25's (terms, name))."""
    return key if isinstance(key, str) else key[1]


class FileTexts:
    """`(seq, within)` -> that document's text, read from its file again, the last KEPT_DOCUMENTS kept."""

    def __init__(self, files: list, pdf_mode: str):
        self.files, self.pdf_mode, self.kept = files, pdf_mode, {}

    def __call__(self, seq: int, within: int) -> str:
        if (seq, within) not in self.kept:
            if len(self.kept) >= KEPT_DOCUMENTS:
                self.kept.pop(next(iter(self.kept)))
            self.kept[(seq, within)] = sources.read(self.files[seq], self.pdf_mode)[within]["text"]
        return self.kept[(seq, within)]


class Reranked:
    """Whether a fact is found in the top k after the reranker: one of its answering chunks among the
    first k of its name's ranking reordered (`found`), each ranking reordered once."""

    def __init__(self, plan, state: dict, keys: list, progress=None):
        self.options = reranking.read_options(plan.retrieval)
        self.k, self.kept, self.dense = plan.k, kept(plan.retrieval, plan.k), plan.dense
        self.state, self.keys = state, keys
        self.texts = FileTexts(plan.files, plan.pdf_mode)
        self.tops: dict = {}
        self.progress, self.file, self.sizes = progress, None, {s.path: s.size for s in plan.files}
        if progress is not None:
            progress.start("rerank")

    def reading(self, path: str) -> None:
        """The finish reads the facts of file `path` now: the `rerank` pass's progress moves on by file."""
        if self.progress is not None and path != self.file:
            self.file = path
            self.progress.advance(1, self.sizes.get(path, 0))

    def found(self, at: dict, o: str, key: str) -> bool:
        top = self.top(o, key)
        return any(n - 1 in top for n in at["answering"])

    def top(self, o: str, key: str) -> set:
        if (o, key) not in self.tops:
            best = [list(x) for x in self.state["best"].get(o, {}).get(key, [])]
            ranked, extents = [x[1] for x in best], {x[1]: x[2:] for x in best}
            if not self.dense:  # fewer positive chunks than kept: the corpus's first ones follow
                for p, *extent in self.state.get("first", {}).get(o, []):
                    if len(ranked) >= self.kept:
                        break
                    if p not in extents:
                        ranked.append(p)
                        extents[p] = extent

            def text_of(p):
                seq, within, s, e = extents[p]
                return self.texts(seq, within)[s:e]

            order = reranking.rerank(self.options, name_of(self.keys[int(key)]), ranked, text_of) or ranked
            self.tops[(o, key)] = set(order[: self.k])
        return self.tops[(o, key)]

    def report(self) -> dict:
        return reranking.report(self.options)
