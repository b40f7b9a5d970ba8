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

import { Gate } from "./assets/js/worker-client.js";
import { CodePanel } from "./assets/js/render/code-panel.js";
import { EXAMPLE } from "./assets/js/examples.js";
import * as documents from "./assets/js/documents.js";
import { Investigate, defaultOverlaps } from "./assets/js/render/investigate.js";
import { AuditPanel } from "./assets/js/render/audit-panel.js";
import { lanes } from "./assets/js/render/lanes.js";

const DOC_ID = "doc";
const COMPRESS_OVER = 1000; // fragments longer than this go into `z`, deflated
const LINK_DOC_LIMIT = 200_000; // longer documents are left out of links (a URL cannot carry them)
const INFLATE_LIMIT = 20_000_000; // refuse compressed fragments that inflate beyond this (bytes)
const CONTEXT_SHOW_LIMIT = 20_000; // characters of one chunk shown in the context panel

// ---------------------------------------------------------------------------------------------
// The one parameter table: controls, URL state and request fields all come from it.
// `max` may be a function of the state (overlap stays below size; the size range follows the unit).

const UNIT_NAMES = { words: "words", chars: "characters" };

// Splitters (SPEC section 7) by the names people know them by.
const STRATEGY_NAMES = {
  window: "Fixed windows (ragsim)",
  "langchain-character": "LangChain CharacterTextSplitter",
  "langchain-recursive": "LangChain RecursiveCharacterTextSplitter",
  haystack: "Haystack DocumentSplitter",
  sentences: "Sentence packing (ragsim)",
};
const LANGCHAIN = ["langchain-character", "langchain-recursive"];
const OWN_UNIT = ["window", "sentences"]; // the strategies that count in the `unit` the user picks
// Haystack's split_by -> the unit its split_length counts (ragsim/splitters/haystack.py SPLIT_BY).
const SPLIT_BY = { word: "words", passage: "passages", line: "lines", period: "sentences", page: "pages" };
// LangChain's language presets (ragsim/splitters/langchain_recursive.py LANGUAGES); "" = the separators list.
const LANGUAGES = Object.fromEntries(["", "markdown", "python", "js", "ts", "html", "rst", "latex", "java", "go", "rust", "c", "cpp"]
  .map((l) => [l, l || "none: use separators"]));
const KEEP_SEPARATOR = { false: "False", true: "True (= start)", start: "start", end: "end" };
const VARIANTS = { lucene: "Lucene (as Elasticsearch)", robertson: "Robertson", atire: "ATIRE", bm25l: "BM25L", "bm25+": "BM25+" };

/** The unit a strategy's size and overlap count in, as the library counts it. */
export function unitName(s) {
  if (LANGCHAIN.includes(s.strategy)) return "characters";
  if (s.strategy === "haystack") return SPLIT_BY[s.split_by] || "words";
  return UNIT_NAMES[s.unit];
}

// Row fields beyond name/label/kind/default: `field` is the request field the value goes to
// (`wire` converts it); `strategies` and `when` say when the row applies: a row that does not
// is hidden, left out of the request and out of links. `defaults` (by strategy) replace `default`
// when a strategy is first chosen; `group` is the container; `needs` a package the worker must
// install before a request with the row on.
export const PARAMS = [
  { name: "doc", label: "Document", kind: "textarea", default: EXAMPLE.text, field: "documents" },
  { name: "q", label: "Question", kind: "text", default: EXAMPLE.question, field: "query" },
  { name: "strategy", label: "Splitter", kind: "choice", default: "window", choices: STRATEGY_NAMES, field: "chunking.strategy",
    embed: false, onSet: switchStrategy },
  { name: "unit", label: "Unit", kind: "choice", default: "words", choices: UNIT_NAMES, field: "chunking.unit", embed: false,
    strategies: OWN_UNIT },
  { name: "split_by", label: "split_by", kind: "choice", default: "word", choices: Object.fromEntries(Object.keys(SPLIT_BY).map((k) => [k, k])),
    field: "chunking.split_by", embed: false, strategies: ["haystack"] },
  { name: "size", label: "Chunk size", libLabel: { langchain: "chunk_size", haystack: "split_length" }, kind: "range",
    default: 24, defaults: { "langchain-character": 4000, "langchain-recursive": 4000, haystack: 200, sentences: 40 }, min: 1,
    max: (s) => (LANGCHAIN.includes(s.strategy) ? 8000 : s.strategy === "haystack" ? (s.split_by === "word" ? 1000 : 100)
      : s.unit === "chars" ? 4000 : 400), step: 1, inUnits: true, field: "chunking.size", embed: true },
  { name: "overlap", label: "Overlap", libLabel: { langchain: "chunk_overlap", haystack: "split_overlap" }, kind: "range",
    default: 6, defaults: { "langchain-character": 200, "langchain-recursive": 200, haystack: 0, sentences: 10 }, min: 0,
    max: (s) => (LANGCHAIN.includes(s.strategy) ? s.size : s.size - 1), // LangChain allows overlap == size
    step: 1, inUnits: true, field: "chunking.overlap", embed: true },
  { name: "split_threshold", label: "split_threshold", kind: "range", default: 0, min: 0, max: (s) => s.size, step: 1,
    field: "chunking.split_threshold", embed: false, strategies: ["haystack"] },
  { name: "language", label: "language preset", kind: "choice", default: "", choices: LANGUAGES, field: "chunking.language",
    embed: false, strategies: ["langchain-recursive"], wire: (v) => v || undefined },
  { name: "separators", label: "separators", kind: "json", shape: "strings", default: '["\\n\\n", "\\n", " ", ""]',
    field: "chunking.separators", embed: false, strategies: ["langchain-recursive"], when: (s) => !s.language, wire: JSON.parse },
  { name: "separator", label: "separator", kind: "json", shape: "string", default: JSON.stringify("\n\n"),
    field: "chunking.separator", embed: false, strategies: ["langchain-character"], wire: JSON.parse },
  { name: "is_separator_regex", label: "is_separator_regex", kind: "check", default: false, field: "chunking.is_separator_regex",
    embed: false, strategies: LANGCHAIN, when: (s) => !(s.strategy === "langchain-recursive" && s.language) },
  { name: "keep_separator", label: "keep_separator", kind: "choice", default: "false", defaults: { "langchain-recursive": "true" },
    choices: KEEP_SEPARATOR, field: "chunking.keep_separator", embed: false, strategies: LANGCHAIN,
    wire: (v) => (v === "true" ? true : v === "false" ? false : v) },
  { name: "strip_whitespace", label: "strip_whitespace", kind: "check", default: true, field: "chunking.strip_whitespace",
    embed: false, strategies: LANGCHAIN },
  { name: "k", label: "Top k", kind: "range", default: 2, min: 1, max: 50, step: 1, field: "retrieval.k", embed: true },
  { name: "variant", label: "BM25 variant", kind: "choice", default: "lucene", choices: VARIANTS, field: "retrieval.variant",
    group: "retrieval", embed: false },
  { name: "k1", label: "k1", kind: "number", default: 1.2, min: 0, max: 1000, step: 0.05, field: "retrieval.k1",
    group: "retrieval", embed: false },
  { name: "b", label: "b", kind: "number", default: 0.75, min: 0, max: 1, step: 0.05, field: "retrieval.b",
    group: "retrieval", embed: false },
  { name: "delta", label: "delta", kind: "number", default: 0.5, min: 0, max: 1000, step: 0.05, field: "retrieval.delta",
    group: "retrieval", embed: false, when: (s) => s.variant === "bm25l" || s.variant === "bm25+" },
  { name: "stopwords", label: "Remove English stop words", kind: "check", default: false, field: "retrieval.terms.stopwords",
    group: "retrieval", embed: false, wire: (v) => (v ? "english" : undefined) },
  { name: "stem", label: "Stem words (Snowball English)", kind: "check", default: false, field: "retrieval.terms.stemmer",
    group: "retrieval", embed: false, wire: (v) => (v ? "snowball-english" : undefined),
    needs: { package: "snowballstemmer", loading: "Loading the stemmer…", what: "the stemmer" } },
  { name: "price", label: "Price per million tokens", kind: "number", default: 3, min: 0, max: 10000, step: 0.01,
    field: "price_per_million" },
];
const PARAM = Object.fromEntries(PARAMS.map((p) => [p.name, p]));
const bound = (value, state) => (typeof value === "function" ? value(state) : value);

