// The one parameter table: the controls, the URL state and the request's fields all come from it,
// and the request for the core (SPEC section 6) is built here, in exactly one place.
//
// A new setting is one row of PARAMS: controls.js builds its control, url-state.js reads and
// writes it in links, and buildRequest puts it in the request at its `field`.

import { EXAMPLE } from "./examples.js";
import { offsetMap } from "./offsets.js";
import { factComplete, markedText } from "./spans.js";
import { questionsForRequest } from "./question-wire.js";

// `max` may be a function of the state (overlap stays below size; the size range follows the unit).


const UNIT_NAMES = { words: "words", chars: "characters", tokens: "tokens" };

// Splitters (SPEC section 7) by the names people know them by.
const STRATEGY_NAMES = {
  window: "Fixed windows (ragsim)",
  "langchain-character": "LangChain CharacterTextSplitter",
  "langchain-recursive": "LangChain RecursiveCharacterTextSplitter",
  haystack: "Haystack DocumentSplitter",
  sentences: "Sentence packing (ragsim)",
  "langchain-token": "LangChain TokenTextSplitter",
  "llamaindex-sentence": "LlamaIndex SentenceSplitter",
  "llamaindex-token": "LlamaIndex TokenTextSplitter",
  "llamaindex-markdown": "LlamaIndex MarkdownNodeParser",
};
export const LANGCHAIN = ["langchain-character", "langchain-recursive"];
// The strategies that count tiktoken tokens whatever the unit (SPEC section 9), and LlamaIndex's two sized ones.
const TOKEN_STRATEGIES = ["langchain-token", "llamaindex-sentence", "llamaindex-token"];
const LLAMAINDEX_SIZED = ["llamaindex-sentence", "llamaindex-token"];
// The rank files the worker can load (build.py puts them in dist/tiktoken/); "" counts characters / 4.
const TOKENIZERS = { cl100k_base: "cl100k_base", o200k_base: "o200k_base" };
const COUNTERS = { "": "estimate (characters ÷ 4)", ...TOKENIZERS };
const LENGTHS = { chars: "len (characters)", tokens: "tiktoken (from_tiktoken_encoder)" };
// What SimpleDirectoryReader leaves in a document's metadata for the node parser (the other file_*
// and date keys it adds are excluded from the embed and LLM strings): the file's path. The page
// uses one fixed path for every document; edit it to your own (its tokens come off chunk_size).
export const DEFAULT_METADATA = "file_path: data/document.txt";
// PyPDFLoader's mode: one document per page (its default) or one per file (pages joined by "\n\f").
const PDF_MODES = { page: "page (one per page)", single: "single (one per file)" };
const OWN_UNIT = ["window", "sentences"]; // the strategies that count in the `unit` the user picks
// Haystack's split_by -> the unit its split_length counts (ragsim/splitters/haystack.py SPLIT_BY).
const SPLIT_BY = { word: "words", passage: "passages", line: "lines", period: "sentences", page: "pages" };
// LangChain's language presets (ragsim/splitters/langchain_recursive.py LANGUAGES); "" = the separators list.
const LANGUAGES = Object.fromEntries(["", "markdown", "python", "js", "ts", "html", "rst", "latex", "java", "go", "rust", "c", "cpp"]
  .map((l) => [l, l || "none: use separators"]));
const KEEP_SEPARATOR = { false: "False", true: "True (= start)", start: "start", end: "end" };
const METHODS = { bm25: "BM25", dense: "Dense (all-MiniLM-L6-v2)", hybrid: "Hybrid (BM25 + dense, RRF)" };
const DENSE_MODELS = { fp32: "exact (fp32, 90 MB download)", q8: "int8 (approximate, 23 MB download)" };
const VARIANTS = { lucene: "Lucene (as Elasticsearch)", robertson: "Robertson", atire: "ATIRE", bm25l: "BM25L", "bm25+": "BM25+" };

