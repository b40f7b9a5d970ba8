// The chunk picture: one <canvas>; chunks are rows of bars along the selected document, the marked
// answer an orange band through every row, the document a strip to click a sentence in. The canvas
// takes focus and the arrow keys step through chunks, so thousands of chunks cost no DOM nodes.
//
// setData(response, snap) takes what to show, as columns (response.cols, chunk-columns.js: no
// object per chunk); each draw computes the scene (picture-layout.js) and then paints it. Hover
// and focus only repaint: they never reach the worker. Clicking a sentence is reported through
// onMarkSentence(span, doc); the picture never changes the state.

import { int, plural } from "../format.js";
import { offsetMap } from "../offsets.js";
import { sentenceAt } from "../spans.js";
import { COLORS, onSchemeChange, touchScreen } from "./palette.js";
import { paintUnread } from "./dense-words.js";
import { assignRows, bandOf, barOf, faintBars, geometry, hitChunk, inStrip, noOverlapTicks, offsetAt, placeLabels, solidBarOf, xOf } from "./picture-layout.js";

const FONTS = { label: "600 11px system-ui, sans-serif", strip: "11px system-ui, sans-serif", tick: "700 10px system-ui, sans-serif" };
const DETAIL_CHARS = 1200; // characters of a chunk or sentence quoted in the detail box
const EMPTY = { n: 0, a: 0, s: [], e: [], r: null, row: [], rows: [[]], overlap: [] }; // no chunks shown

export class Picture {
  /** canvas; wrap: the element whose width it follows; head, body: the detail box's lines;
   * onMarkSentence(span, doc): a sentence of the shown text `doc` was clicked. */
  constructor({ canvas, wrap, head, body, onMarkSentence }) {
    Object.assign(this, { canvas, wrap, head, body, onMarkSentence });
    this.ctx = canvas.getContext("2d");
    this.width = 600; this.height = 120;
    this.C = EMPTY; this.cols = null; this.shown = []; this.retrieved = new Uint8Array(0); this.rowCount = 1; this.docLength = 0; this.span = null; this.snap = null;
    this.hover = -1; this.focusIndex = -1; this.hoverSentence = null; this.layout = null;
    // The wrap's width as of its last resize: read when the layout is fresh (the observer runs after
    // layout), so drawing new data never forces a layout in the middle of a render.
    this.wrapWidth = 0;
    new ResizeObserver(() => { this.wrapWidth = wrap.clientWidth; this.resize(); }).observe(wrap);
    canvas.addEventListener("mousemove", (e) => this.onMove(e));
    canvas.addEventListener("mouseleave", () => { this.hover = -1; this.hoverSentence = null; this.draw(); this.describe(); });
    canvas.addEventListener("click", (e) => this.onClick(e));
    canvas.addEventListener("keydown", (e) => this.onKey(e));
    canvas.addEventListener("focus", () => {
      if (this.focusIndex < 0 && this.C.n) this.focusIndex = this.firstRetrieved();
      this.draw(); this.describe();
    });
    canvas.addEventListener("blur", () => this.draw());
    onSchemeChange(() => this.draw());
    this.resize();
  }

  setData(response, snap) {
    const map = offsetMap(snap.doc);
    if (this.snap && this.snap.doc !== snap.doc) this.focusIndex = -1; // a new text: start at rank #1 again
    this.snap = snap;
    this.docLength = snap.doc.length;
    const cols = response.cols;
    this.cols = cols;
    this.total = cols.length;
    this.span = snap.marks[snap.docId] || null; // the answer, or the marked fact's stretch, in this document
    this.spans = (snap.bands && snap.bands[snap.docId]) || (this.span ? [this.span] : []); // every span of a multi-span answer
    // The selected document's chunks (lanes.js shows the rest): positions [a, b), here 0 .. n - 1.
    const [a, b] = cols.range(snap.ids.indexOf(snap.docId)), n = b - a;
    const s = new Float64Array(n), e = new Float64Array(n), r = cols.readEnd ? new Float64Array(n) : null;
    if (map.identity) { // no surrogate pairs: the offsets as they came, copied at C speed
      s.set(cols.start.subarray(a, b));
      e.set(cols.end.subarray(a, b));
    }
    for (let i = 0; i < n && !map.identity; i++) {
      s[i] = map.toU16(cols.start[a + i]);
      e[i] = map.toU16(cols.end[a + i]);
    }
    for (let i = 0; r && i < n; i++) r[i] = cols.readEnd[a + i] < 0 ? -1 : map.toU16(cols.readEnd[a + i]);
    const { row, rows, rowCount } = assignRows(s, e);
    this.C = { n, a, s, e, r, row, rows, overlap: cols.overlap.subarray(a, b) };
    this.rowCount = rowCount;
    // The retrieved chunks of this document, best rank first, and a flag per chunk.
    this.shown = [];
    this.retrieved = new Uint8Array(n);
    cols.top.forEach((p, j) => { if (p >= a && p < b) { this.shown.push({ i: p - a, rank: j + 1 }); this.retrieved[p - a] = 1; } });
    if (this.focusIndex >= n) this.focusIndex = n - 1;
    this.hover = -1;
    this.resize();
    this.describe();
  }