/** Whether a row applies to the state: its strategy and its condition. */
export const applies = (p, s) => (!p.strategies || p.strategies.includes(s.strategy)) && (!p.when || p.when(s));

/** The request's `chunking` or `retrieval` object: every applying row whose field lies under `prefix`. */
function fieldsUnder(prefix, state) {
  const out = {};
  for (const p of PARAMS) {
    if (!p.field.startsWith(`${prefix}.`) || !applies(p, state)) continue;
    const value = p.wire ? p.wire(state[p.name]) : state[p.name];
    if (value === undefined) continue;
    const path = p.field.slice(prefix.length + 1).split(".");
    let at = out;
    for (const key of path.slice(0, -1)) at = at[key] ??= {};
    at[path.at(-1)] = value;
  }
  return out;
}

/** Switching splitter: the rows with per-strategy defaults are saved for the strategy left and
 * restored (or set to the library's defaults, the first time) for the one chosen. */
function switchStrategy(state, next, memo = {}) {
  if (state.strategy === next) return;
  const rows = PARAMS.filter((p) => p.defaults);
  memo[state.strategy] = Object.fromEntries(rows.map((p) => [p.name, state[p.name]]));
  const saved = memo[next] || Object.fromEntries(rows.map((p) => [p.name, p.defaults[next] ?? p.default]));
  Object.assign(state, saved);
  state.strategy = next;
}

/** The request for the core (SPEC section 6), built in exactly one place. */
export function buildRequest(state) {
  const docs = state.docs.map((d, i) => (i === state.sel ? { ...d, text: state.doc } : d));
  const textOf = (id) => (docs.find((d) => d.id === id) || { text: "" }).text;
  const cp = (id, s) => { const map = offsetMap(textOf(id)); return [map.toCp(s.start), map.toCp(s.end)]; };
  const spanDoc = state.span ? state.span.doc ?? docs[state.sel].id : null;
  const span = state.span ? cp(spanDoc, state.span) : null;
  const fact = factComplete(state.fact) ? { doc: state.fact.doc, name: cp(state.fact.doc, state.fact.name), value: cp(state.fact.doc, state.fact.value) } : null;
  const request = {
    documents: docs.map(({ id, title, text }) => ({ id, title, text })),
    query: state.q,
    chunking: fieldsUnder("chunking", state),
    retrieval: fieldsUnder("retrieval", state),
    span: span ? { doc: spanDoc, start: span[0], end: span[1] } : null,
    fact,
    price_per_million: state.price,
  };
  // The questions of issue 5 (assets/investigate.js): the cuts, an exact phrase, context expansion.
  // The embed shows none of those panels, so it does not ask (the cuts cost a second split).
  if (embed) return request;
  request.cuts = true;
  const phrase = state.find.trim() ? state.find : markedText(state, textOf);
  if (phrase.trim()) request.find = phrase;
  if (state.expand !== "none") request.expand = state.expand === "section" ? { section: true } : { neighbours: Number(state.expand) };
  return request;
}

const factComplete = (f) => Boolean(f && f.name && f.value);

/** The marked fact's name-to-value stretch, else the marked answer, as text (the phrase to find). */
function markedText(state, textOf) {
  if (factComplete(state.fact)) {
    const { name, value } = state.fact;
    return textOf(state.fact.doc).slice(Math.min(name.start, value.start), Math.max(name.end, value.end));
  }
  if (state.span) return textOf(state.span.doc ?? state.docs[state.sel].id).slice(state.span.start, state.span.end);
  return "";
}

function defaultState() {
  const state = Object.fromEntries(PARAMS.map((p) => [p.name, p.default]));
  const at = EXAMPLE.text.indexOf(EXAMPLE.answer);
  state.span = at >= 0 ? { start: at, end: at + EXAMPLE.answer.length, doc: DOC_ID } : null;
  // The collection (assets/documents.js): every document, the selected one's text also in state.doc.
  state.docs = [{ id: DOC_ID, title: "Document", text: state.doc }];
  state.sel = 0;
  state.fact = null; // {doc, name: {start, end} | null, value: {start, end} | null}, UTF-16 offsets
  state.example = null; // "collection" while the built-in collection is loaded and unedited
  state.find = ""; // the phrase to find; empty means the marked answer
  state.expand = "none"; // "none", "1", "2" (neighbouring chunks) or "section"
  state.overlaps = null; // the sweep's overlaps; null means the unit's default list
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
    case "check":
      if (raw === true || raw === "1" || raw === "true") return { value: true };
      if (raw === false || raw === "0" || raw === "false") return { value: false };
      return { error: `${param.label} must be on (1) or off (0), not ${shown}.` };
    case "json": { // a JSON string, or a list of them, as the library's Python literal would read
      const example = param.shape === "string" ? '"\\n\\n"' : '["\\n\\n", "\\n", " ", ""]';
      let value;
      try { value = JSON.parse(String(raw)); } catch { value = undefined; }
      const ok = param.shape === "string" ? typeof value === "string"
        : Array.isArray(value) && value.length <= 50 && value.every((v) => typeof v === "string");
      if (!ok || String(raw).length > 2000) return { error: `${param.label} must be written like ${example}, not ${shown}.` };
      return { value: String(raw) };
    }
  }
  return { error: `Unknown setting ${param.name}.` };
}

