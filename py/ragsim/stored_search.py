"""Finding a stored chunk's text in its source document (SPEC section 11): verbatim, else with runs
of whitespace treated as equal, in time that stays near-linear on long documents.

A chunk is first looked for verbatim just past the hint (where the walk expects it), which is where
an in-order store finds every chunk. Only a chunk missed there needs a global search, and proving
that a chunk occurs nowhere verbatim costs a full scan. On a long document those searches go
through the `View`: the text with every run of whitespace folded into one space (a verbatim
occurrence is also an occurrence in the view), with a sparse index of its substrings, so a global
search costs a few dozen dictionary look-ups instead of a scan of megabytes.
"""

import bisect
import re

LOCAL = 4096  # how far past the end of a chunk at the hint it is first looked for, verbatim
INDEX_FROM = 1 << 20  # documents shorter than this are searched with str.find alone
SAMPLE = 64  # the index holds the substring at every SAMPLE-th position of the view ...
GRAM = 16  # ... GRAM characters long; a chunk folds to at least SAMPLE + GRAM - 1 characters to use it
CANDIDATES = 50_000  # index hits to check per chunk before a plain scan is cheaper

_RUNS = re.compile(r"\s\s+")  # \s is exactly str.isspace(), what str.split() splits on


def fold(text: str) -> str:
    """`text` with leading and trailing whitespace dropped and every inner run made one space."""
    return " ".join(text.split())


class View:
    """A document's text folded (`fold`), with the map from view positions back to the text's."""

    def __init__(self, text: str):
        self.folded = fold(text)
        lead = len(text) - len(text.lstrip())
        self._breaks: list[int] = []  # view positions where the shift (text - view) grows
        self._shifts: list[int] = [lead]  # the shift from each break on (the first: from 0)
        shift = lead
        for m in _RUNS.finditer(text, lead):
            a, b = m.span()
            if b == len(text):
                break  # trailing whitespace has no place in the view
            space = a - shift  # the view's one space for this run
            shift += b - a - 1
            self._breaks.append(space + 1)
            self._shifts.append(shift)
        self._index: dict | None = None

    def to_text(self, p: int) -> int:
        """The text position of view position `p` (a folded space maps to its run's start)."""
        return p + self._shifts[bisect.bisect_right(self._breaks, p)]

    def index(self) -> dict:
        """{substring: [view positions]} for the GRAM characters at every SAMPLE-th position."""
        if self._index is None:
            f, index = self.folded, {}
            for p in range(0, len(f) - GRAM + 1, SAMPLE):
                key = f[p : p + GRAM]
                hit = index.get(key)
                if hit is None:
                    index[key] = [p]
                else:
                    hit.append(p)
            self._index = index
        return self._index

    def occurrences(self, core: str) -> list[int] | None:
        """Every view position where `core` (folded, at least SAMPLE + GRAM - 1 long) occurs,
        ascending; None when the index hits too often to be quicker than a scan.

        Any occurrence at q covers exactly one sampled position q + j (0 <= j < SAMPLE), so looking
        up core[j:j + GRAM] for every j finds each occurrence exactly once."""
        f, index, out, checked = self.folded, self.index(), [], 0
        for j in range(SAMPLE):
            hits = index.get(core[j : j + GRAM], ())
            checked += len(hits)
            if checked > CANDIDATES:
                return None
            out.extend(p - j for p in hits if p >= j and f.startswith(core, p - j))
        out.sort()
        return out


class Source:
    """One source document and the searches the alignment makes in it."""

    def __init__(self, text: str, index_from: int = INDEX_FROM):
        self.text = text
        self.index_from = index_from
        self._view: View | None = None

    @property
    def view(self) -> View:
        if self._view is None:
            self._view = View(self.text)
        return self._view

    def find(self, chunk: str, after: int) -> tuple[str, int, int] | None:
        """(placement, start, end) of `chunk`: `exact` at its first verbatim occurrence at or after
        `after`, else its first anywhere; else `whitespace` by the same rule over the folded text
        (the extent runs from the text's first to its last matched character); None when neither."""
        t = self.text
        q = t.find(chunk, after, after + len(chunk) + LOCAL)
        if q >= 0:
            return "exact", q, q + len(chunk)
        core = fold(chunk)
        if not core:  # whitespace only: verbatim or nowhere
            q = t.find(chunk, after)
            q = q if q >= 0 else t.find(chunk)
            return None if q < 0 else ("exact", q, q + len(chunk))
        if len(t) >= self.index_from and len(core) >= SAMPLE + GRAM - 1:
            found = self._indexed(chunk, core, after)
            if found is not False:
                return found
        return self._scanned(chunk, core, after)

    def _scanned(self, chunk: str, core: str, after: int):
        t = self.text
        q = t.find(chunk, after)
        if q < 0:
            q = t.find(chunk, 0, after + len(chunk) - 1)
        if q >= 0:
            return "exact", q, q + len(chunk)
        view = self.view
        f = view.folded
        lo = self._view_at(after)
        p = f.find(core, lo)
        if p < 0:
            p = f.find(core, 0, lo + len(core) - 1)
        return None if p < 0 else ("whitespace", view.to_text(p), view.to_text(p + len(core) - 1) + 1)

    def _indexed(self, chunk: str, core: str, after: int):
        """As `_scanned`, from the view's index; False when the index would be slower."""
        view = self.view
        found = view.occurrences(core)
        if found is None:
            return False
        if not found:
            return None
        t, lead = self.text, len(chunk) - len(chunk.lstrip())
        starts = [view.to_text(p) - lead for p in found]  # every verbatim occurrence is one of these
        verbatim = [s for s in starts if s >= 0 and t.startswith(chunk, s)]
        if verbatim:
            s = _first_from(verbatim, after)
            return "exact", s, s + len(chunk)
        i = bisect.bisect_left(starts, after - lead)
        p = found[i] if i < len(found) else found[0]
        return "whitespace", view.to_text(p), view.to_text(p + len(core) - 1) + 1

    def _view_at(self, after: int) -> int:
        """The first view position whose text position is at or after `after`."""
        view = self.view
        lo, hi = 0, len(view.folded)
        while lo < hi:
            mid = (lo + hi) // 2
            if view.to_text(mid) < after:
                lo = mid + 1
            else:
                hi = mid
        return lo


def _first_from(sorted_starts: list[int], after: int) -> int:
    i = bisect.bisect_left(sorted_starts, after)
    return sorted_starts[i] if i < len(sorted_starts) else sorted_starts[0]

