"""Finding a stored chunk's text in its source document (SPEC section 11): verbatim, else with runs
of whitespace treated as equal, in time that stays near-linear on long documents.

A chunk is first looked for verbatim just past the hint (where the walk expects it), which is where
an in-order store finds every chunk. Only a chunk missed there needs a global search, and proving
that a chunk occurs nowhere verbatim takes a full scan, some 50 ms on 10 MB of repetitive text. On a
long document those searches go through a `Sampled` index instead: every SAMPLE-th substring of
GRAM characters, of the text for the verbatim search and of its `View` (every run of whitespace
folded into one space) for the whitespace-insensitive one. A chunk whose whitespace differs from
the source's has substrings the source never holds, so its verbatim search ends after a few
dictionary look-ups, and the view search lands on the right occurrence in a few more.
"""

import bisect
import operator
import re
from itertools import accumulate, chain, count, islice

LOCAL = 4096  # how far past the end of a chunk at the hint it is first looked for, verbatim
INDEX_FROM = 1 << 20  # documents shorter than this are searched with str.find alone
SAMPLE = 64  # an index holds the substring at every SAMPLE-th position of a text ...
GRAM = 16  # ... GRAM characters long; a needle at least SAMPLE + GRAM - 1 long can use it
FIRST_TRIES = 8  # candidates the first, cheap pass checks
CANDIDATES = 50_000  # candidates to check for one chunk before a plain scan is cheaper

_RUNS = re.compile(r"(\s\s+)")  # \s is exactly str.isspace(), what str.split() splits on


def fold(text: str) -> str:
    """`text` with leading and trailing whitespace dropped and every inner run made one space."""
    return " ".join(text.split())


