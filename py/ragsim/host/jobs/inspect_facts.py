"""A fact's `found_top_k` over a store checked a document at a time (`inspect_stream`): its
name ranked by BM25 over every placed chunk of the index, as one request's fact audit ranks it
(`wire.audit`), from three passes over the placed documents, each in memory alone:

1. `keys`: each document's facts' names, as queries (their terms);
2. `count`: the collection's statistics over the placed chunks (chunks, total length, each query
   term's document frequency);
3. `rank`: each document's chunks weighed under them (`rank.weights.Terms`), each query ranked over
   them by `rank.ranking.MaxScore`; per query the best k positive chunks merged across documents,
   per fact its best answering chunk; the fact is found when that chunk ranks within k.

Chunk positions run over the placed chunks in document order, as one request numbers them.

With dense retrieval (`--method dense`) a name's query is its text and the passes are two: `keys`,
then `rank`, each document's placed chunks embedded and their cosines with every name taken by
`audit_dense.top_by_cosine` (one request's bits), per name the best k merged across documents.

With a reranker (`retrieval.rerank`) each name keeps its best max(k, depth) chunks (a BM25 name with
fewer positive ones followed by the first placed chunks, as one request ranks them), `rerank` reads
the texts of the chunks some name keeps in one more pass and reorders each name's first `depth` by the
reranker (the name's text the query, each list asked once: `host.jobs.audit_rerank`); a fact is found
when one of its answering chunks is then within k.
"""

import heapq

from ragsim.host.jobs.audit_rerank import name_of
from ragsim.host.jobs.audit_stream import BatchSplit, present_terms, terms_of
from ragsim.rank import reranking
from ragsim.rank.corpus import rankable
from ragsim.rank.ranking import MaxScore
from ragsim.split.session import Session
from ragsim.text.extents import Split
from ragsim.judge.fact_chunks import answering_chunks, facts_of
from ragsim.wire.request import query_terms_for, read_retrieval_options


def key_of(k):
    """A name's key back from JSON: its text (dense), its terms, or (terms, text) with a reranker."""
    if isinstance(k, str):
        return k
    return (tuple(k[0]), k[1]) if len(k) == 2 and isinstance(k[0], list) else tuple(k)


