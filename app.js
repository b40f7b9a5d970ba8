// The simulator page: state, controls, URL state and drawing. No chunking or scoring happens here:
// every number comes from the Python core (ragsim.api.simulate) running in assets/worker.js.
//
//   control -> state -> buildRequest(state) -> gate.submit -> worker -> api.simulate
//           -> response -> render(): verdict, picture, stats, context
//
// Offsets: the core speaks code points, the browser UTF-16 code units. `offsetMap(text)` converts
// at the boundary (identity when the text has no surrogate pairs); state.span is kept in UTF-16,
// like the textarea's selection, and converted in buildRequest; response offsets are converted
// back before drawing. All user text reaches the DOM as text (textContent), never as HTML.

import { Gate } from "./assets/gate.js";
import { EXAMPLE } from "./assets/examples.js";

const DOC_ID = "doc";
const COMPRESS_OVER = 1000; // fragments longer than this go into `z`, deflated
const LINK_DOC_LIMIT = 200_000; // longer documents are left out of links (a URL cannot carry them)
const INFLATE_LIMIT = 20_000_000; // refuse compressed fragments that inflate beyond this (bytes)
const CONTEXT_SHOW_LIMIT = 20_000; // characters of one chunk shown in the context panel

// ---------------------------------------------------------------------------------------------
// The one parameter table: controls, URL state and request fields all come from it.
// `max` may be a function of the state (overlap stays below size; the size range follows the unit).

const UNIT_NAMES = { words: "words", chars: "characters" };

export const PARAMS = [
  { name: "doc", label: "Document", kind: "textarea", default: EXAMPLE.text, field: "documents" },
  { name: "q", label: "Question", kind: "text", default: EXAMPLE.question, field: "query" },
  { name: "unit", label: "Unit", kind: "choice", default: "words", choices: UNIT_NAMES, field: "chunking.unit", embed: false },
  { name: "size", label: "Chunk size", kind: "range", default: 24, min: 1, max: (s) => (s.unit === "chars" ? 4000 : 400), step: 1,
    inUnits: true, field: "chunking.size", embed: true },
  { name: "overlap", label: "Overlap", kind: "range", default: 6, min: 0, max: (s) => s.size - 1, step: 1,
    inUnits: true, field: "chunking.overlap", embed: true },
  { name: "k", label: "Top k", kind: "range", default: 2, min: 1, max: 50, step: 1, field: "retrieval.k", embed: true },
  { name: "price", label: "Price per million tokens", kind: "number", default: 3, min: 0, max: 10000, step: 0.01,
    field: "price_per_million" },
];
const PARAM = Object.fromEntries(PARAMS.map((p) => [p.name, p]));
const bound = (value, state) => (typeof value === "function" ? value(state) : value);

/** The request for the core (SPEC section 6), built in exactly one place. */
export function buildRequest(state) {
  const map = offsetMap(state.doc);
  return {
    documents: [{ id: DOC_ID, title: "Document", text: state.doc }],
    query: state.q,
    chunking: { strategy: "window", unit: state.unit, size: state.size, overlap: state.overlap },
    retrieval: { k: state.k, variant: "lucene", k1: 1.2, b: 0.75 },
    span: state.span ? { doc: DOC_ID, start: map.toCp(state.span.start), end: map.toCp(state.span.end) } : null,
    fact: null,
    price_per_million: state.price,
  };
}

function defaultState() {
  const state = Object.fromEntries(PARAMS.map((p) => [p.name, p.default]));
  const at = EXAMPLE.text.indexOf(EXAMPLE.answer);
  state.span = at >= 0 ? { start: at, end: at + EXAMPLE.answer.length } : null;
  return state;
}

/** A value for `param` from user or URL text, or an error sentence. Numbers are clamped to range. */
function parseParam(param, raw, state) {
  const shown = JSON.stringify(String(raw).slice(0, 40));
  switch (param.kind) {
    case "textarea":
    case "text":
      return { value: String(raw) };
    case "choice":
      return Object.hasOwn(param.choices, raw) ? { value: raw }
        : { error: `${param.label} must be ${Object.values(param.choices).join(" or ")}, not ${shown}.` };
    case "range": {
      if (!/^\s*\d{1,9}\s*$/.test(String(raw))) return { error: `${param.label} must be a whole number, not ${shown}.` };
      return { value: clamp(parseInt(raw, 10), param.min, bound(param.max, state)) };
    }
    case "number": {
      const n = Number(raw);
      if (String(raw).trim() === "" || !Number.isFinite(n)) return { error: `${param.label} must be a number, not ${shown}.` };
      return { value: clamp(n, param.min, param.max) };
    }
  }
  return { error: `Unknown setting ${param.name}.` };
}

const clamp = (n, lo, hi) => Math.min(Math.max(n, lo), Math.max(lo, hi));
const formatParam = (param, value) => (param.kind === "number" ? Number(value).toFixed(2) : String(value));

/** Keep the state consistent after a change: the size inside the unit's range, overlap below size. */
function settle(state) {
  state.size = clamp(state.size, PARAM.size.min, bound(PARAM.size.max, state));
  state.overlap = clamp(state.overlap, PARAM.overlap.min, bound(PARAM.overlap.max, state));
}

// ---------------------------------------------------------------------------------------------
// Offsets: UTF-16 (browser) <-> code points (Python), with a fast path for texts without pairs.

const SURROGATE = /[\uD800-\uDFFF]/;
let mapCache = { text: null, map: null };

