// Nothing lost: the page's whole state (documents, question, marks, settings, the
// panels' settings) kept in this browser's IndexedDB, whatever its size, and as a file the user
// downloads ("Download state") and reads back ("Load state…").
//
// Precedence at load: a URL fragment that carries documents (doc=, docs=, or
// example=collection) wins, since someone sent that link to be seen; otherwise the stored state comes
// back, with the settings and question of a fragment that has them on top (a settings-only link,
// or the page's own fragment for documents too long for a link). An embedded page (#embed=1) never
// reads or writes the stored state.
//
// The saved form, the same in IndexedDB and in the file (one JSON object):
//   {ragsim: "state", version: 1, saved: ISO time, docs: [{id, title, text}], sel,
//    settings: {name: value} (the parameter table's rows, "doc" excepted), span, fact, find, expand,
//    overlaps, example}
// Read back through the same checks as a link: settings by parseParam, marks inside their document,
// anything unusable dropped with a sentence saying so.

import { CONTROL_ROWS, settle } from "./params.js";
import { downloadFile } from "./dom.js";
import { defaultState } from "./state.js";
import { readSavedIndex } from "./saved-index.js";
import { MAX_DOCUMENTS } from "./collection.js";
import { settingsFromParams } from "./url-state.js";
import { MAX_CHARS, totalChars } from "./limits.js";
import { refFits, textsOf } from "./question-wire.js";
import { BIG_CHARS, megabytes, progress } from "./big-text.js";

const DB = "ragsim", STORE = "state", KEY = "current";
const SAVE_DELAY = 800; // ms after the last change
export const MAX_STATE_FILE_BYTES = 64 * 1024 * 1024; // a state file read back: the documents' limit as JSON

/** The state as saved (plain data, structured-cloneable and JSON-able). */
export function toSaved(s) {
  const settings = {};
  for (const p of CONTROL_ROWS) if (p.name !== "doc") settings[p.name] = s[p.name];
  return {
    ragsim: "state", version: 1, saved: new Date().toISOString(),
    docs: s.docs.map((d, i) => ({ id: d.id, title: d.title, text: i === s.sel ? s.doc : d.text })),
    sel: s.sel, settings, span: s.span, fact: s.fact, find: s.find, expand: s.expand, overlaps: s.overlaps,
    example: s.example === "collection" ? "collection" : null,
    // The question set (UTF-16, as the state holds it) and the map's grid: any size, unlike a link.
    questions: s.questions, mapSizes: s.mapSizes, mapOverlaps: s.mapOverlaps, map: Boolean(s.map),
    // your index's chunks as placed (their extents and the inspection), and the mode
    index: s.index, indexMode: s.indexMode,
  };
}

const isInt = (n) => Number.isInteger(n) && n >= 0;
const spanIn = (text, x) => x && typeof x === "object" && isInt(x.start) && isInt(x.end) && x.start < x.end && x.end <= text.length;

/** A saved state back into a page state: {state, notes} or {problem: sentence}. */
export function fromSaved(obj) {
  if (!obj || typeof obj !== "object" || obj.ragsim !== "state" || obj.version !== 1) {
    return { problem: "This file is not a ragsim state (use a file made with “Download state”)." };
  }
  const docs = obj.docs;
  const docOk = (d) => d && typeof d.id === "string" && d.id && typeof d.title === "string" && typeof d.text === "string";
  if (!Array.isArray(docs) || docs.length < 1 || docs.length > MAX_DOCUMENTS || !docs.every(docOk) ||
      new Set(docs.map((d) => d.id)).size !== docs.length) {
    return { problem: `The state's documents cannot be read (it needs 1 to ${MAX_DOCUMENTS} documents, each with an id, a title and a text).` };
  }
  const total = docs.reduce((n, d) => n + d.text.length, 0);
  if (total > MAX_CHARS) {
    return { problem: `The state's documents hold ${total.toLocaleString("en-US")} characters, more than the page's limit of ${MAX_CHARS.toLocaleString("en-US")}.` };
  }
  const notes = [];
  const state = defaultState();
  state.docs = docs.map((d) => ({ id: d.id, title: d.title.slice(0, 200), text: d.text }));
  state.sel = isInt(obj.sel) && obj.sel < docs.length ? obj.sel : 0;
  state.doc = state.docs[state.sel].text;
  const settings = obj.settings && typeof obj.settings === "object" ? obj.settings : {};
  const params = new URLSearchParams();
  for (const p of CONTROL_ROWS) {
    const v = settings[p.name];
    if (p.name !== "doc" && ["string", "number", "boolean"].includes(typeof v)) params.set(p.name, String(v));
  }
  settingsFromParams(state, params, notes);
  const textOf = (id) => (state.docs.find((d) => d.id === id) || { text: "" }).text;
  const span = obj.span;
  state.span = null;
  if (span && typeof span.doc === "string" && spanIn(textOf(span.doc), span)) state.span = { start: span.start, end: span.end, doc: span.doc };
  else if (span) notes.push("The saved answer mark does not fit its document, so no answer is marked.");
  const f = obj.fact;
  if (f && typeof f.doc === "string") {
    const t = textOf(f.doc);
    const part = (x) => (spanIn(t, x) ? { start: x.start, end: x.end } : null);
    const name = part(f.name), value = part(f.value);
    if ((name || value) && (!f.name || name) && (!f.value || value)) state.fact = { doc: f.doc, name, value };
    else notes.push("The saved fact does not fit its document, so no fact is marked.");
  }
  if (typeof obj.find === "string") state.find = obj.find.slice(0, 2000);
  if (["none", "1", "2", "section"].includes(obj.expand)) state.expand = obj.expand;
  if (Array.isArray(obj.overlaps) && obj.overlaps.length && obj.overlaps.length <= 12 && obj.overlaps.every((n) => isInt(n) && n < 1e6)) {
    state.overlaps = [...new Set(obj.overlaps)];
  }
  state.example = obj.example === "collection" ? "collection" : null;
  readSavedQuestions(state, obj, notes);
  Object.assign(state, readSavedIndex(obj, state.docs, notes) || {});
  return { state, notes };
}