const clamp = (n, lo, hi) => Math.min(Math.max(n, lo), Math.max(lo, hi));
const formatParam = (param, value) => (param.kind === "number" ? Number(value).toFixed(2)
  : param.kind === "check" ? (value ? "1" : "0") : String(value));

/** Keep the state consistent after a change: the size inside the unit's range, overlap below size. */
function settle(state) {
  // In table order: the size inside its strategy's and unit's range, then overlap (and
  // split_threshold) against the size.
  for (const p of PARAMS) if (p.kind === "range") state[p.name] = clamp(state[p.name], p.min, bound(p.max, state));
}

// ---------------------------------------------------------------------------------------------
// Offsets: UTF-16 (browser) <-> code points (Python), with a fast path for texts without pairs.

const SURROGATE = /[\uD800-\uDFFF]/;
const mapCache = new Map(); // text -> map, for the last few texts (one per document of a collection)
const MAP_CACHE_SIZE = 8;

export function offsetMap(text) {
  if (mapCache.has(text)) return mapCache.get(text);
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
  if (mapCache.size >= MAP_CACHE_SIZE) mapCache.delete(mapCache.keys().next().value);
  mapCache.set(text, map);
  return map;
}

// ---------------------------------------------------------------------------------------------
// URL fragment state: plain `doc=..&q=..` or, when long, `z=<base64url(deflate-raw(plain))>`.

function plainFragment(state, notes) {
  const params = new URLSearchParams();
  const withDoc = state.doc.length <= LINK_DOC_LIMIT;
  if (!withDoc) notes.push("The document is too long to travel in a link, so the link carries the settings only.");
  for (const p of PARAMS) {
    if ((withDoc || p.name !== "doc") && applies(p, state)) params.set(p.name, formatParam(p, state[p.name]));
  }
  if (state.span && withDoc) {
    const text = state.doc.slice(state.span.start, state.span.end);
    if (state.doc.indexOf(text) === state.span.start) params.set("answer", text);
    else {
      const map = offsetMap(state.doc);
      params.set("span", `${map.toCp(state.span.start)}-${map.toCp(state.span.end)}`);
    }
  }
  collectionToParams(state, params, notes);
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
  const collection = await collectionFromParams(state, params, notes); // example=collection, docs=
  if (given.length === 0 && !params.has("answer") && !params.has("span") && !collection) return { state, embed, notes };
  // Parameters in table order, so `overlap` is clamped against the size and unit already read.
  for (const p of PARAMS) {
    if (!params.has(p.name)) continue;
    const raw = params.get(p.name);
    const most = p.name === "overlap" ? bound(p.max, state) : Infinity;
    if (p.name === "overlap" && /^\s*\d{1,9}\s*$/.test(raw) && parseInt(raw, 10) > most) {
      state.overlap = most;
      const rule = LANGCHAIN.includes(state.strategy) ? "no larger than" : "smaller than";
      notes.push(`The link asked for overlap ${parseInt(raw, 10)} with chunk size ${state.size}; overlap must be ${rule} the chunk size, so it is ${state.overlap}.`);
      continue;
    }
    const { value, error } = parseParam(p, raw, state);
    if (error) notes.push(`${error} Using ${formatParam(p, state[p.name])} instead.`);
    else if (p.onSet) p.onSet(state, value);
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
  } else if (!params.has("doc") && !collection) {
    state.span = defaultState().span; // settings only: the example and its marked answer
  }
  finishFromParams(state, params, notes);
  return { state, embed, notes };
}

// The collection in links: `example=collection` (the built-in one, unedited) or `docs=[[id, title,
// text], ...]` (pasted or chosen documents, when they fit), `sel=<id>` the selected document,
// `fact=<id>:<start>-<end>,<start>-<end>` (name, value; code points), `spanin=<id>:<start>-<end>` when
// the marked answer is not in the selected document, and `find`, `expand`, `overlaps` when not the defaults.
// Longer collections travel as settings only, and the page says so.

function collectionToParams(state, params, notes) {
  const id = state.docs[state.sel].id;
  const cps = (text, s) => { const map = offsetMap(text); return `${map.toCp(s.start)}-${map.toCp(s.end)}`; };
  const textOf = (docId) => (docId === id ? state.doc : (state.docs.find((d) => d.id === docId) || { text: "" }).text);
  if (state.example === "collection" || state.docs.length > 1) {
    params.delete("doc");
    const total = state.docs.reduce((n, d, i) => n + (i === state.sel ? state.doc : d.text).length, 0);
    if (state.example === "collection") params.set("example", "collection");
    else if (total <= LINK_DOC_LIMIT) {
      params.set("docs", JSON.stringify(state.docs.map((d, i) => [d.id, d.title, i === state.sel ? state.doc : d.text])));
    } else {
      notes.push("The documents are too long to travel in a link, so the link carries the settings only.");
    }
    params.set("sel", id);
    if (state.span && (state.span.doc ?? id) !== id) {
      params.delete("answer");
      params.set("spanin", `${state.span.doc}:${cps(textOf(state.span.doc), state.span)}`);
    }
  }
  const f = state.fact;
  if (factComplete(f)) params.set("fact", `${f.doc}:${cps(textOf(f.doc), f.name)},${cps(textOf(f.doc), f.value)}`);
  else if (state.example === "collection") params.set("fact", "none"); // else the collection's own fact returns
  if (state.find) params.set("find", state.find);
  if (state.expand !== "none") params.set("expand", state.expand);
  if (state.overlaps) params.set("overlaps", state.overlaps.join(","));
}

/** Before the settings are read: the documents of `example=collection` or `docs=`; true if either. */
async function collectionFromParams(state, params, notes) {
  if (params.get("example") === "collection") {
    try {
      const { index, docs } = await documents.loadCollection();
      useCollection(state, index, docs);
      // The collection's own fact stays marked unless the link names one, or `fact=none`.
      if (params.has("fact") || params.has("answer") || params.has("span") || params.has("spanin")) state.fact = null;
    } catch (err) {
      notes.push(`The example collection could not be loaded (${err.message}), so the first example is shown instead.`);
      return false;
    }
  } else if (params.has("docs")) {
    let docs = null;
    try {
      const raw = JSON.parse(params.get("docs"));
      if (Array.isArray(raw) && raw.length >= 1 && raw.length <= documents.MAX_DOCUMENTS &&
          raw.every((d) => Array.isArray(d) && d.length === 3 && d.every((x) => typeof x === "string"))) {
        docs = raw.map(([id, title, text]) => ({ id, title, text }));
        if (new Set(docs.map((d) => d.id)).size !== docs.length) docs = null;
      }
    } catch { docs = null; }
    if (!docs) {
      notes.push("The link's documents could not be read, so the first example is shown instead.");
      return false;
    }
    state.docs = docs;
    state.sel = 0;
    state.doc = docs[0].text;
  } else {
    return false;
  }
  if (params.has("sel")) {
    const i = state.docs.findIndex((d) => d.id === params.get("sel"));
    if (i >= 0) { state.sel = i; state.doc = state.docs[i].text; } else notes.push("The link selects a document that is not in the collection, so the first one is shown.");
  }
  state.span = null;
  return true;
}

