// Your own index on the page (item 6; SPEC section 11): "Open your chunks…" reads a chunk
// file (JSON Lines of LangChain Documents, a JSON list, CSV, LlamaIndex's docstore.json), the
// worker's `inspect` places each chunk in its document (the page's documents, or documents rebuilt
// from the chunks when the page holds only its example), names the splitter that made them and
// checks the marked phrase. The placed extents go into the state (state.index); while the mode is
// "Your index" the page's one request carries them as chunking {strategy: "stored"}, so the verdict,
// the picture and the context come from the same `simulate` a drag calls.
//
// This module changes the state and asks for a recompute; render/your-index.js draws the panel.
// File contents are parsed in Python and reach the DOM only as text.

import { $ } from "./dom.js";
import { workerMessage } from "./worker-client.js";
import { plural } from "./format.js";
import { useSplitter } from "./params.js";
import { DOC_ID, stashSelected } from "./state.js";
import { uniqueId } from "./collection.js";
import { markedText } from "./spans.js";
import { recheckRequest } from "./requests.js";

export const MAX_CHUNK_FILE_BYTES = 32 * 1024 * 1024; // a chunk file read on the page
const KINDS = /\.(jsonl|ndjson|json|csv)$/i;
export const REBUILT = "rebuilt from your chunks; gaps unknown";

export class YourIndex {
  /** store: {state, memo}; send(message) -> the worker's reply; asks: the scheduler of work at rest
   * (in asks.js); restructured(): the documents changed (show them, recompute); changed(): recompute;
   * onlyTheExample(): the page holds only its example; info(note): a line under the document. */
  constructor({ store, send, asks, restructured, changed, onlyTheExample, info }) {
    Object.assign(this, { store, send, asks, restructured, changed, onlyTheExample, info });
    this.asked = null; // the phrase the shown inspection searched for (null: none asked yet)
    $("open-chunks").addEventListener("change", async (e) => { await this.open(e.target.files[0]); e.target.value = ""; });
    $("index-mode-index").addEventListener("click", () => this.setMode("index"));
    $("index-mode-simulated").addEventListener("click", () => this.setMode("simulated"));
    $("simulate-from-here").addEventListener("click", () => this.simulateFromHere());
    $("close-index").addEventListener("click", () => this.close());
  }

  get state() {
    return this.store.state;
  }

  /** One sentence in the panel's problem line ("" clears it); nothing else on the page changes. */
  problem(sentence) {
    const p = $("index-problem");
    p.textContent = sentence;
    p.hidden = !sentence;
    if (sentence) $("your-index").hidden = false;
  }

  async open(file) {
    if (!file) return;
    this.problem("");
    if (!KINDS.test(file.name)) {
      this.problem(`“${file.name}” is not a chunk file: open JSON Lines (.jsonl), a JSON list or docstore.json (.json), or CSV (.csv).`);
      return;
    }
    if (file.size > MAX_CHUNK_FILE_BYTES) {
      this.problem(`“${file.name}” is ${Math.round(file.size / 1048576)} MB, over the page's ${MAX_CHUNK_FILE_BYTES / 1048576} MB for a chunk file; export one collection or document (python -m ragsim export STORE -o chunks.jsonl).`);
      return;
    }
    const text = await file.text();
    $("open-chunks-label").dataset.busy = "1";
    this.info(`Reading your chunks from “${file.name}”…`);
    try {
      await this.inspectFile({ name: file.name, text });
    } finally {
      delete $("open-chunks-label").dataset.busy;
    }
  }

  /** A chunk file inspected: the page's documents as its sources (unless only the example is
   * there: then the documents are rebuilt from the chunks), and the phrase to search for. */
  async inspectFile(file) {
    const state = this.state;
    stashSelected(state);
    const request = { file };
    if (!this.onlyTheExample()) request.documents = state.docs.map(({ id, text }) => ({ id, text }));
    const phrase = request.documents ? this.phrase() : "";
    if (phrase) request.phrases = [phrase];
    const result = await this.call(request, (why) => `“${file.name}” was not opened: ${why}`);
    if (!result) { this.info(""); return; }
    this.asked = phrase;
    this.adopt(file.name, result, !request.documents);
  }

  /** A phrase marked or typed since: searched for again in the placed chunks (their text is the
   * page documents' own at their extents), and only the phrase box changes. */
  async recheck(phrase) {
    const state = this.state, index = state.index;
    stashSelected(state);
    const request = recheckRequest(state, phrase);
    this.asked = phrase;
    const result = await this.call(request, (why) => why);
    if (!result || state.index !== index) return; // refused, or another file opened meanwhile
    state.index = { ...index, result: { ...index.result, phrases: result.phrases } };
    this.changed();
  }

  /** The phrase to search the index for: the one typed in the find box, else the marked answer. */
  phrase() {
    const s = this.state;
    const textOf = (id) => (s.docs.find((d) => d.id === id) || { text: "" }).text;
    const p = s.find.trim() ? s.find : markedText(s, textOf);
    return p.trim() ? p : "";
  }

  /** The worker's inspect: its object, or null with the refusal said in one sentence. */
  async call(request, say) {
    const reply = await this.send(workerMessage(request, { fn: "inspect" })); // strings cross the boundary
    if (reply.ok) return typeof reply.result === "string" ? JSON.parse(reply.result) : reply.result;
    this.problem(say((reply.error && reply.error.message) || "the worker gave no reason."));
    return null;
  }

