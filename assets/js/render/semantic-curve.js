// Under the chunk picture: a semantic chunker's curve (SPEC section 12). The distance
// (1 - cosine) between neighbouring sentence windows drawn along the document, x aligned with the
// picture's (same padding, same UTF-16 scale), the threshold as a horizontal line, and a mark at
// each cut. The line is a slider (pointer or keyboard): a move previews the cuts by the bare rule
// at once and reports the new value (`onThreshold(t)`), and the worker's answer, re-cut from the
// distances it keeps, replaces the preview. All text goes in as text.
//
//   const curve = new SemanticCurve({ svg, base, plot, onThreshold: (t) => ... });
//   (svg: the upper layer, what a move changes; base: the curve under it, drawn once per curve;
//   plot: their box, hidden without a curve)
//   curve.setData(semantic, snap, chunking);   // semantic: the response's curve for the shown document, or null

import { offsetMap } from "../offsets.js";
import { compared, previewCuts, ruleOf } from "../semantic-threshold.js";

const NS = "http://www.w3.org/2000/svg";
const PAD = 8; // the picture's own padding (picture-layout.js geometry), so x lines up
const HIT = 10; // px either side of the line that start a drag

const el = (tag, attrs = {}) => {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};

export class SemanticCurve {
  constructor({ svg, base, plot, onThreshold = () => {} }) {
    Object.assign(this, { svg, base, plot, onThreshold });
    this.data = null; this.dragT = null; this.signature = "";
    this.curvePath = el("polyline", { class: "sem-curve", fill: "none" });
    this.lineEl = el("line", { class: "sem-line" });
    this.cutsEl = el("path", { class: "sem-cuts" });
    this.ticksEl = el("path", { class: "sem-ticks" });
    this.handle = el("g", { class: "sem-handle", tabindex: "0", role: "slider", "aria-orientation": "vertical" });
    this.knob = el("rect", { class: "sem-knob", width: "14", height: "14", rx: "3" });
    this.handle.append(el("line", { class: "sem-hit" }), this.knob);
    this.labels = el("g", { class: "sem-labels" });
    base.append(this.ticksEl, this.curvePath, this.labels);
    svg.append(this.cutsEl, this.lineEl, this.handle);
    svg.addEventListener("pointerdown", (e) => this.down(e));
    svg.addEventListener("pointermove", (e) => this.move(e));
    svg.addEventListener("pointerup", (e) => this.up(e));
    svg.addEventListener("pointercancel", (e) => this.up(e));
    this.handle.addEventListener("keydown", (e) => this.key(e));
    new ResizeObserver(() => this.draw()).observe(base);
  }

  /** What to draw: the response's `semantic` for the shown document (null hides the curve). */
  setData(semantic, snap, chunking) {
    if (!semantic || !semantic.distances) { this.data = null; this.svg.dataset.points = "0"; return; }
    const map = offsetMap(snap.doc), values = compared(semantic);
    const sig = `${snap.docId}\u0001${snap.doc.length}\u0001${values.length}\u0001${values[0]}\u0001${values[values.length - 1]}`;
    if (sig !== this.signature) { // a new curve (not a threshold move): its x positions once
      this.signature = sig;
      this.xs = Float64Array.from(semantic.positions, (p) => map.toU16(p));
      this.xIndex = new Map(Array.from(this.xs, (x, i) => [x, i]));
      this.rebuild = true;
    }
    this.docLength = snap.doc.length;
    this.map = map;
    this.data = { semantic, values, chunking, rule: ruleOf(chunking), cuts: (semantic.cuts || []).map((c) => map.toU16(c)) };
    let lo = 0, hi = Number.isFinite(semantic.threshold) ? semantic.threshold : 0;
    for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
    this.range = [lo, hi > lo ? lo + (hi - lo) * 1.08 : lo + 1];
    this.svg.dataset.points = String(values.length);
    this.svg.dataset.cuts = String(this.data.cuts.length);
    this.draw();
  }

  get threshold() { return this.dragT ?? (this.data ? this.data.semantic.threshold : null); }

  geometry() {
    const w = Math.max(200, this.base.clientWidth || 200), h = w < 520 ? 96 : 120;
    return { w, h, top: 14, bottom: h - 14, plotW: w - 2 * PAD };
  }

  xAt(G, u16) { return PAD + (this.docLength ? u16 / this.docLength : 0) * G.plotW; }
  yAt(G, v) { const [lo, hi] = this.range; return G.bottom - ((v - lo) / (hi - lo)) * (G.bottom - G.top); }
  valueAt(G, y) { const [lo, hi] = this.range; return lo + ((G.bottom - y) / (G.bottom - G.top)) * (hi - lo); }

  draw() {
    const d = this.data;
    if (this.plot.hidden === Boolean(d)) this.plot.hidden = !d;
    if (!d) return;
    const G = this.geometry();
    for (const layer of [this.base, this.svg]) {
      const box = `0 0 ${G.w} ${G.h}`;
      if (layer.getAttribute("viewBox") !== box) { layer.setAttribute("viewBox", box); layer.setAttribute("height", String(G.h)); }
    }
    if (this.rebuild || this.drawnFor !== `${G.w}:${this.range}`) {
      this.drawnFor = `${G.w}:${this.range}`;
      this.rebuild = false;
      this.segments = []; // a cut's mark at each point, made when first drawn (the geometry is this one)
      const pts = new Array(d.values.length);
      for (let i = 0; i < d.values.length; i++) pts[i] = `${this.xAt(G, this.xs[i]).toFixed(1)},${this.yAt(G, d.values[i]).toFixed(1)}`;
      this.curvePath.setAttribute("points", pts.join(" "));
      this.ticksEl.setAttribute("d", `M${PAD} ${G.bottom}H${G.w - PAD}`);
      this.drawLabels(G);
    }
    this.drawThreshold(G);
  }

