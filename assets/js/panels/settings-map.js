// The settings map (SPEC section 8) as a heatmap: one row per chunk size, one column per
// overlap, each cell coloured by the share of answers kept intact and labelled with that count;
// its cost per query on hover and focus (and in its accessible name). The cheapest cell that keeps
// every answer is outlined and named in words; a click on a cell sets the sliders.
//
// It fills in row by row: one `simulate` request per size (`map: {sizes: [size], overlaps}`), each
// an ask of the "map" lane (asks.js), sent only while the page rests, after every more urgent ask,
// so a drag always goes first and waits for at most one row. A newer setting (anything but size and overlap, which the
// map does not depend on) cancels the map being filled and starts again: the latest wins.
//
// Dense and hybrid: the map embeds every cell's chunks, which takes the model minutes,
// so it waits to be started. Its cost is said first ("about 40 s: 3,100 chunks to embed", from the
// core's own list of what the map needs and this page's measured rate), the embedding shows its
// progress and can be stopped (what was embedded is kept: starting again goes on from there), and
// the drag always goes first (its job is more urgent in the embedding worker's queue).
//
// Semantic chunkers: the axes are the strategy's own grid fields (`grid.fields`, named
// `grid.names`, semantic-map.js), one column for a one-axis strategy; nothing is embedded for them.
//
// Nothing is computed here but the grid's defaults and the wording; the cells come from the core.

import { $, cell } from "../dom.js";
import { int, money, plural } from "../format.js";
import { PARAMS, bound, splitterOf, unitName } from "../params.js";
import { axisValue, semanticAxes } from "../semantic-map.js";
import { mapKey, rowRequest } from "../requests.js";

export const MAX_CELLS = 400; // the core's limit (settings_map.MAX_CELLS)
const ROW_MS = 250; // the worker time one map request aims at (a drag waits for at most one)
const MAX_BATCH = 5; // rows in one request, at most
const LEVELS = 6; // colour steps: 0 = none intact ... 5 = every answer intact
const PROGRESS_MS = 250; // the dense map's embedding progress, read this often

const isDense = (request) => Boolean(request.retrieval && request.retrieval.method && request.retrieval.method !== "bm25");
const about = (seconds) => (seconds < 90 ? `about ${Math.max(1, Math.round(seconds))} s` : `about ${Math.round(seconds / 60)} min`);

// Sizes step through 20 multiples of a step that suits the unit, up to the slider's maximum;
// overlaps are fractions and multiples of that step.
const STEPS = { words: 20, characters: 100, tokens: 50 };
const OVERLAP_STEPS = [0, 0.25, 0.5, 1, 2, 4];

/** The default grid for the splitter and unit of `s`: {sizes, overlaps}, or null (no size to vary). */
export function defaultGrid(s) {
  if (!splitterOf(s).grid) return null; // the splitter registers no size to vary
  if (splitterOf(s).embeds) return semanticAxes({ ...s, mapSizes: null, mapOverlaps: null }); // its own axes
  const unit = unitName(s);
  const most = bound(PARAMS.find((p) => p.name === "size").max, s);
  let step = STEPS[unit] ?? 1; // Haystack's passages, lines, sentences, pages: 1 to 20
  if (unit === "characters" && most >= 8000) step = 200; // LangChain's and LlamaIndex's larger defaults
  if (unit === "words" && most >= 1000) step = 25; // Haystack's split_length in words
  const sizes = Array.from({ length: 20 }, (_, i) => (i + 1) * step).filter((n) => n <= most);
  const overlaps = step === 1 ? [0, 1, 2, 3, 4, 5] : OVERLAP_STEPS.map((f) => Math.round(f * step));
  return { sizes, overlaps };
}

/** Whole numbers typed as "100, 200 300" ({value}) or {error}, at least `min` each (`decimals`:
 * numbers such as 1.5 too, for LangChain's threshold amount). */