  /** The inspection into the state: rebuilt documents join (or replace the example), the placed
   * chunks' extents become state.index, and the picture shows them. */
  adopt(name, result, rebuiltAll) {
    const state = this.state;
    const have = new Set(rebuiltAll ? [] : state.docs.map((d) => d.id));
    const added = result.documents.filter((d) => !have.has(d.id));
    const missing = added.find((d) => typeof d.text !== "string");
    if (missing) {
      this.problem(`Your chunks name the document “${missing.id}”, which is not on the page; add it first (Add files…), then open the chunks again.`);
      return;
    }
    const docs = added.map((d) => ({ id: d.id, title: `${d.id} (${REBUILT})`, text: d.text }));
    if (rebuiltAll) Object.assign(state, { docs, sel: 0, span: null, fact: null, spans: [], questions: [] });
    else state.docs.push(...docs);
    if (!state.docs.length) { this.problem(`“${name}” holds no chunks.`); return; }
    const extents = {};
    for (const c of result.chunks) if (c.placement !== "unplaced") (extents[c.doc] ??= []).push([c.start, c.end]);
    const first = state.docs.findIndex((d) => extents[d.id]);
    if (rebuiltAll || first >= 0) state.sel = Math.max(0, first);
    state.doc = state.docs[state.sel].text;
    state.example = null;
    state.index = { name, extents, result, rebuiltAll };
    state.indexMode = "index";
    const n = result.chunks.length;
    this.info(`Opened ${n.toLocaleString("en-US")} ${plural(n, "chunk", "chunks")} from “${name}”${rebuiltAll ? `; the documents are ${REBUILT}: add the source document and open the chunks again for an exact reading` : ""}.`);
    this.restructured();
  }

  /** After each result: a phrase marked or typed since the inspection is checked again, an ask of
   * the "index" lane (in asks.js): sent once the page rests, off the drag's path; a newer phrase
   * replaces one still waiting. */
  follow() {
    const s = this.state;
    if (!s.index) return;
    const phrase = this.phrase();
    if (phrase === this.asked) return;
    this.asks.ask("index", phrase, () => (this.phrase() === phrase && this.state.index ? this.recheck(phrase) : null));
  }

  setMode(mode) {
    const s = this.state;
    if (!s.index || s.indexMode === mode) return;
    s.indexMode = mode;
    this.changed();
  }

  /** A splitter control moved while your index is shown: simulate from then on (the drag shows the
   * splitter's chunks; "Your index" goes back to the stored ones). */
  leaveIndex() {
    const s = this.state;
    if (!s.index || s.indexMode !== "index") return false;
    s.indexMode = "simulated";
    return true;
  }

  /** The controls to the splitter that made these chunks (the selected document's, else the first
   * named), simulated, so a drag starts from what your index did. */
  simulateFromHere() {
    const s = this.state;
    const found = s.index && splitterFor(s.index.result, s.docs[s.sel].id);
    if (!found || !found.strategy) return;
    const missing = useSplitter(s, found.strategy, found.fields || {}, this.store.memo);
    s.indexMode = "simulated";
    this.info(`The controls are set to ${(found.line || found.strategy).split(":")[0]}${missing.length ? ` (the page has no control for ${missing.join(", ")})` : ""}; drag them and compare with “Your index”.`);
    this.restructured();
  }

  close() {
    const s = this.state;
    s.index = null;
    s.indexMode = "simulated";
    this.problem("");
    $("your-index").hidden = true;
    this.changed();
  }
}

/** The selected document, rebuilt from a chunk file now closed, replaced wholesale by a paste: the
 * text is the user's own now, so the chunk file's document name goes (it would travel into the list,
 * links and "Copy as command line"), and the marks follow the new id. True when it was renamed. */
export function dropRebuiltName(state, before, after) {
  const d = state.docs[state.sel];
  if (state.index || !d.title.endsWith(`(${REBUILT})`) || 2 * kept(before, after) >= before.length) return false;
  const id = uniqueId(state.docs, DOC_ID);
  const move = (r) => (r && r.doc === d.id ? { ...r, doc: id } : r);
  Object.assign(state, { span: move(state.span), fact: move(state.fact), spans: (state.spans || []).map(move),
    questions: (state.questions || []).map((q) => ({ ...q, refs: (q.refs || []).map(move) })) });
  state.docs[state.sel] = { ...d, id, title: state.docs.length > 1 ? `Document ${state.sel + 1}` : "Document" };
  return true;
}

/** How much of `before` an edit kept: its common start and end with `after`, in UTF-16 units. */
function kept(before, after) {
  let a = 0;
  while (a < before.length && a < after.length && before[a] === after[a]) a++;
  let b = 0;
  while (b < before.length - a && b < after.length - a && before[before.length - 1 - b] === after[after.length - 1 - b]) b++;
  return a + b;
}

/** The splitter line for document `doc`: its own, else the first with a strategy, else the first. */
export function splitterFor(result, doc) {
  const list = result.splitter || [];
  return list.find((x) => x.doc === doc && x.strategy) || list.find((x) => x.strategy) || list.find((x) => x.doc === doc) || list[0] || null;
}
