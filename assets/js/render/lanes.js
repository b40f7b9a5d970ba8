// The collection at a glance (item 1): one thin lane per document above the detailed
// picture of the selected one. Each lane spans its own document's length; chunks are faint ticks,
// retrieved chunks solid with their rank, the marked answer or fact an orange band. Past
// MAX_LANES documents, the selected one, the marked one and those with retrieved chunks get lanes
// and the rest are summed up in one line. Clicking a lane selects its document.

import { offsetMap } from "../offsets.js";
import { COLORS, fitText, onSchemeChange } from "./palette.js";

const MAX_LANES = 10;
const LANE = 12, LABEL = 13, GAP = 5, PAD = 8;

export const lanes = {
  canvas: null, ctx: null, rows: [], onSelect: null,

  init(canvas, onSelect) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.onSelect = onSelect;
    canvas.addEventListener("click", (e) => {
      const y = e.clientY - canvas.getBoundingClientRect().top;
      const row = this.rows.find((r) => y >= r.top && y < r.top + LABEL + LANE + GAP);
      if (row) this.onSelect(row.index);
    });
    new ResizeObserver(() => this.last && this.draw(this.last)).observe(canvas.parentElement);
    onSchemeChange(() => this.last && this.draw(this.last));
  },

  /** data: {docs: [{id, title, length}] (length in code points), cols (response.cols), sel, bands: {id: [a, z]}} */
  draw(data) {
    this.last = data;
    const wrap = this.canvas.parentElement;
    wrap.hidden = data.docs.length < 2;
    if (data.docs.length < 2) return;
    const w = Math.max(200, wrap.clientWidth);
    const scene = layoutLanes(data, w);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(scene.height * dpr);
    this.canvas.style.height = `${scene.height}px`;
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    paintLanes(this.ctx, scene);
    this.rows = scene.lanes.map(({ index, top }) => ({ index, top }));
    this.canvas.setAttribute("aria-label", scene.label);
  },
};

/** Which documents get lanes, and where everything in them goes, for a canvas `w` px wide. */
function layoutLanes({ docs, cols, sel, bands }, w) {
  // Each document's chunk positions [a, b), and its retrieved ones best rank first: [{p, rank}].
  const span = new Map(docs.map((d) => [d.id, cols.range(cols.ids.indexOf(d.id))]));
  const sent = new Map(docs.map((d) => [d.id, []]));
  cols.top.forEach((p, i) => sent.get(cols.ids[cols.docOf(p)])?.push({ p, rank: i + 1 }));
  let shown = docs.map((d, i) => i);
  if (docs.length > MAX_LANES) {
    const keep = (i) => i === sel || bands[docs[i].id] || sent.get(docs[i].id).length > 0;
    shown = shown.filter(keep).slice(0, MAX_LANES);
  }
  const hidden = docs.length - shown.length;
  const plotW = w - 2 * PAD;
  const lanes = shown.map((i, row) => {
    const d = docs[i];
    const top = row * (LABEL + LANE + GAP);
    const [a, b] = span.get(d.id), count = b - a;
    const x = (o) => PAD + (d.length ? o / d.length : 0) * plotW;
    const retrieved = sent.get(d.id);
    const ranks = retrieved.length ? ` · ${retrieved.map((c) => `#${c.rank}`).join(" ")}` : "";
    const label = `${i + 1}. ${d.title || d.id} · ${count} ${count === 1 ? "chunk" : "chunks"}${ranks}${i === sel ? " · shown below" : ""}`;
    const band = bands[d.id];
    return {
      index: i, top, y: top + LABEL, selected: i === sel,
      label: label.length > 140 ? `${label.slice(0, 139)}…` : label,
      starts: startTicks(cols.start, a, b, x, plotW),
      band: band ? [x(band[0]), Math.max(2, x(band[1]) - x(band[0]))] : null,
      retrieved: retrieved.map(({ p }) => [x(cols.start[p]), Math.max(2, x(cols.end[p]) - x(cols.start[p]))]),
    };
  });
  return {
    width: w, height: shown.length * (LABEL + LANE + GAP) + (hidden ? 16 : 0) + 2, plotW, lanes,
    hidden: hidden ? `and ${hidden} more ${hidden === 1 ? "document" : "documents"} with no retrieved chunk` : null,
    hiddenTop: shown.length * (LABEL + LANE + GAP) + 2,
    label: `Lanes, one per document: ${shown.map((i) => docs[i].title || docs[i].id).join("; ")}.`,
  };
}

/** Where chunk starts [a, b) tick a lane: every one while they are fewer than its pixels, else one
 * tick per pixel column that has any (70,000 chunks are a few hundred rectangles). */
function startTicks(start, a, b, x, plotW) {
  if (b - a <= plotW) return Array.from({ length: b - a }, (_, j) => x(start[a + j]));
  const out = [];
  let last = NaN;
  for (let p = a; p < b; p++) {
    const px = Math.floor(x(start[p]));
    if (px !== last) out.push(px);
    last = px;
  }
  return out;
}

function paintLanes(ctx, scene) {
  ctx.clearRect(0, 0, scene.width, scene.height);
  ctx.textBaseline = "top";
  for (const lane of scene.lanes) {
    const { y } = lane;
    ctx.font = `${lane.selected ? "700" : "400"} 11px system-ui, sans-serif`;
    ctx.fillStyle = lane.selected ? COLORS.selected : COLORS.text;
    ctx.fillText(fitText(ctx, lane.label, scene.plotW), PAD, lane.top); // never past the right edge (phones)
    ctx.fillStyle = COLORS.lane;
    ctx.fillRect(PAD, y, scene.plotW, LANE);
    ctx.fillStyle = COLORS.laneFaint;
    for (const x of lane.starts) ctx.fillRect(x, y + 2, 1, LANE - 4); // chunk starts
    if (lane.band) {
      ctx.fillStyle = COLORS.laneBand;
      ctx.fillRect(lane.band[0], y - 2, lane.band[1], LANE + 4);
    }
    ctx.fillStyle = COLORS.retrieved;
    for (const [x, w] of lane.retrieved) ctx.fillRect(x, y + 3, w, LANE - 6);
    if (lane.selected) {
      ctx.strokeStyle = COLORS.selected;
      ctx.lineWidth = 1.5;
      ctx.strokeRect(PAD - 1, y - 1, scene.plotW + 2, LANE + 2);
    }
  }
  if (scene.hidden) {
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = COLORS.text;
    ctx.fillText(fitText(ctx, scene.hidden, scene.plotW), PAD, scene.hiddenTop);
  }
}

/** What the lanes draw, from a response and its snapshot: each document's length and the marks,
 * in code points as the chunks are. */
export function lanesFrom(response, snap) {
  const bands = {};
  for (const [id, m] of Object.entries(snap.marks)) {
    const map = offsetMap(snap.texts[id] ?? "");
    bands[id] = [map.toCp(m.start), map.toCp(m.end)];
  }
  return {
    docs: snap.ids.map((id, i) => ({ id, title: snap.titles[i], length: offsetMap(snap.texts[id]).cpLength })),
    cols: response.cols, sel: snap.ids.indexOf(snap.docId), bands,
  };
}
