"""BM25 with the collection's statistics handed in (issue 26): a part of a corpus scored as the whole
corpus would score it.

`ranking.score_all` takes N, the average length and each term's document frequency from the chunks
it is given. A command that streams a corpus too large for one request gathers those statistics in
a first pass (`Collection`) and scores each batch of documents against them here: every chunk's
score has the bits `score_all` gives it over the whole corpus (each term's weight from the variant's
own formula, added in query order from 0.0), and a chunk holding no query term scores 0.0.
"""

from dataclasses import dataclass

from ragsim.errors import RequestError
from ragsim.rank.bm25 import SHIFTED, check_parameters, formulas


@dataclass(frozen=True)
class Collection:
    """What BM25 reads of the whole corpus: its chunks, their term count together, and in how many
    chunks each term occurs."""

    chunks: int
    total: int  # the sum of every chunk's length in terms
    df: dict  # term -> chunks holding it (terms absent everywhere may be left out)

    def merged(self, other: "Collection") -> "Collection":
        df = dict(self.df)
        for t, n in other.df.items():
            df[t] = df.get(t, 0) + n
        return Collection(self.chunks + other.chunks, self.total + other.total, df)


def document_frequencies(terms, occurrence, n: int) -> dict:
    """In how many of `n` chunks each term occurs, from `occurrence(t)` (`Corpus.occurrence`'s pairs),
    counted as `ranking.score_all` counts it; terms absent from every chunk are left out."""
    out = {}
    for t in terms:
        chunks, tfs = occurrence(t)
        df = len(chunks) if chunks is not None else n - tfs.count(0)
        if df:
            out[t] = df
    return out


class Scorer:
    """BM25 over one part's chunks with the collection's statistics: each term's weight in each chunk
    holding it computed once (`weight(idf, tf, dl, ...)`, the variant's own formula) and shared by
    every query that asks for the term. `lengths[p]` is chunk p's term count, `occurrence(t)` as
    `Corpus.occurrence`."""

    def __init__(self, lengths, occurrence, collection: Collection, variant="lucene", k1=1.2, b=0.75, delta=0.5):
        if variant in SHIFTED:  # these score absent terms too: every chunk of every part, not a seam's job
            raise RequestError("retrieval.variant", f"{variant} scores every chunk for a term it lacks; a corpus "
                               "read in parts ranks with lucene, robertson or atire.")
        self.idf, self.weight = formulas(variant)
        check_parameters(variant, k1, b, delta)
        self.lengths, self.occurrence, self.collection = lengths, occurrence, collection
        self.k1, self.b, self.delta = k1, b, delta
        self.l_avg = collection.total / collection.chunks if collection.chunks and collection.total else None
        self.weights: dict = {}

    def term(self, t: str) -> dict:
        """`{position: weight}` of term t in the chunks holding it (empty when it is nowhere)."""
        got = self.weights.get(t)
        if got is None:
            df = self.collection.df.get(t, 0)
            got = {}
            if df and self.l_avg is not None:
                chunks, tfs = self.occurrence(t)
                pairs = zip(chunks, tfs) if chunks is not None else ((p, tf) for p, tf in enumerate(tfs) if tf)
                idf, w, lengths = self.idf(df, self.collection.chunks), self.weight, self.lengths
                got = {p: w(idf, tf, lengths[p], self.l_avg, self.k1, self.b, self.delta) for p, tf in pairs}
            self.weights[t] = got
        return got

    def scores(self, query_terms) -> dict:
        """`{position: score}` for the chunks holding a query term: the weights added in query order
        from 0.0, as `ranking.score_all` adds them (a term a chunk lacks adds nothing)."""
        columns = [self.term(t) for t in query_terms]
        out: dict = {}
        for p in sorted({p for column in columns for p in column}):
            s = 0.0
            for column in columns:
                w = column.get(p)
                if w is not None:
                    s += w
            out[p] = s
        return out


def scores_of(query_terms, lengths, occurrence, collection: Collection, variant="lucene", k1=1.2, b=0.75,
              delta=0.5) -> dict:
    """`{position: score}` for the chunks of a part holding at least one query term (every other chunk
    scores 0.0): one query's `Scorer.scores`."""
    return Scorer(lengths, occurrence, collection, variant, k1, b, delta).scores(query_terms)
