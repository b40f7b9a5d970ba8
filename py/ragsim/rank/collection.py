"""The collection's statistics: what BM25 reads of a whole corpus, gathered part by part.

`ranking.score_all` takes N, the average length and each term's document frequency from the chunks
it is given. A command that streams a corpus too large for one request gathers those statistics in
a first pass (`Collection`, `document_frequencies`) and ranks each batch against them:
`rank.weights.Terms(..., stats=collection.stats)` gives every weight the bits `score_all` gives it
over the whole corpus, and `rank.ranking.MaxScore` ranks each query over the batch.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Collection:
    """What BM25 reads of the whole corpus: its chunks, their term count together, and in how many
    chunks each term occurs."""

    chunks: int
    total: int  # the sum of every chunk's length in terms
    df: dict  # term -> chunks holding it (terms absent everywhere may be left out)

    @property
    def stats(self) -> tuple:
        """`(n_chunks, total_length, df)`, as `rank.weights.Terms` takes them."""
        return self.chunks, self.total, self.df

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
