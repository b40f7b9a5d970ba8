"""Many queries over one split of a corpus: exact top-k and exact ranks, with pruning.

A question set (SPEC section 8) ranks every question on its own query over the same chunks, and the
settings map does that again for each cell. Scoring every chunk for every query, as `ranking.score_all`
does, costs (questions x chunks holding any query term); here each term's BM25 weights are computed
once per split and shared by all queries, and a query scores only the chunks that can reach its top
k, in the manner of MaxScore (Turtle & Flood 1995): the query's terms are taken rarest first, the
chunks holding them are scored exactly, and the rest of the chunks are skipped once the k-th best
score beats the most the remaining terms could add to a chunk.

With many queries, most are ranked by another pruning first (`_Ranking._lane_candidates`): each
term's weights are also kept as one integer of 32-bit lanes, a lane a chunk, in fixed point rounded
down; a query's lanes added together give every chunk's approximate score at once, at the speed of
Python's big-integer addition, and the chunks whose approximate score is within a proven margin of
the k-th best are the only ones scored exactly. MaxScore ranks what the lanes cannot decide (a
setting of more than LANE_CHUNKS chunks, a query whose sums could overflow a lane, a k-th score
too close to 0). Ranks (`best_rank`) are counted in the lanes the same way: the chunks clearly
above, plus those within the margin scored exactly.

Exactness: a chunk's score is summed in query order, one addition per query term occurrence, as
`ranking.score_all` sums it (adding 0.0 for a term the chunk lacks changes no bit), and the bound on the
skipped chunks is summed in the same order from each term's largest weight; float addition is
monotone, so a skipped chunk can never score above the bound. Ties go by position. The results
equal `ranking.rank(ranking.score_all(...))` exactly (tests hold them to it).

Documents are laid end to end in one word space (document d's words follow those of documents
0 .. d-1), so a term's chunks over the whole corpus come from one pass over its postings.
"""

import gc
import heapq
import math
import re
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from contextlib import contextmanager
from itertools import accumulate, chain, compress, filterfalse, repeat
from operator import add, ge, gt, le, lt, mul, neg, setitem, sub, truediv

from ragsim.rank import bm25
from ragsim.rank import ranking
from ragsim.rank import ln as ln_mod
from ragsim.split import windows
from ragsim.text.index import TERM  # the terms' pattern (SPEC section 3)


class Words:
    """The corpus's documents laid end to end: each needed term's postings in one word space.
    Independent of the split, so a settings map builds it once."""

    def __init__(self, indexes):
        self.indexes = indexes
        self.base = []  # per document: the word space position of its first word
        n = 0
        for index in indexes:
            self.base.append(n)
            n += index.n_words
        self.n_words = n
        self._postings: dict[str, list[int]] = {}
        self._holding: dict[str, list[int]] = {}
        self._chars = None
        self._prefix: dict[str, array] = {}

    def chars(self):
        """The documents laid end to end in one character space, for windows of characters: `(char
        base per document, the lowered texts joined, word starts, word ends, terms before each word,
        end of the word before each word, start of each word)`, all global; None when a clipped
        word's terms could not be read from the joined lowered text (an analyzer, a character that
        lower-cases to two, a capital sigma, whose lower case depends on the letters around it)."""
        if self._chars is None:
            ok = all(index.analyzer is None and "\u03a3" not in index.text for index in self.indexes)
            lowered = [index.text.lower() for index in self.indexes] if ok else []
            if ok and all(len(low) == len(index.text) for low, index in zip(lowered, self.indexes)):
                cbase, ws, we, tp, n, terms = [], [], [], [0], 0, 0
                for index in self.indexes:
                    cbase.append(n)
                    ws.extend(map(add, index.word_starts, repeat(n)) if n else index.word_starts)
                    we.extend(map(add, index.word_ends, repeat(n)) if n else index.word_ends)
                    tp.extend(map(add, index.term_prefix[1:], repeat(terms)) if terms else index.term_prefix[1:])
                    n += len(index.text)
                    terms = tp[-1]
                # sentinels: end_before[i] is the end of word i - 1, start_after[j] the start of word j
                self._chars = (cbase, "".join(lowered), ws, we, tp, [-1, *we], [*ws, n + 1])
            else:
                self._chars = False
        return self._chars or None

    def prefix(self, t: str) -> array:
        """Occurrences of term `t` in words 0 .. w - 1 of the word space, for every w (kept for a few
        common terms, 4 bytes a word)."""
        pre = self._prefix.get(t)
        if pre is None:
            counts = [0] * (self.n_words + 1)
            for w in self.postings(t):
                counts[w + 1] += 1
            pre = self._prefix[t] = array("i", accumulate(counts))
        return pre

    def holding(self, t: str) -> list[int]:
        """The positions of the documents holding term `t`."""
        ds = self._holding.get(t)
        if ds is None:
            ds = self._holding[t] = [d for d, index in enumerate(self.indexes) if t in index.postings]
        return ds

    def postings(self, t: str) -> list[int]:
        """The word space positions holding term `t`, once per occurrence, ascending."""
        p = self._postings.get(t)
        if p is None:
            p = []
            for index, base in zip(self.indexes, self.base):
                ws = index.postings.get(t)
                if ws:
                    p.extend(map(add, ws, repeat(base)) if base else ws)
            self._postings[t] = p
        return p


