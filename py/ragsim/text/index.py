r"""A document indexed once: its words with offsets and its BM25 terms, so a drag never re-tokenizes.

Terms follow SPEC section 3: `re.findall(r"\w+", chunk_text.lower())`. Lower-casing and `\w` runs
never reach across whitespace (Python's final-sigma rule stops at it too), so the terms of any
extent are the terms of the whole words inside it plus those of the clipped words at its two edges.
The index stores the first kind; `layout` tokenizes the second on the spot, once per split.
"""

import re
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, repeat
from operator import add, floordiv, gt, le, lt, mod, or_, sub
from typing import NamedTuple

_WORD = re.compile(r"\S+")
TERM = re.compile(r"\w+")


class WordRanges(NamedTuple):
    """The first word and end word (exclusive) of every extent; `step` and `size` when the extents are
    fixed windows of words (extent i holds words `[i*step, min(i*step + size, n))`), so the words'
    counts can be read with slices and a word's windows found by arithmetic."""

    firsts: list[int]
    stops: list[int]
    step: int | None = None
    size: int | None = None


def terms(text: str) -> list[str]:
    """BM25 terms of a text (SPEC section 3)."""
    return TERM.findall(text.lower())


@dataclass(frozen=True, eq=False)
class DocIndex:
    """Words (`str.split()` runs) of one text with `[start, end)` offsets, and where each term occurs.

    `postings[t]` lists, once per occurrence, the index of the word holding term `t`;
    `term_prefix[i]` is the number of terms in words `0 .. i-1`.
    """

    text: str
    word_starts: list[int]
    word_ends: list[int]
    term_prefix: list[int]
    postings: dict[str, list[int]] = field(repr=False)
    analyzer: object = field(default=None, repr=False)
    # term -> counts of it in words 0 .. i-1, for the most recently asked terms (bounded).
    _prefix: OrderedDict = field(default_factory=OrderedDict, repr=False)
    # Splitters' results that depend on the text alone (sentence extents, separator pieces), so a
    # slider move re-uses them; keyed by the splitter, bounded by the text's own structure.
    memo: dict = field(default_factory=dict, repr=False)
    PREFIX_LIMIT = 32

    @classmethod
    def build(cls, text: str, analyzer=None) -> "DocIndex":
        """Index `text`; an analyzer (stop words, stemming) maps each word's terms when given."""
        starts, ends = [], []
        for m in _WORD.finditer(text):
            starts.append(m.start())
            ends.append(m.end())
        lowered = text.lower()
        if len(lowered) == len(text):
            # Lower-casing kept every position, so the terms of the whole lowered text, each placed
            # in the word holding its first character, are the terms of every word in turn.
            found = [(m.group(), m.start()) for m in TERM.finditer(lowered)]
            holders = list(map(bisect_right, repeat(starts), [p for _, p in found]))
            pairs = [(t, w - 1) for (t, _), w in zip(found, holders)]
        else:
            # Some character grew when lower-cased (such as "İ"): words one by one.
            pairs = [(t, i) for i, (s, e) in enumerate(zip(starts, ends)) for t in TERM.findall(text[s:e].lower())]
        if analyzer is not None:
            # The analyzer maps terms one by one (stop words out, stems), so per term is per word.
            mapped = analyzer([t for t, _ in pairs])
            if len(mapped) == len(pairs):
                pairs = [(m, w) for m, (_, w) in zip(mapped, pairs)]
            else:
                pairs = [(m, w) for t, w in pairs for m in analyzer([t])]
        per_word = [0] * len(starts)
        postings: dict[str, list[int]] = {}
        for t, w in pairs:
            per_word[w] += 1
            p = postings.get(t)
            if p is None:
                postings[t] = [w]
            else:
                p.append(w)
        prefix = [0, *accumulate(per_word)]
        return cls(text, starts, ends, prefix, postings, analyzer=analyzer)

    @property
    def n_words(self) -> int:
        return len(self.word_starts)

    def terms(self, text: str) -> list[str]:
        """Terms of a piece of text as this index counts them (with its analyzer, if any)."""
        ts = terms(text)
        return self.analyzer(ts) if self.analyzer is not None else ts

    @property
    def analyzer_key(self):
        return None if self.analyzer is None else self.analyzer.key

    def lowered(self) -> str | None:
        """The text lower-cased once, when every piece of it lower-cases to the same slice of it
        (no character changes length, no capital sigma, whose lower case depends on what follows),
        and no analyzer maps the terms; else None (pieces are then tokenized one by one)."""
        if "lowered" not in self.memo:
            low = self.text.lower()
            ok = self.analyzer is None and len(low) == len(self.text) and "\u03a3" not in self.text
            self.memo["lowered"] = low if ok else None
        return self.memo["lowered"]

    def layout(self, starts, ends, word_ranges=None) -> "Layout":
        """Where the words of every extent lie, and each extent's term count, for a whole split at once.

        The extents come as two columns; `word_ranges` (first and end word of every extent, from
        word windows) spares the look-up. Clipped edge words are tokenized here, once per split.
        """
        window = None
        if word_ranges is not None:
            inner_from, inner_to = word_ranges[0], word_ranges[1]
            edges = {}
            if getattr(word_ranges, "step", None) and inner_from:
                window = (word_ranges.size, word_ranges.step, self.n_words)
        else:
            ws, we = self.word_starts, self.word_ends
            inner_from = list(map(bisect_left, repeat(ws), starts))
            inner_to = list(map(bisect_right, repeat(we), ends))
            edges = {}
            # An extent clips a word when the word before its first whole word ends inside it, or
            # the word after its last whole word starts inside it; found for all extents at C speed
            # (sentinels stand for "no such word"), then tokenized only where that happens.
            if "sentinels" not in self.memo:
                # end_before[i]: end of word i - 1; start_after[j]: start of word j
                self.memo["sentinels"] = ([-1, *we], [*ws, len(self.text) + 1])
            end_before, start_after = self.memo["sentinels"]
            lowered = self.lowered()
            if lowered is not None:
                edges = edges_at_c_speed(self, lowered, starts, ends, inner_from, inner_to)
            else:
                clips = map(or_, map(gt, map(end_before.__getitem__, inner_from), starts),
                            map(lt, map(start_after.__getitem__, inner_to), ends))
                for c in compress(range(len(starts)), clips):
                    i, j = inner_from[c], inner_to[c]
                    edges[c] = edge_terms(self, starts[c], ends[c], i, j)
                    if j < i:  # one word holds the whole extent
                        inner_to[c] = i
        p = self.term_prefix
        if window is not None:  # fixed windows of words: every count a difference of two slices
            if "term_prefix" not in self.memo:
                self.memo["term_prefix"] = array("i", p) if p[-1] < 2**31 else None
            packed = self.memo["term_prefix"]
            lengths = window_differences(packed, window, len(inner_from)) if packed is not None \
                else list(map(sub, *window_slices(p, window, len(inner_from))))
            monotone = True
        else:
            lengths = list(map(sub, map(p.__getitem__, inner_to), map(p.__getitem__, inner_from)))
            monotone = all(map(le, inner_from, inner_from[1:])) and all(map(le, inner_to, inner_to[1:]))
        for c, ts in edges.items():
            lengths[c] += len(ts)
        return Layout(inner_from, inner_to, edges, lengths, monotone, EdgeIndex(edges), window)

    def has_prefix(self, term: str) -> bool:
        """Whether `prefix(term)` is at hand (no pass over the words to build it)."""
        return term in self._prefix

    def prefix(self, term: str) -> array:
        """Occurrences of `term` in words `0 .. i-1` for every i (cached for recently asked terms;
        4 bytes a word, so the cache stays small even for a book)."""
        cache = self._prefix
        if term in cache:
            cache.move_to_end(term)
            return cache[term]
        counts = [0] * (len(self.word_starts) + 1)
        for w in self.postings.get(term, ()):
            counts[w + 1] += 1
        pre = array("i", accumulate(counts))
        cache[term] = pre
        if len(cache) > self.PREFIX_LIMIT:
            cache.popitem(last=False)
        return pre

    def term_frequencies(self, term: str, layout: "Layout") -> list[int]:
        """How often `term` occurs in each extent of a layout."""
        if term not in self.postings:
            tf = [0] * len(layout.lengths)
        else:
            pre = self.prefix(term)
            if layout.window is not None:
                tf = window_differences(pre, layout.window, len(layout.lengths))
            else:
                tf = list(map(sub, map(pre.__getitem__, layout.inner_to), map(pre.__getitem__, layout.inner_from)))
        for c, n in layout.edge_index.get(term, {}).items():
            tf[c] += n
        return tf

    def sparse_frequencies(self, term: str, layout: "Layout", ordered: bool = True) -> tuple[list[int], list[int]]:
        """The extents holding `term` and how often (ascending, unless `ordered` is false), found from
        the term's occurrences.

        Cheaper than `term_frequencies` for a rare term: when the extents' word ranges only move
        forward, the extents holding word w are the contiguous run `[first with inner_to > w,
        first with inner_from > w)`, and for fixed windows of words they are found by arithmetic.
        """
        postings = self.postings.get(term, ())
        if not layout.monotone and postings:
            tf = self.term_frequencies(term, layout)
            chunks = list(compress(range(len(tf)), tf))
            return chunks, [tf[c] for c in chunks]
        if layout.window is not None:
            counts = Counter(chain.from_iterable(window_hits(postings, layout.window, len(layout.lengths))))
            shuffled = layout.window[0] > layout.window[1]  # with overlap: one list per window back
        else:
            # Runs move forward with the word, so each extent is first met in ascending order.
            los = map(bisect_right, repeat(layout.inner_to), postings)
            his = map(bisect_right, repeat(layout.inner_from), postings)
            counts = Counter(chain.from_iterable(map(range, los, his)))
            shuffled = False
        extra = layout.edge_index.get(term)
        if extra:
            counts.update(extra)
            shuffled = True
        if ordered and shuffled:
            chunks = sorted(counts)
            return chunks, list(map(counts.__getitem__, chunks))
        return list(counts), list(counts.values())