/** After the settings are read: where the answer mark is, the fact, and the panels' settings. */
function finishFromParams(state, params, notes) {
  const selId = state.docs[state.sel].id;
  state.docs[state.sel] = { ...state.docs[state.sel], text: state.doc };
  if (params.has("spanin")) { // the answer is marked in a document other than the selected one
    const m = /^(.+):(\d{1,9})-(\d{1,9})$/.exec(params.get("spanin"));
    const doc = m && state.docs.find((d) => d.id === m[1]);
    const map = doc && offsetMap(doc.text);
    state.span = doc && +m[2] < +m[3] && +m[3] <= map.cpLength ? trimSpan(doc.text, map.toU16(+m[2]), map.toU16(+m[3])) : null;
    if (state.span) state.span.doc = doc.id;
    else notes.push("The link's answer mark does not fit its document, so no answer is marked.");
  } else if (state.span) {
    state.span.doc = selId;
  }
  if (params.has("fact") && params.get("fact") !== "none") {
    const m = /^(.+):(\d{1,9})-(\d{1,9}),(\d{1,9})-(\d{1,9})$/.exec(params.get("fact"));
    const doc = m && state.docs.find((d) => d.id === m[1]);
    const map = doc && offsetMap(doc.text);
    const part = (a, b) => (+a < +b && +b <= map.cpLength ? trimSpan(doc.text, map.toU16(+a), map.toU16(+b)) : null);
    const name = doc && part(m[2], m[3]), value = doc && part(m[4], m[5]);
    if (name && value && !(name.start < value.end && value.start < name.end)) state.fact = { doc: doc.id, name, value };
    else notes.push("The link's fact does not fit its document, so no fact is marked.");
  }
  if (params.has("find")) state.find = params.get("find").slice(0, 2000);
  if (["1", "2", "section"].includes(params.get("expand"))) state.expand = params.get("expand");
  if (params.has("overlaps")) {
    const nums = params.get("overlaps").split(",").filter((x) => /^\d{1,6}$/.test(x)).map(Number);
    if (nums.length && nums.length <= 12) state.overlaps = [...new Set(nums)];
  }
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
let codePanel = null; // the "Equivalent code" panel (full layout only)
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
      input.type = { check: "checkbox", json: "text" }[p.kind] || p.kind;
      if (p.kind === "text" || p.kind === "json") { input.autocomplete = "off"; input.spellcheck = false; }
      else if (p.kind !== "check") { input.min = p.min; input.step = p.step; }
    }
    input.id = id;
    input.name = p.name;
    let output = null, libName = null;
    if (p.kind === "range") {
      const head = document.createElement("div");
      head.className = "label";
      output = document.createElement("output");
      output.htmlFor = id;
      output.id = `${id}-value`;
      const named = document.createElement("span");
      named.append(label);
      if (p.libLabel) { // the library's own name for this control, beside ours (not part of the label)
        libName = document.createElement("code");
        libName.className = "lib-name";
        named.append(" ", libName);
      }
      head.append(named, output);
      const row = document.createElement("div");
      row.className = "row";
      row.append(input);
      wrap.append(head, row);
    } else if (p.kind === "check") {
      wrap.classList.add("check");
      wrap.append(input, label);
    } else {
      wrap.append(label, input);
    }
    if (p.kind === "json") input.classList.add("code-input");
    let note = null;
    if (p.needs) { // where installing the package is reported
      note = document.createElement("span");
      note.className = "needs-note";
      note.setAttribute("role", "status");
      wrap.append(note);
    }
    controls[p.name] = { input, output, wrap, libName, note };
    input.addEventListener(p.kind === "choice" || p.kind === "check" || p.kind === "json" ? "change" : "input", () => onControl(p));
    const home = p.group === "retrieval" ? "retrieval-controls" : p.kind === "textarea" || p.kind === "text" ? "text-controls" : "slider-controls";
    $(home).append(wrap);
  }
}

/** Show the state in the controls. The document is only written when asked (it may be megabytes). */
function syncControls({ withDoc = false } = {}) {
  for (const p of PARAMS) {
    const { input, output, wrap, libName } = controls[p.name];
    if (p.name === "doc" && !withDoc) continue;
    wrap.hidden = !applies(p, state);
    if (p.kind === "range") {
      input.max = bound(p.max, state);
      input.min = p.min;
    }
    const text = formatParam(p, state[p.name]);
    if (p.kind === "check") input.checked = Boolean(state[p.name]);
    else if (input.value !== text && !(p.kind === "number" && Number(input.value) === state[p.name])) input.value = text;
    if (output) output.textContent = p.inUnits ? `${state[p.name]} ${unitName(state)}` : String(state[p.name]);
    if (libName) {
      const lib = LANGCHAIN.includes(state.strategy) ? "langchain" : state.strategy;
      libName.textContent = p.libLabel[lib] || "";
    }
    input.removeAttribute("aria-invalid");
  }
  if (withDoc) lastDoc = state.doc;
  showMark();
}

let lastDoc = state.doc;
let docTimer = 0;
let strategyMemo = {}; // strategy -> its size, overlap, ... as last left (see switchStrategy)
function onControl(p) {
  const { input } = controls[p.name];
  clearLinkNotes();
  if (p.name === "doc") {
    const text = input.value;
    const selId = state.docs[state.sel].id;
    if (state.span && (state.span.doc ?? selId) === selId) {
      const moved = followSpan(lastDoc, text, state.span, input.selectionEnd);
      if (!moved) setMarkInfo("Mark cleared: your edit changed the marked answer. Select it again to mark it.");
      state.span = moved && { ...moved, doc: selId };
    }
    followFactEdit(lastDoc, text, input.selectionEnd);
    lastDoc = text;
    state.doc = text;
    state.docs[state.sel] = { ...state.docs[state.sel], text };
    state.example = null;
    showMark();
    clearTimeout(docTimer);
    docTimer = setTimeout(changed, text.length > 100_000 ? 400 : 150); // debounced: typing is not dragging
    return;
  }
  const { value, error } = parseParam(p, p.kind === "check" ? input.checked : input.value, state);
  if (error) { // e.g. an empty price box: say so, keep the last good value and result
    input.setAttribute("aria-invalid", "true");
    showMessage(error);
    return;
  }
  if (p.onSet) p.onSet(state, value, strategyMemo);
  else state[p.name] = value;
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
  state.span = span && { ...span, doc: span.doc ?? state.docs[state.sel].id };
  setMarkInfo(how);
  showMark();
  changed();
}