class Sampled:
    """The GRAM characters at every SAMPLE-th position of a text, to find long needles without a scan.

    An occurrence of a needle at q holds the sampled positions q + j, q + j + SAMPLE, ... for the
    one j in [0, SAMPLE) with q + j a multiple of SAMPLE; so for each j the needle's substrings at
    j, j + SAMPLE, ... must all be in the index (one missing rules that j out), and the rarest of them
    gives the candidates. Every occurrence is among the candidates; each is checked before use."""

    def __init__(self, text: str):
        self.text = text
        index: dict[str, list[int]] = {}
        for p in range(0, len(text) - GRAM + 1, SAMPLE):
            key = text[p : p + GRAM]
            hit = index.get(key)
            if hit is None:
                index[key] = [p]
            else:
                hit.append(p)
        self.index = index

    def drivers(self, needle: str, per_j: int | None) -> list[tuple[int, list[int]]]:
        """Per alignment j not ruled out: (offset, sampled positions) of its rarest substring looked
        up. `per_j` substrings per j are looked up, spread over the needle (None: all of them)."""
        index, last, out = self.index, len(needle) - GRAM, []
        for j in range(SAMPLE):
            offsets = range(j, last + 1, SAMPLE)  # never empty: j < SAMPLE <= last
            best, at = None, 0
            for off in offsets[:: -(-len(offsets) // per_j) if per_j else 1]:
                hits = index.get(needle[off : off + GRAM])
                if hits is None:
                    best = None
                    break
                if best is None or len(hits) < len(best):
                    best, at = hits, off
            if best is not None:
                out.append((at, best))
        return out

    def first(self, needle: str, lo: int) -> int | None:
        """The first occurrence of `needle` (at least SAMPLE + GRAM - 1 long) at or after `lo`, else
        the first anywhere, else -1; None when the index would be slower than a scan.

        A first pass looks up two substrings per j and checks the FIRST_TRIES smallest candidates at
        or after `lo` (each j's own smallest are enough to know them): a needle that occurs there is
        found at once. Otherwise every substring of every j is looked up, which rules out most j for
        a needle that occurs nowhere, and the remaining candidates are checked in order."""
        drivers = self.drivers(needle, 2)
        if not drivers:
            return -1
        ahead = []
        for at, hits in drivers:
            i = bisect.bisect_left(hits, lo + at)
            ahead.extend(map(at.__rsub__, hits[i : i + FIRST_TRIES]))  # p - at: where the needle would start
        ahead.sort()
        q = self._check(needle, ahead[:FIRST_TRIES])
        if q >= 0:
            return q
        drivers = self.drivers(needle, None)
        if sum(len(hits) for _, hits in drivers) > CANDIDATES:
            return None
        found = sorted(chain.from_iterable(map(at.__rsub__, hits) for at, hits in drivers))
        i = bisect.bisect_left(found, lo)
        return self._check(needle, chain(islice(found, i, None), islice(found, i)))

    def _check(self, needle: str, candidates) -> int:
        """The first of `candidates` where `needle` really occurs, else -1."""
        t, n, probe = self.text, len(needle), needle[: 2 * GRAM]
        for q in candidates:
            if q >= 0 and t.startswith(probe, q) and t[q : q + n] == needle:  # the probe fails false ones fast
                return q
        return -1


def first(text: str, needle: str, lo: int, sampled=None) -> int:
    """The first occurrence of `needle` in `text` at or after `lo`, else the first anywhere, else -1,
    through `sampled()` (a `Sampled` of `text`) when one is offered and the needle is long enough."""
    if sampled is not None and len(needle) >= SAMPLE + GRAM - 1:
        q = sampled().first(needle, lo)
        if q is not None:
            return q
    q = text.find(needle, lo)
    return q if q >= 0 else text.find(needle, 0, lo + len(needle) - 1)


class View:
    """A document's text folded (`fold`), with the map from view positions back to the text's."""

    def __init__(self, text: str):
        self.folded = fold(text)
        lead = len(text) - len(text.lstrip())
        body = text[lead : lead + len(text.strip())]
        parts = _RUNS.split(body)  # [text, run of 2+, text, run, ..., text]
        # Between runs the view keeps the text's length (one whitespace character becomes one
        # space); run k becomes one space at view position (text before it) + k, so the shift
        # grows by len(run) - 1 right after it. All with C-level loops: 10 MB in a fraction of a second.
        before = list(accumulate(map(len, parts[0::2])))
        extra = accumulate(map(len, parts[1::2]))
        self._breaks: list[int] = list(map(operator.add, before[:-1], count(1)))  # view positions where the shift grows
        self._shifts: list[int] = [lead, *map(operator.sub, extra, count(1 - lead))]  # text - view from each break
        self._sampled: Sampled | None = None

    def to_text(self, p: int) -> int:
        """The text position of view position `p` (a folded space maps to its run's start)."""
        return p + self._shifts[bisect.bisect_right(self._breaks, p)]

    def at(self, q: int) -> int:
        """The first view position whose text position is at or after text position `q`."""
        lo, hi = 0, len(self.folded)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.to_text(mid) < q:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def sampled(self) -> Sampled:
        if self._sampled is None:
            self._sampled = Sampled(self.folded)
        return self._sampled


class Source:
    """One source document and the searches the alignment makes in it. Documents shorter than
    `index_from` are searched with str.find alone (their scans are cheap)."""

    def __init__(self, text: str, index_from: int = INDEX_FROM):
        self.text = text
        self.indexed = len(text) >= index_from
        self._view: View | None = None
        self._sampled: Sampled | None = None

    def view(self) -> View:
        if self._view is None:
            self._view = View(self.text)
        return self._view

    def sampled(self) -> Sampled:
        if self._sampled is None:
            self._sampled = Sampled(self.text)
        return self._sampled

    def find(self, chunk: str, after: int) -> tuple[str, int, int] | None:
        """(placement, start, end) of `chunk`: `exact` at its first verbatim occurrence at or after
        `after`, else its first anywhere; else `whitespace` by the same rule over the folded text
        (the extent runs from the text's first to its last matched character); None when neither."""
        t = self.text
        q = t.find(chunk, after, after + len(chunk) + LOCAL)
        if q < 0:
            q = first(t, chunk, after, self.sampled if self.indexed else None)
        if q >= 0:
            return "exact", q, q + len(chunk)
        core = fold(chunk)
        if not core:
            return None
        view = self.view()
        f, lo = view.folded, view.at(after)
        p = f.find(core, lo, lo + len(core) + LOCAL)
        if p < 0:
            p = first(f, core, lo, view.sampled if self.indexed else None)
        return None if p < 0 else ("whitespace", view.to_text(p), view.to_text(p + len(core) - 1) + 1)