export function offsetMap(text) {
  if (mapCache.text === text) return mapCache.map;
  let map;
  if (!SURROGATE.test(text)) {
    map = { toCp: (u) => u, toU16: (c) => c, cpLength: text.length };
  } else {
    const highs = []; // UTF-16 index of each surrogate pair's first half
    for (let i = 0; i < text.length - 1; i++) {
      const a = text.charCodeAt(i);
      if (a >= 0xd800 && a <= 0xdbff) {
        const b = text.charCodeAt(i + 1);
        if (b >= 0xdc00 && b <= 0xdfff) highs.push(i++);
      }
    }
    const u16 = Int32Array.from(highs);
    const cps = u16.map((u, j) => u - j); // the code-point index of each astral character
    const below = (arr, x) => { // how many entries are < x
      let lo = 0, hi = arr.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (arr[mid] < x) lo = mid + 1; else hi = mid; }
      return lo;
    };
    map = { toCp: (u) => u - below(u16, u), toU16: (c) => c + below(cps, c), cpLength: text.length - highs.length };
  }
  mapCache = { text, map };
  return map;
}

// ---------------------------------------------------------------------------------------------
// URL fragment state: plain `doc=..&q=..` or, when long, `z=<base64url(deflate-raw(plain))>`.

function plainFragment(state, notes) {
  const params = new URLSearchParams();
  const withDoc = state.doc.length <= LINK_DOC_LIMIT;
  if (!withDoc) notes.push("The document is too long to travel in a link, so the link carries the settings only.");
  for (const p of PARAMS) if (withDoc || p.name !== "doc") params.set(p.name, formatParam(p, state[p.name]));
  if (state.span && withDoc) {
    const text = state.doc.slice(state.span.start, state.span.end);
    if (state.doc.indexOf(text) === state.span.start) params.set("answer", text);
    else {
      const map = offsetMap(state.doc);
      params.set("span", `${map.toCp(state.span.start)}-${map.toCp(state.span.end)}`);
    }
  }
  return params.toString();
}

export async function fragmentFor(state, { embed = false, notes = [] } = {}) {
  const plain = plainFragment(state, notes);
  const body = plain.length > COMPRESS_OVER ? `z=${await deflate(plain)}` : plain;
  return embed ? `embed=1&${body}` : body;
}