function showMark() {
  const info = $("mark-info");
  if (info.dataset.note) return;
  if (!state.span) { info.textContent = state.fact ? "" : "No answer marked."; return; }
  const doc = state.docs.find((d) => d.id === state.span.doc) || state.docs[state.sel];
  const text = (doc === state.docs[state.sel] ? state.doc : doc.text).slice(state.span.start, state.span.end);
  const where = doc === state.docs[state.sel] ? "" : ` (in “${doc.title}”)`;
  info.textContent = `Marked: “${text.length > 90 ? text.slice(0, 87) + "…" : text}”${where}`;
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
// Computing: input checks, packages the settings need, then the latest-wins gate to the worker.

const installs = {}; // package -> the worker's install reply (a promise until it arrives)

/** Install, once, what the rows that are on need (`needs`); null when nothing is missing. A failure
 * turns its row off and says why beside it. */
function installNeeds() {
  const missing = PARAMS.filter((p) => p.needs && state[p.name] && applies(p, state) && installs[p.needs.package]?.ok !== true);
  if (!missing.length) return null;
  return Promise.all(missing.map(async (p) => {
    const { package: name, loading, what } = p.needs;
    const note = controls[p.name].note;
    note.dataset.kind = "loading";
    note.textContent = loading;
    installs[name] ??= gate.send({ type: "install", package: name });
    const reply = await installs[name];
    installs[name] = reply;
    if (reply.ok) {
      if (note.dataset.kind === "loading") note.textContent = "";
      return;
    }
    delete installs[name]; // the next time the row is turned on tries again
    state[p.name] = false;
    syncControls();
    scheduleUrl();
    note.dataset.kind = "error";
    note.textContent = `${cap(what)} could not be loaded, so it is off: ${reply.error?.message || "no reason was given"}`;
  }));
}

function inputProblem(s) {
  if (!s.docs.some((d, i) => (i === s.sel ? s.doc : d.text).trim())) {
    return s.docs.length > 1 ? "Every document is empty: paste or type the text to chunk." : "The document is empty: paste or type the text to chunk.";
  }
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
  const installing = installNeeds();
  if (installing) {
    setBodyState("computing");
    await installing;
    if (seq !== sequence) return; // a newer computation (started while this waited) takes over
  }
  const request = buildRequest(state);
  const snap = { doc: state.doc, span: state.span, k: state.k, unit: state.unit, size: state.size, overlap: state.overlap,
    strategy: state.strategy, split_by: state.split_by, ...collectionSnap(state, request) };
  setBodyState("computing");
  // The chunks travel as columns (a tenth of the encoding work in Python); the objects of SPEC
  // section 6 are rebuilt here, so everything below sees the core's response as it is specified.
  const reply = await gate.submit(JSON.stringify({ ...request, wire: "columns" }));
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
  last = { request, response: chunksFromColumns(JSON.parse(reply.result), request.retrieval.k), snap, ms: reply.ms };
  showMessage(null);
  render(last);
  if (!embed && codePanel) codePanel.show(JSON.stringify({ query: request.query, chunking: request.chunking, retrieval: request.retrieval }));
  if (seq === sequence) setBodyState("ready");
}

/** `response.chunk_columns` back into SPEC section 6's `chunks`: the same values, as objects. */
export function chunksFromColumns(response, k) {
  const c = response.chunk_columns;
  if (!c) return response;
  const chunks = new Array(c.start.length);
  for (let i = 0; i < chunks.length; i++) {
    chunks[i] = {
      doc: c.ids[c.doc[i]], number: i + 1, start: c.start[i], end: c.end[i], units: c.units[i],
      score: c.score[i], rank: c.rank[i], retrieved: c.rank[i] <= k, holds: c.holds[i] ?? null,
      overlap_prev: c.overlap_prev[i],
    };
  }
  const { chunk_columns: _, ...rest } = response;
  return { chunks, ...rest };
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
  box.hidden = !snap.span && Boolean(snap.fact); // a marked fact has its own verdict (#fact-verdict)
  picture.setData(response, snap);
  renderOverlapNotice(response, snap);
  renderStats(response, snap, ms);
  renderContext(response, snap);
  renderCollection(response, snap);
}

// Why a splitter may share nothing across a boundary although overlap was asked for.
const NO_OVERLAP_REASONS = {
  "langchain-character": "this splitter only overlaps whole pieces, and these pieces are longer than the overlap.",
  "langchain-recursive": "this splitter only overlaps whole pieces, and these pieces are longer than the overlap.",
  sentences: "sentence packing only overlaps whole sentences, and these sentences are longer than the overlap.",
  haystack: "Haystack repeats whole split units, and a chunk merged by split_threshold or an empty unit repeats nothing.",
};

/** A sentence when overlap was asked for and some boundary got none; hidden otherwise. */
function renderOverlapNotice(response, snap) {
  const el = $("overlap-notice");
  const missed = response.stats.boundaries_without_overlap || 0;
  if (!(snap.overlap > 0 && missed > 0)) { el.hidden = true; el.textContent = ""; return; }
  const of = boundaryCount(response);
  const reason = NO_OVERLAP_REASONS[snap.strategy] || "the splitter's pieces did not allow it.";
  el.textContent = `You asked for ${int(snap.overlap)} ${unitName(snap)} of overlap, but ${int(missed)} of ${int(of)} ` +
    `${plural(of, "boundary", "boundaries")} ${plural(missed, "shares", "share")} nothing: ${reason}`;
  el.hidden = false;
}

// Stats: the <dl> is built once; each render only rewrites the text of its <dd>s.
const STATS = [
  { key: "units_in_documents", label: (s) => `${cap(unitName(s))} in the ${s.docCount > 1 ? `${s.docCount} documents` : "document"}`, show: int },
  { key: "chunks", label: () => "Chunks", show: int },
  { key: "size_overlap", label: () => "Size / overlap", value: (r, s) => [s.size, s.overlap],
    show: ([a, b], s) => `${int(a)} / ${int(b)} ${unitName(s)}` },
  { key: "units_stored", label: (s) => `${cap(unitName(s))} stored across all chunks`, show: int },
  { key: "amplification", label: (s) => `Storage amplification (stored / in the ${s.docCount > 1 ? "documents" : "document"})`, show: (v) => `${v.toFixed(2)}×` },
  { key: "chunks_whole", label: () => "Chunks holding the answer whole", show: int },
  { key: "chunks_part", label: () => "Chunks holding part of it", show: int },
  { key: "retrieved", label: () => "Chunks retrieved", show: int },
  { key: "best_rank", label: () => "Best rank of a chunk holding the answer", show: (v) => (v == null ? "none" : `#${v}`) },
  { key: "context_chars", label: () => "Characters of context", show: int },
  { key: "context_tokens", label: () => "Estimated tokens (characters / 4)", show: int },
  { key: "cost", label: () => "Estimated input cost per query", show: money },
  // What was asked (in the splitter's unit) beside what neighbouring chunks really share (characters).
  { key: ["overlap_asked", "overlap_min", "overlap_median", "overlap_max"], joiners: [" asked / achieved ", ", ", ", "],
    label: () => "Overlap asked / overlap achieved (min, median, max)",
    value: (r, s, ms, key) => (key === "overlap_asked" ? s.overlap : r.stats[key]),
    show: (v, s, key) => (key === "overlap_asked" ? `${int(v)} ${unitName(s)}` : v == null ? "–"
      : key === "overlap_max" ? `${int(v)} characters` : int(v)) },
  { key: ["boundaries_without_overlap", "boundaries"], joiners: [" of "], label: () => "Boundaries with no overlap",
    value: (r, s, ms, key) => (key === "boundaries" ? boundaryCount(r) : r.stats[key]), show: int },
  { key: "ms", label: () => "Recompute time in the worker", value: (r, s, ms) => ms, show: (v) => `${v.toFixed(1)} ms` },
];
const cap = (w) => w[0].toUpperCase() + w.slice(1);
/** Boundaries between neighbouring chunks of one document (each has an `overlap_prev`). */
const boundaryCount = (r) => r.chunks.reduce((n, c) => n + (c.overlap_prev != null), 0);

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
        if (stat.cells.length) dd.append(stat.joiners ? stat.joiners[stat.cells.length - 1] : " / ");
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
      const value = stat.value ? stat.value(response, snap, ms, key) : response.stats[key];
      const cell = stat.cells[i];
      cell.dataset.value = JSON.stringify(value ?? null);
      cell.textContent = value === undefined ? "–" : stat.show(value, snap, key);
    });
  }
  $("stats").closest("section").dataset.ms = String(ms);
}

