// The numbers: one <dl> built once, whose <dd>s each render rewrites, and the sentence under the
// picture when overlap was asked for and some boundary got none.

import { $ } from "../dom.js";
import { announceWhenRested } from "./announce.js";
import { cap, int, money, plural } from "../format.js";
import { SPLITTERS, unitName } from "../params.js";

// One row per number: `key` the response.stats field (or several, joined), `label` and `show`
// functions of the snapshot (and the response), `value` when the number is not a stats field,
// `hidden(response)` when the row has nothing to say for it.
const STATS = [
  { key: "units_in_documents", label: (s) => `${cap(unitName(s))} in the ${s.docCount > 1 ? `${s.docCount} documents` : "document"}`, show: int },
  { key: "chunks", label: () => "Chunks", show: int },
  { key: "size_overlap", label: () => "Size / overlap", value: (r, s) => [s.size, s.overlap],
    show: ([a, b], s) => (s.stored ? "as your index stored them" : `${int(a)} / ${int(b)} ${unitName(s)}`) },
  { key: "units_stored", label: (s) => `${cap(unitName(s))} stored across all chunks`, show: int },
  { key: "amplification", label: (s) => `Storage amplification (stored / in the ${s.docCount > 1 ? "documents" : "document"})`, show: (v) => `${v.toFixed(2)}×` },
  { key: "chunks_whole", label: () => "Chunks holding the answer whole", show: int },
  { key: "chunks_part", label: () => "Chunks holding part of it", show: int },
  { key: "retrieved", label: () => "Chunks retrieved", show: int },
  { key: "best_rank", label: () => "Best rank of a chunk holding the answer", show: (v) => (v == null ? "none" : `#${v}`) },
  { key: "context_chars", label: () => "Characters of context", show: int },
  // With a "Count tokens with" tokenizer the count is exact (SPEC section 9); the estimate stays beside it.
  { key: "context_tokens", label: (s, r) => `Tokens of context (${r.stats.tokenizer}, exact)`, hidden: (r) => !r.stats.tokenizer, show: int },
  { key: "context_tokens_estimate", label: () => "Estimated tokens (characters / 4)",
    value: (r) => r.stats.context_tokens_estimate ?? r.stats.context_tokens, show: int },
  { key: "cost", label: (s, r) => (r.stats.tokenizer ? `Input cost per query (${r.stats.tokenizer} tokens)` : "Estimated input cost per query"), show: money },
  // What was asked (in the splitter's unit) beside what neighbouring chunks really share (characters).
  { key: ["overlap_asked", "overlap_min", "overlap_median", "overlap_max"], joiners: [" asked / achieved ", ", ", ", "],
    label: () => "Overlap asked / overlap achieved (min, median, max)",
    value: (r, s, ms, key) => (key === "overlap_asked" ? s.overlap : r.stats[key]),
    show: (v, s, key) => (key === "overlap_asked" ? (s.stored ? "nothing" : `${int(v)} ${unitName(s)}`) : v == null ? "–"
      : key === "overlap_max" ? `${int(v)} characters` : int(v)) },
  { key: ["boundaries_without_overlap", "boundaries"], joiners: [" of "], label: () => "Boundaries with no overlap",
    value: (r, s, ms, key) => (key === "boundaries" ? boundaryCount(r) : r.stats[key]), show: int },
  { key: "ms", label: () => "Recompute time in the worker", value: (r, s, ms) => ms, show: (v) => `${v.toFixed(1)} ms` },
];

/** Boundaries between neighbouring chunks of one document (each chunk but a document's first has
 * an `overlap_prev`). */
const boundaryCount = (r) => r.documents.reduce((n, d) => n + Math.max(0, d.chunks - 1), 0);

export function buildStats() {
  const dl = $("stats");
  for (const stat of STATS) {
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    stat.dt = dt;
    stat.dd = dd;
    stat.cells = [];
    for (const key of [stat.key].flat()) {
      const cell = Array.isArray(stat.key) ? document.createElement("span") : dd;
      cell.dataset.stat = key;
      if (cell !== dd) {
        if (stat.cells.length) dd.append(stat.joiners ? stat.joiners[stat.cells.length - 1] : " / ");
        dd.append(cell);
      }
      stat.cells.push(cell);
    }
    dl.append(dt, dd);
  }
}

// What each element last showed (its text, its data-value), so a drag writes only the numbers that
// changed: every write replaces a text node and invalidates its style.
const written = { shown: new WeakMap(), value: new WeakMap() };

/** Whether `text` differs from what `el` last got under `memo` (and remember it). */
function put(el, text, memo = "shown") {
  if (written[memo].get(el) === text) return false;
  written[memo].set(el, text);
  return true;
}

export function renderStats(response, snap, ms) {
  for (const stat of STATS) {
    const hidden = Boolean(stat.hidden && stat.hidden(response));
    if (stat.dt.hidden !== hidden) stat.dt.hidden = stat.dd.hidden = hidden;
    const label = stat.label(snap, response);
    if (put(stat.dt, label)) stat.dt.textContent = label;
    [stat.key].flat().forEach((key, i) => {
      const value = stat.value ? stat.value(response, snap, ms, key) : response.stats[key];
      const cell = stat.cells[i];
      const json = JSON.stringify(value ?? null);
      if (put(cell, json, "value")) cell.dataset.value = json;
      const text = value === undefined ? "–" : stat.show(value, snap, key);
      if (put(cell, text)) cell.textContent = text;
    });
  }
  $("stats").closest("section").dataset.ms = String(ms);
}


/** A sentence when overlap was asked for and some boundary got none; hidden otherwise. */
export function renderOverlapNotice(response, snap) {
  const el = $("overlap-notice");
  const missed = response.stats.boundaries_without_overlap || 0;
  if (!(snap.overlap > 0 && missed > 0)) { el.hidden = true; el.textContent = ""; announceWhenRested("overlap", ""); return; }
  const of = boundaryCount(response);
  // why the splitter may share nothing across a boundary although overlap was asked for (its registration)
  const reason = (SPLITTERS[snap.strategy] || {}).overlap_note || "the splitter's pieces did not allow it.";
  el.textContent = `You asked for ${int(snap.overlap)} ${unitName(snap)} of overlap, but ${int(missed)} of ${int(of)} ` +
    `${plural(of, "boundary", "boundaries")} ${plural(missed, "shares", "share")} nothing: ${reason}`;
  el.hidden = false;
  announceWhenRested("overlap", el.textContent); // spoken with the verdict once a drag rests, not at each step
}