def edge_terms(index: DocIndex, start: int, end: int, i: int, j: int) -> list[str]:
    """Terms of the words that `[start, end)` clips at its edges (not wholly inside it)."""
    text = index.text
    terms = index.terms
    out: list[str] = []
    # A word cut by `start`: it begins before the extent and ends inside or past it.
    w = i - 1
    if w >= 0 and index.word_ends[w] > start:
        out.extend(terms(text[start : min(end, index.word_ends[w])]))
        if index.word_ends[w] >= end:
            return out  # one word holds the whole extent
    # A word cut by `end`: it begins inside the extent and ends past it.
    if j < len(index.word_starts) and index.word_starts[j] < end and index.word_ends[j] > end and j >= i:
        out.extend(terms(text[max(start, index.word_starts[j]) : end]))
    return out


def edges_at_c_speed(index: DocIndex, lowered: str, starts, ends, inner_from: list, inner_to: list) -> dict:
    """`edge_terms` of every extent at once: the word cut by each extent's start (read up to its
    end at most) and the word cut by its end, sliced from the lowered text and tokenized at C
    speed. Sets `inner_to[c]` to `inner_from[c]` where one word holds the whole extent."""
    end_before, start_after = index.memo["sentinels"]
    inner_to[:] = map(max, inner_to, inner_from)
    every = range(len(starts))
    lefts = list(compress(every, map(gt, map(end_before.__getitem__, inner_from), starts)))
    rights = list(compress(every, map(lt, map(start_after.__getitem__, inner_to), ends)))
    found = {}
    for c, ts in zip(lefts, map(TERM.findall, map(lowered.__getitem__, map(
            slice, map(starts.__getitem__, lefts),
            map(min, map(end_before.__getitem__, map(inner_from.__getitem__, lefts)), map(ends.__getitem__, lefts)))))):
        found[c] = ts
    for c, ts in zip(rights, map(TERM.findall, map(lowered.__getitem__, map(
            slice, map(start_after.__getitem__, map(inner_to.__getitem__, rights)), map(ends.__getitem__, rights))))):
        left = found.get(c)
        found[c] = left + ts if left else ts
    return found


