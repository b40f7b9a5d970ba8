"""The chunk picture as inline SVG, drawn as the page draws it (assets/js/render/picture-layout.js
and picture.js): the chunks as rows of bars along one document (overlapping chunks never share a
row), the retrieved ones solid with their rank, the others faint, a stored index's chunks green,
the answer an orange band through every row, the document a strip under them, its length on the axis.

No script and nothing fetched: the SVG is text in the notebook's output. Every text in it comes
from the caller's data and goes through `html.escape`.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

# The page's light-scheme colours (assets/js/render/palette.js).
COLORS = {"retrieved": "#1f5fa8", "on_retrieved": "#ffffff", "faint": "rgba(214,223,233,0.7)",
          "faint_edge": "#8797a8", "band": "rgba(242,140,40,0.5)", "band_edge": "#c25e00",
          "strip": "rgba(190,200,212,0.55)", "text": "#56606b", "stored": "rgba(46,140,90,0.28)",
          "stored_edge": "#1f7a4a", "stored_retrieved": "#1f7a4a"}
WIDTH, MAX_ROWS, ROWS_AREA, CHAR_PX = 720, 12, 96, 6.6  # CHAR_PX: an 11 px label's mean character width
LANE, STRIP_H, AXIS, PAD = 16, 18, 16, 8


@dataclass(frozen=True)
class Bar:
    """One chunk of the picture: its extent (code points), and its rank when it was retrieved."""
    start: int
    end: int
    rank: int | None = None


def assign_rows(bars: list[Bar]) -> tuple[list[int], int]:
    """Greedy rows so overlapping chunks never share one; past MAX_ROWS chunks take turns."""
    rows, ends = [], []
    for b in bars:
        r = next((i for i, e in enumerate(ends) if e <= b.start), len(ends))
        if r == len(ends):
            if len(ends) >= MAX_ROWS:
                return [i % MAX_ROWS for i in range(len(bars))], MAX_ROWS
            ends.append(0)
        ends[r] = b.end
        rows.append(r)
    return rows, max(1, len(ends))


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _rect(x, y, w, h, fill, extra="") -> str:
    return f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" fill="{fill}"{extra}/>'


def _text(x, y, text, fill, size=11, weight=400, anchor="start") -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" fill="{fill}" font-size="{size}" font-weight="{weight}" '
            f'text-anchor="{anchor}" dominant-baseline="middle">{escape(text)}</text>')


class Layout:
    """Where everything goes, as picture-layout.js `geometry`: the rank lane, the rows, the strip."""

    def __init__(self, row_count: int, length: int):
        self.gap = 4 if row_count <= 4 else 2
        self.row_h = min(28, max(3, ROWS_AREA // row_count - self.gap))
        self.rows_top = LANE + 4
        self.rows_bottom = self.rows_top + row_count * (self.row_h + self.gap)
        self.strip_top = self.rows_top + max(ROWS_AREA, self.rows_bottom - self.rows_top) + 12
        self.height = self.strip_top + STRIP_H + AXIS + 4
        self.length, self.plot_w = length, WIDTH - 2 * PAD

    def x(self, offset: int) -> float:
        return PAD + (offset / self.length if self.length else 0) * self.plot_w

    def bar(self, b: Bar, row: int) -> tuple[float, float, float, float]:
        x0 = self.x(b.start)
        return x0, self.rows_top + row * (self.row_h + self.gap), max(self.x(b.end) - x0, 1), self.row_h


def _faint(L: Layout, bars, rows, stored: bool) -> list[str]:
    """The chunks not retrieved: wide ones outlined one by one, narrower ones merged into runs while
    less than a pixel apart (so thousands of chunks are a few rectangles per pixel column)."""
    fill, edge = (COLORS["stored"], COLORS["stored_edge"]) if stored else (COLORS["faint"], COLORS["faint_edge"])
    dash = "" if stored else ' stroke-dasharray="3 2"'
    out, runs = [], {}
    for b, r in zip(bars, rows):
        if b.rank is not None:
            continue
        x, y, w, h = L.bar(b, r)
        if w >= 4:
            out.append(_rect(x, y, w, h, fill, f' stroke="{edge}" stroke-width="1"{dash}'))
            continue
        run = runs.get(r)
        if run and x <= run[1] + 1:
            run[1] = max(run[1], x + w)
        else:
            if run:
                out.append(_rect(run[0], y, run[1] - run[0], h, fill))
            runs[r] = [x, x + w]
    out += [_rect(a, L.rows_top + r * (L.row_h + L.gap), z - a, L.row_h, fill) for r, (a, z) in runs.items()]
    return out


def _retrieved(L: Layout, bars, rows, stored: bool) -> list[str]:
    """The retrieved chunks, solid, best rank last (on top), each labelled `#rank` inside its bar
    when it fits, else in the lane above where no other label is."""
    solid = COLORS["stored_retrieved"] if stored else COLORS["retrieved"]
    shown = sorted(((b, r) for b, r in zip(bars, rows) if b.rank is not None), key=lambda br: br[0].rank)
    out, used = [_rect(*L.bar(b, r), solid) for b, r in reversed(shown)], []
    for b, r in shown:
        x, y, w, h = L.bar(b, r)
        label = f"#{b.rank}"
        tw = len(label) * CHAR_PX
        if w >= tw + 6 and h >= 11:
            out.append(_text(x + 3, y + h / 2, label, COLORS["on_retrieved"], weight=600))
            continue
        lx = min(max(x + w / 2 - tw / 2, 0), WIDTH - tw)
        if any(lx < z + 3 and lx + tw > a - 3 for a, z in used):
            continue
        used.append((lx, lx + tw))
        out.append(_text(lx, LANE / 2 + 1, label, solid, weight=600))
    return out


def svg(length: int, bars: list[Bar], bands=(), stored: bool = False, label: str = "document") -> str:
    """The picture of one document `length` code points long: `bars` in document order, `bands`
    (start, end, fill, edge; "" for the answer's orange) drawn through every row."""
    rows, row_count = assign_rows(bars)
    L = Layout(row_count, length)
    parts = []
    for start, end, fill, _ in bands:  # behind the bars, so their colours stay true
        x0 = L.x(start)
        parts.append(_rect(x0, 0, max(L.x(end) - x0, 2), L.strip_top + STRIP_H, fill or COLORS["band"]))
    parts += _faint(L, bars, rows, stored) + _retrieved(L, bars, rows, stored)
    parts.append(_rect(PAD, L.strip_top, L.plot_w, STRIP_H, COLORS["strip"]))
    parts.append(_text(PAD + 6, L.strip_top + STRIP_H / 2, label, COLORS["text"]))
    for start, end, _, edge in bands:  # the band's hard edges over everything
        for at in (L.x(start), max(L.x(end), L.x(start) + 2)):
            parts.append(_rect(at - 1, 0, 2, L.strip_top + STRIP_H, edge or COLORS["band_edge"]))
    axis = L.strip_top + STRIP_H + 2 + 6
    parts.append(_text(PAD, axis, "start", COLORS["text"]))
    parts.append(_text(WIDTH - PAD, axis, f"end · {length:,} characters", COLORS["text"], anchor="end"))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {L.height}" width="100%" '
            f'style="max-width:{WIDTH}px;font-family:system-ui,sans-serif" role="img" '
            f'aria-label="{escape(label)}: {len(bars)} chunks">' + "".join(parts) + "</svg>")