  drawLabels(G) {
    const [lo, hi] = this.range, words = this.data.semantic.gradient ? "gradient of the distance" : "distance (1 − cosine)";
    this.labels.replaceChildren(...[[G.top, hi], [G.bottom, lo]].map(([y, v]) => {
      const t = el("text", { x: String(PAD + 2), y: String(y === G.top ? y - 3 : y + 11), class: "sem-label" });
      const n = Math.abs(v) < 0.005 ? 0 : v; // never "-0.00"
      t.textContent = y === G.top ? `${n.toFixed(2)} ${words}` : n.toFixed(2);
      return t;
    }));
  }

  drawThreshold(G) {
    const d = this.data, t = this.threshold, show = t !== null && t !== undefined && Number.isFinite(t);
    for (const e of [this.lineEl, this.handle]) e.style.display = show ? "" : "none";
    const cuts = this.dragT !== null ? previewCuts(d.semantic, this.dragT).map((c) => this.map.toU16(c)) : d.cuts;
    this.cutsEl.setAttribute("d", cuts.map((c) => this.cutMark(G, c)).join(""));
    this.svg.dataset.shownCuts = String(cuts.length);
    this.svg.dataset.preview = String(this.dragT !== null); // "false": the worker's own line is shown
    if (!show) return;
    const y = this.yAt(G, t).toFixed(1);
    for (const [k, v] of Object.entries({ x1: PAD, x2: G.w - PAD, y1: y, y2: y })) this.lineEl.setAttribute(k, String(v));
    const hit = this.handle.firstChild;
    for (const [k, v] of Object.entries({ x1: PAD, x2: G.w - PAD, y1: y, y2: y })) hit.setAttribute(k, String(v));
    this.knob.setAttribute("x", String(G.w - PAD - 14));
    this.knob.setAttribute("y", String(Number(y) - 7));
    this.describe(t, cuts.length);
  }

  /** The path of one cut's mark: a stem from the axis to the curve, and a tick. A drag re-draws
   * thousands of them a move, so a point's mark is kept until the geometry changes. */
  cutMark(G, c) {
    const i = this.xIndex.get(c);
    let mark = i === undefined ? undefined : (this.segments ||= [])[i];
    if (mark === undefined) {
      const x = this.xAt(G, c), y = i === undefined ? G.bottom : this.yAt(G, this.data.values[i]);
      mark = `M${x.toFixed(1)} ${G.bottom}V${y.toFixed(1)}M${(x - 3).toFixed(1)} ${y.toFixed(1)}h6`;
      if (i !== undefined) this.segments[i] = mark;
    }
    return mark;
  }

  describe(t, cuts) {
    const d = this.data, rule = d.rule;
    const amount = rule ? rule.amount(d.semantic, t) : null;
    const what = rule ? `, ${rule.words(amount)}` : "";
    const [lo, hi] = this.range;
    const attrs = { "aria-valuemin": lo.toFixed(3), "aria-valuemax": hi.toFixed(3), "aria-valuenow": t.toFixed(3),
      "aria-valuetext": `threshold ${t.toFixed(3)}${what}: ${cuts} ${cuts === 1 ? "cut" : "cuts"}`,
      "aria-label": rule ? "Threshold: drag it or use the arrow keys" : "Threshold (set by the chunk size)" };
    if (!rule) attrs["aria-disabled"] = "true"; else this.handle.removeAttribute("aria-disabled");
    for (const [k, v] of Object.entries(attrs)) if (this.handle.getAttribute(k) !== v) this.handle.setAttribute(k, v);
  }

  /** Move the line to t (clamped to the plot): the preview at once, the new value reported. */
  moveTo(t) {
    const [lo, hi] = this.range;
    this.dragT = Math.min(Math.max(t, lo), hi);
    this.drawThreshold(this.geometry());
    this.onThreshold(this.dragT);
  }

  down(e) {
    if (!this.data || !this.data.rule || this.threshold === null) return;
    const G = this.geometry(), y = this.localY(e, G);
    if (Math.abs(y - this.yAt(G, this.threshold)) > HIT && !this.handle.contains(e.target)) return;
    this.dragging = true;
    this.svg.setPointerCapture(e.pointerId);
    this.handle.focus();
    e.preventDefault();
  }

  move(e) {
    if (!this.dragging) return;
    const G = this.geometry();
    this.moveTo(this.valueAt(G, this.localY(e, G)));
  }

  up(e) {
    if (!this.dragging) return;
    this.dragging = false;
    if (this.svg.hasPointerCapture(e.pointerId)) this.svg.releasePointerCapture(e.pointerId);
    this.settle();
  }

  /** The drag is over: the worker's threshold and cuts are shown once its answer comes. */
  settle() { this.dragT = null; if (this.data) this.drawThreshold(this.geometry()); }

  localY(e, G) {
    const r = this.svg.getBoundingClientRect();
    return ((e.clientY - r.top) / (r.height || 1)) * G.h;
  }

  key(e) {
    if (!this.data || !this.data.rule || this.threshold === null) return;
    const [lo, hi] = this.range, step = (hi - lo) / 100;
    const by = { ArrowUp: step, ArrowRight: step, ArrowDown: -step, ArrowLeft: -step, PageUp: 10 * step, PageDown: -10 * step }[e.key];
    const to = e.key === "Home" ? lo : e.key === "End" ? hi : by !== undefined ? this.threshold + by : null;
    if (to === null) return;
    e.preventDefault();
    this.moveTo(to);
    clearTimeout(this.keyTimer);
    this.keyTimer = setTimeout(() => this.settle(), 300);
  }
}