def window_differences(column: array, window: tuple, count: int) -> list[int]:
    """`column` at every window's end word minus at its first word (`window_slices`), for a
    non-decreasing int32 column such as prefix counts: the two slices as two big integers of 32-bit
    lanes, subtracted at once (no lane borrows, since each end is at least its start) and read back
    as a list of small numbers, never a Python number per large count."""
    stops, firsts = window_slices(column, window, count)
    width = len(stops) * 4
    if sys.byteorder != "little" or column.itemsize != 4:
        return list(map(sub, stops, firsts))
    lanes = int.from_bytes(stops.tobytes(), "little") - int.from_bytes(firsts.tobytes(), "little")
    out = array("i")
    out.frombytes(lanes.to_bytes(width, "little"))
    return out.tolist()


def window_slices(column, window: tuple, count: int):
    """`column` read at every window's first word and at its end word, as two slices: the windows of
    `window = (size, step, n)` start at `0, step, 2*step, ...` and end `size` words later, the last at n."""
    size, step, n = window
    firsts = column[0 : (count - 1) * step + 1 : step]
    stops = column[size : (count - 2) * step + size + 1 : step]
    stops.append(column[n])
    return stops, firsts


def window_hits(words: list[int], window: tuple, count: int) -> list:
    """For each word of `words` (ascending, repeats allowed), the windows holding it, as lists whose
    concatenation names every (window, word) pair once: window i holds word w when
    `i*step <= w < i*step + size` (the last window holds every word from its first on).

    Word w lies in window h = w // step and, while `w - h*step + j*step < size`, in window h - j:
    one list of h, then one per further window back, each selected at C speed.
    """
    size, step, n = window
    last = count - 1
    hs = list(map(floordiv, words, repeat(step)))
    out = [hs]
    if size <= step:  # no overlap: each word lies in one window
        for i in range(bisect_left(words, last * step), len(words)):
            hs[i] = last
        return out
    rs = list(map(mod, words, repeat(step)))  # w - h*step
    for i in range(bisect_left(words, last * step), len(words)):  # the last window runs to the end
        hs[i], rs[i] = last, words[i] - last * step
    j = 1
    while j * step < size:
        back = list(map(sub, compress(hs, map(lt, rs, repeat(size - j * step))), repeat(j)))
        out.append(back[bisect_left(back, 0) :])  # no window before the first
        j += 1
    return out


