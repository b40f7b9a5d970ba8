// The chunk picture's layout, apart from its painting: the rows overlapping chunks go in, the
// geometry for a width, where each bar, rank label, answer band and no-overlap tick goes, and what
// lies under the pointer. Pure functions of the chunks and the sizes; picture.js paints them.
//
// Chunks here carry UTF-16 offsets `s` and `e` into the shown document, and `row` once assigned.

export const MAX_ROWS = 12;

/** Greedy rows so overlapping chunks never share one; past MAX_ROWS chunks take turns. Sets each
 * chunk's `row`; returns {rows: chunk indexes by row, rowCount}. */
export function assignRows(chunks) {
  const ends = [];
  let greedy = true;
  for (const c of chunks) {
    let r = ends.findIndex((end) => end <= c.s);
    if (r < 0) { if (ends.length >= MAX_ROWS) { greedy = false; break; } r = ends.length; ends.push(0); }
    ends[r] = c.e;
    c.row = r;
  }
  if (!greedy) chunks.forEach((c, i) => { c.row = i % MAX_ROWS; });
  const rowCount = greedy ? Math.max(1, ends.length) : MAX_ROWS;
  const rows = Array.from({ length: rowCount }, () => []);
  chunks.forEach((c, i) => rows[c.row].push(i));
  return { rows, rowCount };
}

/** Where everything goes for a canvas `width` px wide: the rank lane on top, the rows of bars, the
 * document strip, the axis; `height` is what that needs. */
export function geometry(width, rowCount, docLength) {
  const rowH = rowCount <= 4 ? 22 : Math.max(7, Math.floor(96 / rowCount));
  const lane = 16, gap = rowCount <= 4 ? 4 : 2, stripH = 18, axis = 16, pad = 8;
  const rowsTop = lane + 4;
  const rowsBottom = rowsTop + rowCount * (rowH + gap);
  const stripTop = rowsBottom + 12; // the gap holds the ticks of boundaries without overlap
  return { width, height: stripTop + stripH + axis + 4, docLength, pad, lane, rowH, gap, rowsTop, rowsBottom,
    stripTop, stripH, axisTop: stripTop + stripH + 2, plotW: width - 2 * pad };
}

export const xOf = (L, offset) => L.pad + (L.docLength ? offset / L.docLength : 0) * L.plotW;
export const offsetAt = (L, x) => Math.round(((x - L.pad) / L.plotW) * L.docLength);
const rowY = (L, r) => L.rowsTop + r * (L.rowH + L.gap);

/** A chunk's bar: [x, y, w, h], at least 1 px wide. */
export function barOf(L, c) {
  const x0 = xOf(L, c.s), x1 = Math.max(xOf(L, c.e), x0 + 1);
  return [x0, rowY(L, c.row), x1 - x0, L.rowH];
}

/** The marked span's band: [x0, x1], at least 2 px wide, or null. */
export function bandOf(L, span) {
  if (!span || !L.docLength) return null;
  return [xOf(L, span.start), Math.max(xOf(L, span.end), xOf(L, span.start) + 2)];
}

/** Rank labels of the retrieved chunks, best rank first: inside the bar when it is wide enough,
 * else in the lane above, never overlapping another (then left out). `measure(text)` is its width. */
export function placeLabels(L, chunks, measure) {
  const placed = [];
  const used = [];
  const retrieved = chunks.filter((c) => c.retrieved).sort((a, b) => a.rank - b.rank);
  for (const c of retrieved) {
    const [x, y, w, h] = barOf(L, c);
    const text = `#${c.rank}`;
    const tw = measure(text);
    if (w >= tw + 6 && h >= 11) {
      placed.push({ text, x: x + 3, y: y + h / 2, inside: true });
      continue;
    }
    const lx = Math.min(Math.max(x + w / 2 - tw / 2, 0), L.width - tw);
    if (used.some(([a, b]) => lx < b + 3 && lx + tw > a - 3)) continue;
    used.push([lx, lx + tw]);
    placed.push({ text, x: lx, y: L.lane / 2 + 1, inside: false });
  }
  return placed;
}

/** Boundaries whose chunks share nothing although overlap was asked for: [{x, label}], `label`
 * where there is room for a "0" beside the tick. */
export function noOverlapTicks(L, chunks, overlapAsked) {
  const ticks = [];
  let lastLabel = -Infinity;
  for (const c of overlapAsked > 0 ? chunks : []) {
    if (c.overlap_prev !== 0) continue;
    const x = Math.round(xOf(L, c.s));
    const label = x + 2 - lastLabel >= 12;
    if (label) lastLabel = x + 3;
    ticks.push({ x, label });
  }
  return ticks;
}

/** The index of the chunk under (mx, my), within 3 px for bars narrower than a pointer, or -1. */
export function hitChunk(L, chunks, rows, mx, my) {
  if (my < L.rowsTop || my >= L.rowsBottom) return -1;
  const row = rows[Math.floor((my - L.rowsTop) / (L.rowH + L.gap))];
  if (!row || !row.length) return -1;
  const off = offsetAt(L, mx);
  let lo = 0, hi = row.length; // first chunk in the row with s > off
  while (lo < hi) { const mid = (lo + hi) >> 1; if (chunks[row[mid]].s <= off) lo = mid + 1; else hi = mid; }
  let best = -1, bestDist = 3;
  for (const j of [lo - 1, lo, lo - 2]) {
    if (j < 0 || j >= row.length) continue;
    const c = chunks[row[j]];
    const x0 = xOf(L, c.s), x1 = Math.max(xOf(L, c.e), x0 + 1);
    const d = mx < x0 ? x0 - mx : mx > x1 ? mx - x1 : 0;
    if (d < bestDist) { best = row[j]; bestDist = d; }
  }
  return best;
}

/** Whether a pointer at height `my` is over the document strip. */
export const inStrip = (L, my) => my >= L.stripTop - 2 && my <= L.stripTop + L.stripH + 2;
