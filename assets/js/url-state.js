// The page's state in the URL fragment: plain `doc=..&q=..` or, when long,
// `z=<base64url(deflate-raw(plain))>`. Reading a link never fails: each part that cannot be used
// becomes a sentence (a "link note") saying what was shown instead.
//
// The parameters are the rows of the parameter table (params.js) plus `answer` or `span` (the
// marked answer) and the collection's own (below). A new URL parameter that is a setting is a row
// of that table; one that is not goes into collectionToParams and finishFromParams here.

import { CONTROL_ROWS, applies, bound, formatParam, parseParam, settle, splitterOf } from "./params.js";
import { defaultState, useCollection } from "./state.js";
import { loadCollection, MAX_DOCUMENTS } from "./collection.js";
import { offsetMap } from "./offsets.js";
import { factComplete, trimSpan } from "./spans.js";
import { questionsFromLink, questionsToLink, textsOf } from "./question-wire.js";

const COMPRESS_OVER = 1000; // fragments longer than this go into `z`, deflated
const LINK_DOC_LIMIT = 200_000; // longer documents are left out of links (a URL cannot carry them)
const INFLATE_LIMIT = 20_000_000; // refuse compressed fragments that inflate beyond this (bytes)

function plainFragment(state, notes) {
  const params = new URLSearchParams();
  const withDoc = state.doc.length <= LINK_DOC_LIMIT;
  if (!withDoc) notes.push("The document is too long to travel in a link, so the link carries the settings only.");
  for (const p of CONTROL_ROWS) {
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
  const given = CONTROL_ROWS.filter((p) => params.has(p.name));
  // A link that carries documents wins over the state stored in the browser.
  const hasDocs = params.has("doc") || params.has("docs") || params.get("example") === "collection";
  const collection = await collectionFromParams(state, params, notes); // example=collection, docs=
  if (given.length === 0 && !params.has("answer") && !params.has("span") && !collection) return { state, embed, notes, hasDocs };
  settingsFromParams(state, params, notes);
  if (params.has("doc") || params.has("answer") || params.has("span")) state.span = null;
  if (params.has("answer") || params.has("span")) answerFromParams(state, params, notes);
  else if (!params.has("doc") && !collection) state.span = defaultState().span; // settings only: the example and its marked answer
  finishFromParams(state, params, notes);
  return { state, embed, notes, hasDocs };
}

/** The rows of the parameter table, in table order, so `overlap` is clamped against the size and
 * unit already read. */
export function settingsFromParams(state, params, notes) {
  for (const p of CONTROL_ROWS) {
    if (!params.has(p.name)) continue;
    const raw = params.get(p.name);
    const most = p.name === "overlap" ? bound(p.max, state) : Infinity;
    if (p.name === "overlap" && /^\s*\d{1,9}\s*$/.test(raw) && parseInt(raw, 10) > most) {
      state.overlap = most;
      const rule = splitterOf(state).overlap_below_size ? "smaller than" : "no larger than";
      notes.push(`The link asked for overlap ${parseInt(raw, 10)} with chunk size ${state.size}; overlap must be ${rule} the chunk size, so it is ${state.overlap}.`);
      continue;
    }
    const { value, error } = parseParam(p, raw, state);
    if (error) notes.push(`${error} Using ${formatParam(p, state[p.name])} instead.`);
    else if (p.onSet) p.onSet(state, value);
    else state[p.name] = value;
  }
  settle(state);
}

/** The marked answer in the selected document: `answer` (its text) or `span` (code points). */
function answerFromParams(state, params, notes) {
  if (params.has("answer")) {
    const answer = params.get("answer").trim();
    const at = answer ? state.doc.indexOf(answer) : -1;
    if (at >= 0) state.span = { start: at, end: at + answer.length };
    else notes.push("The answer text in the link does not occur in the document, so no answer is marked.");
    return;
  }
  const m = /^(\d{1,9})-(\d{1,9})$/.exec(params.get("span").trim());
  const map = offsetMap(state.doc);
  if (!m) notes.push("The link's answer span is not of the form start-end, so no answer is marked.");
  else if (!(+m[1] < +m[2] && +m[2] <= map.cpLength)) {
    notes.push(`The link marks characters ${m[1]} to ${m[2]}, which do not exist in this ${map.cpLength}-character document, so no answer is marked.`);
  } else {
    state.span = trimSpan(state.doc, map.toU16(+m[1]), map.toU16(+m[2]));
    if (!state.span) notes.push("The link's answer span holds only spaces, so no answer is marked.");
  }
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
  questionsToParams(state, params, notes);
}

// The question set and the settings map: `qs=[[id, query, [[doc, start, end], ...]], ...]`
// (code points) when it fits in a link, `msizes`, `moverlaps` (the map's grid, when not the
// default) and `map=1` (show the map without a question set; the embed shows it only then).
function questionsToParams(state, params, notes) {
  if (state.questions.length) {
    const qs = questionsToLink(state);
    if (qs) params.set("qs", qs);
    else notes.push("The question set is too long to travel in a link, so the link leaves it out; export it as JSON instead.");
  }
  if (state.mapSizes) params.set("msizes", state.mapSizes.join(","));
  if (state.mapOverlaps) params.set("moverlaps", state.mapOverlaps.join(","));
  if (state.map) params.set("map", "1");
}

function questionsFromParams(state, params, notes) {
  if (params.has("qs")) {
    const read = questionsFromLink(params.get("qs"), textsOf(state));
    if (!read) notes.push("The link's question set could not be read, so it is left out.");
    else {
      state.questions = read.questions;
      if (read.dropped) notes.push(`${read.dropped} of the link's question spans do not fit the documents, so they are left out.`);
    }
  }
  const list = (name, min) => {
    // decimals: LangChain's threshold amounts (a semantic chunker's map)
    const nums = (params.get(name) || "").split(",").filter((x) => /^\d{1,6}(\.\d{1,4})?$/.test(x)).map(Number).filter((n) => n >= min);
    return nums.length ? [...new Set(nums)] : null;
  };
  state.mapSizes = list("msizes", 1);
  state.mapOverlaps = list("moverlaps", 0);
  if (state.mapSizes && state.mapOverlaps && state.mapSizes.length * state.mapOverlaps.length > 400) {
    notes.push("The link's settings map has more than 400 cells, so the default grid is used.");
    state.mapSizes = state.mapOverlaps = null;
  }
  state.map = params.get("map") === "1";
}

/** Before the settings are read: the documents of `example=collection` or `docs=`; true if either. */
async function collectionFromParams(state, params, notes) {
  if (params.get("example") === "collection") {
    try {
      const { index, docs } = await loadCollection();
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
      if (Array.isArray(raw) && raw.length >= 1 && raw.length <= MAX_DOCUMENTS &&
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
  questionsFromParams(state, params, notes);
}

