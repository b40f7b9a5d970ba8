// The page's state: one plain object the controls write and every request is built from.
//
//   state[param.name]  each row of the parameter table (params.js); state.doc is the selected
//                      document's text, also kept (when not selected) in state.docs
//   state.docs, .sel   the collection and the selected document's index
//   state.span         the marked answer {start, end, doc}, UTF-16 offsets, or null
//   state.spans        a loaded question's spans when its answer needs several places (the first
//                      is state.span; question-wire.js answerSpans), else []
//   state.fact         {doc, name: {start, end} | null, value: {start, end} | null}, UTF-16 offsets
//   state.example      "collection" while the built-in collection is loaded and unedited
//   state.find         the phrase to find; empty means the marked answer
//   state.expand       "none", "1", "2" (neighbouring chunks) or "section"
//   state.overlaps     the sweep's overlaps; null means the unit's default list
//   state.questions    the question set: [{id, query, refs: [{doc, start, end}]}], UTF-16
//   state.mapSizes, .mapOverlaps   the settings map's grid; null means the splitter's default
//   state.map          show the settings map even without a question set (`map=1`)
//   state.index        your index's chunks, from your-index.js: {name, extents: {doc id:
//                      [[start, end], ...] code points}, result: inspect's object}, or null
//   state.indexMode    "index" (the picture and verdict on the stored chunks) or "simulated"
//
// The renderers never see this object: they get a snapshot (below) taken when the request is sent.

import { EXAMPLE } from "./examples.js";
import { PARAMS, bound, settle, unitName } from "./params.js";
import { collectionFact } from "./collection.js";
import { answerSpans } from "./question-wire.js";
import { factComplete, markedText } from "./spans.js";

export const DOC_ID = "doc";

// The overlaps the sweep compares when the user has not typed any, by unit.
export const DEFAULT_SWEEP = { chars: [0, 25, 50, 100, 150, 300], words: [0, 4, 8, 17, 25, 50] };
export const defaultOverlaps = (unit) => DEFAULT_SWEEP[unit === "words" ? "words" : "chars"];
const OVERLAP = PARAMS.find((p) => p.name === "overlap");
/** The largest overlap the splitter takes at this size (Infinity without a size). */
const overlapMax = (s) => (Number.isFinite(s.size) ? bound(OVERLAP.max, s) : Infinity);
/** The overlaps the sweep compares: the typed list (else the unit's default), less those the size
 * cannot take (never empty: 0 always can). */
export function sweepOverlaps(s) {
  const kept = (s.overlaps || defaultOverlaps(s.unit)).filter((o) => o <= overlapMax(s));
  return kept.length ? kept : [0];
}
/** The typed overlaps the sweep leaves out at this size (the default's are left out unsaid). */
export const sweepLeftOut = (s) => (s.overlaps || []).filter((o) => o > overlapMax(s));

export function defaultState() {
  const state = Object.fromEntries(PARAMS.map((p) => [p.name, p.default]));
  const at = EXAMPLE.text.indexOf(EXAMPLE.answer);
  state.span = at >= 0 ? { start: at, end: at + EXAMPLE.answer.length, doc: DOC_ID } : null;
  state.docs = [{ id: DOC_ID, title: "Document", text: state.doc }];
  state.sel = 0;
  state.fact = null;
  state.example = null;
  state.questions = [];
  state.spans = [];
  state.mapSizes = null;
  state.mapOverlaps = null;
  state.map = false;
  state.wanted = {}; // the sliders as the user last set them (params.js settle)
  state.index = null;
  state.indexMode = "simulated";
  state.yourModel = null; // your own embedding model, {endpoint, model}, once "Use this model" is pressed (never saved)
  state.yourReranker = null; // your reranker, {endpoint, model, depth}, once "Use this reranker" is pressed (never saved)
  return state;
}

// The collection -------------------------------------------------------------------------------