class Setting:
    """Every document split at one chunking, as columns over the corpus (position p is chunk p + 1),
    and the BM25 weights of each term asked for, computed once and shared by every query."""

    def __init__(self, words: Words, chunking: dict, session, retrieval: dict):
        self.words = words
        self.retrieval = retrieval
        self.doc_of, self.starts, self.ends, self.units, self.lengths = [], [], [], [], []
        self.first, self.doc_starts, self.doc_ends, self.doc_monotone = [], [], [], []
        self.layouts = []
        params = windows.read_params(chunking) if chunking.get("strategy", "window") == "window" else None
        if params is not None and params[0] == "chars" and words.chars() is not None:
            self._char_windows(*params[1:])
        else:
            self._split(chunking, session)
        # fixed windows of words in every document: a term's windows found by arithmetic, document by document
        self.word_windows = bool(self.layouts) and all(layout.window is not None or not layout.lengths
                                                       for layout in self.layouts)
        self.n = n = len(self.starts)
        self.l_avg = sum(self.lengths) / n if n else 0.0
        r = retrieval
        self.idf, self.weight = bm25.formulas(r["variant"])
        self.shifted = r["variant"] in bm25.SHIFTED
        # k1 * (1 - b + b * dl / avgdl) per chunk: the very subexpression of ranking.score_all's lucene
        # weight, computed once, so each weight below has the same bits as there
        # (at C speed, the same operations in the same order: (1 - b) + (b * dl) / avgdl, times k1)
        self.norm = bm25.lucene_norms(self.lengths, r["k1"], r["b"], self.l_avg) if self.l_avg else []
        self.tables: dict = {}  # term -> exact weights
        self.rough: dict = {}  # term -> approximate weights (lucene)
        self.frequencies_cache: dict = {}
        self.kth: dict = {}
        self.lanes: tuple[dict, dict] = ({}, {})  # term -> its weights as lanes (see `lane`), approximate, exact
        self._lane_mask = None
        self._repunit = None  # 1 in every lane
        self.queries: dict = {}
        self.approximate = self.weight is bm25.weight_lucene
        self.posted = 0  # postings looked up so far
        self.word_chunks = None  # per word, the bisections of `frequencies`, once enough are asked

    def _split(self, chunking: dict, session) -> None:
        """Each document split by its splitter (through the session's cache), gathered as columns."""
        inner_from, inner_to, edges = [], [], {}
        self.unit, self.units_in_documents = None, 0
        monotone = True
        for di, (index, wbase) in enumerate(zip(self.words.indexes, self.words.base)):
            split, layout = session.split(index, chunking)
            self.layouts.append(layout)
            base = len(self.starts)
            self.first.append(base)
            self.unit = split.unit
            self.units_in_documents += split.units_in_document
            self.doc_of.extend(repeat(di, len(split)))
            self.starts.extend(split.starts)
            self.ends.extend(split.ends)
            self.units.extend(split.units)
            self.lengths.extend(layout.lengths)
            self.doc_starts.append(split.starts)
            self.doc_ends.append(split.ends)
            self.doc_monotone.append(all(map(le, split.starts, split.starts[1:]))
                                     and all(map(le, split.ends, split.ends[1:])))
            monotone = monotone and layout.monotone
            inner_from.extend(map(add, layout.inner_from, repeat(wbase)))
            inner_to.extend(map(add, layout.inner_to, repeat(wbase)))
            for t, counts in layout.edge_index.items():
                (edges.get(t) or edges.setdefault(t, [])).extend(
                    chain.from_iterable(repeat(c + base, m) for c, m in counts.items()))
        self.inner_from, self.inner_to, self.edges, self.monotone = inner_from, inner_to, edges, monotone

    def _char_windows(self, size: int, overlap: int) -> None:
        """Fixed windows of characters over every document at once, in the joined character space
        (`Words.chars`): each window's whole words by bisection, the words clipped at its two edges
        cut from the joined lowered text and tokenized, at C speed (as `DocIndex.layout` does it
        window by window)."""
        cbase, lowered, ws, we, tp, end_before, start_after = self.words.chars()
        gs, ge = [], []
        for d, index in enumerate(self.words.indexes):
            firsts, stops = windows.window_columns(len(index.text), size, overlap)
            self.first.append(len(self.starts))
            self.doc_of.extend(repeat(d, len(firsts)))
            self.starts.extend(firsts)
            self.ends.extend(stops)
            self.doc_starts.append(firsts)
            self.doc_ends.append(stops)
            self.doc_monotone.append(True)
            b = cbase[d]
            gs.extend(map(add, firsts, repeat(b)) if b else firsts)
            ge.extend(map(add, stops, repeat(b)) if b else stops)
        self.unit, self.units_in_documents = "chars", len(lowered)
        self.units = list(map(sub, ge, gs))
        inner_from = list(map(bisect_left, repeat(ws), gs))
        # a window inside one word that runs past it: no whole word, only the one clipped at its start
        inner_to = list(map(max, map(bisect_right, repeat(we), ge), inner_from))
        lengths = list(map(sub, map(tp.__getitem__, inner_to), map(tp.__getitem__, inner_from)))
        # the word cut by a window's start (read up to the window's end at most), and the one cut by its end
        every = range(len(gs))
        lefts = list(compress(every, map(gt, map(end_before.__getitem__, inner_from), gs)))
        rights = list(compress(every, map(lt, map(start_after.__getitem__, inner_to), ge)))
        left_terms = list(map(TERM.findall, map(lowered.__getitem__, map(
            slice, map(gs.__getitem__, lefts),
            map(min, map(end_before.__getitem__, map(inner_from.__getitem__, lefts)), map(ge.__getitem__, lefts))))))
        right_terms = list(map(TERM.findall, map(lowered.__getitem__, map(
            slice, map(start_after.__getitem__, map(inner_to.__getitem__, rights)), map(ge.__getitem__, rights)))))
        edges: dict[str, list[int]] = {}  # term -> the windows holding it in a clipped word, once per occurrence
        for cs, found in ((lefts, left_terms), (rights, right_terms)):
            deque(map(setitem, repeat(lengths), cs, map(add, map(lengths.__getitem__, cs), map(len, found))), maxlen=0)
            for c, ts in compress(zip(cs, found), found):
                for t in ts:
                    e = edges.get(t)
                    if e is None:
                        edges[t] = [c]
                    else:
                        e.append(c)
        self.lengths = lengths
        self.inner_from, self.inner_to, self.edges, self.monotone = inner_from, inner_to, edges, True

    # --- each term's chunks and weights -------------------------------------------------------

    def frequencies(self, t: str) -> tuple[list[int], list[int]]:
        """The chunks holding term `t` and how often (in no particular order)."""
        if self.word_windows:
            return self._window_frequencies(t)
        postings = self.words.postings(t)
        if self.monotone and len(postings) > 2 * self.n and self.words.n_words < 64 * len(postings):
            # A common term: counted in every chunk from its prefix counts over the word space
            # (built once for all settings), chunk c holding words [inner_from[c], inner_to[c]).
            pre = self.words.prefix(t)
            tf = list(map(sub, map(pre.__getitem__, self.inner_to), map(pre.__getitem__, self.inner_from)))
            if t in self.edges:
                for c in self.edges[t]:
                    tf[c] += 1
            return list(compress(range(self.n), tf)), list(compress(tf, tf))
        if self.monotone and len(postings) < self.n:
            # Word w lies in the chunks [first with inner_to > w, first with inner_from > w).
            self.posted += len(postings)
            if self.word_chunks is None and self.posted > self.words.n_words // 64:
                lo = _counts_at_most(self.inner_to, self.words.n_words)
                hi = _counts_at_most(self.inner_from, self.words.n_words)
                self.word_chunks = (lo, hi, max(map(sub, hi, lo), default=0))
            if self.word_chunks is not None:  # many terms asked for: those first chunks looked up
                lo, hi, most = self.word_chunks
                los = list(map(lo.__getitem__, postings))
                his = list(map(hi.__getitem__, postings))
                if most <= 1:  # a word lies in one chunk at most
                    found = Counter(compress(los, map(lt, los, his)))
                elif most == 2:  # a word lies in at most two chunks: its first, and the next one
                    nexts = list(map(add, los, repeat(1)))
                    found = Counter(chain(compress(los, map(lt, los, his)), compress(nexts, map(lt, nexts, his))))
                else:
                    found = Counter(chain.from_iterable(map(range, los, his)))
            else:
                found = Counter(chain.from_iterable(map(range, map(bisect_right, repeat(self.inner_to), postings),
                                                            map(bisect_right, repeat(self.inner_from), postings))))
        else:
            # Chunk c holds the postings in words [inner_from[c], inner_to[c]): counted by bisection.
            tf = list(map(sub, map(bisect_left, repeat(postings), self.inner_to),
                          map(bisect_left, repeat(postings), self.inner_from)))
            found = dict(compress(enumerate(tf), tf))
        for c in self.edges.get(t, ()):  # once per occurrence in a clipped word
            found[c] = found.get(c, 0) + 1
        return list(found), list(found.values())

    def _window_frequencies(self, t: str) -> tuple[list[int], list[int]]:
        """`frequencies` over fixed windows of words: in each document holding the term, a common term
        counted in every window from prefix slices, a rarer one's windows found by arithmetic."""
        positions, tfs = [], []
        for d in self.words.holding(t):
            index, layout, base = self.words.indexes[d], self.layouts[d], self.first[d]
            n = len(layout.lengths)
            if not n:
                continue
            p = len(index.postings[t])
            if p > n and (index.has_prefix(t) or p * 64 > index.n_words):
                # a common term (its prefix counts kept by the index, or worth building): every window
                tf = index.term_frequencies(t, layout)
                found = list(compress(range(n), tf))
                counts = list(compress(tf, tf))
            else:
                found, counts = index.sparse_frequencies(t, layout, ordered=False)
            positions.extend(map(add, found, repeat(base)) if base else found)
            tfs.extend(counts)
        return positions, tfs

    def table(self, t: str, exact: bool = True):
        """`(positions, tfs, weight by position, largest weight)` of term `t`; None if no chunk holds it.

        Exact weights have the bits of `ranking.score_all`. The approximate ones (lucene only) take idf
        from `math.log` rather than the correctly rounded `ln_mod.ln` (a hundred times slower), so
        they may differ in the last bit or two; `Query` decides with them only where no score
        lies within `TOLERANCE` of another that it is compared with.
        """
        tables = self.tables if exact or not self.approximate else self.rough
        if t in tables:
            return tables[t]
        freq = self.frequencies_cache.get(t)
        if freq is None:
            freq = self.frequencies_cache[t] = self.frequencies(t)
        positions, tfs = freq
        entry = None
        if positions and self.l_avg:
            df, n = len(positions), self.n
            idf = self.idf(df, n) if tables is self.tables else math.log(1 + (n - df + 0.5) / (df + 0.5))
            if self.weight is bm25.weight_lucene:
                w = list(map(truediv, map(mul, repeat(idf), tfs), map(add, tfs, map(self.norm.__getitem__, positions))))
            else:
                r, lengths = self.retrieval, self.lengths
                w = [self.weight(idf, tf, lengths[d], self.l_avg, r["k1"], r["b"], r["delta"])
                     for d, tf in zip(positions, tfs)]
            entry = (positions, tfs, dict(zip(positions, w)), max(w))
        tables[t] = entry
        return entry

    def kth_weight(self, t: str, k: int, exact: bool) -> float:
        """The k-th largest weight of term t (0 when fewer chunks hold it): a chunk's score is at
        least its weight for each term it holds, so the k-th best score is at least this."""
        key = (t, k, exact)
        if key not in self.kth:
            w = self.table(t, exact)[2]
            self.kth[key] = heapq.nlargest(k, w.values())[-1] if len(w) >= k else 0.0
        return self.kth[key]

    def lane(self, t: str, exact: bool) -> int:
        """Term `t`'s weights as one integer of `n` 32-bit lanes, lane p (bits 32p .. 32p + 31) holding
        chunk p's weight in units of 2**-LANE_BITS rounded down (0 where the term is absent). Adding
        a query's lanes adds every chunk's weights at once, at C speed (`_Ranking._lane_candidates`).
        The caller makes sure no lane's sum reaches 2**31."""
        lanes = self.lanes[exact]
        got = lanes.get(t)
        if got is None:
            w = self.table(t, exact)[2]
            a = array(_LANE, bytes(4 * self.n))
            deque(map(a.__setitem__, w, map(int, map(mul, w.values(), repeat(LANE_SCALE)))), maxlen=0)
            got = lanes[t] = int.from_bytes(a, sys.byteorder)
        return got

    def lanes_at_least(self, total: int, x: int) -> int:
        """Bit 31 of each lane of `total` whose value is at least x (lanes below 2**31): x's
        complement to 2**31 added to every lane carries into bit 31 exactly there."""
        if self._repunit is None:
            self._repunit = int.from_bytes(array(_LANE, [1]) * self.n, sys.byteorder)
        if x <= 0:
            return self._repunit << 31
        return (total + ((1 << 31) - x) * self._repunit) & (self._repunit << 31)

    def lane_positions(self, bits: int) -> list[int]:
        """The lanes whose bit 31 is set in `bits` (which has no other bit set)."""
        data = bits.to_bytes(4 * self.n, sys.byteorder)
        return [m.start() for m in _HIGH_BIT.finditer(data[3::4] if sys.byteorder == "little" else data[::4])]

    def lane_mask(self) -> int:
        """The low byte of every lane set."""
        if self._lane_mask is None:
            self._lane_mask = int.from_bytes((b"\xff\0\0\0" if sys.byteorder == "little" else b"\0\0\0\xff") * self.n,
                                             sys.byteorder)
        return self._lane_mask

    def scores(self, query_terms: list[str]) -> list[float]:
        """Every chunk's score, by `ranking.score_all` itself."""
        occ = {}
        for t in dict.fromkeys(query_terms):
            e = self.table(t)
            if e is not None:
                occ[t] = (e[0], e[1])
        r = self.retrieval
        return ranking.score_all(query_terms, self.lengths, occ, r["variant"], r["k1"], r["b"], r["delta"])

    def release(self) -> None:
        """Forget the queries (each refers back to this Setting), so the Setting is freed as soon as
        it is dropped, without the cyclic garbage collector."""
        self.queries.clear()
        self.lanes = ({}, {})

    def query(self, query_terms: list[str]) -> "Query":
        """The query's ranking here, one per distinct query (the question set's own evaluation and a map
        cell at the same setting share it)."""
        key = tuple(query_terms)
        q = self.queries.get(key)
        if q is None:
            q = self.queries[key] = Query(self, query_terms)
        return q

    # --- where a span lies ---------------------------------------------------------------------

    def whole_range(self, d: int, s: int, t: int) -> list[int]:
        """Positions of document d's chunks holding `[s, t)` whole."""
        starts, ends, base = self.doc_starts[d], self.doc_ends[d], self.first[d]
        if self.doc_monotone[d]:
            return list(range(base + bisect_left(ends, t), base + bisect_right(starts, s)))
        return [base + i for i, (a, z) in enumerate(zip(starts, ends)) if a <= s and t <= z]

    def touching(self, d: int, a: int, b: int) -> list[tuple[int, int]]:
        """Extents of document d's chunks that touch `[a, b)` in Chroma's closed sense."""
        starts, ends = self.doc_starts[d], self.doc_ends[d]
        if self.doc_monotone[d]:
            lo, hi = bisect_left(ends, a), bisect_right(starts, b)
            return list(zip(starts[lo:hi], ends[lo:hi]))
        return [(s, e) for s, e in zip(starts, ends) if s <= b and a <= e]