  /** Focus the last chunk starting at or before code point `at` (a fact followed from the audit). */
  focusAt(at) {
    const { a, n } = this.C, start = this.cols.start;
    let i = n - 1;
    while (i >= 0 && start[a + i] > at) i--;
    if (i < 0) return;
    this.focusIndex = i;
    this.canvas.focus({ preventScroll: true });
    this.draw();
    this.describe();
  }

  firstRetrieved() {
    const first = this.shown && this.shown[0];
    return first && first.rank === 1 ? first.i : 0;
  }

  resize() {
    const w = Math.max(200, this.wrapWidth || this.wrap.clientWidth);
    this.layout = geometry(w, this.rowCount, this.docLength);
    const h = this.layout.height;
    const dpr = window.devicePixelRatio || 1;
    if (this.width !== w || this.height !== h || this.canvas.width !== Math.round(w * dpr)) {
      this.width = w; this.height = h;
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.height = `${h}px`;
      this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    this.draw();
  }

  draw() {
    if (!this.layout) return;
    paint(this.ctx, this.scene());
  }

  /** Everything the paint needs, positioned: the layout step of each draw. */
  scene() {
    const L = this.layout, ctx = this.ctx, C = this.C;
    ctx.font = FONTS.label;
    const focused = document.activeElement === this.canvas;
    const strip = this.hoverSentence;
    return {
      L,
      bands: (this.spans || []).map((sp) => bandOf(L, sp)).filter(Boolean),
      faint: faintBars(L, C, this.retrieved),
      retrieved: this.shown.map(({ i }) => solidBarOf(L, C, i)),
      unread: this.unread(L),
      labels: placeLabels(L, C, this.shown, (text) => ctx.measureText(text).width),
      hoverSentence: strip ? [xOf(L, strip.start), Math.max(xOf(L, strip.end), xOf(L, strip.start) + 2)] : null,
      ticks: noOverlapTicks(L, C, C.overlap || [], this.snap ? this.snap.overlap : 0),
      hover: this.hover >= 0 && this.hover < C.n ? barOf(L, C, this.hover) : null,
      focus: focused && this.focusIndex >= 0 && this.focusIndex < C.n ? barOf(L, C, this.focusIndex) : null,
      end: this.snap ? `end · ${int(offsetMap(this.snap.doc).cpLength)} characters` : null,
      stored: Boolean(this.snap && this.snap.stored), // your index's chunks: green, solid outlines
    };
  }

  /** Dense: the tails the model never reads, [x, y, w, h] per truncated chunk. */
  unread(L) {
    const C = this.C, out = [];
    for (let i = 0; C.r && i < C.n; i++) {
      if (C.r[i] < 0) continue;
      const [x, y, w, h] = barOf(L, C, i), from = Math.min(xOf(L, C.r[i]), x + w);
      out.push([from, y, x + w - from, h]);
    }
    return out;
  }

  point(e) {
    const rect = this.canvas.getBoundingClientRect();
    return [e.clientX - rect.left, e.clientY - rect.top];
  }

  onMove(e) {
    const [mx, my] = this.point(e);
    const L = this.layout;
    const hover = hitChunk(L, this.C, mx, my);
    const sentence = this.snap && inStrip(L, my) ? sentenceAt(this.snap.doc, offsetAt(L, mx)) : null;
    const same = (a, b) => (a && b ? a.start === b.start && a.end === b.end : a === b);
    if (hover === this.hover && same(sentence, this.hoverSentence)) return;
    this.hover = hover;
    this.hoverSentence = sentence;
    this.canvas.style.cursor = sentence ? "pointer" : "crosshair";
    this.draw();
    this.describe();
  }

  onClick(e) {
    const [mx, my] = this.point(e);
    const L = this.layout;
    if (!this.snap || !inStrip(L, my)) {
      const i = hitChunk(L, this.C, mx, my);
      if (i >= 0) { this.focusIndex = i; this.describe(); }
      return;
    }
    const span = sentenceAt(this.snap.doc, offsetAt(L, mx));
    if (span) this.onMarkSentence(span, this.snap.doc);
  }

  onKey(e) {
    const n = this.C.n;
    if (!n) return;
    const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    let i = this.focusIndex < 0 ? this.firstRetrieved() : this.focusIndex;
    if (e.key in moves) i = Math.min(Math.max(i + moves[e.key], 0), n - 1);
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = n - 1;
    else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); this.markFirstSentence(i); return; }
    else return;
    e.preventDefault();
    this.focusIndex = i;
    this.draw();
    this.describe();
  }

  /** The keyboard's way to mark: the first sentence that starts inside chunk `i` (the sentence at its
   * start when none does). */
  markFirstSentence(i) {
    const doc = this.snap && this.snap.doc;
    if (!(i >= 0 && i < this.C.n) || !doc) return;
    const cs = this.C.s[i], ce = this.C.e[i];
    let s = sentenceAt(doc, cs);
    if (s && s.start < cs) {
      let j = s.end;
      while (j < ce && /\s/.test(doc[j])) j++;
      const next = j < ce ? sentenceAt(doc, j) : null;
      if (next && next.start >= cs && next.start < ce) s = next;
    }
    this.focusIndex = i;
    if (s) this.onMarkSentence(s, doc);
  }

  /** The detail box: the hovered chunk, else the hovered sentence, else the focused chunk. */
  describe() {
    const focused = document.activeElement === this.canvas ? this.focusIndex : -1;
    const i = this.hover >= 0 ? this.hover : focused;
    const C = this.C;
    const [head, body] = i >= 0 && i < C.n ? chunkDetail(this.cols.object(C.a + i), C.s[i], C.e[i], this.total, this.snap)
      : this.hoverSentence ? ["Click to mark this sentence as the answer:",
        this.snap.doc.slice(this.hoverSentence.start, Math.min(this.hoverSentence.end, this.hoverSentence.start + DETAIL_CHARS))]
        : [touchScreen() ? "Tap a chunk to read it, a sentence in the grey strip to mark it."
          : "Hover over a chunk, or focus the picture and use the arrow keys; Enter marks the focused chunk's first sentence.", ""];
    if (this.head.textContent !== head) this.head.textContent = head;
    if (this.body.textContent !== body) this.body.textContent = body;
  }
}