export function parseNumbers(text, what, min, decimals = false) {
  const parts = String(text).split(/[\s,;]+/).filter(Boolean);
  if (!parts.length) return { error: `Type at least one ${what}, e.g. 100, 200, 300.` };
  const out = [], kind = decimals ? "numbers" : "whole numbers", shape = decimals ? /^\d{1,6}(\.\d{1,4})?$/ : /^\d{1,6}$/;
  for (const p of parts) {
    if (!shape.test(p) || Number(p) < min) return { error: `${what[0].toUpperCase()}${what.slice(1)}s are ${kind} of at least ${min}; “${p.slice(0, 20)}” is not one.` };
    const n = Number(p);
    if (!out.includes(n)) out.push(n);
  }
  return { value: out };
}

const SIZE_OVERLAP = ["size", "overlap"];
/** The request fields a grid varies: its own (a semantic chunker's), else size and overlap. */
export const fieldsOf = (grid) => (grid && grid.fields) || SIZE_OVERLAP;

/** Among the filled cells, the cheapest that keeps every answer intact, else the one that keeps most
 * (cheapest first): {i, j, cell, all} or null. */
export function bestCell(cells, count) {
  let best = null;
  cells.forEach((row, i) => (row || []).forEach((c, j) => {
    if (!c) return;
    const better = !best || c.intact > best.cell.intact || (c.intact === best.cell.intact && c.context_tokens_mean < best.cell.context_tokens_mean);
    if (better) best = { i, j, cell: c };
  }));
  if (best) best.all = best.cell.intact === count;
  return best;
}

const level = (c, count) => (c.intact === count ? LEVELS - 1 : c.intact === 0 ? 0 : 1 + Math.min(LEVELS - 3, Math.floor((c.intact / count) * (LEVELS - 2))));
const tokens = (n) => int(Math.round(n));

/** A cell's place in words: "size 300, overlap 50" (`words`: the axes' short names; one for one axis). */
export const placeWords = (size, overlap, words = SIZE_OVERLAP) => (words.length > 1 ? `${words[0]} ${size}, ${words[1]} ${overlap}` : `${words[0]} ${size}`);

/** One cell in words: "size 300, overlap 50: all 10 answers intact, 412 tokens per query ($0.0012)". */
export function cellWords(size, overlap, c, count, words = SIZE_OVERLAP) {
  const at = placeWords(size, overlap, words);
  if (!c) return `${at}: the splitter refuses this ${words.length > 1 ? "pair" : "value"}`;
  const kept = c.intact === count ? (count === 1 ? "the answer intact" : `all ${count} answers intact`)
    : `${c.intact} of ${count} ${plural(count, "answer", "answers")} intact`;
  const lost = [c.ranked_out ? `${c.ranked_out} ranked out` : "", c.cut ? `${c.cut} cut` : ""].filter(Boolean).join(", ");
  return `${at}: ${kept}${lost ? ` (${lost})` : ""}, ${tokens(c.context_tokens_mean)} tokens per query (${money(c.cost_mean)})`;
}