def _counts_at_most(sorted_values: list[int], n: int) -> list[int]:
    """`bisect_right(sorted_values, w)` for every w in range(n), at C speed: the answer is c for
    every w from sorted_values[c - 1] up to sorted_values[c], so c repeated that many times."""
    bounded = list(map(min, sorted_values, repeat(n)))
    out = list(chain.from_iterable(map(repeat, range(len(bounded) + 1), map(sub, [*bounded, n], [0, *bounded]))))
    return out


@contextmanager
def collection_paused():
    """Python's cyclic garbage collector paused (and restored after): ranking many questions makes
    many short-lived dicts and lists, each batch of which would set off a collection pass over every
    object alive (the index among them), 5-20% of a map's time. Nothing made here stays in a cycle
    once its Setting is `released`, so memory is freed as usual meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class NearTie(Exception):
    """Approximate scores came within TOLERANCE of each other where the ranking compares them."""


# Approximate and exact scores differ by a few units in the last place (about 1e-15 relative):
# any two scores further apart than this compare the same way under both.
TOLERANCE = 1e-9
# A query's candidates are narrowed term by term down to about this many before exact scoring.
REFINE = 8
# Lanes (Setting.lane): weights in units of 2**-LANE_BITS, 32-bit unsigned lanes; a setting of more
# chunks than LANE_CHUNKS ranks by MaxScore alone (a query's lanes cost 4 bytes a chunk per term).
LANE_BITS = 20
LANE_SCALE = float(1 << LANE_BITS)
LANE_CHUNKS = 50_000
_LANE = "I" if array("I").itemsize == 4 else "L"
_BELOW = [bytes(range(v)) for v in range(257)]  # deleting _BELOW[v] leaves the bytes >= v
_AT_LEAST: dict[int, "re.Pattern"] = {}  # v -> a pattern matching one byte >= v
_HIGH_BIT = re.compile(b"\x80")
LANE_NEAR = 256  # more chunks than this scoring near the one ranked: MaxScore ranks it


class Query:
    """One query's ranking over a Setting, scored only as far as the questions asked of it need.

    It ranks with approximate weights first and, should two compared scores lie within TOLERANCE
    of each other, again with exact ones; either way the answers are those of the exact ranking.
    """

    def __init__(self, setting: Setting, query_terms: list[str]):
        self.setting = setting
        self.terms = query_terms
        self._rough = _Ranking(setting, query_terms, exact=False) if setting.approximate else None
        self._exact = None
        self._top: dict = {}

    def exact(self) -> "_Ranking":
        if self._exact is None:
            self._exact = _Ranking(self.setting, self.terms, exact=True)
        return self._exact

    def _ask(self, question):
        if self._rough is not None:
            try:
                return question(self._rough)
            except NearTie:
                self._rough = None
        return question(self.exact())

    def top(self, k: int) -> list[int]:
        """The first `min(k, N)` positions of the full ranking (score descending, ties by position)."""
        if k not in self._top:
            self._top[k] = self._ask(lambda r: r.top(k))
        return list(self._top[k])

    def best_rank(self, chunks: list[int]) -> int:
        """The best 1-based rank among some chunks in the full ranking."""
        return self._ask(lambda r: r.best_rank(chunks))


class _Ranking:
    """Pruned ranking with one kind of weights; `guard` makes near-ties raise NearTie."""

    def __init__(self, setting: Setting, query_terms: list[str], exact: bool):
        self.setting = setting
        self.guard = not exact
        self.exact = exact
        self.full = None  # every chunk's score, for the variants that give every chunk one
        if setting.shifted:
            self.full = setting.scores(query_terms)
            return
        tables = [setting.table(t, exact) for t in query_terms]
        self.present = [t for t, e in zip(query_terms, tables) if e is not None]
        entries = {t: e for t, e in zip(query_terms, tables) if e is not None}
        self.entries = entries
        self.seq = [entries[t][2] for t in self.present]  # weight tables in query order
        self.times = Counter(self.present)
        # MaxScore's order: terms by their largest weight, so the cheapest to skip come first
        self.order = sorted(entries, key=lambda t: entries[t][3])
        self.bounds = self._bounds()
        self.scored: dict[int, float] = {}
        self.gathered: tuple[dict[int, float], int] = ({}, len(self.order))  # see _candidates
        self.lane_sum = False  # see _lane_sum (False: not yet asked)

    def _bounds(self) -> list[float]:
        """bounds[i]: the most a chunk holding only the terms order[:i] could score. Summed in
        `order` rather than query order, so it may differ from the query-order sum in the last bits;
        every comparison with a bound allows TOLERANCE for that."""
        return [0.0, *accumulate(self.entries[t][3] * self.times[t] for t in self.order)]

    def _score(self, chunks) -> None:
        """Exact sums in query order (for these weights) of chunks not yet scored."""
        new = list(filterfalse(self.scored.__contains__, chunks))
        if not self.seq:
            self.scored.update(zip(new, repeat(0.0)))
        elif new:
            acc = list(map(self.seq[0].get, new, repeat(0.0)))
            for w in self.seq[1:]:
                acc = list(map(add, acc, map(w.get, new, repeat(0.0))))
            self.scored.update(zip(new, acc))

    def _candidates(self, theta: float, k: int = 0) -> list[int]:
        """Chunks that could score at least `theta` (MaxScore): the terms are taken from the largest
        weight down, each chunk holding one gathering its weights, until the terms left could not lift
        a chunk holding none of the taken ones to theta; then the chunks whose gathered weights plus
        the most the terms left could add fall short are dropped. With `k`, theta rises as it goes to
        the k-th best gathered sum (a chunk's score is at least its gathered sum). The gathering goes
        on from where an earlier call left it (a rank asked after the top k: a lower theta)."""
        partial, left = self.gathered  # terms order[:left] not taken
        while left and not self.bounds[left] < theta * (1 - TOLERANCE):
            left -= 1
            t = self.order[left]
            w = self.entries[t][2]
            times = self.times[t]  # a repeated query term counts once per occurrence
            if times > 1:
                w = dict(zip(w, map(mul, w.values(), repeat(times))))
            if not partial:
                partial = dict(w)
            else:  # partial += w, at C speed: the chunks in both get their sums after the update
                both = list(partial.keys() & w.keys())
                sums = list(map(add, map(partial.__getitem__, both), map(w.__getitem__, both)))
                partial.update(w)
                partial.update(zip(both, sums))
            if k and self.entries[t][3] * times > theta:  # (the k-th weight is at most the largest)
                theta = max(theta, self.setting.kth_weight(t, k, self.exact) * times)
        self.gathered = (partial, left)
        if k and len(partial) >= k:
            theta = max(theta, heapq.nlargest(k, partial.values())[-1])
        reach = theta * (1 - TOLERANCE) - self.bounds[left] * (1 + TOLERANCE)
        chunks = list(compress(partial, map(ge, partial.values(), repeat(reach))))
        sums = list(map(partial.__getitem__, chunks))
        # The terms left only add to these chunks: each is looked up for them alone, and the chunks
        # that can no longer reach theta dropped, until few are left for exact scoring.
        while left and len(chunks) > REFINE:
            left -= 1
            t = self.order[left]
            got = map(self.entries[t][2].get, chunks, repeat(0.0))
            times = self.times[t]
            sums = list(map(add, sums, map(mul, got, repeat(times)) if times > 1 else got))
            reach = theta * (1 - TOLERANCE) - self.bounds[left] * (1 + TOLERANCE)
            keep = list(map(ge, sums, repeat(reach)))
            chunks = list(compress(chunks, keep))
            sums = list(compress(sums, keep))
        return chunks

    def _lane_sum(self):
        """`(every chunk's Q in lanes, a bound on any lane's sum, the margin M)` (see _lane_candidates),
        or None when the query has no term here, lanes are off, or a sum could reach 2**31."""
        if self.lane_sum is False:
            self.lane_sum = None
            if self.present and self.setting.n <= LANE_CHUNKS:
                bound = self.bounds[-1] * (1 + TOLERANCE)  # no chunk's score is above this
                top_units = int(bound * LANE_SCALE) + 1
                if top_units < 1 << 31:
                    total = 0
                    for t in self.present:  # in query order, a repeated term once per occurrence
                        total += self.setting.lane(t, self.exact)
                    margin = len(self.present) + 2 + int(2 * TOLERANCE * bound * LANE_SCALE)
                    self.lane_sum = (total, top_units, margin)
        return self.lane_sum

    def _lane_rank(self, c: int, s: float) -> int | None:
        """The 1-based rank of chunk c, which scores s > 0, from the lanes: the chunks whose Q is at
        least Q(c) + M score above it (by more than TOLERANCE), those at most Q(c) - M below it, and
        the few between are scored exactly. None where lanes cannot decide."""
        summed = self._lane_sum() if s > 0 else None
        if summed is None:
            return None
        total, _, margin = summed
        setting = self.setting
        q = (total >> (32 * c)) & 0xFFFFFFFF
        above = setting.lanes_at_least(total, q + margin)
        near = setting.lanes_at_least(total, q - margin + 1) & ~above
        if near.bit_count() > LANE_NEAR:
            return None
        between = setting.lane_positions(near)
        self._score(between)
        scored = self.scored
        ahead = above.bit_count()
        for x in between:
            y = scored[x]
            if x != c and self.guard and abs(y - s) <= TOLERANCE * s:
                raise NearTie  # another chunk scores within TOLERANCE of c
            if y > s or (y == s and x < c):
                ahead += 1
        return 1 + ahead

    def _lane_candidates(self, k: int) -> list[int] | None:
        """Chunks among which the top k lie, found from every chunk's score summed at once in lanes
        (`Setting.lane`); None where lanes cannot decide (then MaxScore does).

        Why no chunk left out can be in the top k: a lane's sum Q(c) is the query's weights in c, each
        rounded down to a unit u = 2**-LANE_BITS, so Q(c)·u <= score(c) < (Q(c) + m)·u for m weights
        added, up to float rounding (far below TOLERANCE·score). With Qk the k-th largest Q, k chunks
        score at least Qk·u; a chunk with Q(c) <= Qk - M, M = m + 2 + 2·TOLERANCE·bound/u, scores
        below every one of them by more than TOLERANCE of its score, so it is neither in the top k
        nor close to it (the guard against near-ties of approximate weights holds). Qk is found on
        the lanes' top byte (bits s .. s + 7, s chosen so that every sum fits) by bisection on counts;
        the chunks kept are those whose top byte is at least the k-th largest top byte less M / 2**s,
        rounded up."""
        summed = self._lane_sum() if k >= 1 else None
        if summed is None:
            return None
        total, top_units, margin = summed
        setting = self.setting
        s = max(0, top_units.bit_length() - 8)
        data = ((total >> s) & setting.lane_mask()).to_bytes(4 * setting.n, sys.byteorder)
        tops = data[::4] if sys.byteorder == "little" else data[3::4]
        lo, hi, pool = 0, 256, tops  # the largest v with at least k top bytes >= v; pool: the bytes >= lo
        while hi - lo > 1:
            mid = (lo + hi) // 2
            kept = pool.translate(None, _BELOW[mid])
            if len(kept) >= k:
                lo, pool = mid, kept
            else:
                hi = mid
        v = lo - -(-margin >> s)  # lo less margin / 2**s rounded up
        if v < 1:
            return None  # the k-th score too low to part the chunks from those that score 0
        pattern = _AT_LEAST.get(v)
        if pattern is None:
            pattern = _AT_LEAST[v] = re.compile(b"[" + re.escape(bytes([v])) + b"-\xff]")
        return [m.start() for m in pattern.finditer(tops)]

    def top(self, k: int) -> list[int]:
        if self.full is not None:
            return ranking.rank(self.full)[:k]
        n = self.setting.n
        chunks = self._lane_candidates(k)
        self._score(self._candidates(0.0, k) if chunks is None else chunks)
        scored = self.scored
        best = sorted(zip(scored.values(), map(neg, scored)), reverse=True)[: k + 1]  # score desc, position asc
        if self.guard:
            _check_gaps([s for s, _ in best])
        top = [-c for s, c in best[:k] if s > 0]
        if len(top) < k:  # the rest score 0 and follow in position order
            taken = set(top)
            zeros = (c for c in range(n) if c not in taken)
            top += [next(zeros) for _ in range(min(k, n) - len(top))]
        return top

    def best_rank(self, chunks: list[int]) -> int:
        if self.full is not None:
            full = self.full
            c = min(chunks, key=lambda c: (-full[c], c))
            s = full[c]
            return 1 + sum(1 for x in full if x > s) + sum(1 for x in full[:c] if x == s)
        self._score(chunks)
        scored = self.scored
        s, c = max((scored[c], -c) for c in chunks)
        c = -c
        rank = self._lane_rank(c, s)
        if rank is not None:
            return rank
        self._score(self._candidates(s))  # every chunk that could tie or beat it
        values = list(scored.values())
        if self.guard and sum(map(ge, values, repeat(s * (1 - TOLERANCE)))) > 1 + sum(
                map(gt, values, repeat(s * (1 + TOLERANCE)))):
            raise NearTie  # another chunk scores within TOLERANCE of c
        ahead = sum(map(gt, values, repeat(s)))
        if values.count(s) > 1:  # equal scores: the earlier chunks come first
            ahead += sum(1 for d, x in scored.items() if x == s and d < c)
        if s == 0:  # unscored chunks (all scoring 0) before c tie with it and come first
            ahead += c - sum(1 for d in scored if d < c)
        return 1 + ahead


def _check_gaps(scores: list[float]) -> None:
    """Raise NearTie when two neighbouring scores (descending) lie within TOLERANCE."""
    for a, b in zip(scores, scores[1:]):
        if a - b <= TOLERANCE * a and a > 0:
            raise NearTie