// The context: retrieved chunks in rank order, the answer marked where it arrives, cuts shown.
function renderContext(response, snap) {
  const box = $("context");
  const items = response.chunks.filter((c) => c.retrieved).sort((a, b) => a.rank - b.rank);
  const nodes = items.map((c) => {
    // Each chunk in its own document's text; the mark is the answer or the fact's stretch there.
    const text = snap.texts[c.doc] ?? snap.doc, map = offsetMap(text), span = snap.marks[c.doc] || null;
    const start = map.toU16(c.start), end = map.toU16(c.end);
    const article = document.createElement("article");
    article.className = "context-chunk";
    const h = document.createElement("h3");
    const holds = c.holds === "whole" ? " · holds the whole answer" : c.holds === "part" ? " · holds part of the answer" : "";
    h.textContent = `Chunk ${c.number} · rank #${c.rank} · score ${c.score.toFixed(3)}${holds}${snap.docCount > 1 ? ` · ${snap.titles[snap.ids.indexOf(c.doc)]}` : ""}`;
    const body = document.createElement("div");
    body.className = "chunk-text";
    const shownEnd = Math.min(end, start + CONTEXT_SHOW_LIMIT);
    const piece = (a, b) => document.createTextNode(text.slice(a, b));
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
      mark.textContent = text.slice(a, b);
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
  strip: "rgba(190,200,212,0.55)", stripHover: "rgba(90,105,120,0.55)", focus: "#ffb000", hover: "#1d232b", text: "#5b6570",
  noOverlap: "#b3261e" };
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
    this.total = response.chunks.length;
    this.span = snap.marks[snap.docId] || null; // the answer, or the marked fact's stretch, in this document
    this.chunks = response.chunks.filter((c) => c.doc === snap.docId) // the selected document; lanes.js shows the rest
      .map((c) => ({ ...c, s: map.toU16(c.start), e: map.toU16(c.end) }));
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
    const stripTop = rowsBottom + 12; // the gap holds the ticks of boundaries without overlap
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
    // Boundaries whose chunks share nothing although overlap was asked for: a red tick down to the
    // strip, labelled 0 where there is room.
    ctx.font = "700 10px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    let lastLabel = -Infinity;
    for (const c of this.snap && this.snap.overlap > 0 ? this.chunks : []) {
      if (c.overlap_prev !== 0) continue;
      const x = Math.round(this.x(c.s));
      ctx.fillStyle = COLORS.noOverlap;
      ctx.fillRect(x - 1, L.rowsBottom - 2, 2, L.stripTop + L.stripH - L.rowsBottom + 2);
      ctx.fillRect(x - 3, L.rowsBottom - 2, 6, 2);
      if (x + 2 - lastLabel >= 12) {
        ctx.fillText("0", x + 3, L.rowsBottom + 5);
        lastLabel = x + 3;
      }
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
      const shared = c.overlap_prev == null ? "" : c.overlap_prev === 0 ? ` · shares nothing with chunk ${c.number - 1}`
        : ` · shares ${int(c.overlap_prev)} ${plural(c.overlap_prev, "character", "characters")} with chunk ${c.number - 1}`;
      head.textContent = `Chunk ${c.number} of ${this.total} · rank #${c.rank} · score ${c.score.toFixed(3)} · ${sent}${holds}${shared}`;
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
// The collection, the fact and the investigation (issue 5). assets/documents.js reads files and
// draws the list, assets/lanes.js one lane per document, assets/investigate.js and
// assets/audit-panel.js the panels; this glue keeps the state they change.

let investigate = null;
let auditPanel = null;
let findTimer = 0;
let panelsTimer = 0;
const PANELS_DELAY = 120; // ms the controls rest before the investigation panels are redrawn
let pendingFocus = null; // {doc, at}: the chunk to focus in the picture after the next render

const selectedId = () => state.docs[state.sel].id;
const textOfDoc = (id) => (id === selectedId() ? state.doc : (state.docs.find((d) => d.id === id) || { text: "" }).text);
const titleOf = (id) => (state.docs.find((d) => d.id === id) || { title: id }).title;
const sweepOverlaps = () => state.overlaps || defaultOverlaps(state.unit);

/** What the drawing needs about the collection, taken when the request is sent. */
function collectionSnap(s, request) {
  const texts = Object.fromEntries(request.documents.map((d) => [d.id, d.text]));
  const docId = s.docs[s.sel].id;
  const marks = {}; // doc id -> {start, end} in UTF-16: the band in the picture, the mark in the context
  let fact = null, factText = null;
  const f = s.fact;
  if (f) {
    const t = texts[f.doc] ?? "";
    const parts = [f.name, f.value].filter(Boolean);
    fact = { doc: f.doc, name: f.name, value: f.value, complete: factComplete(f), cp: request.fact };
    factText = { name: f.name ? t.slice(f.name.start, f.name.end) : "", value: f.value ? t.slice(f.value.start, f.value.end) : "" };
    marks[f.doc] = { start: Math.min(...parts.map((p) => p.start)), end: Math.max(...parts.map((p) => p.end)) };
  }
  if (s.span) marks[s.span.doc ?? docId] = { start: s.span.start, end: s.span.end };
  return {
    docId, texts, marks, fact, factText,
    ids: request.documents.map((d) => d.id),
    titles: request.documents.map((d) => d.title || d.id),
    docCount: request.documents.length,
    findDefault: markedText(s, (id) => texts[id] ?? ""),
    unitName: unitName(s),
  };
}

/** The parts of the page drawn from the collection, after each response. */
function renderCollection(response, snap) {
  const perDoc = new Map(snap.ids.map((id) => [id, { chunks: 0, ranks: [] }]));
  for (const c of response.chunks) {
    const d = perDoc.get(c.doc);
    d.chunks++;
    if (c.retrieved) d.ranks.push(c.rank);
  }
  for (const li of $("doc-list").children) {
    const d = perDoc.get(li.dataset.doc);
    if (!d) continue;
    const ranks = d.ranks.sort((a, b) => a - b).map((r) => `#${r}`).join(" ");
    li.querySelector(".doc-meta").textContent = `${int(d.chunks)} ${plural(d.chunks, "chunk", "chunks")}${ranks ? ` · retrieved ${ranks}` : ""}`;
  }
  const cpBands = {};
  for (const [id, m] of Object.entries(snap.marks)) {
    const map = offsetMap(snap.texts[id] ?? "");
    cpBands[id] = [map.toCp(m.start), map.toCp(m.end)];
  }
  lanes.draw({
    docs: snap.ids.map((id, i) => ({ id, title: snap.titles[i], length: offsetMap(snap.texts[id]).cpLength })),
    chunks: response.chunks, sel: snap.ids.indexOf(snap.docId), bands: cpBands,
  });
  // The panels below the picture follow once the controls rest, so a drag repaints the verdict and
  // the picture without waiting for their layout (they are not shown embedded).
  if (investigate) investigate.renderVerdict(last);
  clearTimeout(panelsTimer);
  const shown = last;
  panelsTimer = setTimeout(() => {
    if (investigate && !embed) investigate.render(shown, sweepOverlaps());
    if (auditPanel) auditPanel.check(shown.request);
  }, PANELS_DELAY);
  if (pendingFocus && pendingFocus.doc === snap.docId) {
    const at = pendingFocus.at;
    pendingFocus = null;
    const i = picture.chunks.findLastIndex((c) => c.start <= at);
    if (i >= 0) {
      picture.focusIndex = i;
      picture.canvas.focus({ preventScroll: true });
      picture.draw();
      picture.describe();
    }
  }
}

/** The list, the caption and the panels' inputs, after the state was replaced or restructured. */
function syncCollection() {
  documents.renderList($("doc-list"), state.docs, state.sel, () => "",
    { select: selectDoc, rename: renameDoc, remove: removeDoc });
  const caption = $("doc-caption");
  caption.hidden = state.docs.length < 2;
  caption.textContent = `The Document box below shows document ${state.sel + 1} of ${state.docs.length}: “${state.docs[state.sel].title}”.`;
  if (investigate) investigate.sync(state, sweepOverlaps());
  showMark();
}

function selectDoc(i) {
  if (i === state.sel || i < 0 || i >= state.docs.length) return;
  state.docs[state.sel] = { ...state.docs[state.sel], text: state.doc };
  state.sel = i;
  state.doc = state.docs[i].text;
  syncControls({ withDoc: true });
  syncCollection();
  changed();
}

function renameDoc(i, title) {
  state.docs[i] = { ...state.docs[i], title: title.trim().slice(0, 200) || `Document ${i + 1}` };
  state.example = null;
  syncCollection();
  changed();
}

function removeDoc(i) {
  if (state.docs.length < 2) return;
  state.docs[state.sel] = { ...state.docs[state.sel], text: state.doc };
  const [gone] = state.docs.splice(i, 1);
  const notes = [];
  if (state.span && state.span.doc === gone.id) { state.span = null; notes.push("the answer mark"); }
  if (state.fact && state.fact.doc === gone.id) { state.fact = null; notes.push("the fact"); }
  if (i < state.sel) state.sel--;
  state.sel = Math.min(state.sel, state.docs.length - 1);
  state.doc = state.docs[state.sel].text;
  state.example = null;
  setMarkInfo(`Removed “${gone.title}”${notes.length ? `, and with it ${notes.join(" and ")}` : ""}.`);
  syncControls({ withDoc: true });
  syncCollection();
  changed();
}

/** True while the page holds only the example it opened with (or one empty document): files replace it. */
const onlyTheExample = () => state.docs.length === 1 && (state.doc === EXAMPLE.text || !state.doc.trim());

function addDocuments(added, problems = []) {
  const list = $("doc-problems");
  list.replaceChildren(...problems.map((p) => { const li = document.createElement("li"); li.textContent = p; return li; }));
  list.hidden = problems.length === 0;
  if (!added.length) return;
  const replace = onlyTheExample();
  if (replace) { state.docs = []; state.span = null; state.fact = null; }
  else state.docs[state.sel] = { ...state.docs[state.sel], text: state.doc };
  const first = state.docs.length;
  for (const d of added) state.docs.push({ id: documents.uniqueId(state.docs, d.name || "doc"), title: d.title, text: d.text });
  state.sel = first;
  state.doc = state.docs[first].text;
  state.example = null;
  setMarkInfo(`Added ${added.length} ${plural(added.length, "document", "documents")}${replace ? " in place of the example" : ""}.`);
  syncControls({ withDoc: true });
  syncCollection();
  changed();
}

async function addFiles(files) {
  if (!files || !files.length) return;
  const room = documents.MAX_DOCUMENTS - (onlyTheExample() ? 0 : state.docs.length);
  const { added, problems } = await documents.readFiles(files, room);
  addDocuments(added, problems);
}

function addEmptyDocument() {
  if (state.docs.length >= documents.MAX_DOCUMENTS) {
    addDocuments([], [`The collection holds at most ${documents.MAX_DOCUMENTS} documents; remove one first.`]);
    return;
  }
  state.docs[state.sel] = { ...state.docs[state.sel], text: state.doc };
  const n = state.docs.length + 1;
  state.docs.push({ id: documents.uniqueId(state.docs, "doc"), title: `Document ${n}`, text: "" });
  state.sel = state.docs.length - 1;
  state.doc = "";
  state.example = null;
  syncControls({ withDoc: true });
  syncCollection();
  changed();
  controls.doc.input.focus();
  setMarkInfo("Paste or type the new document into the Document box; give it a title in the list.");
}

/** The built-in collection and its settings into `s` (assets/collection/index.json). */
function useCollection(s, index, docs) {
  for (const p of PARAMS) if (p.name !== "doc") s[p.name] = p.default;
  Object.assign(s, { unit: index.unit, size: index.size, overlap: index.overlap, k: index.k, q: index.question });
  settle(s);
  const fact = documents.collectionFact(index, docs);
  s.docs = docs;
  s.sel = Math.max(0, docs.findIndex((d) => d.id === (fact ? fact.doc : docs[0].id)));
  s.doc = docs[s.sel].text;
  Object.assign(s, { span: null, fact, example: "collection", find: "", expand: "none", overlaps: null });
}

async function loadExampleCollection() {
  const button = $("load-collection");
  button.disabled = true;
  try {
    const { index, docs } = await documents.loadCollection();
    clearLinkNotes();
    useCollection(state, index, docs);
    strategyMemo = {};
    setMarkInfo(`Loaded “${index.title}”; the fact about ${index.fact.name} is marked.`);
    syncControls({ withDoc: true });
    syncCollection();
    changed();
  } catch (err) {
    addDocuments([], [`The example collection could not be loaded: ${err.message}.`]);
  } finally {
    button.disabled = false;
  }
}

// The fact: a name and a value, marked one after the other in one document.

function markFactPart(part) {
  const ta = controls.doc.input;
  const span = trimSpan(ta.value, ta.selectionStart, ta.selectionEnd);
  const other = part === "name" ? "value" : "name";
  if (!span) { setMarkInfo(`Select the fact's ${part} in the document first, then press the button.`); return; }
  const id = selectedId(), f = state.fact;
  if (f && f[other] && f.doc !== id) {
    setMarkInfo(`The ${other} is marked in “${titleOf(f.doc)}”, and a fact's name and value must be in one document: ` +
      `select the ${part} there, or press “Clear mark” and start again here.`);
    return;
  }
  if (f && f[other] && span.start < f[other].end && f[other].start < span.end) {
    setMarkInfo(`The ${part} overlaps the marked ${other}: mark them as two separate pieces of text.`);
    return;
  }
  state.fact = { doc: id, name: null, value: null, ...(f && f.doc === id ? f : {}), [part]: span };
  clearLinkNotes();
  setMarkInfo(`Marked the selection as the fact's ${part}.`);
  changed();
}

/** Keep the fact on its text while the selected document is edited; drop it when an edit hits it. */
function followFactEdit(old, neu, caret) {
  const f = state.fact;
  if (!f || f.doc !== selectedId()) return;
  const name = f.name && followSpan(old, neu, f.name, caret), value = f.value && followSpan(old, neu, f.value, caret);
  if ((f.name && !name) || (f.value && !value)) {
    state.fact = null;
    setMarkInfo("Fact cleared: your edit changed its name or value. Mark them again.");
  } else {
    state.fact = { ...f, name, value };
  }
}

/** From the audit's list: select the fact's document, mark its name and value, show it in the picture. */
function followFact(f) {
  const i = state.docs.findIndex((d) => d.id === f.doc);
  if (i < 0) { setMarkInfo("That document is no longer in the collection: run the audit again."); return; }
  const text = textOfDoc(f.doc), map = offsetMap(text);
  const u = ([a, b]) => ({ start: map.toU16(a), end: map.toU16(b) });
  const name = u(f.name), value = u(f.value);
  if (text.slice(name.start, name.end) !== f.name_text || text.slice(value.start, value.end) !== f.value_text) {
    setMarkInfo("The document changed since the audit, so the fact is not where it was: run the audit again.");
    return;
  }
  if (i !== state.sel) {
    state.docs[state.sel] = { ...state.docs[state.sel], text: state.doc };
    state.sel = i;
    state.doc = state.docs[i].text;
    syncControls({ withDoc: true });
  }
  state.fact = { doc: f.doc, name, value };
  state.span = null;
  pendingFocus = { doc: f.doc, at: f.name[0] };
  clearLinkNotes();
  setMarkInfo(`Marked the fact “${f.name_text}” … “${f.value_text}” from the audit.`);
  syncCollection();
  changed();
  $("picture-wrap").scrollIntoView({ block: "center" });
  const ta = controls.doc.input;
  ta.setSelectionRange(Math.min(name.start, value.start), Math.max(name.end, value.end));
}

function initCollection() {
  $("add-doc").addEventListener("click", addEmptyDocument);
  $("add-files").addEventListener("change", async (e) => { await addFiles(e.target.files); e.target.value = ""; });
  $("load-collection").addEventListener("click", loadExampleCollection);
  $("mark-name").addEventListener("click", () => markFactPart("name"));
  $("mark-value").addEventListener("click", () => markFactPart("value"));
  // Files dropped anywhere on the page join the collection.
  const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes("Files");
  document.addEventListener("dragover", (e) => { if (hasFiles(e)) { e.preventDefault(); document.body.classList.add("dropping"); } });
  document.addEventListener("dragleave", (e) => { if (!e.relatedTarget) document.body.classList.remove("dropping"); });
  document.addEventListener("drop", (e) => {
    document.body.classList.remove("dropping");
    if (!hasFiles(e)) return;
    e.preventDefault();
    addFiles(e.dataTransfer.files);
  });
  lanes.init($("lanes"), selectDoc);
}

function initPanels() {
  investigate = new Investigate({
    gate, offsetMap, int, money, listNumbers,
    onFind: (value) => { state.find = value; clearTimeout(findTimer); findTimer = setTimeout(changed, 250); },
    onOverlaps: (list) => {
      state.overlaps = list.join() === defaultOverlaps(state.unit).join() ? null : list;
      changed();
    },
    onExpand: (value) => { state.expand = value; changed(); },
  });
  investigate.sync(state, sweepOverlaps());
  auditPanel = new AuditPanel({
    gate, int,
    request: () => buildRequest(state),
    overlaps: sweepOverlaps,
    follow: followFact,
    titles: () => Object.fromEntries(state.docs.map((d) => [d.id, d.title])),
    strategy: () => state.strategy || "window",
  });
}

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
  strategyMemo = {};
  embed = isEmbed;
  document.body.classList.toggle("embed", embed);
  linkNotes = notes;
  showNotes();
  syncControls({ withDoc: true });
  syncCollection();
  compute();
}

async function main() {
  buildControls();
  buildStats();
  picture.init();
  initCollection();
  $("mark-selection").addEventListener("click", markSelection);
  $("clear-mark").addEventListener("click", () => { state.fact = null; setMark(null, "Mark cleared."); });
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
    codePanel = new CodePanel({ send: (m) => gate.send(m), code: $("code"), status: $("code-status"), copy: $("copy-code") });
    initPanels();
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
  sweep: () => (investigate ? investigate.sweepRows : null),
  panelsShown: () => Boolean(investigate && last && (embed || investigate.last === last)),
  audit: () => (auditPanel ? auditPanel.result : null),
});

main();
