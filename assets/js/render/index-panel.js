// The "Your index" panel (item 6): what the chunks a real pipeline stored say, drawn from
// one result and the snapshot taken with its request (snap.index: the inspection, SPEC section 11's
// object; snap.stored: the picture shows the stored chunks). The legend counts them, the verdict
// line says what your index does to the marked answer (and, while simulating, what it did, to
// compare), the phrase box whether the phrase is in the index at all, the splitter line which
// mirrored splitter made the chunks. Chunk ids and texts come from a user's file: text only.

import { $ } from "../dom.js";
import { int, plural } from "../format.js";
import { uncoveredTitle, verdictWords } from "./verdict.js";
import { REBUILT, splitterFor } from "../your-index.js";

const LISTED = 200; // unplaced chunks listed by id; the rest counted

const el = (tag, text, attrs = {}) => {
  const e = document.createElement(tag);
  e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};
const quote = (s) => `“${s.length > 120 ? `${s.slice(0, 117)}…` : s}”`;

export class IndexPanel {
  constructor() {
    this.storedVerdict = null; // {key, headline}: your index's verdict, kept to compare while simulating
  }

  render({ request, response, snap }) {
    const index = snap.index;
    $("legend-stored").hidden = !snap.stored;
    $("dock-index-note").hidden = !snap.stored;
    if (!index) { // nothing opened: only a problem sentence (a file that was not chunks) may show
      $("picture-heading").textContent = "Chunks along the document";
      this.storedVerdict = null;
      $("your-index").dataset.mode = "";
      $("your-index").hidden = $("index-problem").hidden;
      return;
    }
    $("your-index").hidden = false;
    const r = index.result;
    const n = r.chunks.length, unplaced = r.chunks.filter((c) => c.placement === "unplaced");
    const legend = `your index's chunks (${int(n)}, placed ${int(n - unplaced.length)}, unplaced ${int(unplaced.length)})`;
    $("legend-stored-text").textContent = legend;
    $("index-legend").textContent = legend;
    $("your-index").dataset.mode = snap.stored ? "index" : "simulated";
    $("index-mode-index").setAttribute("aria-pressed", String(snap.stored));
    $("index-mode-simulated").setAttribute("aria-pressed", String(!snap.stored));
    $("index-source").textContent = sourceLine(index, r);
    $("picture-heading").textContent = snap.stored ? "Your index's chunks along the document" : "Chunks along the document";
    this.renderVerdict(request, response, snap);
    renderPhrases(r.phrases || [], chunkNumbers(r, snap.ids), uncoveredTitle({ ...snap, stored: true }));
    renderSplitter(r, snap.docId);
    renderStats(r.stats);
    renderUnplaced(unplaced);
  }

  renderVerdict(request, response, snap) {
    const [kind, headline, sentence] = verdictWords(response, snap);
    const key = JSON.stringify([request.query, request.span, request.retrieval]);
    const out = $("index-verdict");
    out.dataset.verdict = kind;
    if (snap.stored) {
      this.storedVerdict = kind ? { key, headline } : null;
      out.textContent = kind ? `On your index's chunks: ${headline}. ${sentence}` : `${headline}: mark the answer to see what your index does to it.`;
      return;
    }
    const was = this.storedVerdict && this.storedVerdict.key === key ? ` Your index: ${this.storedVerdict.headline}.` : "";
    out.textContent = kind ? `Simulated: ${headline}.${was} Press “Your index” to see the stored chunks again.` : `${headline}.`;
  }
}

function sourceLine(index, r) {
  const docs = r.documents.length;
  const by = {};
  for (const c of r.chunks) by[c.placement] = (by[c.placement] || 0) + 1;
  const how = ["offsets", "exact", "whitespace"].filter((p) => by[p]).map((p) => `${int(by[p])} by ${p === "offsets" ? "the store's offsets" : p === "exact" ? "their exact text" : "text with whitespace evened"}`);
  const where = index.rebuiltAll ? `the ${plural(docs, "document is", "documents are")} ${REBUILT}` : "placed in the page's documents";
  const rebuilt = index.rebuiltAll ? ` ${REBUILT_READING}` : "";
  return `${quote(index.name)}: ${int(r.chunks.length)} ${plural(r.chunks.length, "chunk", "chunks")} in ${int(docs)} ${plural(docs, "document", "documents")}, ${where}${how.length ? ` (${how.join(", ")})` : ""}.${rebuilt}`;
}

// Said whenever the page reads documents rebuilt from the chunks, as the command line's inspect says it.
export const REBUILT_READING = "This is a reading of a document rebuilt from your chunks, not of your source: the gaps between "
  + "chunks are unknown, so the splitter, the cuts and the verdict are read from that rebuilt text. Add the source document "
  + "(Add document), then open the chunks again, for an exact reading.";

