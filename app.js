// The simulator page's entry and composition root: it builds the controls from the parameter
// table, boots the worker client, and wires state changes to the renderers. No chunking or scoring
// happens in the page: every number comes from the Python core (ragsim.api.simulate) running in
// the worker (assets/worker.js).
//
//   control -> state -> buildRequest(state) -> gate.submit -> worker -> api.simulate
//           -> response -> renderers: verdict, picture, stats, context, lanes, panels
//
// State flows one way: a control changes the state and calls changed(); the renderers get the
// response and a snapshot of the state taken with the request, never a control.
//
// Offsets: the core speaks code points, the browser UTF-16 code units. offsetMap converts at the
// boundary: state.span is kept in UTF-16, like the textarea's selection, and converted in
// buildRequest; response offsets are converted back before drawing. All user text reaches the DOM
// as text (textContent), never as HTML.

import { $ } from "./assets/js/dom.js";
import { buildRequest, parseParam, settle } from "./assets/js/params.js";
import { defaultOverlaps, defaultState, stashSelected, sweepOverlaps } from "./assets/js/state.js";
import { stateFromFragment } from "./assets/js/url-state.js";
import { readPdfsWith } from "./assets/js/collection.js";
import { Gate } from "./assets/js/worker-client.js";
import { Computer } from "./assets/js/compute.js";
import { Controls } from "./assets/js/controls.js";
import { Marks } from "./assets/js/marks.js";
import { Documents } from "./assets/js/documents.js";
import { Share, startResizeMessages } from "./assets/js/share.js";
import { renderBoot, watchSlowBoot } from "./assets/js/render/boot.js";
import { linkNotes, showMessage } from "./assets/js/render/messages.js";
import { buildStats } from "./assets/js/render/stats.js";
import { Picture } from "./assets/js/render/picture.js";
import { lanes } from "./assets/js/render/lanes.js";
import { Results } from "./assets/js/render/results.js";
import { CodePanel } from "./assets/js/render/code-panel.js";
import { Investigate } from "./assets/js/render/investigate.js";
import { AuditPanel } from "./assets/js/render/audit-panel.js";

// state: what the controls set; embed: the page is embedded (#embed=1); memo: each splitter's
// size, overlap, ... as last left (params.js switchStrategy); last: {request, response, snap, ms}
// behind what is on screen, kept when the input goes bad.
const store = { state: defaultState(), embed: false, memo: {}, last: null };

const controls = new Controls(onControl);
const docInput = controls.input("doc");
const picture = new Picture({ canvas: $("picture"), wrap: $("picture-wrap"), head: $("detail-head"), body: $("detail-text"),
  onMarkSentence: (span, doc) => marks.markSentence(span, doc) });
const results = new Results(picture);
const share = new Share({ store, info: (note) => marks.info(note) });
const computer = new Computer({
  store, controls,
  onResult: (last) => { store.last = last; showMessage(null, true); results.render(last); },
  onProblem: (text) => showMessage(text, store.last !== null),
  onTurnedOff: () => { sync(); share.schedule(); },
});
const marks = new Marks({ store, docInput, changed, sync, syncList: () => documents.syncList(),
  focusAfterRender: (doc, at) => results.focusAfterRender(doc, at) });
const documents = new Documents({ store, sync, changed, docInput, info: (note) => marks.info(note),
  onList: () => { if (results.investigate) results.investigate.sync(store.state, sweepOverlaps(store.state)); marks.show(); } });

/** Recompute, and rewrite the URL once the controls rest. */
function changed() {
  computer.compute();
  share.schedule();
}

// Control -> state ------------------------------------------------------------------------------

let lastDoc = store.state.doc; // the Document box's text as last seen, to follow the marks through an edit
let docTimer = 0;

function onControl(p) {
  const state = store.state;
  linkNotes.clear();
  if (p.name === "doc") { editDocument(); return; }
  const { value, error } = parseParam(p, controls.value(p), state);
  if (error) { // e.g. an empty price box: say so, keep the last good value and result
    controls.invalid(p.name);
    showMessage(error, store.last !== null);
    return;
  }
  if (p.onSet) p.onSet(state, value, store.memo);
  else state[p.name] = value;
  settle(state);
  sync();
  changed();
}

function editDocument() {
  const state = store.state, text = docInput.value;
  marks.followEdit(lastDoc, text, docInput.selectionEnd);
  lastDoc = text;
  state.doc = text;
  stashSelected(state);
  state.example = null;
  marks.show();
  clearTimeout(docTimer);
  docTimer = setTimeout(changed, text.length > 100_000 ? 400 : 150); // debounced: typing is not dragging
}

/** Show the state in the controls (the document only when asked: it may be megabytes) and the mark line. */
function sync({ withDoc = false } = {}) {
  controls.sync(store.state, { withDoc });
  if (withDoc) lastDoc = store.state.doc;
  marks.show();
}