/** The unit a strategy's size and overlap count in, as the library counts it. */
export function unitName(s) {
  if (TOKEN_STRATEGIES.includes(s.strategy) || (s.strategy === "langchain-recursive" && s.length === "tokens")) return "tokens";
  if (LANGCHAIN.includes(s.strategy) || s.strategy === "llamaindex-markdown") return "characters";
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
  { name: "length", label: "length_function", kind: "choice", default: "chars", choices: LENGTHS, field: "chunking.length",
    embed: false, strategies: ["langchain-recursive"], wire: (v) => (v === "tokens" ? v : undefined) },
  { name: "tokenizer", label: "tokenizer", kind: "choice", default: "cl100k_base", choices: TOKENIZERS, field: "chunking.tokenizer",
    embed: false, strategies: ["window", "langchain-recursive", ...TOKEN_STRATEGIES],
    when: (s) => (s.strategy === "window" ? s.unit === "tokens" : s.strategy === "langchain-recursive" ? s.length === "tokens" : true),
    needs: { tokenizer: (s) => s.tokenizer } },
  { name: "size", label: "Chunk size", kind: "range", min: 1, step: 1, inUnits: true, field: "chunking.size", embed: true,
    libLabel: { langchain: "chunk_size", haystack: "split_length", "langchain-token": "chunk_size", "llamaindex-sentence": "chunk_size", "llamaindex-token": "chunk_size" },
    default: 24, defaults: { "langchain-character": 4000, "langchain-recursive": 4000, haystack: 200, sentences: 40,
      "langchain-token": 4000, "llamaindex-sentence": 1024, "llamaindex-token": 1024 },
    max: (s) => (LANGCHAIN.includes(s.strategy) || TOKEN_STRATEGIES.includes(s.strategy) ? 8000
      : s.strategy === "haystack" ? (s.split_by === "word" ? 1000 : 100) : s.unit === "chars" ? 4000 : s.unit === "tokens" ? 2000 : 400),
    when: (s) => s.strategy !== "llamaindex-markdown" }, // MarkdownNodeParser has no size: a section is as long as it is
  { name: "overlap", label: "Overlap", kind: "range", min: 0, step: 1, inUnits: true, field: "chunking.overlap", embed: true,
    libLabel: { langchain: "chunk_overlap", haystack: "split_overlap", "langchain-token": "chunk_overlap", "llamaindex-sentence": "chunk_overlap", "llamaindex-token": "chunk_overlap" },
    default: 6, defaults: { "langchain-character": 200, "langchain-recursive": 200, haystack: 0, sentences: 10,
      "langchain-token": 200, "llamaindex-sentence": 200, "llamaindex-token": 20 },
    // LangChain's character splitters and LlamaIndex allow overlap == size; the token windows need it smaller
    max: (s) => (LANGCHAIN.includes(s.strategy) || LLAMAINDEX_SIZED.includes(s.strategy) ? s.size : s.size - 1),
    when: (s) => s.strategy !== "llamaindex-markdown" },
  { name: "split_threshold", label: "split_threshold", kind: "range", default: 0, min: 0, max: (s) => s.size, step: 1,
    field: "chunking.split_threshold", embed: false, strategies: ["haystack"] },
  { name: "language", label: "language preset", kind: "choice", default: "", choices: LANGUAGES, field: "chunking.language",
    embed: false, strategies: ["langchain-recursive"], wire: (v) => v || undefined },
  { name: "separators", label: "separators", kind: "json", shape: "strings", default: '["\\n\\n", "\\n", " ", ""]',
    field: "chunking.separators", embed: false, strategies: ["langchain-recursive"], when: (s) => !s.language, wire: JSON.parse },
  { name: "separator", label: "separator", kind: "json", shape: "string", default: JSON.stringify("\n\n"),
    defaults: { "llamaindex-sentence": JSON.stringify(" "), "llamaindex-token": JSON.stringify(" ") },
    field: "chunking.separator", embed: false, strategies: ["langchain-character", ...LLAMAINDEX_SIZED], wire: JSON.parse },
  { name: "paragraph_separator", label: "paragraph_separator", kind: "json", shape: "string", default: JSON.stringify("\n\n\n"),
    field: "chunking.paragraph_separator", embed: false, strategies: ["llamaindex-sentence"], wire: JSON.parse },
  { name: "secondary_chunking_regex", label: "secondary_chunking_regex", kind: "json", shape: "string",
    default: JSON.stringify("[^,.;。？！]+[,.;。？！]?|[,.;。？！]"), field: "chunking.secondary_chunking_regex", embed: false,
    strategies: ["llamaindex-sentence"], wire: JSON.parse },
  { name: "backup_separators", label: "backup_separators", kind: "json", shape: "strings", default: '["\\n"]',
    field: "chunking.backup_separators", embed: false, strategies: ["llamaindex-token"], wire: JSON.parse },
  { name: "metadata", label: "metadata string (its tokens come off chunk_size)", kind: "json", shape: "string",
    default: JSON.stringify(DEFAULT_METADATA), field: "chunking.metadata", embed: false, strategies: LLAMAINDEX_SIZED,
    wire: (v) => JSON.parse(v) || undefined },
  { name: "is_separator_regex", label: "is_separator_regex", kind: "check", default: false, field: "chunking.is_separator_regex",
    embed: false, strategies: LANGCHAIN, when: (s) => !(s.strategy === "langchain-recursive" && s.language) },
  { name: "keep_separator", label: "keep_separator", kind: "choice", default: "false", defaults: { "langchain-recursive": "true" },
    choices: KEEP_SEPARATOR, field: "chunking.keep_separator", embed: false, strategies: LANGCHAIN,
    wire: (v) => (v === "true" ? true : v === "false" ? false : v) },
  { name: "strip_whitespace", label: "strip_whitespace", kind: "check", default: true, field: "chunking.strip_whitespace",
    embed: false, strategies: LANGCHAIN },
  { name: "k", label: "Top k", kind: "range", default: 2, min: 1, max: 50, step: 1, field: "retrieval.k", embed: true },
  // Dense and hybrid retrieval (issue 13, SPEC section 10): the page embeds with its own worker
  // (dense-client.js); `model` is not sent to the core, which takes the cosines the page computed.
  { name: "method", label: "Retriever", kind: "choice", default: "bm25", choices: METHODS, field: "retrieval.method", embed: false,
    wire: (v) => (v === "bm25" ? undefined : v), needs: { dense: true } },
  { name: "model", label: "Embedding model", kind: "choice", default: "fp32", choices: DENSE_MODELS, field: "embedding.model",
    embed: false, when: (s) => s.method !== "bm25" },
  { name: "rrf_c", label: "RRF c", kind: "number", default: 60, min: 0, max: 1000000, step: 1, field: "retrieval.rrf_c",
    group: "retrieval", embed: false, when: (s) => s.method === "hybrid" },
  { name: "w_bm25", label: "BM25 weight", kind: "number", default: 0.5, min: 0, max: 1, step: 0.05, field: "retrieval.weights.0",
    group: "retrieval", embed: false, when: (s) => s.method === "hybrid" },
  { name: "w_dense", label: "Dense weight", kind: "number", default: 0.5, min: 0, max: 1, step: 0.05, field: "retrieval.weights.1",
    group: "retrieval", embed: false, when: (s) => s.method === "hybrid" },
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
  { name: "count", label: "Count tokens with", kind: "choice", default: "", choices: COUNTERS, field: "tokenizer", embed: false,
    wire: (v) => v || undefined, needs: { tokenizer: (s) => s.count } },
  { name: "pdf_mode", label: "PDFs: PyPDFLoader mode", kind: "choice", default: "page", choices: PDF_MODES, field: "loader.mode",
    embed: false },
  { name: "price", label: "Price per million tokens", kind: "number", default: 3, min: 0, max: 10000, step: 0.01,
    field: "price_per_million" },
];
export const bound = (value, state) => (typeof value === "function" ? value(state) : value);
const clamp = (n, lo, hi) => Math.min(Math.max(n, lo), Math.max(lo, hi));