class EdgeIndex(Mapping):
    """The clipped words' terms turned around: term -> {extent: count}, so a term looks up its own.

    A move asks for its query's few terms: each is found among all the clipped terms in one pass at
    C speed when first asked; the whole mapping is made only when something goes through all of it
    (the audit, a question set's Setting)."""

    __slots__ = ("_terms", "_owners", "_names", "_asked", "_whole")

    def __init__(self, edges: dict[int, list[str]]):
        self._terms = list(chain.from_iterable(edges.values()))
        self._owners = list(chain.from_iterable(map(repeat, edges, map(len, edges.values()))))
        self._names = None  # the set of terms, made on first use
        self._asked: dict[str, dict[int, int]] = {}
        self._whole = None

    def _set(self) -> set:
        if self._names is None:
            self._names = set(self._terms)
        return self._names

    def __contains__(self, t) -> bool:
        return t in self._set()

    def __getitem__(self, t: str) -> dict[int, int]:
        got = self._asked.get(t)
        if got is None:
            if t not in self._set():
                raise KeyError(t)
            got = self._asked[t] = dict(Counter(compress(self._owners, map(t.__eq__, self._terms))))
        return got

    def _all(self) -> dict:
        if self._whole is None:
            whole: dict[str, dict[int, int]] = {}
            for c, t in zip(self._owners, self._terms):
                counts = whole.setdefault(t, {})
                counts[c] = counts.get(c, 0) + 1
            self._whole = whole
        return self._whole

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._set())

    def items(self):
        return self._all().items()


@dataclass(frozen=True, eq=False)
class Layout:
    """A split seen by the index: per extent, the range of whole words inside it, the terms of its
    clipped edge words (only for extents that clip one), and its term count `dl`. `monotone`:
    both word-range columns never go backwards (true for every splitter that walks forward).
    The word-range columns may be shared with the split: read them, never change them."""

    inner_from: list[int]
    inner_to: list[int]
    edges: dict[int, list[str]]
    lengths: list[int]
    monotone: bool = True
    edge_index: Mapping = field(default_factory=dict)  # EdgeIndex
    window: tuple | None = None  # (size, step, n) for fixed windows of words (WordRanges), else None