/** Whether document `id` was rebuilt from its chunks with gaps (text between them unknown). */
const rebuiltWithGaps = (r, id) => r.documents.some((d) => d.id === id && d.rebuilt && (d.gaps || []).length);

/** Each placed chunk's number as the verdict and the picture count them (1-based, the request's
 * documents in order, each document's chunks by start), by the store's id. */
function chunkNumbers(r, ids) {
  const byDoc = {};
  for (const c of r.chunks) if (c.placement !== "unplaced") (byDoc[c.doc] ??= []).push(c);
  const out = new Map();
  let n = 0;
  for (const doc of ids) {
    for (const c of (byDoc[doc] || []).sort((a, b) => a.start - b.start || a.end - b.end)) out.set(c.id, ++n);
  }
  return out;
}

/** "Search your index for the exact phrase": present with the chunk ids, or absent with the cuts. */
function renderPhrases(phrases, numbers, outside) {
  // "chunk 3 (id “2”)": the number the verdict uses, and the id your store gave it
  const chunk = (id) => (numbers.has(id) ? `chunk ${numbers.get(id)} (id “${id}”)` : `the chunk with id “${id}”`);
  const box = $("index-phrases");
  if (!phrases.length) {
    box.replaceChildren(el("p", "Mark the answer (or type a phrase under “Find a phrase”) to search your index for it."));
    return;
  }
  box.replaceChildren(...phrases.map((p) => {
    const li = el("p", "", { "data-verdict": p.verdict });
    if (p.verdict === "present") {
      li.textContent = `Present: ${quote(p.text)} is held whole by ${p.chunks.map(chunk).join(", ")}.`;
      return li;
    }
    if (outside && !(p.cut_by || []).length) { // the marked answer's document has no chunk in the index: nothing was cut
      li.textContent = `Absent: your index holds no chunk of “${outside}”, the document ${quote(p.text)} is in; it was never chunked into this index, so no overlap would keep it.`;
      return li;
    }
    const cuts = (p.cut_by || []).map((b) => `${chunk(b.end_of)} ends and ${chunk(b.start_of)} begins at character ${int(b.at)}`);
    li.textContent = `Absent: no chunk of your index holds ${quote(p.text)} whole${cuts.length ? `; ${cuts.join("; ")}` : ""}. `
      + `The answer was destroyed at chunking, before search: ${p.advice || `an overlap of ${int(p.overlap_needed)} characters would keep it whole in fixed windows`}.`;
    return li;
  }));
}

function renderSplitter(r, docId) {
  const sp = splitterFor(r, docId);
  const line = $("index-splitter"), button = $("simulate-from-here");
  button.disabled = !(sp && sp.strategy);
  if (!sp) { line.textContent = "No splitter was searched for these chunks."; return; }
  // `line` is the core's sentence: "LangChain RecursiveCharacterTextSplitter(chunk_size=1000, ...): 412 of 412 chunks exactly"
  const said = sp.line || `${sp.strategy}: ${int(sp.reproduced)} of ${int(sp.chunks)} chunks exactly`;
  const moves = sp.strategy ? ` This splitter ${sp.moves_with_overlap ? "moves its later cuts when only the overlap changes" : "keeps its cuts when only the overlap changes"}.` : "";
  if (rebuiltWithGaps(r, sp.doc)) { // the rebuilt text is not the source: which splitter made it is unknowable
    line.textContent = `A guess from the rebuilt text, not a finding: ${said[0].toLowerCase()}${said.slice(1)}. Add the source document and open the chunks again for the splitter to be named.`;
    return;
  }
  if (!sp.strategy) line.textContent = `${said}.`; // the core's sentence names the nearest and what differs
  else if (sp.reproduced === sp.chunks) line.textContent = `These match ${said}.${moves}`;
  else line.textContent = `The nearest: ${said}.${moves}`;
}

function renderStats(st) {
  const out = $("index-stats");
  out.hidden = !st;
  if (!st) return;
  out.textContent = `Chunk sizes ${int(st.chars_min)} to ${int(st.chars_max)} characters (median ${int(st.chars_median)}); `
    + `neighbours share ${int(st.overlap_min)} to ${int(st.overlap_max)} (median ${int(st.overlap_median)}); `
    + `${int(st.boundaries_without_overlap)} ${plural(st.boundaries_without_overlap, "boundary shares", "boundaries share")} nothing.`;
}

function renderUnplaced(unplaced) {
  const box = $("index-unplaced");
  box.hidden = unplaced.length === 0;
  $("index-unplaced-summary").textContent = `${int(unplaced.length)} ${plural(unplaced.length, "chunk", "chunks")} could not be placed (left out of the picture and the verdict)`;
  const items = unplaced.slice(0, LISTED).map((c) => el("li", `${c.id} (${c.doc}, ${int(c.chars)} characters)`));
  if (unplaced.length > LISTED) items.push(el("li", `and ${int(unplaced.length - LISTED)} more`));
  $("index-unplaced-list").replaceChildren(...items);
}