/** The row behind a request field, for the core's errors (`{field, message}`). */
export const FIELD_LABELS = Object.fromEntries(PARAMS.map((p) => [p.field, p]));
FIELD_LABELS["retrieval.weights"] = FIELD_LABELS["retrieval.weights.0"]; // the core names the list
FIELD_LABELS["retrieval.similarities"] = FIELD_LABELS["retrieval.method"];

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

/** Hybrid's two weight rows (`weights.0`, `weights.1`) as the core's list [bm25, dense]. */
function withWeights(r) {
  if (r.weights) r.weights = [r.weights[0], r.weights[1]];
  return r;
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
  forgetWanted(state);
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
    retrieval: withWeights(fieldsUnder("retrieval", state)),
    span: span ? { doc: spanDoc, start: span[0], end: span[1] } : null,
    fact,
    price_per_million: state.price,
  };
  const count = PARAMS.find((p) => p.name === "count");
  if (state.count) request.tokenizer = count.wire(state.count); // exact context_tokens and cost (SPEC section 9)
  // The question set (issue 11, SPEC section 8): the questions whose spans still fit. Dense and
  // hybrid rank each question's query by its own cosines (dense-client.js sends them).
  const questions = questionsForRequest(state);
  if (questions.length) request.questions = questions;
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

/** The tiktoken rank files a request from this state needs loaded first: names, no repeats. */
export function tokenizersNeeded(state) {
  const names = PARAMS.filter((p) => p.needs && p.needs.tokenizer && applies(p, state)).map((p) => p.needs.tokenizer(state));
  return [...new Set(names.filter(Boolean))];
}

/** Keep the state consistent after a change: the size inside the unit's range, overlap below size.
 * A slider's value as the user last set it (`state.wanted`) is what is clamped, so an overlap held
 * down by a small size comes back once the size allows it again (issue 23). */
export function settle(state) {
  // In table order: the size inside its strategy's and unit's range, then overlap (and
  // split_threshold) against the size.
  for (const p of PARAMS) {
    if (p.kind !== "range") continue;
    const want = (state.wanted ? state.wanted[p.name] : undefined) ?? state[p.name];
    state[p.name] = clamp(want, p.min, bound(p.max, state));
    if (state[p.name] !== want) state.wanted = { ...state.wanted, [p.name]: want }; // held, not forgotten
  }
}

/** Forget what the user set (a new splitter, a map cell, a collection: the values set there win). */
export function forgetWanted(state) {
  state.wanted = {};
}

/** The rows held below what the user set: [{param, wanted}] (the overlap under a small size). */
export function heldRows(state) {
  const w = state.wanted || {};
  return PARAMS.filter((p) => p.kind === "range" && applies(p, state) && w[p.name] !== undefined && w[p.name] > state[p.name])
    .map((p) => ({ param: p, wanted: w[p.name] }));
}