/** [heading, text] of the detail box for chunk `c` (its object, at UTF-16 [s, e)) of `total`. */
function chunkDetail(c, s, e, total, snap) {
  const sent = c.retrieved ? `retrieved (in your top ${snap.k})` : "not retrieved";
  const holds = (c.holds === "whole" ? " · holds the whole answer" : c.holds === "part" ? " · holds part of the answer" : "")
    + (c.read_end != null ? " · longer than the model reads: the hatched tail is invisible to dense retrieval" : "");
  const shared = c.overlap_prev == null ? "" : c.overlap_prev === 0 ? ` · shares nothing with chunk ${c.number - 1}`
    : ` · shares ${int(c.overlap_prev)} ${plural(c.overlap_prev, "character", "characters")} with chunk ${c.number - 1}`;
  const text = snap.doc.slice(s, Math.min(e, s + DETAIL_CHARS));
  const ranked = c.score == null ? "rank and score once the controls rest" : `rank #${c.rank} · score ${c.score.toFixed(3)}`;
  return [`Chunk ${c.number} of ${total} · ${ranked} · ${sent}${holds}${shared}`,
    e - s > DETAIL_CHARS ? `${text}…` : text];
}

// ---------------------------------------------------------------------------------------------
// Painting a scene, back to front.

function paint(ctx, s) {
  const { L } = s;
  ctx.clearRect(0, 0, L.width, L.height);
  ctx.textBaseline = "middle";
  // The answer band behind the bars (so their colours stay true), faint bars, then retrieved ones.
  for (const band of s.bands) {
    ctx.fillStyle = COLORS.band;
    ctx.fillRect(band[0], 0, band[1] - band[0], L.stripTop + L.stripH);
  }
  paintBars(ctx, s);
  paintUnread(ctx, s.unread, COLORS.hover, COLORS.faint);
  paintStrip(ctx, s);
  // The band's hard edges go over everything, so it reads as one stripe through every row.
  for (const band of s.bands) {
    ctx.fillStyle = COLORS.bandEdge;
    ctx.fillRect(band[0] - 1, 0, 2, L.stripTop + L.stripH);
    ctx.fillRect(band[1] - 1, 0, 2, L.stripTop + L.stripH);
  }
  paintTicks(ctx, s);
  if (s.hoverSentence) { // the sentence a click would mark: its edges through every row, dashed
    const [a, z] = s.hoverSentence;
    ctx.strokeStyle = COLORS.bandEdge;
    ctx.lineWidth = 2;
    ctx.setLineDash([4, 3]);
    ctx.strokeRect(a - 1, 1, z - a + 2, L.stripTop + L.stripH - 2);
    ctx.setLineDash([]);
  }
  // Hover and keyboard focus outlines.
  outline(ctx, s.hover, COLORS.hover, 2);
  outline(ctx, s.focus, COLORS.focus, 3);
  // Axis: the ends of the document, in characters (code points, as the core counts).
  ctx.fillStyle = COLORS.text;
  ctx.textBaseline = "top";
  ctx.fillText("start", L.pad, L.axisTop);
  if (s.end) ctx.fillText(s.end, L.width - L.pad - ctx.measureText(s.end).width, L.axisTop);
}