export class SettingsMap {
  /** deps: asks (the scheduler of work at rest); simulate(request): a row's reply (the dense round
   * trip included); onPick(size, overlap); dense: the page's DenseClient; send(request): a
   * simulation straight to the worker (the dense map's plan, an ask of its own). */
  constructor(deps) {
    this.deps = deps;
    this.run = 0;
    this.key = null;
    this.grid = null; // {sizes, overlaps} of the map on screen
    this.cells = []; // cells[i] = the row for sizes[i] (a list), or undefined until it arrives
    this.count = 0; // questions scored
    this.current = null; // {size, overlap} of the page's setting
    this.done = 0;
    this.state = "idle"; // "running", "done", "error", "off"
    const table = $("map-table");
    table.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-size]");
      if (b) this.deps.onPick(Number(b.dataset.size), Number(b.dataset.overlap));
    });
    const detail = (e) => {
      const b = e.target.closest("[data-words]");
      if (b) { $("map-detail").textContent = b.dataset.words; $("map-detail").dataset.hovered = "1"; }
    };
    table.addEventListener("mouseover", detail);
    table.addEventListener("focusin", detail);
    table.addEventListener("keydown", (e) => this.onKey(e));
    $("map-start").addEventListener("click", () => this.onStart && this.onStart());
    $("map-stop").addEventListener("click", () => this.stop());
  }

  /** Dense: the map's cost said, and the map started only when the user presses Start; resolves
   * true then, or false when a newer map (run) took over. */
  async confirm(run, request, grid) {
    const status = $("map-status"), start = $("map-start"), bar = $("map-progress");
    this.state = "waiting";
    $("map-section").dataset.state = "waiting";
    bar.hidden = true;
    status.textContent = "Counting the chunks the dense map needs…";
    const whole = rowRequest(request, grid.sizes, grid.overlaps, false, undefined, fieldsOf(grid));
    const plan = await this.deps.asks.ask("map", whole, () => (run === this.run ? this.deps.dense.plan(this.deps.send, whole) : null));
    if (run !== this.run || !plan || plan.dropped) return false;
    if (!plan.ok) { this.stopped(plan.error); return false; }
    this.plan = plan;
    if (!plan.chunks) return true;
    status.textContent = `The dense map embeds every cell's chunks: ${about(plan.seconds)}: ${plan.chunks.toLocaleString("en-US")} ` +
      `${plan.chunks === 1 ? "chunk" : "chunks"} to embed. Dragging goes first meanwhile.`;
    start.hidden = false;
    return new Promise((resolve) => {
      this.onStart = () => { start.hidden = true; this.onStart = null; resolve(run === this.run); };
      this.onCancel = () => { start.hidden = true; this.onStart = null; resolve(false); };
    });
  }

  /** Dense: every cell's chunks embedded as one job of the map's kind (behind the drag and the panels). */
  async embedAll(run, request, grid) {
    const status = $("map-status"), bar = $("map-progress"), stop = $("map-stop");
    this.state = "running";
    $("map-section").dataset.state = "running";
    const total = this.plan.chunks;
    bar.hidden = false;
    bar.max = total;
    bar.value = 0;
    stop.hidden = false;
    const tick = setInterval(() => {
      const p = this.deps.dense.progress("map");
      if (p && run === this.run) { bar.value = p.done; status.textContent = `Map: ${p.done.toLocaleString("en-US")} of ${p.total.toLocaleString("en-US")} chunks embedded…`; }
    }, PROGRESS_MS);
    status.textContent = `Map: 0 of ${total.toLocaleString("en-US")} chunks embedded…`;
    const r = await this.deps.dense.fill(rowRequest(request, grid.sizes, grid.overlaps, false, undefined, fieldsOf(grid)), this.plan.response, "map");
    clearInterval(tick);
    stop.hidden = true;
    if (run !== this.run) return false;
    if (!r.ok && !r.cancelled) { this.stopped({ message: r.message }); return false; }
    return r.ok;
  }

  /** A dense map waiting to start, or embedding, given up (a newer map, or none). */
  cancelDense() {
    if (this.onCancel) { this.onCancel(); this.onCancel = null; }
    if (this.deps.dense && this.deps.dense.latest.map) this.deps.dense.cancel("map");
    $("map-stop").hidden = true;
    $("map-start").hidden = true;
  }

  /** The Stop button: the dense map's embedding stopped; what it embedded stays for the next start. */
  stop() {
    const p = this.deps.dense && this.deps.dense.progress("map");
    this.run++;
    if (this.deps.dense) this.deps.dense.cancel("map");
    this.key = null; // the next result offers the map again
    this.state = "stopped";
    $("map-section").dataset.state = "stopped";
    $("map-stop").hidden = true;
    $("map-progress").hidden = true;
    $("map-status").textContent = `The map was stopped${p ? ` at ${p.done.toLocaleString("en-US")} of ${p.total.toLocaleString("en-US")} chunks` : ""}; ` +
      "what was embedded is kept, so starting it again goes on from there.";
  }

  /** The grid is one tab stop (roving tabindex): the arrow keys, Home and End move between cells,
   * Enter or Space (the button's own) sets the sliders. */
  onKey(e) {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const b = e.target.closest("button[data-size]");
    if (!b || !(e.key in moves || e.key === "Home" || e.key === "End")) return;
    const grid = this.grid;
    let i = grid.sizes.indexOf(Number(b.dataset.size)), j = grid.overlaps.indexOf(Number(b.dataset.overlap));
    const at = (r, c) => $("map-table").querySelector(`button[data-size="${grid.sizes[r]}"][data-overlap="${grid.overlaps[c]}"]`);
    let next = null;
    if (e.key === "Home" || e.key === "End") {
      const cols = e.key === "Home" ? grid.overlaps.map((_, c) => c) : grid.overlaps.map((_, c) => grid.overlaps.length - 1 - c);
      for (const c of cols) if ((next = at(i, c))) break;
    } else {
      const [di, dj] = moves[e.key];
      for (i += di, j += dj; i >= 0 && j >= 0 && i < grid.sizes.length && j < grid.overlaps.length; i += di, j += dj) {
        if ((next = at(i, j))) break;
      }
    }
    e.preventDefault();
    if (next) this.focusCell(next);
  }

  focusCell(button) {
    for (const other of $("map-table").querySelectorAll("button[data-size]")) other.tabIndex = -1;
    button.tabIndex = 0;
    button.focus();
  }

  /** The axes' short names in a cell's words: the grid's own (a semantic chunker's), else size and overlap. */
  get words() {
    return (this.grid && this.grid.words) || SIZE_OVERLAP;
  }

  /** Turn the map off (nothing to score, or a splitter without a size): `why` says so. */
  off(why) {
    this.run++;
    this.cancelDense();
    this.key = null;
    this.state = "off";
    $("map-section").dataset.state = "off";
    $("map-progress").hidden = true;
    $("map-status").textContent = why;
    $("map-table").replaceChildren();
    $("map-best").textContent = "";
    $("map-detail").textContent = "";
  }

  /** After each result: the page's request (`request`, with the question set) and the grid. A
   * request that differs from the map's in anything but size and overlap starts a new map. */
  update(request, grid, count, unit) {
    this.unit = unit ? ` (${unit})` : "";
    const [rows, cols] = fieldsOf(grid), c = request.chunking;
    this.current = grid && grid.fields ? { size: axisValue(c, rows), overlap: axisValue(c, cols) } : { size: c.size, overlap: c.overlap };
    this.free = Boolean(grid && grid.fields) && !isDense(request); // a semantic chunker's map over BM25 embeds nothing
    const key = mapKey(request, grid, fieldsOf(grid));
    if (key === this.key) { this.draw(); return; }
    this.key = key;
    this.start(request, grid, count);
  }

  async start(request, grid, count) {
    const run = ++this.run;
    this.cancelDense();
    Object.assign(this, { grid, count, cells: [], done: 0, state: "running" });
    if (this.deps.dense && isDense(request)) {
      this.draw();
      if (!await this.confirm(run, request, grid) || !await this.embedAll(run, request, grid)) return;
    }
    const section = $("map-section"), bar = $("map-progress"), status = $("map-status");
    section.dataset.state = "running";
    bar.hidden = false;
    bar.max = grid.sizes.length;
    bar.value = 0;
    this.draw();
    const started = performance.now();
    let ms = 0;
    let i = 0, batch = 1, keep = false;
    while (i < grid.sizes.length) {
      const sizes = grid.sizes.slice(i, i + batch);
      status.textContent = `Filling the map: ${this.words[0]} ${sizes.join(", ")} (${i + sizes.length} of ${grid.sizes.length})…`;
      const row = rowRequest(request, sizes, grid.overlaps, keep, undefined, fieldsOf(grid));
      const reply = await this.deps.asks.ask("map", row, () => (run === this.run ? this.deps.simulate(row, { current: () => run === this.run }) : null)); // dense, hybrid: with the cosines; a newer map stops its reranking
      if (run !== this.run) return; // a newer setting took over
      if (!reply.ok && !keep && /^chunking\./.test((reply.error && reply.error.field) || "")) {
        keep = true; // the splitter refuses the rows' own setting (the grid's largest size, no overlap): ask with the page's
        continue;
      }
      if (!reply.ok) { this.stopped(reply.error); return; }
      ms += reply.ms;
      this.cells.splice(i, sizes.length, ...JSON.parse(reply.result).map.cells);
      i += sizes.length;
      this.done = i;
      bar.value = i;
      this.draw();
      // As many rows in the next request as fit in ROW_MS of the worker's time: fewer round trips,
      // and a drag still waits for at most about that long.
      batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(ROW_MS / Math.max(1, reply.ms / sizes.length))));
    }
    this.finished((performance.now() - started) / 1000, ms / 1000);
  }

  stopped(error) {
    this.state = "error";
    $("map-section").dataset.state = "error";
    $("map-progress").hidden = true;
    $("map-status").textContent = `The map stopped: ${(error && error.message) || "no reason was given"}`;
  }

  finished(seconds, python) {
    const grid = this.grid, n = grid.sizes.length * grid.overlaps.length;
    this.state = "done";
    this.draw();
    $("map-section").dataset.state = "done";
    $("map-section").dataset.seconds = String(seconds);
    $("map-progress").hidden = true;
    const axes = grid.fields ? `${grid.sizes.length} ${grid.words[0]} values${grid.one ? "" : ` × ${grid.overlaps.length} ${grid.words[1]} values`}`
      : `${grid.sizes.length} sizes × ${grid.overlaps.length} overlaps`;
    $("map-status").textContent = `${axes} (${n} settings, ${this.count} ` +
      `${plural(this.count, "question", "questions")} each) in ${seconds.toFixed(2)} s (${python.toFixed(2)} s in Python).`;
  }

  /** The whole table from the cells so far, the best cell named, the current one described. */
  draw() {
    const grid = this.grid;
    if (!grid || this.state === "off") return;
    const thead = document.createElement("thead");
    const hr = document.createElement("tr");
    const names = grid.names || ["size", "overlap"];
    hr.append(cell("th", grid.one ? `${names[0]} ↓` : `${names[0]} ↓ ${names[1]} →`, { scope: "col", class: "map-corner" }));
    for (const o of grid.overlaps) hr.append(cell("th", grid.one ? "answers intact" : String(o), { scope: "col" }));
    thead.append(hr);
    const best = bestCell(this.cells, this.count);
    const tbody = document.createElement("tbody");
    grid.sizes.forEach((size, i) => {
      const tr = document.createElement("tr");
      tr.append(cell("th", String(size), { scope: "row" }));
      grid.overlaps.forEach((overlap, j) => tr.append(this.drawCell(size, overlap, this.cells[i], j, Boolean(best && best.all && best.i === i && best.j === j))));
      tbody.append(tr);
    });
    const caption = cell("caption", this.caption());
    const table = $("map-table"), focused = table.contains(document.activeElement) ? document.activeElement : null;
    const key = focused && focused.dataset.size ? [focused.dataset.size, focused.dataset.overlap] : null;
    table.replaceChildren(caption, thead, tbody);
    this.tabStop(tbody, key, best);
    this.name(best);
    this.sayCurrent();
  }

  /** The table's caption: what the rows and columns are, the colours, and (a semantic chunker's map)
   * that no cell embeds anything. */
  caption() {
    const grid = this.grid, tail = "darker is fewer, yellow is all. Hover or focus a cell for its cost; click it to set the sliders.";
    if (!grid.fields) return `Answers intact (of ${this.count}) at each chunk size (rows) and overlap (columns)${this.unit || ""}; ${tail}`;
    const unit = (f) => (f === "min_chunk_size" ? " in characters" : f === "size" ? ` in ${this.unit.replace(/[ ()]/g, "") || "tokens"}` : "");
    const [rows, cols] = grid.names.map((n, i) => n.toLowerCase() + unit(grid.fields[i]));
    const cost = this.free ? " The map costs no embedding: every cell re-cuts from the distances already held."
      : " The sentence windows are not embedded again; dense retrieval embeds each cell's chunks.";
    return `Answers intact (of ${this.count}) at each ${rows} (rows)${grid.one ? "" : ` and ${cols} (columns)`}; ${tail}${cost}`;
  }

  /** One cell: pending ("…"), refused ("–"), or a button labelled with the answers intact. */
  drawCell(size, overlap, row, j, isBest) {
    const td = document.createElement("td");
    const isCurrent = this.current && this.current.size === size && this.current.overlap === overlap;
    if (!row) {
      td.className = "map-pending";
      td.append(cell("span", "…", { "aria-label": `${placeWords(size, overlap, this.words)}: not yet computed` }));
    } else if (!row[j]) {
      const words = cellWords(size, overlap, null, this.count, this.words);
      td.className = "map-null";
      td.append(cell("span", "–", { "data-words": words, title: words }));
    } else {
      const c = row[j], words = cellWords(size, overlap, c, this.count, this.words);
      td.dataset.level = String(level(c, this.count));
      if (isBest) td.classList.add("map-best");
      td.append(cell("button", String(c.intact), {
        type: "button", "data-size": String(size), "data-overlap": String(overlap), "data-level": td.dataset.level, "data-words": words, title: words,
        "aria-label": `${words}${isBest ? "; the cheapest that keeps every answer" : ""}${isCurrent ? "; the current setting" : ""}. Set the sliders to it.`,
      }));
    }
    if (isCurrent) { td.classList.add("map-current"); td.setAttribute("aria-current", "true"); }
    return td;
  }

  /** One tab stop: the cell focused before this redraw (`key`), else the current setting's, the best or the first. */
  tabStop(tbody, key, best) {
    const grid = this.grid, buttons = [...tbody.querySelectorAll("button[data-size]")];
    const find = (size, overlap) => buttons.find((x) => x.dataset.size === String(size) && x.dataset.overlap === String(overlap));
    const stop = (key && find(...key)) || (this.current && find(this.current.size, this.current.overlap)) ||
      (best && find(grid.sizes[best.i], grid.overlaps[best.j])) || buttons[0];
    for (const x of buttons) x.tabIndex = x === stop ? 0 : -1;
    if (key && stop) stop.focus();
  }

  /** Below the map, until a cell is hovered or focused: the current setting's cell, in words. */
  sayCurrent() {
    const detail = $("map-detail"), grid = this.grid, cur = this.current;
    if (detail.dataset.hovered || !cur) return;
    const i = grid.sizes.indexOf(cur.size), j = grid.overlaps.indexOf(cur.overlap);
    const row = i >= 0 ? this.cells[i] : null;
    detail.textContent = i < 0 || j < 0 ? `The current setting (${placeWords(cur.size, cur.overlap, this.words)}) is not on this grid.`
      : row ? `Current setting: ${cellWords(cur.size, cur.overlap, row[j], this.count, this.words)}.` : "";
  }

  /** The best cell so far, in words. */
  name(best) {
    const out = $("map-best"), grid = this.grid;
    const partial = this.state === "running" ? " (so far)" : "";
    if (!best) { out.textContent = ""; return; }
    const words = cellWords(grid.sizes[best.i], grid.overlaps[best.j], best.cell, this.count, this.words);
    out.dataset.all = best.all ? "1" : "0";
    out.dataset.size = String(grid.sizes[best.i]);
    out.dataset.overlap = String(grid.overlaps[best.j]);
    out.textContent = best.all ? `Cheapest that keeps every answer${partial}: ${words}.`
      : `No setting here keeps every answer${partial}; the most is at ${words}.`;
  }
}