// Boot: controls first (usable at once), Python in the background -------------------------------

function onStatus(status) {
  renderBoot(status);
  if (status.stage === "failed") {
    computer.ready = false;
    document.body.dataset.state = "error";
  } else if (status.stage === "ready") {
    computer.ready = true;
    document.body.dataset.state = "ready";
    computer.compute();
  }
}

/** The state the URL fragment describes (at load, and when the fragment changes). */
async function applyFragment() {
  const { state, embed, notes } = await stateFromFragment(location.hash);
  Object.assign(store, { state, embed, memo: {} });
  results.embed = embed;
  document.body.classList.toggle("embed", embed);
  linkNotes.set(notes);
  sync({ withDoc: true });
  documents.syncList();
  computer.compute();
}

/** The panels that ask the worker themselves: the investigation and the corpus audit. */
function startPanels(gate) {
  let findTimer = 0;
  results.investigate = new Investigate({
    gate,
    simulate: (request) => computer.dense.simulate((r) => gate.send({ type: "simulate", request: JSON.stringify(r) }), request, "sweep"),
    onFind: (value) => { store.state.find = value; clearTimeout(findTimer); findTimer = setTimeout(changed, 250); },
    onOverlaps: (list) => {
      store.state.overlaps = list.join() === defaultOverlaps(store.state.unit).join() ? null : list;
      changed();
    },
    onExpand: (value) => { store.state.expand = value; changed(); },
  });
  results.investigate.sync(store.state, sweepOverlaps(store.state));
  results.audit = new AuditPanel({
    gate,
    request: () => buildRequest(store.state, { embed: store.embed }),
    overlaps: () => sweepOverlaps(store.state),
    follow: (f) => marks.followFact(f),
    titles: () => Object.fromEntries(store.state.docs.map((d) => [d.id, d.title])),
    strategy: () => store.state.strategy || "window",
  });
}

/** PDFs are read in the worker (ragsim.pdf, as LangChain's PyPDFLoader reads them); the bytes are
 * handed over, not copied, and the pages read so far show in the mark line. */
function readPdfsIn(gate) {
  readPdfsWith(async (name, bytes, mode) => {
    marks.info(`Reading “${name}” as PyPDFLoader does…`);
    const line = $("mark-info");
    const reply = await gate.send({ type: "pdf", name, mode, bytes }, ({ done, total }) => {
      line.dataset.note = "1";
      line.textContent = total ? `Reading “${name}”: ${done} of ${total} pages…` : `Reading “${name}”: loading the PDF reader (pypdf)…`;
    }, [bytes]);
    if (reply.ok) return { docs: JSON.parse(reply.result).documents };
    const why = reply.error?.message || "the worker gave no reason.";
    return { problem: reply.error?.field === "file" ? why : `“${name}” was not added: ${why}` };
  }, () => store.state.pdf_mode);
}

async function main() {
  buildStats();
  lanes.init($("lanes"), (i) => documents.select(i));
  $("mark-selection").addEventListener("click", () => marks.markSelection());
  $("mark-name").addEventListener("click", () => marks.markFactPart("name"));
  $("mark-value").addEventListener("click", () => marks.markFactPart("value"));
  $("clear-mark").addEventListener("click", () => marks.clear());
  window.addEventListener("hashchange", applyFragment);
  await applyFragment();
  if (store.embed) {
    await share.linkFullPage();
    startResizeMessages();
  }
  watchSlowBoot(() => !computer.ready && document.body.dataset.state === "loading");
  try {
    const gate = Gate.start();
    gate.onstatus = onStatus;
    computer.gate = gate;
    readPdfsIn(gate);
    results.code = new CodePanel({ send: (m) => gate.send(m), code: $("code"), status: $("code-status"), copy: $("copy-code") });
    startPanels(gate);
  } catch (err) {
    onStatus({ stage: "failed", message: `the worker could not be started (${err.message}).` });
  }
}

// For tests and benchmarks: the request the page would send now, and the request and response
// behind what is on screen (equal requests mean the page has caught up with its controls).
window.ragsim = Object.freeze({
  request: () => buildRequest(store.state, { embed: store.embed }),
  shownRequest: () => (store.last ? store.last.request : null),
  response: () => (store.last ? store.last.response : null),
  sweep: () => (results.investigate ? results.investigate.sweepRows : null),
  panelsShown: () => Boolean(results.investigate && store.last && (store.embed || results.investigate.last === store.last)),
  audit: () => (results.audit ? results.audit.result : null),
  // issue 13: the embedding worker's state and counts (chunks embedded, model load ms)
  dense: () => ({ state: computer.dense.state, ...computer.dense.stats }),
});

main();
