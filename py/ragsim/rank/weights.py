"""Each query term's BM25 weights over one split (`Terms`), computed where a query needs them and
shared by every query of the split: what `ranking.MaxScore` ranks from, for the drag's one query
and a question set's many alike."""

from collections import deque
from heapq import nlargest
from itertools import compress, repeat
from operator import add, mul, setitem, truediv

from ragsim.errors import RequestError
from ragsim.rank.bm25 import SHIFTED, check_parameters, formulas, lucene_norms, weight_lucene


class Terms:
    """Each query term's BM25 weights over one split, shared by every query of it (the drag's one
    query, a question set's many), each computed only where a query needs it: `entry(t)` is
    `(positions or None, tfs, idf, bound)` from `occurrence(t)` (`corpus.Corpus.occurrence`: the
    chunks holding t and how often, or every chunk's tf), None when no chunk holds t; `bound` is the
    most the term can add (every formula grows with tf and shrinks with dl: its weight at its
    largest tf and the shortest chunk's dl), or its largest weight once its weights are computed;
    `weights(t)` is the weight by position of every chunk holding t; `at(t, chunks)`
    the weights of some chunks (0.0 where absent). Every weight has the bits of `ranking.score_all`:
    lucene's is computed from the very subexpression it uses there (`lucene_norms`).

    `stats=(n_chunks, total_length, df)` scores the split as part of a larger corpus (a
    knowledge base streamed in batches): N, the average length and each term's document frequency
    (`df[t]`, 0 when absent) are then the whole corpus's, so each weight has the bits `score_all`
    gives it over the whole corpus. BM25L and BM25+ score every chunk of every part for a term it
    lacks: they are refused there."""

    def __init__(self, lengths: list[int], occurrence, variant: str, k1: float, b: float, delta: float,
                 shared: bool = False, stats=None):
        check_parameters(variant, k1, b, delta)
        self.lengths, self.occurrence = lengths, occurrence
        self.variant, self.k1, self.b, self.delta = variant, k1, b, delta
        self.n = n = len(lengths)  # this split's chunks (positions 0..n-1)
        self.idf, self.weight = formulas(variant)
        self.shifted = variant in SHIFTED
        if stats is None:
            self.N, self.df = n, None
            self.l_avg = sum(lengths) / n if n else 0.0
        else:
            if self.shifted:
                raise RequestError("retrieval.variant", f"{variant} scores every chunk for a term it lacks; a "
                                   "corpus read in parts ranks with lucene, robertson or atire.")
            self.N, total, self.df = stats
            self.l_avg = total / self.N if self.N and total else 0.0
        # lucene's expression divides by k1 * (1 - b + b * dl / avgdl): never 0 under this test
        self.lucene = self.weight is weight_lucene and k1 > 0 and (b < 1 or 0 not in lengths)
        self.norm = self.dl_min = None
        self.shared = shared  # many queries: each term's weights computed whole on first use, its bound exact
        self.entries: dict = {}
        self.tables: dict = {}  # term -> (weight by position, largest weight)
        self.kth: dict = {}

    def entry(self, t: str):
        if t in self.entries:
            return self.entries[t]
        positions, tfs = self.occurrence(t)
        entry = None
        if self.l_avg and tfs:
            df = self.n - tfs.count(0) if positions is None else len(positions)
            if df and self.df is not None:
                df = self.df.get(t, 0)
            if df:
                idf, bound = self.idf(df, self.N), None  # shared: the exact largest weight, from its table
                if not self.shared:
                    if self.dl_min is None:
                        self.dl_min = min(self.lengths)
                    bound = self.weight(idf, max(tfs), self.dl_min, self.l_avg, self.k1, self.b, self.delta)
                entry = (positions, tfs, idf, bound)
        self.entries[t] = entry
        if entry is not None and self.shared:
            self.weights(t)
        return entry

    def bound(self, t: str) -> float:
        table = self.tables.get(t)
        return self.entries[t][3] if table is None else table[1]

    def _of(self, idf: float, chunks: list[int], tfs: list[int]) -> list[float]:
        """The weights of `chunks` holding the term `tfs[i]` times (0 gives 0.0)."""
        if self.lucene:
            if self.norm is not None or len(chunks) * 8 > self.n:  # every chunk's norm, once
                if self.norm is None:
                    self.norm = lucene_norms(self.lengths, self.k1, self.b, self.l_avg)
                norms = map(self.norm.__getitem__, chunks)
            else:
                norms = lucene_norms(map(self.lengths.__getitem__, chunks), self.k1, self.b, self.l_avg)
            return list(map(truediv, map(mul, repeat(idf), tfs), map(add, tfs, norms)))
        lengths, l_avg, k1, b, delta, weight = self.lengths, self.l_avg, self.k1, self.b, self.delta, self.weight
        return [weight(idf, tf, lengths[d], l_avg, k1, b, delta) if tf else 0.0 for d, tf in zip(chunks, tfs)]

    def weights(self, t: str) -> dict:
        table = self.tables.get(t)
        if table is None:
            positions, tfs, idf, _ = self.entries[t]
            if positions is None:
                positions, tfs = list(compress(range(self.n), tfs)), list(compress(tfs, tfs))
            w = self._of(idf, positions, tfs)
            table = self.tables[t] = (dict(zip(positions, w)), max(w))
        return table[0]

    def at(self, t: str, chunks: list[int]) -> list[float]:
        """The weights of `chunks` (distinct), 0.0 where t is absent, computed for those alone."""
        table = self.tables.get(t)
        if table is not None:
            return list(map(table[0].get, chunks, repeat(0.0)))
        positions, tfs, idf, _ = self.entries[t]
        if positions is None:  # every chunk's tf at hand
            return self._of(idf, chunks, list(map(tfs.__getitem__, chunks)))
        where = dict(zip(chunks, range(len(chunks))))
        held = list(map(where.__contains__, positions))
        inside = list(compress(positions, held))
        out = [0.0] * len(chunks)
        deque(map(setitem, repeat(out), map(where.__getitem__, inside), self._of(idf, inside, list(compress(tfs, held)))),
              maxlen=0)
        return out

    def kth_weight(self, t: str, k: int) -> float:
        """The k-th largest weight of term t (0 when fewer chunks hold it): a chunk's score is at
        least its weight for each term it holds, so the k-th best score is at least this."""
        key = (t, k)
        if key not in self.kth:
            w = self.weights(t)
            self.kth[key] = nlargest(k, w.values())[-1] if len(w) >= k else 0.0
        return self.kth[key]
