// The chunk picture's layout, apart from its painting: the rows overlapping chunks go in, the
// geometry for a width, where each bar, rank label, answer band and no-overlap tick goes, and what
// lies under the pointer. Pure functions of the chunks and the sizes; picture.js paints them.
//
// The shown chunks are columns, `C = {n, s, e, row, rows}`: UTF-16 offsets `s` and `e` into the
// shown document (typed arrays, chunk i of the document at index i), and, once assigned, each
// chunk's `row` and the chunk indexes of every row (assignRows). Nothing here builds an object per
// chunk, and bars narrower than a pixel are merged (faintBars), so 70,000 chunks paint as a few
// rectangles per pixel column.

export const MAX_ROWS = 12;

/** Greedy rows so overlapping chunks never share one; past MAX_ROWS chunks take turns.
 * Returns {row: each chunk's row, rows: the chunk indexes of each row (in order), rowCount}. */
export function assignRows(s, e) {
  const n = s.length, row = new Uint8Array(n), ends = [];
  let greedy = true;
  for (let i = 0; i < n; i++) {
    let r = 0;
    while (r < ends.length && ends[r] > s[i]) r++;
    if (r === ends.length) { if (ends.length >= MAX_ROWS) { greedy = false; break; } ends.push(0); }
    ends[r] = e[i];
    row[i] = r;
  }
  if (!greedy) for (let i = 0; i < n; i++) row[i] = i % MAX_ROWS;
  const rowCount = greedy ? Math.max(1, ends.length) : MAX_ROWS;
  const sizes = new Int32Array(rowCount);
  for (let i = 0; i < n; i++) sizes[row[i]]++;
  const rows = Array.from(sizes, (k) => new Int32Array(k));
  sizes.fill(0);
  for (let i = 0; i < n; i++) rows[row[i]][sizes[row[i]]++] = i;
  return { row, rows, rowCount };
}

// The rows' area has one height whatever the number of rows, so the picture (and the sliders under
// it) never change height while a slider is dragged: fewer rows get taller bars. Phones
// get a lower one, so the verdict, the picture and the sliders still fit one screen.
export const rowsArea = (width) => (width < 520 ? 60 : 96);

/** Where everything goes for a canvas `width` px wide: the rank lane on top, the rows of bars, the
 * document strip, the axis; `height` is the same for any rowCount. */
export function geometry(width, rowCount, docLength) {
  const gap = rowCount <= 4 ? 4 : 2, area = rowsArea(width);
  const rowH = Math.min(28, Math.max(3, Math.floor(area / rowCount) - gap));
  const lane = 16, stripH = 18, axis = 16, pad = 8;
  const rowsTop = lane + 4;
  const rowsBottom = rowsTop + rowCount * (rowH + gap);
  const stripTop = rowsTop + Math.max(area, rowsBottom - rowsTop) + 12; // the gap holds the ticks of boundaries without overlap
  return { width, height: stripTop + stripH + axis + 4, docLength, pad, lane, rowH, gap, rowsTop, rowsBottom,
    stripTop, stripH, axisTop: stripTop + stripH + 2, plotW: width - 2 * pad };
}

export const xOf = (L, offset) => L.pad + (L.docLength ? offset / L.docLength : 0) * L.plotW;
export const offsetAt = (L, x) => Math.round(((x - L.pad) / L.plotW) * L.docLength);
const rowY = (L, r) => L.rowsTop + r * (L.rowH + L.gap);

/** Chunk i's bar: [x, y, w, h], at least 1 px wide. */
export function barOf(L, C, i) {
  const x0 = xOf(L, C.s[i]), x1 = Math.max(xOf(L, C.e[i]), x0 + 1);
  return [x0, rowY(L, C.row[i]), x1 - x0, L.rowH];
}

/** A retrieved chunk's solid bar: its bar less 2 px at its end where it is wide enough, so
 * neighbours that meet (no overlap) read as separate bars, not one. */
export function solidBarOf(L, C, i) {
  const [x, y, w, h] = barOf(L, C, i);
  return [x, y, w >= 6 ? w - 2 : w, h];
}

/** The faint bars of the chunks not `retrieved[i]`, row by row: {wide: [x, y, w, h] of bars 4 px
 * or wider (drawn one by one, outlined), runs: [x, y, w, h] of narrower bars merged while less
 * than a pixel apart}: at most a few rectangles per pixel column per row, however many chunks. */