async function deflate(text) {
  const stream = new Blob([new TextEncoder().encode(text)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function inflate(b64) {
  if (!/^[A-Za-z0-9_-]*$/.test(b64)) throw new Error("not base64url");
  const binary = atob(b64.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const parts = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > INFLATE_LIMIT) { reader.cancel(); throw new Error("too large"); }
    parts.push(value);
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(await new Blob(parts).arrayBuffer());
}

/** Read a fragment into a fresh state, with a sentence for each part of it that could not be used. */
export async function stateFromFragment(hash) {
  const notes = [];
  let params = new URLSearchParams(hash.replace(/^#/, ""));
  const embed = params.get("embed") === "1";
  if (params.has("z")) {
    try {
      const inner = new URLSearchParams(await inflate(params.get("z")));
      for (const [key, value] of params) if (key !== "z" && !inner.has(key)) inner.set(key, value);
      params = inner;
    } catch {
      notes.push("The link's compressed state could not be read, so the example is shown instead.");
      params = new URLSearchParams(embed ? "embed=1" : "");
    }
  }
  const state = defaultState();
  const given = PARAMS.filter((p) => params.has(p.name));
  if (given.length === 0 && !params.has("answer") && !params.has("span")) return { state, embed, notes };
  // Parameters in table order, so `overlap` is clamped against the size and unit already read.
  for (const p of PARAMS) {
    if (!params.has(p.name)) continue;
    const raw = params.get(p.name);
    if (p.name === "overlap" && /^\s*\d{1,9}\s*$/.test(raw) && parseInt(raw, 10) >= state.size) {
      state.overlap = state.size - 1;
      notes.push(`The link asked for overlap ${parseInt(raw, 10)} with chunk size ${state.size}; overlap must be smaller than the chunk size, so it is ${state.overlap}.`);
      continue;
    }
    const { value, error } = parseParam(p, raw, state);
    if (error) notes.push(`${error} Using ${formatParam(p, state[p.name])} instead.`);
    else state[p.name] = value;
  }
  settle(state);
  if (params.has("doc") || params.has("answer") || params.has("span")) state.span = null;
  if (params.has("answer")) {
    const answer = params.get("answer").trim();
    const at = answer ? state.doc.indexOf(answer) : -1;
    if (at >= 0) state.span = { start: at, end: at + answer.length };
    else notes.push("The answer text in the link does not occur in the document, so no answer is marked.");
  } else if (params.has("span")) {
    const m = /^(\d{1,9})-(\d{1,9})$/.exec(params.get("span").trim());
    const map = offsetMap(state.doc);
    if (!m) notes.push("The link's answer span is not of the form start-end, so no answer is marked.");
    else if (!(+m[1] < +m[2] && +m[2] <= map.cpLength)) {
      notes.push(`The link marks characters ${m[1]} to ${m[2]}, which do not exist in this ${map.cpLength}-character document, so no answer is marked.`);
    } else {
      state.span = trimSpan(state.doc, map.toU16(+m[1]), map.toU16(+m[2]));
      if (!state.span) notes.push("The link's answer span holds only spaces, so no answer is marked.");
    }
  } else if (!params.has("doc")) {
    state.span = defaultState().span; // settings only: the example and its marked answer
  }
  return { state, embed, notes };
}

// ---------------------------------------------------------------------------------------------
// Text helpers: trimming a span, finding the sentence under a click, tracking a mark across edits.

const isSpace = (c) => /\s/.test(c);

function trimSpan(text, start, end) {
  while (start < end && isSpace(text[start])) start++;
  while (end > start && isSpace(text[end - 1])) end--;
  return start < end ? { start, end } : null;
}

const SENTENCE_END = /[.!?。！？]/;
const SENTENCE_SCAN = 5000; // never scan further than this either way (a document without full stops)

/** The sentence around UTF-16 offset `i`: bounded by line breaks and by . ! ? followed by a space. */
export function sentenceAt(text, i) {
  const boundary = (b) => b <= 0 || b >= text.length || text[b - 1] === "\n" || "。！？".includes(text[b - 1]) ||
    (isSpace(text[b - 1]) && b >= 2 && SENTENCE_END.test(text[b - 2]));
  let a = Math.min(Math.max(i, 0), text.length);
  const lo = Math.max(0, a - SENTENCE_SCAN), hi = Math.min(text.length, a + SENTENCE_SCAN);
  let e = a + 1;
  while (a > lo && !boundary(a)) a--;
  while (e < hi && !boundary(e)) e++;
  return trimSpan(text, a, Math.min(e, text.length));
}

/** Where an edit changed `old` into `neu`: [start, oldEnd, newEnd]. `caret` (the selection end after
 * the edit) pins the change's end, so typing next to a mark is never mistaken for typing inside it. */
function editRegion(old, neu, caret) {
  let tail = -1;
  if (caret != null && caret <= neu.length && neu.length - caret <= old.length) {
    tail = neu.length - caret;
    for (let j = 1; j <= tail; j++) if (old.charCodeAt(old.length - j) !== neu.charCodeAt(neu.length - j)) { tail = -1; break; }
  }
  if (tail < 0) {
    const most = Math.min(old.length, neu.length);
    tail = 0;
    while (tail < most && old.charCodeAt(old.length - 1 - tail) === neu.charCodeAt(neu.length - 1 - tail)) tail++;
  }
  const most = Math.min(old.length, neu.length) - tail;
  let head = 0;
  while (head < most && old.charCodeAt(head) === neu.charCodeAt(head)) head++;
  return [head, old.length - tail, neu.length - tail];
}

/** The mark after an edit: shifted when the edit was before it, kept when after, null when inside. */
export function followSpan(old, neu, span, caret) {
  const [head, oldEnd, newEnd] = editRegion(old, neu, caret);
  if (oldEnd <= span.start) return { start: span.start + newEnd - oldEnd, end: span.end + newEnd - oldEnd };
  if (head >= span.end) return span;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Page state and the DOM.

const $ = (id) => document.getElementById(id);
let state = defaultState();
let embed = false;
let gate = null;
let pythonReady = false;
let linkNotes = [];
let last = null; // {response, snap, ms}: the last good result, kept on screen when input goes bad
const controls = {}; // name -> {input, output}

function setBodyState(value) {
  if (!pythonReady) return; // "loading" until Python is ready; a boot failure sets "error" itself
  document.body.dataset.state = value;
}

function buildControls() {
  for (const p of PARAMS) {
    const wrap = document.createElement("div");
    wrap.className = `control control-${p.name}` + (p.kind === "range" ? " slider" : "");
    if (!p.embed) wrap.classList.add("full-only");
    const id = `param-${p.name}`;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = p.label;
    let input;
    if (p.kind === "textarea") {
      input = document.createElement("textarea");
      input.spellcheck = false;
    } else if (p.kind === "choice") {
      input = document.createElement("select");
      for (const [value, text] of Object.entries(p.choices)) input.append(new Option(text, value));
    } else {
      input = document.createElement("input");
      input.type = p.kind;
      if (p.kind === "text") input.autocomplete = "off";
      else { input.min = p.min; input.step = p.step; }
    }
    input.id = id;
    input.name = p.name;
    let output = null;
    if (p.kind === "range") {
      const head = document.createElement("div");
      head.className = "label";
      output = document.createElement("output");
      output.htmlFor = id;
      output.id = `${id}-value`;
      head.append(label, output);
      const row = document.createElement("div");
      row.className = "row";
      row.append(input);
      wrap.append(head, row);
    } else {
      wrap.append(label, input);
    }
    controls[p.name] = { input, output };
    input.addEventListener(p.kind === "choice" ? "change" : "input", () => onControl(p));
    $(p.kind === "textarea" || p.kind === "text" ? "text-controls" : "slider-controls").append(wrap);
  }
}

/** Show the state in the controls. The document is only written when asked (it may be megabytes). */
function syncControls({ withDoc = false } = {}) {
  for (const p of PARAMS) {
    const { input, output } = controls[p.name];
    if (p.name === "doc" && !withDoc) continue;
    if (p.kind === "range") {
      input.max = bound(p.max, state);
      input.min = p.min;
    }
    const text = formatParam(p, state[p.name]);
    if (input.value !== text && !(p.kind === "number" && Number(input.value) === state[p.name])) input.value = text;
    if (output) output.textContent = p.inUnits ? `${state[p.name]} ${UNIT_NAMES[state.unit]}` : String(state[p.name]);
    input.removeAttribute("aria-invalid");
  }
  if (withDoc) lastDoc = state.doc;
  showMark();
}

let lastDoc = state.doc;
let docTimer = 0;
function onControl(p) {
  const { input } = controls[p.name];
  clearLinkNotes();
  if (p.name === "doc") {
    const text = input.value;
    if (state.span) {
      const moved = followSpan(lastDoc, text, state.span, input.selectionEnd);
      if (!moved) setMarkInfo("Mark cleared: your edit changed the marked answer. Select it again to mark it.");
      state.span = moved;
    }
    lastDoc = text;
    state.doc = text;
    showMark();
    clearTimeout(docTimer);
    docTimer = setTimeout(changed, text.length > 100_000 ? 400 : 150); // debounced: typing is not dragging
    return;
  }
  const { value, error } = parseParam(p, input.value, state);
  if (error) { // e.g. an empty price box: say so, keep the last good value and result
    input.setAttribute("aria-invalid", "true");
    showMessage(error);
    return;
  }
  state[p.name] = value;
  settle(state);
  syncControls();
  changed();
}

function changed() {
  compute();
  scheduleUrl();
}

// The answer mark ----------------------------------------------------------------------------

function setMark(span, how) {
  clearLinkNotes();
  state.span = span;
  setMarkInfo(how);
  showMark();
  changed();
}

function showMark() {
  const info = $("mark-info");
  if (info.dataset.note) return;
  if (!state.span) { info.textContent = "No answer marked."; return; }
  const text = state.doc.slice(state.span.start, state.span.end);
  info.textContent = `Marked: “${text.length > 90 ? text.slice(0, 87) + "…" : text}”`;
}

function setMarkInfo(note) {
  const info = $("mark-info");
  if (note) {
    info.textContent = note;
    info.dataset.note = "1";
    clearTimeout(setMarkInfo.timer);
    setMarkInfo.timer = setTimeout(() => { delete info.dataset.note; showMark(); }, 6000);
  }
}

function markSelection() {
  const ta = controls.doc.input;
  const span = trimSpan(ta.value, ta.selectionStart, ta.selectionEnd);
  if (!span) {
    setMarkInfo("Select the answer in the document first, then press the button.");
    return;
  }
  setMark(span, `Marked the selection as the answer.`);
}

// Messages -----------------------------------------------------------------------------------

function showMessage(text) {
  const el = $("message");
  el.textContent = text || "";
  el.hidden = !text;
  $("results").classList.toggle("stale", Boolean(text) && last !== null);
}

function showNotes() {
  const el = $("notice");
  el.textContent = linkNotes.join(" ");
  el.hidden = linkNotes.length === 0;
}

function clearLinkNotes() {
  if (linkNotes.length) { linkNotes = []; showNotes(); }
}

// ---------------------------------------------------------------------------------------------
// Computing: input checks, then the latest-wins gate to the worker.

function inputProblem(s) {
  if (!s.doc.trim()) return "The document is empty: paste or type the text to chunk.";
  if (!/[\p{L}\p{N}_]/u.test(s.q)) return "The question has no words to search with: type a question with at least one word.";
  return null;
}

const FIELD_LABELS = Object.fromEntries(PARAMS.map((p) => [p.field, p]));

let sequence = 0;
let problemAt = 0;
let renderedAt = 0;

async function compute() {
  const seq = ++sequence;
  const problem = inputProblem(state);
  if (problem) {
    problemAt = seq;
    showMessage(problem);
    setBodyState("error");
    return;
  }
  if (!pythonReady) return; // computed as soon as Python is ready
  const request = buildRequest(state);
  const snap = { doc: state.doc, span: state.span, k: state.k, unit: state.unit, size: state.size, overlap: state.overlap };
  setBodyState("computing");
  const reply = await gate.submit(JSON.stringify(request));
  if (reply.dropped) return;
  if (seq < problemAt || seq < renderedAt) return; // something newer already decided what is shown
  if (!reply.ok) {
    problemAt = seq;
    const error = reply.error || {};
    const param = FIELD_LABELS[error.field];
    if (param) controls[param.name].input.setAttribute("aria-invalid", "true");
    showMessage(param ? `${param.label}: ${error.message}` : error.message || "The simulation failed.");
    setBodyState("error");
    return;
  }
  renderedAt = seq;
  last = { request, response: JSON.parse(reply.result), snap, ms: reply.ms };
  showMessage(null);
  render(last);
  if (seq === sequence) setBodyState("ready");
}

// ---------------------------------------------------------------------------------------------
// Rendering the response.

const plural = (n, one, many) => (n === 1 ? one : many);
const int = (n) => Number(n).toLocaleString("en-US");

function listNumbers(nums) {
  if (nums.length <= 1) return nums.join("");
  return `${nums.slice(0, -1).join(", ")} and ${nums[nums.length - 1]}`;
}

function verdictWords(response, snap) {
  const v = response.verdict;
  const k = snap.k;
  const total = response.stats.chunks;
  if (!snap.span || !v || !v.kind) {
    return ["", "No answer marked",
      "Select the answer sentence in the document and press “Mark selection as answer”, or click a sentence in the picture."];
  }
  const whole = response.chunks.filter((c) => c.holds === "whole").sort((a, b) => a.rank - b.rank);
  if (v.kind === "intact") {
    const c = whole[0];
    return ["intact", "Present and intact",
      `Chunk ${c.number} holds the whole sentence and ranks #${c.rank} of ${total}, inside your top ${k}.`];
  }
  if (v.kind === "ranked_out") {
    const c = whole[0];
    return ["ranked_out", "Ranked out", `Chunk ${c.number} holds it whole but ranks #${c.rank}, outside your top ${k}.`];
  }
  const parts = response.chunks.filter((c) => c.holds === "part");
  const nums = parts.map((c) => c.number);
  const sent = parts.filter((c) => c.retrieved).map((c) => c.number);
  let sentence;
  if (parts.length === 1) {
    sentence = `only chunk ${nums[0]} holds part of it, and it was ${sent.length ? "" : "not "}sent.`;
  } else {
    const split = `it is split across chunks ${listNumbers(nums)}, and `;
    if (sent.length === 0) sentence = split + (parts.length === 2 ? "neither was sent." : "none of them was sent.");
    else if (sent.length === parts.length) sentence = split + (parts.length === 2 ? "both were sent, each with only a piece of it." : "all of them were sent, each with only a piece of it.");
    else sentence = split + `only ${plural(sent.length, "chunk", "chunks")} ${listNumbers(sent)} ${plural(sent.length, "was", "were")} sent.`;
  }
  return ["cut", "Cut in half", `No chunk holds the whole sentence: ${sentence}`];
}

function render({ response, snap, ms }) {
  const [kind, headline, sentence] = verdictWords(response, snap);
  const box = $("verdict");
  box.dataset.verdict = kind;
  $("verdict-headline").textContent = headline;
  $("verdict-text").textContent = sentence;
  picture.setData(response, snap);
  renderStats(response, snap, ms);
  renderContext(response, snap);
}

// Stats: the <dl> is built once; each render only rewrites the text of its <dd>s.
const STATS = [
  { key: "units_in_documents", label: (s) => `${cap(UNIT_NAMES[s.unit])} in the document`, show: int },
  { key: "chunks", label: () => "Chunks", show: int },
  { key: "size_overlap", label: () => "Size / overlap", value: (r, s) => [s.size, s.overlap],
    show: ([a, b], s) => `${int(a)} / ${int(b)} ${UNIT_NAMES[s.unit]}` },
  { key: "units_stored", label: (s) => `${cap(UNIT_NAMES[s.unit])} stored across all chunks`, show: int },
  { key: "amplification", label: () => "Storage amplification (stored / in the document)", show: (v) => `${v.toFixed(2)}×` },
  { key: "chunks_whole", label: () => "Chunks holding the answer whole", show: int },
  { key: "chunks_part", label: () => "Chunks holding part of it", show: int },
  { key: "retrieved", label: () => "Chunks retrieved", show: int },
  { key: "best_rank", label: () => "Best rank of a chunk holding the answer", show: (v) => (v == null ? "none" : `#${v}`) },
  { key: "context_chars", label: () => "Characters of context", show: int },
  { key: "context_tokens", label: () => "Estimated tokens (characters / 4)", show: int },
  { key: "cost", label: () => "Estimated input cost per query", show: money },
  { key: ["overlap_min", "overlap_median", "overlap_max"], label: () => "Characters shared by neighbouring chunks (min / median / max)",
    show: (v) => (v == null ? "–" : int(v)) },
  { key: "boundaries_without_overlap", label: () => "Chunk boundaries with no shared text", show: int },
  { key: "ms", label: () => "Recompute time in the worker", value: (r, s, ms) => ms, show: (v) => `${v.toFixed(1)} ms` },
];
const cap = (w) => w[0].toUpperCase() + w.slice(1);

function money(v) {
  if (v === 0) return "$0.00";
  const digits = v >= 1 ? 2 : Math.min(12, Math.max(2, 2 - Math.floor(Math.log10(v))));
  return `$${v.toFixed(digits)}`;
}

function buildStats() {
  const dl = $("stats");
  for (const stat of STATS) {
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    stat.dt = dt;
    stat.cells = [];
    for (const key of [stat.key].flat()) {
      const cell = Array.isArray(stat.key) ? document.createElement("span") : dd;
      cell.dataset.stat = key;
      if (cell !== dd) {
        if (stat.cells.length) dd.append(" / ");
        dd.append(cell);
      }
      stat.cells.push(cell);
    }
    dl.append(dt, dd);
  }
}

function renderStats(response, snap, ms) {
  for (const stat of STATS) {
    stat.dt.textContent = stat.label(snap);
    [stat.key].flat().forEach((key, i) => {
      const value = stat.value ? stat.value(response, snap, ms) : response.stats[key];
      const cell = stat.cells[i];
      cell.dataset.value = JSON.stringify(value ?? null);
      cell.textContent = value === undefined ? "–" : stat.show(value, snap);
    });
  }
  $("stats").closest("section").dataset.ms = String(ms);
}

// The context: retrieved chunks in rank order, the answer marked where it arrives, cuts shown.
function renderContext(response, snap) {
  const box = $("context");
  const map = offsetMap(snap.doc);
  const span = snap.span;
  const items = response.chunks.filter((c) => c.retrieved).sort((a, b) => a.rank - b.rank);
  const nodes = items.map((c) => {
    const start = map.toU16(c.start), end = map.toU16(c.end);
    const article = document.createElement("article");
    article.className = "context-chunk";
    const h = document.createElement("h3");
    const holds = c.holds === "whole" ? " · holds the whole answer" : c.holds === "part" ? " · holds part of the answer" : "";
    h.textContent = `Chunk ${c.number} · rank #${c.rank} · score ${c.score.toFixed(3)}${holds}`;
    const body = document.createElement("div");
    body.className = "chunk-text";
    const shownEnd = Math.min(end, start + CONTEXT_SHOW_LIMIT);
    const piece = (a, b) => document.createTextNode(snap.doc.slice(a, b));
    const cutMark = () => {
      const m = document.createElement("span");
      m.className = "cut-mark";
      m.textContent = "✂ cut";
      m.title = "A chunk boundary cuts the answer here";
      return m;
    };
    const a = span ? Math.max(span.start, start) : 0, b = span ? Math.min(span.end, shownEnd) : 0;
    if (span && a < b) {
      const mark = document.createElement("mark");
      mark.textContent = snap.doc.slice(a, b);
      body.append(piece(start, a));
      if (span.start < start) body.append(cutMark());
      body.append(mark);
      if (span.end > end) body.append(cutMark());
      body.append(piece(b, shownEnd));
    } else {
      body.append(piece(start, shownEnd));
    }
    if (shownEnd < end) body.append(document.createTextNode(` … (${int(end - shownEnd)} more characters)`));
    article.append(h, body);
    return article;
  });
  if (!nodes.length) {
    const p = document.createElement("p");
    p.className = "context-empty";
    p.textContent = "Nothing would be sent: there are no chunks.";
    nodes.push(p);
  }
  box.replaceChildren(...nodes);
}

// ---------------------------------------------------------------------------------------------
// The chunk picture: one <canvas>; chunks are rows of bars along the document; the canvas takes
// focus and the arrow keys step through chunks, so thousands of chunks cost no DOM nodes.

const COLORS = { retrieved: "#1f5fa8", faint: "rgba(214,223,233,0.7)", faintEdge: "#8797a8", band: "rgba(242,140,40,0.5)", bandEdge: "#c25e00",
  strip: "rgba(190,200,212,0.55)", stripHover: "rgba(90,105,120,0.55)", focus: "#ffb000", hover: "#1d232b", text: "#5b6570" };
const MAX_ROWS = 12;

const picture = {
  canvas: null, ctx: null, width: 600, height: 120,
  chunks: [], rows: [], rowCount: 1, docLength: 0, span: null, snap: null,
  hover: -1, focusIndex: -1, hoverSentence: null, layout: null,

  init() {
    this.canvas = $("picture");
    this.ctx = this.canvas.getContext("2d");
    new ResizeObserver(() => this.resize()).observe($("picture-wrap"));
    this.canvas.addEventListener("mousemove", (e) => this.onMove(e));
    this.canvas.addEventListener("mouseleave", () => { this.hover = -1; this.hoverSentence = null; this.draw(); this.describe(); });
    this.canvas.addEventListener("click", (e) => this.onClick(e));
    this.canvas.addEventListener("keydown", (e) => this.onKey(e));
    this.canvas.addEventListener("focus", () => {
      if (this.focusIndex < 0 && this.chunks.length) this.focusIndex = this.firstRetrieved();
      this.draw(); this.describe();
    });
    this.canvas.addEventListener("blur", () => this.draw());
    this.resize();
  },

  setData(response, snap) {
    const map = offsetMap(snap.doc);
    if (this.snap && this.snap.doc !== snap.doc) this.focusIndex = -1; // a new text: start at rank #1 again
    this.snap = snap;
    this.docLength = snap.doc.length;
    this.span = snap.span;
    this.chunks = response.chunks.map((c) => ({ ...c, s: map.toU16(c.start), e: map.toU16(c.end) }));
    this.assignRows();
    if (this.focusIndex >= this.chunks.length) this.focusIndex = this.chunks.length - 1;
    this.hover = -1;
    this.resize();
    this.describe();
  },

  /** Greedy rows so overlapping chunks never share one; past MAX_ROWS chunks take turns. */
  assignRows() {
    const ends = [];
    let greedy = true;
    for (const c of this.chunks) {
      let r = ends.findIndex((end) => end <= c.s);
      if (r < 0) { if (ends.length >= MAX_ROWS) { greedy = false; break; } r = ends.length; ends.push(0); }
      ends[r] = c.e;
      c.row = r;
    }
    if (!greedy) this.chunks.forEach((c, i) => { c.row = i % MAX_ROWS; });
    this.rowCount = greedy ? Math.max(1, ends.length) : MAX_ROWS;
    this.rows = Array.from({ length: this.rowCount }, () => []);
    this.chunks.forEach((c, i) => this.rows[c.row].push(i));
  },

  firstRetrieved() {
    const i = this.chunks.findIndex((c) => c.rank === 1);
    return i >= 0 ? i : 0;
  },

  resize() {
    const w = Math.max(200, $("picture-wrap").clientWidth);
    const rowH = this.rowCount <= 4 ? 22 : Math.max(7, Math.floor(96 / this.rowCount));
    const lane = 16, gap = this.rowCount <= 4 ? 4 : 2, stripH = 18, axis = 16, pad = 8;
    const rowsTop = lane + 4;
    const rowsBottom = rowsTop + this.rowCount * (rowH + gap);
    const stripTop = rowsBottom + 4;
    this.layout = { pad, lane, rowH, gap, rowsTop, rowsBottom, stripTop, stripH, axisTop: stripTop + stripH + 2, plotW: w - 2 * pad };
    const h = stripTop + stripH + axis + 4;
    const dpr = window.devicePixelRatio || 1;
    if (this.width !== w || this.height !== h || this.canvas.width !== Math.round(w * dpr)) {
      this.width = w; this.height = h;
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.height = `${h}px`;
      this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    this.draw();
  },

  x(offset) { return this.layout.pad + (this.docLength ? offset / this.docLength : 0) * this.layout.plotW; },
  offsetAt(x) { return Math.round(((x - this.layout.pad) / this.layout.plotW) * this.docLength); },
  rowY(r) { return this.layout.rowsTop + r * (this.layout.rowH + this.layout.gap); },

  draw() {
    const { ctx, layout: L } = this;
    if (!L) return;
    ctx.clearRect(0, 0, this.width, this.height);
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const bar = (c) => {
      const x0 = this.x(c.s), x1 = Math.max(this.x(c.e), x0 + 1);
      return [x0, this.rowY(c.row), x1 - x0, L.rowH];
    };
    // The answer band behind the bars (so their colours stay true), faint bars, then retrieved ones.
    const band = this.span && this.docLength
      ? [this.x(this.span.start), Math.max(this.x(this.span.end), this.x(this.span.start) + 2)] : null;
    if (band) {
      ctx.fillStyle = COLORS.band;
      ctx.fillRect(band[0], 0, band[1] - band[0], L.stripTop + L.stripH);
    }
    ctx.fillStyle = COLORS.faint;
    ctx.strokeStyle = COLORS.faintEdge;
    ctx.lineWidth = 1;
    ctx.setLineDash([3, 2]);
    for (const c of this.chunks) {
      if (c.retrieved) continue;
      const [x, y, w, h] = bar(c);
      ctx.fillRect(x, y, w, h);
      if (w >= 4) ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
    }
    ctx.setLineDash([]);
    const labels = [];
    for (const c of this.chunks) {
      if (!c.retrieved) continue;
      const [x, y, w, h] = bar(c);
      ctx.fillStyle = COLORS.retrieved;
      ctx.fillRect(x, y, w, h);
      labels.push([c, x, y, w, h]);
    }
    // Rank labels: inside the bar when it is wide enough, else in the lane above, never overlapping.
    const used = [];
    labels.sort((a, b) => a[0].rank - b[0].rank);
    for (const [c, x, y, w, h] of labels) {
      const text = `#${c.rank}`;
      const tw = ctx.measureText(text).width;
      if (w >= tw + 6 && h >= 11) {
        ctx.fillStyle = "#fff";
        ctx.fillText(text, x + 3, y + h / 2);
      } else {
        const lx = Math.min(Math.max(x + w / 2 - tw / 2, 0), this.width - tw);
        if (used.some(([a, b]) => lx < b + 3 && lx + tw > a - 3)) continue;
        used.push([lx, lx + tw]);
        ctx.fillStyle = COLORS.retrieved;
        ctx.fillText(text, lx, L.lane / 2 + 1);
      }
    }
    // The document strip: click a sentence to mark it.
    ctx.fillStyle = COLORS.strip;
    ctx.fillRect(L.pad, L.stripTop, L.plotW, L.stripH);
    if (this.hoverSentence) {
      const x0 = this.x(this.hoverSentence.start), x1 = Math.max(this.x(this.hoverSentence.end), x0 + 2);
      ctx.fillStyle = COLORS.stripHover;
      ctx.fillRect(x0, L.stripTop, x1 - x0, L.stripH);
    }
    ctx.fillStyle = COLORS.text;
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText("document: click a sentence to mark it as the answer", L.pad + 6, L.stripTop + L.stripH / 2);
    // The band's hard edges go over everything, so it reads as one stripe through every row.
    if (band) {
      ctx.fillStyle = COLORS.bandEdge;
      ctx.fillRect(band[0] - 1, 0, 2, L.stripTop + L.stripH);
      ctx.fillRect(band[1] - 1, 0, 2, L.stripTop + L.stripH);
    }
    // Hover and keyboard focus outlines.
    const outline = (i, color, width) => {
      if (i < 0 || i >= this.chunks.length) return;
      const [x, y, w, h] = bar(this.chunks[i]);
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.strokeRect(x - width / 2, y - width / 2, w + width, h + width);
    };
    outline(this.hover, COLORS.hover, 2);
    if (document.activeElement === this.canvas) outline(this.focusIndex, COLORS.focus, 3);
    // Axis: the ends of the document, in characters (code points, as the core counts).
    ctx.fillStyle = COLORS.text;
    ctx.textBaseline = "top";
    ctx.fillText("start", L.pad, L.axisTop);
    if (this.snap) {
      const end = `end · ${int(offsetMap(this.snap.doc).cpLength)} characters`;
      ctx.fillText(end, this.width - L.pad - ctx.measureText(end).width, L.axisTop);
    }
  },

  hitChunk(mx, my) {
    const L = this.layout;
    if (my < L.rowsTop || my >= L.rowsBottom) return -1;
    const r = Math.floor((my - L.rowsTop) / (L.rowH + L.gap));
    const row = this.rows[r];
    if (!row || !row.length) return -1;
    const off = this.offsetAt(mx);
    let lo = 0, hi = row.length; // first chunk in the row with s > off
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.chunks[row[mid]].s <= off) lo = mid + 1; else hi = mid; }
    let best = -1, bestDist = 3; // within 3 px, for bars narrower than a pointer
    for (const j of [lo - 1, lo, lo - 2]) {
      if (j < 0 || j >= row.length) continue;
      const c = this.chunks[row[j]];
      const x0 = this.x(c.s), x1 = Math.max(this.x(c.e), x0 + 1);
      const d = mx < x0 ? x0 - mx : mx > x1 ? mx - x1 : 0;
      if (d < bestDist) { best = row[j]; bestDist = d; }
    }
    return best;
  },

  inStrip(my) { return my >= this.layout.stripTop - 2 && my <= this.layout.stripTop + this.layout.stripH + 2; },

  point(e) {
    const rect = this.canvas.getBoundingClientRect();
    return [e.clientX - rect.left, e.clientY - rect.top];
  },

  onMove(e) {
    const [mx, my] = this.point(e);
    const hover = this.hitChunk(mx, my);
    const sentence = this.snap && this.inStrip(my) ? sentenceAt(this.snap.doc, this.offsetAt(mx)) : null;
    const same = (a, b) => (a && b ? a.start === b.start && a.end === b.end : a === b);
    if (hover === this.hover && same(sentence, this.hoverSentence)) return;
    this.hover = hover;
    this.hoverSentence = sentence;
    this.canvas.style.cursor = sentence ? "pointer" : "crosshair";
    this.draw();
    this.describe();
  },

  onClick(e) {
    const [mx, my] = this.point(e);
    if (!this.snap || !this.inStrip(my)) {
      const i = this.hitChunk(mx, my);
      if (i >= 0) { this.focusIndex = i; this.describe(); }
      return;
    }
    // The picture shows the last computed text; mark in the current one only if they agree.
    if (this.snap.doc !== state.doc) return;
    const span = sentenceAt(state.doc, this.offsetAt(mx));
    if (span) setMark(span, "Marked the sentence you clicked as the answer.");
  },

  onKey(e) {
    const n = this.chunks.length;
    if (!n) return;
    const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    let i = this.focusIndex < 0 ? this.firstRetrieved() : this.focusIndex;
    if (e.key in moves) i = clamp(i + moves[e.key], 0, n - 1);
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = n - 1;
    else return;
    e.preventDefault();
    this.focusIndex = i;
    this.draw();
    this.describe();
  },

  /** The detail box: the hovered chunk, else the hovered sentence, else the focused chunk. */
  describe() {
    const head = $("detail-head"), body = $("detail-text");
    const focused = document.activeElement === this.canvas ? this.focusIndex : -1;
    const i = this.hover >= 0 ? this.hover : focused;
    if (i >= 0 && i < this.chunks.length) {
      const c = this.chunks[i];
      const sent = c.retrieved ? `retrieved (in your top ${this.snap.k})` : "not retrieved";
      const holds = c.holds === "whole" ? " · holds the whole answer" : c.holds === "part" ? " · holds part of the answer" : "";
      head.textContent = `Chunk ${c.number} of ${this.chunks.length} · rank #${c.rank} · score ${c.score.toFixed(3)} · ${sent}${holds}`;
      const text = this.snap.doc.slice(c.s, Math.min(c.e, c.s + 1200));
      body.textContent = c.e - c.s > 1200 ? `${text}…` : text;
    } else if (this.hoverSentence) {
      head.textContent = "Click to mark this sentence as the answer:";
      body.textContent = this.snap.doc.slice(this.hoverSentence.start, Math.min(this.hoverSentence.end, this.hoverSentence.start + 1200));
    } else {
      head.textContent = "Hover over a chunk, or focus the picture and use the arrow keys.";
      body.textContent = "";
    }
  },
};

// ---------------------------------------------------------------------------------------------
// URL writing, sharing and embedding.

let urlTimer = 0;
function scheduleUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, 300);
}

async function writeUrl() {
  const fragment = await fragmentFor(state, { embed });
  history.replaceState(null, "", `#${fragment}`);
  if (embed) $("open-full").href = `${baseUrl()}#${await fragmentFor(state)}`;
}

const baseUrl = () => location.href.split("#")[0];

async function share(text, done) {
  const out = $("share-output");
  out.value = text;
  try {
    await navigator.clipboard.writeText(text);
    setMarkInfo(done);
  } catch {
    out.select();
    setMarkInfo("Your browser did not allow copying: the text is selected in the box below, copy it from there.");
  }
}

async function copyLink() {
  const notes = [];
  const url = `${baseUrl()}#${await fragmentFor(state, { notes })}`;
  await share(url, notes.length ? `Link copied. ${notes.join(" ")}` : "Link copied.");
}

async function copyEmbed() {
  const notes = [];
  const src = `${baseUrl()}#${await fragmentFor(state, { embed: true, notes })}`;
  const attr = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const snippet = `<iframe src="${attr(src)}" title="ragsim: does the answer survive chunking and retrieval?" ` +
    `width="100%" height="560" loading="lazy" style="border:0"></iframe>`;
  await share(snippet, notes.length ? `Embed code copied. ${notes.join(" ")}` : "Embed code copied.");
}

function startResizeMessages() {
  if (window.parent === window) return;
  let lastHeight = -1;
  const post = () => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === lastHeight) return;
    lastHeight = height;
    window.parent.postMessage({ type: "ragsim:resize", height }, "*");
  };
  new ResizeObserver(post).observe(document.body);
  post();
}

// ---------------------------------------------------------------------------------------------
// Boot: controls first (usable at once), Python in the background.

const STAGES = {
  runtime: [15, "Loading the Python runtime…"],
  micropip: [65, "Loading micropip…"],
  core: [85, "Installing the ragsim core…"],
  ready: [100, "Python is ready."],
};

function onStatus({ stage, message }) {
  const text = $("boot-text"), bar = $("boot-progress");
  if (stage === "failed") {
    $("boot").classList.add("failed");
    bar.hidden = true;
    text.textContent = `Python could not be loaded, so nothing can be computed: ${message || "no reason was given"}`;
    $("verdict-headline").textContent = "Python could not be loaded";
    $("verdict-text").textContent = message || "The simulator's worker failed to start.";
    pythonReady = false;
    document.body.dataset.state = "error";
    return;
  }
  const [value, words] = STAGES[stage] || [Number(bar.value) + 5, `Loading (${stage})…`];
  bar.value = value;
  text.textContent = words;
  if (stage === "ready") {
    pythonReady = true;
    document.body.dataset.state = "ready";
    compute();
  }
}

async function applyFragment() {
  const { state: next, embed: isEmbed, notes } = await stateFromFragment(location.hash);
  state = next;
  embed = isEmbed;
  document.body.classList.toggle("embed", embed);
  linkNotes = notes;
  showNotes();
  syncControls({ withDoc: true });
  compute();
}

async function main() {
  buildControls();
  buildStats();
  picture.init();
  $("mark-selection").addEventListener("click", markSelection);
  $("clear-mark").addEventListener("click", () => setMark(null, "Mark cleared."));
  $("copy-link").addEventListener("click", copyLink);
  $("copy-embed").addEventListener("click", copyEmbed);
  window.addEventListener("hashchange", applyFragment);
  await applyFragment();
  if (embed) {
    $("open-full").href = `${baseUrl()}#${await fragmentFor(state)}`;
    startResizeMessages();
  }
  // Pyodide does not always reject when its runtime cannot be fetched; say so instead of waiting silently.
  setTimeout(() => {
    if (!pythonReady && document.body.dataset.state === "loading") {
      $("boot-text").textContent = "Python has not finished loading after 90 seconds: the connection may be slow, " +
        "or something (a proxy, an extension) is blocking the Pyodide files. The browser console has details.";
    }
  }, 90_000);
  try {
    gate = Gate.start();
    gate.onstatus = onStatus;
  } catch (err) {
    onStatus({ stage: "failed", message: `the worker could not be started (${err.message}).` });
  }
}

// For tests and benchmarks: the request the page would send now, and the request and response
// behind what is on screen (equal requests mean the page has caught up with its controls).
window.ragsim = Object.freeze({
  request: () => buildRequest(state),
  shownRequest: () => (last ? last.request : null),
  response: () => (last ? last.response : null),
});

main();
