// The one parameter table: the controls, the URL state and the request's fields all come from it,
// and the request for the core (SPEC section 6) is built here, in exactly one place.
//
// A new setting is one row of PARAMS: controls.js builds its control, url-state.js reads and
// writes it in links, and buildRequest puts it in the request at its `field`.

import { EXAMPLE } from "./examples.js";
import { offsetMap } from "./offsets.js";
import { factComplete, markedText } from "./spans.js";

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
export const LANGCHAIN = ["langchain-character", "langchain-recursive"];
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
export const bound = (value, state) => (typeof value === "function" ? value(state) : value);
const clamp = (n, lo, hi) => Math.min(Math.max(n, lo), Math.max(lo, hi));

/** The row behind a request field, for the core's errors (`{field, message}`). */
export const FIELD_LABELS = Object.fromEntries(PARAMS.map((p) => [p.field, p]));

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

/** The request for the core (SPEC section 6), built in exactly one place. The embedded page
 * (`embed`) shows none of the investigation panels, so it does not ask for what they draw. */
export function buildRequest(state, { embed = false } = {}) {
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
  // The questions of issue 5 (the investigation panels): the cuts, an exact phrase, context expansion.
  // The embed shows none of those panels, so it does not ask (the cuts cost a second split).
  if (embed) return request;
  request.cuts = true;
  const phrase = state.find.trim() ? state.find : markedText(state, textOf);
  if (phrase.trim()) request.find = phrase;
  if (state.expand !== "none") request.expand = state.expand === "section" ? { section: true } : { neighbours: Number(state.expand) };
  return request;
}

/** A value for `param` from user or URL text, or an error sentence. Numbers are clamped to range. */
export function parseParam(param, raw, state) {
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

export const formatParam = (param, value) => (param.kind === "number" ? Number(value).toFixed(2)
  : param.kind === "check" ? (value ? "1" : "0") : String(value));

/** Keep the state consistent after a change: the size inside the unit's range, overlap below size. */
export function settle(state) {
  // In table order: the size inside its strategy's and unit's range, then overlap (and
  // split_threshold) against the size.
  for (const p of PARAMS) if (p.kind === "range") state[p.name] = clamp(state[p.name], p.min, bound(p.max, state));
}