/** Faint bars with a dashed outline, retrieved bars solid, then their rank labels. */
function paintBars(ctx, s) {
  ctx.font = FONTS.label;
  ctx.fillStyle = s.stored ? COLORS.stored : COLORS.faint;
  ctx.strokeStyle = s.stored ? COLORS.storedEdge : COLORS.faintEdge;
  ctx.lineWidth = 1;
  ctx.setLineDash(s.stored ? [] : [3, 2]);
  for (const [x, y, w, h] of s.faint.runs) ctx.fillRect(x, y, w, h); // bars narrower than 4 px, merged
  for (const [x, y, w, h] of s.faint.wide) {
    ctx.fillRect(x, y, w, h);
    ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
  }
  ctx.setLineDash([]);
  const solid = s.stored ? COLORS.storedRetrieved : COLORS.retrieved;
  ctx.fillStyle = solid;
  for (const [x, y, w, h] of s.retrieved) ctx.fillRect(x, y, w, h);
  for (const label of s.labels) {
    ctx.fillStyle = label.inside ? COLORS.onRetrieved : solid;
    ctx.fillText(label.text, label.x, label.y);
  }
}

/** The document strip: click a sentence to mark it. */
function paintStrip(ctx, { L, hoverSentence }) {
  ctx.fillStyle = COLORS.strip;
  ctx.fillRect(L.pad, L.stripTop, L.plotW, L.stripH);
  if (hoverSentence) {
    ctx.fillStyle = COLORS.stripHover;
    ctx.fillRect(hoverSentence[0], L.stripTop, hoverSentence[1] - hoverSentence[0], L.stripH);
  }
  ctx.fillStyle = COLORS.text;
  ctx.font = FONTS.strip;
  const verb = touchScreen() ? "tap" : "click";
  const label = [`document: ${verb} a sentence to mark it as the answer`, `${verb} a sentence to mark it`, ""]
    .find((t) => ctx.measureText(t).width + 12 <= L.plotW); // the longest that fits (phones)
  ctx.fillText(label, L.pad + 6, L.stripTop + L.stripH / 2);
}

/** Boundaries that share nothing although overlap was asked for: a red tick down to the strip,
 * labelled 0 where there is room. */
function paintTicks(ctx, { L, ticks }) {
  ctx.font = FONTS.tick;
  ctx.textBaseline = "middle";
  ctx.fillStyle = COLORS.noOverlap;
  for (const { x, label } of ticks) {
    ctx.fillRect(x - 1, L.rowsBottom - 2, 2, L.stripTop + L.stripH - L.rowsBottom + 2);
    ctx.fillRect(x - 3, L.rowsBottom - 2, 6, 2);
    if (label) ctx.fillText("0", x + 3, L.rowsBottom + 5);
  }
}

function outline(ctx, bar, color, width) {
  if (!bar) return;
  const [x, y, w, h] = bar;
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.strokeRect(x - width / 2, y - width / 2, w + width, h + width);
}