/** The saved question set and map grid, each reference kept only while it still fits its document. */
function readSavedQuestions(state, obj, notes) {
  if (Array.isArray(obj.questions)) {
    const texts = textsOf(state);
    const refOk = (r) => r && typeof r.doc === "string" && isInt(r.start) && isInt(r.end) && refFits(texts, r);
    const ids = new Set();
    state.questions = obj.questions.slice(0, 2000)
      .filter((q) => q && typeof q.id === "string" && typeof q.query === "string" && Array.isArray(q.refs) && !ids.has(q.id) && ids.add(q.id))
      .map((q) => ({ id: q.id, query: q.query, refs: q.refs.filter(refOk).map((r) => ({ doc: r.doc, start: r.start, end: r.end })) }));
    if (state.questions.length < obj.questions.length) notes.push("Some saved questions could not be read, so they are left out.");
  }
  const grid = (xs, min) => (Array.isArray(xs) && xs.length && xs.length <= 400 && xs.every((n) => isInt(n) && n >= min && n < 1e6) ? [...new Set(xs)] : null);
  state.mapSizes = grid(obj.mapSizes, 1);
  state.mapOverlaps = grid(obj.mapOverlaps, 0);
  if (state.mapSizes && state.mapOverlaps && state.mapSizes.length * state.mapOverlaps.length > 400) state.mapSizes = state.mapOverlaps = null;
  state.map = obj.map === true;
}

// IndexedDB ------------------------------------------------------------------------------------

function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function transact(mode, work) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

export class Persist {
  /** store: {state, embed}; onLoad(state, notes): make a state read from a file the page's;
   * info(sentence): a note in the mark line. */
  constructor({ store, onLoad, info }) {
    Object.assign(this, { store, onLoad, info });
    this.timer = 0;
    this.saving = Promise.resolve();
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") this.flush(); });
  }

  /** At load: the state to show, from the link's (`fromLink`, `notes`, `hasDocs`: the link carries
   * documents) and the stored one. */
  async restore(fromLink, notes, hasDocs) {
    const d = defaultState();
    const stored = hasDocs ? null : await this.stored();
    if (!stored || stored.problem) return { state: fromLink, notes };
    const state = stored.state;
    for (const p of CONTROL_ROWS) if (p.name !== "doc" && fromLink[p.name] !== d[p.name]) state[p.name] = fromLink[p.name];
    settle(state);
    return { state, notes: [...notes, ...stored.notes] };
  }

  /** The stored state, or null (none, unreadable, or storage unavailable). */
  async stored() {
    if (this.store.embed || typeof indexedDB === "undefined") return null;
    try {
      const saved = await transact("readonly", (os) => os.get(KEY));
      return saved ? fromSaved(saved) : null;
    } catch (err) {
      console.warn("The stored state could not be read:", err);
      return null;
    }
  }

  /** Save after the changes rest. */
  schedule() {
    if (this.store.embed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), SAVE_DELAY);
  }

  /** Save now (resolves when written). A collection over the page's limit is not saved: the last
   * state within it stays. */
  flush() {
    clearTimeout(this.timer);
    if (this.store.embed || typeof indexedDB === "undefined") return this.saving;
    const s = this.store.state;
    if (totalChars(s) > MAX_CHARS) return this.saving;
    const saved = toSaved(s);
    this.saving = this.saving.then(() => transact("readwrite", (os) => os.put(saved, KEY))).catch((err) => {
      console.warn("The state could not be stored:", err);
      this.info("This browser did not let the page store your documents (private mode or full storage?): use “Download state” to keep them.");
    });
    return this.saving;
  }

  /** "Download state": the whole state as a JSON file. */
  download() {
    downloadFile(new Blob([JSON.stringify(toSaved(this.store.state))], { type: "application/json" }), "ragsim-state.json");
    this.info("State downloaded as ragsim-state.json: “Load state…” reads it back, here or in another browser.");
  }

  /** "Load state…": a file made by download(). */
  async load(file) {
    if (!file) return;
    if (file.size > MAX_STATE_FILE_BYTES) {
      this.info(`“${file.name}” was not loaded: a state file is at most ${MAX_STATE_FILE_BYTES / 1024 / 1024} MB.`);
      return;
    }
    const big = file.size > BIG_CHARS;
    if (big) progress.say(`Reading the state in “${file.name}” (${megabytes(file.size)})…`);
    let obj;
    try { obj = JSON.parse(await file.text()); } catch { obj = null; }
    const { state, notes, problem } = obj ? fromSaved(obj) : { problem: "This file is not JSON, so it is not a ragsim state (use a file made with “Download state”)." };
    if (problem) { if (big) progress.done(); this.info(`“${file.name}” was not loaded: ${problem}`); return; }
    this.onLoad(state, notes);
    if (big) progress.follow(totalChars(state));
    this.info(`Loaded the state from “${file.name}”.`);
  }
}
