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


def scores_of(query_terms, lengths, occurrence, collection: Collection, variant="lucene", k1=1.2, b=0.75,
              delta=0.5) -> dict:
    """`{position: score}` for the chunks of a part holding at least one query term (every other chunk
    scores 0.0): `lengths[p]` is chunk p's term count, `occurrence(t)` as `Corpus.occurrence`."""
    if variant in SHIFTED:  # these score absent terms too: every chunk of every part, not a seam's job
        raise RequestError("retrieval.variant", f"{variant} scores every chunk for a term it lacks; a corpus "
                           "read in parts ranks with lucene, robertson or atire.")
    idf_f, weight = formulas(variant)
    check_parameters(variant, k1, b, delta)
    N, total = collection.chunks, collection.total
    if N == 0 or total == 0:
        return {}
    l_avg = total / N
    held = {}
    for t in dict.fromkeys(query_terms):
        df = collection.df.get(t, 0)
        if not df:
            continue
        chunks, tfs = occurrence(t)
        pairs = zip(chunks, tfs) if chunks is not None else ((p, tf) for p, tf in enumerate(tfs) if tf)
        held[t] = (idf_f(df, N), dict(pairs))
    scores: dict = {}
    for p in sorted({p for _, tf_of in held.values() for p in tf_of}):
        s = 0.0
        for t in query_terms:
            got = held.get(t)
            if got is not None and p in got[1]:
                s += weight(got[0], got[1][p], lengths[p], l_avg, k1, b, delta)
        scores[p] = s
    return scores