export const selectedId = (s) => s.docs[s.sel].id;
export const textOfDoc = (s, id) => (id === selectedId(s) ? s.doc : (s.docs.find((d) => d.id === id) || { text: "" }).text);
export const titleOf = (s, id) => (s.docs.find((d) => d.id === id) || { title: id }).title;

/** The selected document's text (edited in state.doc) back into the list. */
export function stashSelected(s) {
  s.docs[s.sel] = { ...s.docs[s.sel], text: s.doc };
}

/** Select document `i`: its text becomes state.doc. */
export function selectIndex(s, i) {
  stashSelected(s);
  s.sel = i;
  s.doc = s.docs[i].text;
}

/** The built-in collection and its settings into `s` (assets/collection/index.json). */
export function useCollection(s, index, docs) {
  for (const p of PARAMS) if (p.name !== "doc") s[p.name] = p.default;
  s.wanted = {};
  Object.assign(s, { unit: index.unit, size: index.size, overlap: index.overlap, k: index.k, q: index.question });
  settle(s);
  const fact = collectionFact(index, docs);
  s.docs = docs;
  s.sel = Math.max(0, docs.findIndex((d) => d.id === (fact ? fact.doc : docs[0].id)));
  s.doc = docs[s.sel].text;
  Object.assign(s, { span: null, fact, example: "collection", find: "", expand: "none", overlaps: null });
}

// The snapshot the renderers draw from ----------------------------------------------------------

/** What the drawing needs, taken when `request` is sent: the settings it shows, every text sent,
 * the marks in UTF-16 (`marks`: doc id -> the answer, or the fact's name-to-value stretch). */
export function snapshot(s, request) {
  const texts = Object.fromEntries(request.documents.map((d) => [d.id, d.text]));
  const docId = s.docs[s.sel].id;
  const marks = {};
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
  const spans = answerSpans(s), bands = {}; // every span of the answer, by document (the picture's bands)
  for (const sp of spans) (bands[sp.doc] ??= []).push({ start: sp.start, end: sp.end });
  // Your index's chunks are counted in characters and have no size or overlap asked for.
  const stored = request.chunking.strategy === "stored";
  const asked = stored ? { unit: "chars", size: 0, overlap: 0 } : { unit: s.unit, size: s.size, overlap: s.overlap };
  if (!stored && request.chunking.overlap === undefined) asked.overlap = 0; // a splitter without overlap (the semantic ones): no "0" ticks
  return {
    spans, bands,
    doc: s.doc, span: s.span, hit: Boolean(s.spanHit), k: s.k, ...asked, strategy: s.strategy, split_by: s.split_by,
    docId, texts, marks, fact, factText,
    ids: request.documents.map((d) => d.id),
    titles: request.documents.map((d) => d.title || d.id),
    docCount: request.documents.length,
    findDefault: markedText(s, (id) => texts[id] ?? ""),
    unitName: unitName({ ...s, ...asked }),
    overlaps: sweepOverlaps(s), // the overlaps the sweep compares
    overlapsLeftOut: sweepLeftOut(s), // typed ones the size cannot take (said under the sweep)
    stored, // the bars are your index's chunks, not a splitter's
    index: s.index, // your index's inspection, or null; replaced whole, never changed in place
  };
}


/** Whether the documents hold text of the user's own (not the built-in example or collection,
 * not empty): what a button or a link that replaces the documents must ask about first. */
export function hasOwnText(state) {
  if (state.example === "collection") return false;
  return state.docs.some((d, i) => {
    const text = i === state.sel ? state.doc : d.text;
    return Boolean(text && text.trim()) && text !== EXAMPLE.text;
  });
}

/** The example replaced by text of the user's own (pasted, dropped or opened over it): its question
 * goes with it, since a question about Tidewater's snapshots would only mislead. True when it went. */
export function dropExampleQuestion(state) {
  if (state.q !== EXAMPLE.question) return false;
  state.q = "";
  return true;
}

export const QUESTION_WENT = "the example's question went with it: type your own question";