export function faintBars(L, C, retrieved) {
  const wide = [], runs = [];
  C.rows.forEach((members, r) => {
    const y = rowY(L, r);
    let a = 0, z = -Infinity; // the run being merged: [a, z)
    for (const i of members) {
      if (retrieved[i]) continue;
      const x0 = xOf(L, C.s[i]), x1 = Math.max(xOf(L, C.e[i]), x0 + 1);
      if (x1 - x0 >= 4) { wide.push([x0, y, x1 - x0, L.rowH]); continue; }
      if (x0 <= z + 1) { z = Math.max(z, x1); continue; }
      if (z > a) runs.push([a, y, z - a, L.rowH]);
      a = x0; z = x1;
    }
    if (z > a) runs.push([a, y, z - a, L.rowH]);
  });
  return { wide, runs };
}

/** The marked span's band: [x0, x1], at least 2 px wide, or null. */
export function bandOf(L, span) {
  if (!span || !L.docLength) return null;
  return [xOf(L, span.start), Math.max(xOf(L, span.end), xOf(L, span.start) + 2)];
}

/** Rank labels of the retrieved chunks `shown` ([{i, rank}], best rank first): inside the bar when
 * it is wide enough, else in the lane above, over the bar or as near it as the labels already
 * placed there leave room for (left out only when the lane is full). `measure(text)` is its width. */
export function placeLabels(L, C, shown, measure) {
  const placed = [];
  const used = [];
  for (const { i, rank } of shown) {
    const [x, y, w, h] = solidBarOf(L, C, i);
    const text = `#${rank}`;
    const tw = measure(text);
    if (w >= tw + 6 && h >= 11) {
      placed.push({ text, x: x + 3, y: y + h / 2, w: tw, inside: true });
      continue;
    }
    const lx = freeSpot(used, x + w / 2 - tw / 2, tw, L.width);
    if (lx === null) continue;
    used.push([lx, lx + tw]);
    placed.push({ text, x: lx, y: L.lane / 2 + 1, w: tw, inside: false });
  }
  return placed;
}

/** The left edge nearest `want` for a label `tw` wide in [0, width) that keeps 3 px from every
 * label in `used` ([a, b] each), or null when none fits. */
function freeSpot(used, want, tw, width) {
  const fits = (lx) => lx >= 0 && lx + tw <= width && !used.some(([a, b]) => lx < b + 3 && lx + tw > a - 3);
  const clamped = Math.min(Math.max(want, 0), width - tw);
  const candidates = [clamped, ...used.flatMap(([a, b]) => [b + 3, a - 3 - tw])].filter(fits);
  if (!candidates.length) return null;
  return candidates.reduce((best, lx) => (Math.abs(lx - want) < Math.abs(best - want) ? lx : best));
}

/** Boundaries whose chunks share nothing although overlap was asked for (`overlap[i] === 0`, chunk
 * i's characters shared with the one before): [{x, label}], one per pixel column, `label` where
 * there is room for a "0" beside the tick. */
export function noOverlapTicks(L, C, overlap, overlapAsked) {
  const ticks = [];
  let lastLabel = -Infinity, lastX = NaN;
  for (let i = 0; overlapAsked > 0 && i < C.n; i++) {
    if (overlap[i] !== 0) continue;
    const x = Math.round(xOf(L, C.s[i]));
    if (x === lastX) continue;
    lastX = x;
    const label = x + 2 - lastLabel >= 12;
    if (label) lastLabel = x + 3;
    ticks.push({ x, label });
  }
  return ticks;
}

/** The index of the chunk under (mx, my), within 3 px for bars narrower than a pointer, or -1. */
export function hitChunk(L, C, mx, my) {
  if (my < L.rowsTop || my >= L.rowsBottom) return -1;
  const row = C.rows[Math.floor((my - L.rowsTop) / (L.rowH + L.gap))];
  if (!row || !row.length) return -1;
  const off = offsetAt(L, mx);
  let lo = 0, hi = row.length; // first chunk in the row with s > off
  while (lo < hi) { const mid = (lo + hi) >> 1; if (C.s[row[mid]] <= off) lo = mid + 1; else hi = mid; }
  let best = -1, bestDist = 3;
  for (const j of [lo - 1, lo, lo - 2]) {
    if (j < 0 || j >= row.length) continue;
    const i = row[j];
    const x0 = xOf(L, C.s[i]), x1 = Math.max(xOf(L, C.e[i]), x0 + 1);
    const d = mx < x0 ? x0 - mx : mx > x1 ? mx - x1 : 0;
    if (d < bestDist) { best = i; bestDist = d; }
  }
  return best;
}

/** Whether a pointer at height `my` is over the document strip. */
export const inStrip = (L, my) => my >= L.stripTop - 2 && my <= L.stripTop + L.stripH + 2;