class FoundTopK:
    """The three passes' state; `documents()` yields each placed document's (text, extents) per pass."""

    def __init__(self, k: int, retrieval: dict | None = None):
        self.k = k
        self.dense = (retrieval or {}).get("method", "bm25") == "dense"
        self.reranker = reranking.read_options(retrieval or {})
        self.kept = k if self.reranker is None else max(k, self.reranker.depth)  # each name's best chunks kept
        self.retrieval = read_retrieval_options({"k": k, **{n: v for n, v in (retrieval or {}).items()
                                                            if n not in ("method", "rerank")}})
        self.keys: dict[tuple, None] = {}
        self.collection = None
        self.best: dict[tuple, list] = {}
        # per fact in order: (key, score, position, its answering positions) or None (no answering chunk)
        self.facts: list[tuple] = []
        self.tops: dict = {}  # with a reranker: each name's top k positions after it (`rerank`)

    def _corpus(self, text: str, extents: list):
        session = Session()
        index = session.index(text, self.retrieval["analyzer"])
        split = Split([(s, e, e - s) for s, e in extents], "chars", len(text))
        return index, rankable([index], [0], session, {"strategy": "stored"}, given=[split])

    def _key(self, text, fact):
        name = text[fact.name[0]:fact.name[1]]
        if self.dense:
            return name
        terms = tuple(query_terms_for(name, self.retrieval["analyzer"]))
        return terms if self.reranker is None else (terms, name)  # the reranker reads the name's text

    def keys_of(self, text: str) -> None:
        """Pass 1, a document: its facts' queries."""
        session = Session()
        for f in facts_of(session.index(text, self.retrieval["analyzer"])):
            self.keys.setdefault(self._key(text, f), None)

    def count(self, documents) -> None:
        """Pass 2: every placed document's chunks, lengths and query terms' document frequencies
        (BM25's: dense needs none)."""
        if self.dense:
            return
        wanted = {t for key in self.keys for t in terms_of(key)}
        chunks = total = 0
        df: dict = {}
        for text, extents in documents:
            index, corpus = self._corpus(text, extents)
            split = BatchSplit()
            split.add(corpus, present_terms(index, corpus, wanted), corpus.holding)
            chunks += len(corpus.starts)
            total += sum(corpus.lengths)
            for t, (positions, _) in split.found.items():
                df[t] = df.get(t, 0) + len(positions)
        self.collection = (chunks, total, df)

    def rank(self, documents) -> None:
        """Pass 3: per query its best k positive chunks; per fact its best answering chunk."""
        if self.dense:
            self._rank_dense(documents)
            return
        by_term: dict = {}
        for key in self.keys:
            for t in terms_of(key):
                by_term.setdefault(t, []).append(key)
        base = 0
        for text, extents in documents:
            index, corpus = self._corpus(text, extents)
            split = BatchSplit()
            split.add(corpus, present_terms(index, corpus, set(by_term)), corpus.holding)
            terms = split.terms(self.collection, self.retrieval)
            ranked = {key: MaxScore(terms, list(terms_of(key))) for key in {k for t in split.found for k in by_term[t]}}
            for key, ms in ranked.items():
                top = [(-s, p + base) for p in ms.top(self.kept) if (s := ms.score_of(p)) > 0]
                self.best[key] = heapq.nsmallest(self.kept, self.best.get(key, []) + top)
            starts, ends = corpus.doc_columns(0)
            for f in facts_of(index):
                chunks = answering_chunks(starts, ends, *f.stretch)
                key = self._key(text, f)
                if not chunks:
                    self.facts.append(None)
                    continue
                ms = ranked.get(key)
                s, p = min(((ms.score_of(c) if ms else 0.0, c) for c in chunks), key=lambda x: (-x[0], x[1]))
                self.facts.append((key, s, p + base, [c + base for c in chunks]))
            base += len(starts)
        self.total = base

    def _rank_dense(self, documents) -> None:
        """Pass 3 by cosine: each document's placed chunks embedded (in this process), ranked against
        every name; per name the best k chunks, per fact its best answering chunk."""
        from ragsim.host.jobs import eval_dense
        from ragsim.host.jobs.audit_dense import top_by_cosine

        model = eval_dense.embedder(None)
        np, names = model.np, list(self.keys)
        vectors_of_names = eval_dense.query_vectors(names, None)
        key_id = {name: i for i, name in enumerate(names)}
        base = 0
        for text, extents in documents:
            index, corpus = self._corpus(text, extents)
            starts, ends = corpus.doc_columns(0)
            asked = []
            for f in facts_of(index):
                chunks = answering_chunks(starts, ends, *f.stretch)
                self.facts.append(None)
                if chunks:
                    name = key_id[self._key(text, f)]
                    asked.append((name, chunks, (len(self.facts) - 1, name, [c + base for c in chunks])))
            if starts:
                vectors = model.embed([text[a:z] for a, z in zip(starts, ends)]).astype(np.float64)
                model.cache.clear()
                best, answers = top_by_cosine(np, vectors, vectors_of_names, self.kept, base, asked)
                for i, top in best.items():
                    self.best[names[i]] = heapq.nsmallest(self.kept, self.best.get(names[i], []) + top)
                for (at, name, answering), (s, p) in answers:
                    self.facts[at] = (names[name], s, p, answering)
            base += len(starts)
        self.total = base

    def _kept_of(self, key) -> list[int]:
        """A name's best positions kept, BM25's followed by the first placed chunks up to `kept`."""
        ranked = [p for _, p in self.best.get(key, [])]
        if not self.dense:
            held = set(ranked)
            ranked += [p for p in range(min(self.total, 2 * self.kept)) if p not in held][: max(0, self.kept - len(ranked))]
        return ranked

    def rerank(self, documents) -> None:
        """With a reranker, after `rank`: the texts of the chunks some name keeps (one more pass over
        the placed documents), then each name's first `depth` reordered and its top k kept."""
        if self.reranker is None:
            return
        lists = {key: self._kept_of(key) for key in {f[0] for f in self.facts if f is not None}}
        wanted, texts, base = {p for ranked in lists.values() for p in ranked}, {}, 0
        for text, extents in documents:
            texts.update((base + i, text[s:e]) for i, (s, e) in enumerate(extents) if base + i in wanted)
            base += len(extents)
        for key, ranked in lists.items():
            order = reranking.rerank(self.reranker, name_of(key), ranked, texts.__getitem__) or ranked
            self.tops[key] = set(order[: self.k])

    def found(self) -> list[bool]:
        """Per fact, in order: whether its best answering chunk ranks within k for its name (a chunk
        scoring 0 follows every positive one and the zero-scoring ones before it)."""
        out = []
        for fact in self.facts:
            if fact is None:
                out.append(False)
                continue
            key, score, p, answering = fact
            best = self.best.get(key, [])
            if self.reranker is not None:  # one of its answering chunks within k after the reranker
                out.append(any(a in self.tops[key] for a in answering))
                continue
            if score > 0 or self.dense:  # dense keeps each name's best k whatever their cosine
                out.append((-score, p) in best)
            else:
                out.append(len(best) < self.k and 1 + len(best) + p - sum(q < p for _, q in best) <= self.k)
        return out
