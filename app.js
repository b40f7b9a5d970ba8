// The simulator page's entry and composition root: it builds the controls from the parameter
// table, boots the worker client, and wires state changes to the renderers. No chunking or scoring
// happens in the page: every number comes from the Python core (ragsim.api.simulate) running in
// the worker (assets/worker.js).
//
//   control -> state -> dragRequests(state) -> gate.submit -> worker -> api.simulate
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
import { DEFAULT_STRATEGY, FIELD_LABELS, forgetWanted, parseParam, rowNamed, settle, unitName } from "./assets/js/params.js";
import { pageRequest } from "./assets/js/requests.js";
import { QUESTION_WENT, defaultOverlaps, defaultState, hasOwnText, selectIndex, selectedId, stashSelected, sweepOverlaps } from "./assets/js/state.js";
import { attachSkipLink, followExampleQuestion, watchFragment, watchPastes } from "./assets/js/your-text.js";
import { stateFromFragment } from "./assets/js/url-state.js";
import { readPdfsWith } from "./assets/js/collection.js";
import { Supervisor } from "./assets/js/supervisor.js";
import { workerMessage } from "./assets/js/worker-client.js";
import { Persist } from "./assets/js/persist.js";
import { guardPaste, totalChars } from "./assets/js/limits.js";
import { BigText } from "./assets/js/big-text.js";
import { FindText } from "./assets/js/find-text.js";
import { Computer } from "./assets/js/compute.js";
import { Asks } from "./assets/js/asks.js";
import { Controls } from "./assets/js/controls.js";
import { Marks } from "./assets/js/marks.js";
import { Documents } from "./assets/js/documents.js";
import { Share, startResizeMessages } from "./assets/js/share.js";
import { attachCopyCommand } from "./assets/js/copy-command.js";
import { renderBoot, renderRestart, watchSlowBoot } from "./assets/js/render/boot.js";
import { linkNotes, showMessage } from "./assets/js/render/messages.js";
import { buildStats } from "./assets/js/render/stats.js";
import { Picture } from "./assets/js/render/picture.js";
import { lanes } from "./assets/js/render/lanes.js";
import { Results } from "./assets/js/render/results.js";
import { renderVerdictProblem } from "./assets/js/render/verdict.js";
import { CodePanel } from "./assets/js/panels/code-panel.js";
import { Investigate } from "./assets/js/panels/investigate.js";
import { AuditPanel } from "./assets/js/panels/audit-panel.js";
import { QuestionSet } from "./assets/js/questions.js";
import { QuestionScores } from "./assets/js/question-scores.js";
import { SettingsMap, bestCell, defaultGrid, parseNumbers, placeWords, MAX_CELLS } from "./assets/js/panels/settings-map.js";
import { pickAxes, semanticAxes, waitsForVectors, withKeptVectors } from "./assets/js/semantic-map.js";
import { AskPanel } from "./assets/js/ask-panel.js";
import { YourIndex, dropRebuiltName } from "./assets/js/your-index.js";
import { YourModelPanel } from "./assets/js/your-model.js";
import { TIMEOUTS as RERANK_TIMEOUTS, YourRerankerPanel } from "./assets/js/your-reranker.js";
import { TIMEOUTS as EMBED_TIMEOUTS } from "./assets/js/endpoint-embedder.js";
import { IndexPanel } from "./assets/js/render/index-panel.js";
import { FixNote } from "./assets/js/panels/fix-note.js";
import { SemanticPanel, semanticOf } from "./assets/js/render/semantic-panel.js";
import { ruleOf } from "./assets/js/semantic-threshold.js";
import "./assets/js/offline.js"; // the service worker, registered once Python is ready

// state: what the controls set; embed: the page is embedded (#embed=1); memo: each splitter's
// size, overlap, ... as last left (params.js switchStrategy); last: {request, response, snap, ms}
// behind what is on screen, kept when the input goes bad.
const store = { state: defaultState(), embed: false, memo: {}, last: null };

// Every piece of work at rest (the panels, the question set, the map, the code, the audit) is an
// ask of this one scheduler: one rest signal, one priority order (asks.js).
const asks = new Asks();
const controls = new Controls(onControl);
const docInput = controls.input("doc");
// Not kept by the browser's own form restoring: a page state the browser saves with each history
// entry copies the whole text (seconds for megabytes at each rewrite of the URL); persist.js keeps it.
docInput.setAttribute("autocomplete", "off");
const picture = new Picture({ canvas: $("picture"), wrap: $("picture-wrap"), head: $("detail-head"), body: $("detail-text"),
  onMarkSentence: (span, doc) => marks.markSentence(span, doc) });
const results = new Results(picture, asks);
results.index = new IndexPanel(); // your index's chunks, drawn with the verdict
const share = new Share({ store, info: (note) => marks.info(note) });
attachCopyCommand({ store, share });
const computer = new Computer({
  store, controls, asks,
  onResult: (last) => {
    store.last = last; showMessage(null, true); results.render(last); showQuestions(last); yourIndex.follow();
    if (fixNote && !store.embed) fixNote.show(last); // what keeps a cut answer whole, once the page rests
  },
  onProblem: (text) => {
    showMessage(text, store.last !== null);
    if (text && !store.last) renderVerdictProblem(text); // nothing computed yet: the verdict box says why
  },
  onTurnedOff: () => { sync(); share.schedule(); },
});
// Your own embedding model (an endpoint on this computer), under the Embedding model row; opt-in.
const yourModel = new YourModelPanel({ after: controls.byName.model.wrap, method: controls.input("method"), store, computer, changed });
// Your reranker (an endpoint on this computer), after your model's box; opt-in, never in an embed.
// It reranks the verdict (computer) and, through `runs`, the question set, the panels below the picture and the map.
const yourReranker = new YourRerankerPanel({ after: yourModel.box, store, changed, computer }), rerankRuns = yourReranker.runs;
results.complete = (last) => computer.completeScores(last); // a pruned drag's scores, once the controls rest
// A semantic chunker's curve under the picture; its line sets the threshold field.
results.semantic = new SemanticPanel({ onThreshold: setThreshold, onStop: () => computer.stopSemantic(), onResume: () => computer.resumeSemantic() });
computer.onSemantic = (s) => { results.semantic.status(s); if (questionScores) questionScores.follow(s); };
const marks = new Marks({ store, docInput, changed, sync, syncList: () => documents.syncList(),
  focusAfterRender: (doc, at) => results.focusAfterRender(doc, at) });
const documents = new Documents({ store, sync, changed, docInput, info: (note) => marks.info(note),
  onList: () => { if (results.investigate) results.investigate.sync(store.state, sweepOverlaps(store.state)); marks.show(); } });

// "Open your chunks…": a chunk file inspected in the worker, its placed chunks shown as the picture's bars.
const yourIndex = new YourIndex({ store, asks, changed, restructured: () => documents.restructured(), onlyTheExample: () => documents.onlyTheExample(),
  info: (note) => marks.info(note),
  send: (m) => (computer.gate ? computer.gate.send(m) : Promise.resolve({ ok: false, error: { message: "Python is still loading; try again in a moment." } })) });

// A document over a million characters stays out of the Document box, which shows its start (big-text.js).
const bigText = new BigText({ input: docInput, info: (note) => marks.info(note), onEdit: (text, caret) => editDocument(text, caret),
  current: () => ({ id: selectedId(store.state), title: store.state.docs[store.state.sel].title, text: store.state.doc }) });
// Find in the whole selected document, its hits marked as the answer on request.
new FindText({ store, docInput, mark: (span, note) => marks.set(span, note, true) });
const persist = new Persist({ store, onLoad: (state, notes) => useState(state, notes), info: (note) => marks.info(note) });
let supervisor = null; // the worker, kept alive (supervisor.js)

const questionSet = new QuestionSet({ store, changed, sync, syncList: () => documents.syncList(), info: (note) => marks.info(note),
  send: (m) => (computer.gate ? computer.gate.send(m) : Promise.resolve({ ok: false, error: { message: "Python is still loading; try again in a moment." } })) });
let settingsMap = null; // the heatmap, once the worker runs
let fixNote = null; // the fix for a cut answer, under the sliders (once the worker runs)
let questionScores = null; // the set's scores, asked for after each result (once the worker runs)

/** Recompute (`phase`: the changed row's, see compute.js), then the URL and stored state at rest. */
function changed(phase = "setting") {
  computer.compute(phase);
  share.schedule();
  persist.schedule();
}

/** A whole new state (a state file read back): shown everywhere, computed, stored. */
function useState(state, notes) {
  Object.assign(store, { state, memo: {} });
  linkNotes.set(notes);
  sync({ withDoc: true });
  documents.syncList();
  changed();
}

// Control -> state ------------------------------------------------------------------------------

let lastDoc = store.state.doc; // the Document box's text as last seen, to follow the marks through an edit
let docTimer = 0;

function onControl(p) {
  const state = store.state;
  linkNotes.clear();
  asks.moved();
  if (p.name === "doc") { editDocument(); return; }
  const { value, error } = parseParam(p, controls.value(p), state);
  // A splitter's control moved while your index is shown: from now on the splitter is simulated.
  if (!error && p.field.startsWith("chunking.") && yourIndex.leaveIndex()) marks.info("Simulating the splitter now; press “Your index” to see your stored chunks again.");
  if (error) { // e.g. an empty price box: say so, keep the last good value and result
    controls.invalid(p.name);
    showMessage(error, store.last !== null);
    return;
  }
  if (p.onSet) p.onSet(state, value, store.memo);
  else state[p.name] = value;
  if (p.kind === "range") state.wanted = { ...state.wanted, [p.name]: value }; // kept while a smaller size holds it down
  settle(state);
  sync();
  changed(p.phase);
}

/** The curve's line dragged to distance t: the strategy's threshold field set to match, as its control would. */
function setThreshold(t) {
  const last = store.last, rule = last && ruleOf(last.request.chunking);
  const curve = rule && semanticOf(last.response, last.snap.docId), p = rule && FIELD_LABELS[`chunking.${rule.field}`];
  if (!curve || !p) return;
  const { value } = parseParam(p, String(rule.amount(curve, t)), store.state);
  if (value === undefined || value === store.state[p.name]) return;
  store.state[p.name] = value;
  linkNotes.clear();
  sync();
  changed();
}

const pasted = watchPastes(docInput); // the Document box's last input was a paste or a drop

/** The selected document edited in the box (or, from big-text.js, a big paste kept out of it). */
function editDocument(text = docInput.value, caret = docInput.selectionEnd, paste = pasted()) {
  const state = store.state;
  asks.moved(); // typing is a move: nothing waits for the worker behind it
  marks.followEdit(lastDoc, text, caret);
  questionSet.followEdit(lastDoc, text, caret);
  if (dropRebuiltName(state, lastDoc, text)) documents.syncList();
  const question = followExampleQuestion(state, lastDoc, text, paste);
  if (question) controls.sync(state);
  if (question === "went") marks.info(`Your text is in place of the example; ${QUESTION_WENT}.`);
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
  controls.sync(store.state, { withDoc: withDoc && !bigText.show() }); // a big document: its start, read-only
  yourModel.sync(store.state);
  yourReranker.sync(store.state, store.embed);
  if (withDoc) lastDoc = store.state.doc;
  if (withDoc) questionSet.draw();
  marks.show();
}

// The question set and the settings map ----------------------------------------------

/** The map's grid: the one typed, else the splitter's default; null when the splitter has no size. */
function mapGrid(s) {
  const axes = semanticAxes(s); // a semantic chunker's own axes
  if (axes) return axes;
  const d = defaultGrid(s);
  return d && { sizes: s.mapSizes || d.sizes, overlaps: s.mapOverlaps || d.overlaps };
}

/** After each result: the set's verdicts, summary and table, then the map (started or kept). */
function showQuestions(last) {
  if (questionScores) questionScores.update(last);
  if (!settingsMap) return;
  const s = store.state, req = last.request;
  const count = req.questions ? req.questions.length : 0;
  const wanted = store.embed ? s.map : s.map || count > 0;
  $("map-section").hidden = !wanted;
  if (!wanted) { settingsMap.off(""); return; }
  const grid = mapGrid(s);
  for (const [id, list] of [["map-sizes", grid && grid.sizes], ["map-overlaps", grid && grid.overlaps]]) {
    if (list && document.activeElement !== $(id)) $(id).value = list.join(", ");
  }
  $("map-sizes").labels[0].textContent = grid && grid.names ? grid.names[0] : "Sizes";
  $("map-overlaps").labels[0].textContent = grid && grid.names && !grid.one ? grid.names[1] : "Overlaps";
  $("map-overlaps").parentElement.hidden = Boolean(grid && grid.one);
  if ($("map-grid-note").dataset.strategy !== s.strategy) $("map-grid-note").textContent = ""; // another splitter's axes
  if (req.chunking.strategy === "stored") settingsMap.off("Your index's chunks have no size to vary: press “Simulate from here” to map the splitter that made them.");
  else if (!grid) settingsMap.off("MarkdownNodeParser has no chunk size (a section is as long as it is), so there is no map.");
  else if (!count && !req.span) settingsMap.off("Mark an answer, or add questions to the question set, to map the settings.");
  else if (waitsForVectors(last.response)) settingsMap.off("The map waits for the embedding: it is filled once the sentence windows' vectors are held, and no cell embeds them again.");
  else settingsMap.update(rerankRuns.mark(req), grid, count || 1, unitName(s)); // marked: a reranker chosen maps again
}

/** A map cell clicked: the sliders to its size and overlap. */
function pickSetting(size, overlap) {
  const s = store.state, grid = settingsMap && settingsMap.grid;
  if (grid && grid.fields) { // a semantic chunker's own fields
    pickAxes(s, grid, size, overlap);
    linkNotes.clear();
    sync();
    changed();
    marks.info(`Set ${placeWords(size, overlap, grid.words)} from the map.`);
    return;
  }
  forgetWanted(s);
  s.size = size;
  settle(s);
  s.overlap = overlap;
  settle(s);
  linkNotes.clear();
  sync();
  changed();
  const moved = s.size !== size || s.overlap !== overlap ? ` (the sliders allow size ${s.size}, overlap ${s.overlap})` : "";
  marks.info(`Set chunk size ${size} and overlap ${overlap} from the map${moved}.`);
}

/** The map's grid typed in its two boxes: kept when valid (null when it is the default). */
function editGrid() {
  const s = store.state, d = defaultGrid(s);
  if (!d) return;
  const words = d.words || ["size", "overlap"];
  const sizes = parseNumbers($("map-sizes").value, words[0], d.fields ? d.min : 1, Boolean(d.numbers));
  const overlaps = d.one ? { value: [0] } : parseNumbers($("map-overlaps").value, words[1], 0);
  const note = $("map-grid-note");
  const error = sizes.error || overlaps.error ||
    (sizes.value.length * overlaps.value.length > MAX_CELLS ? `That is ${sizes.value.length * overlaps.value.length} settings; map at most ${MAX_CELLS}.` : "");
  note.textContent = error;
  note.dataset.kind = error ? "error" : "";
  note.dataset.strategy = s.strategy;
  if (error) return;
  s.mapSizes = sizes.value.join() === d.sizes.join() ? null : sizes.value;
  s.mapOverlaps = overlaps.value.join() === d.overlaps.join() ? null : overlaps.value;
  changed();
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

/** The worker was lost and a new one is booting: say why, grey the last result until it is ready,
 * and forget what the old worker had loaded (the current state is computed again at "ready"). */
function onRestart(sentence, reason) {
  computer.ready = false;
  computer.installs = {};
  computer.tokenizers = {};
  computer.tokenizerProblems = {};
  document.body.dataset.state = "loading";
  renderRestart(reason); // "Restarting Python after a memory error: …"
  showMessage(sentence, store.last !== null);
}

/** The state the URL fragment describes (at load, and when the fragment changes); at load, the
 * stored state unless the fragment carries documents (persist.js says which wins). */
async function applyFragment(event, afterLink = false) {
  const hash = location.hash;
  if (event && !afterLink && /^#?$/.test(hash) && hasOwnText(store.state)) {
    // the address bar's fragment cleared over text of the user's own: the page stays as it is and
    // writes its fragment back (over the example, a cleared fragment opens the example afresh)
    marks.info("Kept your text: clearing the address does not put the example in its place.");
    share.schedule();
    return;
  }
  let { state, embed, notes, hasDocs } = await stateFromFragment(hash);
  if (!event && !embed) ({ state, notes } = await persist.restore(state, notes, hasDocs));
  showAnswerDocument(state);
  Object.assign(store, { state, embed, memo: {} });
  results.embed = embed;
  document.body.classList.toggle("embed", embed);
  linkNotes.set(notes);
  sync({ withDoc: true });
  documents.syncList();
  computer.compute();
}

/** A page opened (a link, an embed, a reload) shows the document holding the answer (or the
 * fact) in the picture and the Document box, not the one last opened. */
function showAnswerDocument(state) {
  const id = state.span ? state.span.doc ?? selectedId(state) : state.fact && state.fact.name && state.fact.value ? state.fact.doc : null;
  const i = id == null ? -1 : state.docs.findIndex((d) => d.id === id);
  if (i >= 0 && i !== state.sel) selectIndex(state, i);
}

/** The panels that ask the worker themselves: the investigation and the corpus audit. */
function startPanels(gate) {
  gate.afterRestart(() => asks.emit("restart")); // a restarted worker is ready: the audit runs again
  // The set at the page's own setting: sent as the drag's request is (the binary wire, no chunk list
  // in the JSON; a big document's text not sent again), since its chunks are as many as the drag's.
  const sendLikeDrag = (r) => gate.send(workerMessage(r, { binary: true }));
  questionScores = new QuestionScores({
    simulate: rerankRuns.wrap((request) => withKeptVectors(computer.semantic, (r) => computer.dense.simulate(sendLikeDrag, r, "questions"), request), "questions"),
    asks,
  });
  settingsMap = new SettingsMap({
    asks,
    simulate: rerankRuns.wrap((request) => withKeptVectors(computer.semantic, (r) => computer.dense.simulate((r2) => gate.send(workerMessage(r2)), r, "map"), request), "map"),
    dense: computer.dense,
    send: (r) => gate.send(workerMessage(r)),
    onPick: pickSetting,
  });
  $("map-sizes").addEventListener("change", editGrid);
  $("map-overlaps").addEventListener("change", editGrid);
  results.investigate = new Investigate({
    asks,
    simulate: rerankRuns.wrap((request) => computer.dense.simulate((r) => gate.send(workerMessage(r)), request, "sweep"), "sweep"),
    mark: (request) => rerankRuns.mark(request), // the sweep asked again when your reranker is chosen, stopped or resumed
    // a phrase typed: an ask of the "find" lane, so the page takes it once the typing rests (no timer of its own)
    onFind: (value) => { asks.moved(); store.state.find = value; asks.ask("find", value, () => changed(rowNamed("find").phase)); },
    onOverlaps: (list) => { store.state.overlaps = list.join() === defaultOverlaps(store.state.unit).join() ? null : list; changed(rowNamed("overlaps").phase); },
    onExpand: (value) => { store.state.expand = value; changed(rowNamed("expand").phase); },
  });
  results.investigate.sync(store.state, sweepOverlaps(store.state));
  // Asking your own model, opt-in; an embed never has it (nor does anything ask on a drag).
  if (!store.embed) {
    new AskPanel({
      last: () => store.last,
      send: (m) => gate.send(m),
      simulate: (request) => asks.ask("ask", request, () => computer.dense.simulate((r) => gate.send(workerMessage(r)), request, "ask")),
      mapBest: () => {
        const best = settingsMap && settingsMap.grid && bestCell(settingsMap.cells, settingsMap.count);
        return best && best.all ? { size: settingsMap.grid.sizes[best.i], overlap: settingsMap.grid.overlaps[best.j] } : null;
      },
    });
  }
  results.audit = new AuditPanel({
    asks,
    simulate: (request) => computer.dense.simulate((r) => gate.send(workerMessage(r, { fn: "audit" })), request, "audit"),
    request: () => pageRequest(store.state, { embed: store.embed }),
    overlaps: () => sweepOverlaps(store.state),
    follow: (f) => marks.followFact(f),
    titles: () => Object.fromEntries(store.state.docs.map((d) => [d.id, d.title])),
    strategy: () => store.state.strategy || DEFAULT_STRATEGY,
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
  attachSkipLink();
  $("mark-selection").addEventListener("click", () => marks.markSelection());
  $("mark-name").addEventListener("click", () => marks.markFactPart("name"));
  $("mark-value").addEventListener("click", () => marks.markFactPart("value"));
  $("clear-mark").addEventListener("click", () => marks.clear());
  $("extend-mark").addEventListener("click", () => marks.extend());
  // Pointing at the Retriever (or reaching it from the keyboard) loads the embedding model
  // and embeds this setting's chunks ahead, so choosing Dense finds part or all of that done.
  const warm = () => computer.prepareDense();
  for (const kind of ["pointerenter", "focus"]) $("param-method").addEventListener(kind, warm);
  watchFragment(applyFragment); // the last of one task's changes is applied
  guardPaste(docInput, () => totalChars(store.state), (sentence) => showMessage(sentence, false));
  $("download-state").addEventListener("click", () => persist.download());
  $("load-state").addEventListener("change", async (e) => { await persist.load(e.target.files[0]); e.target.value = ""; });
  await applyFragment();
  if (store.embed) {
    await share.linkFullPage();
    startResizeMessages();
  }
  watchSlowBoot(() => !computer.ready && document.body.dataset.state === "loading");
  try {
    const gate = Supervisor.start();
    supervisor = gate;
    gate.onstatus = onStatus;
    gate.onrestart = onRestart;
    computer.gate = gate;
    readPdfsIn(gate);
    results.code = new CodePanel({ send: (m) => gate.send(m), asks, code: $("code"), status: $("code-status"), copy: $("copy-code") });
    fixNote = new FixNote({ send: (m) => gate.send(m), asks, line: $("fix-note") });
    startPanels(gate);
  } catch (err) {
    onStatus({ stage: "failed", message: `the worker could not be started (${err.message}).` });
  }
}

// For tests and benchmarks: the request the page would send now, and the request and response
// behind what is on screen (equal requests mean the page has caught up with its controls).
window.ragsim = Object.freeze({
  request: () => pageRequest(store.state, { embed: store.embed }),
  shownRequest: () => (store.last ? store.last.request : null),
  workerMs: () => (store.last ? store.last.ms : null), // the worker's own time for what is on screen
  response: () => (store.last ? store.last.response : null),
  // false while a pruned drag's result (a book) knows only the top k's and the ranked chunks' scores
  scoresComplete: () => !(store.last && store.last.response.cols && store.last.response.cols.partial),
  prunedDrags: () => computer.prunedDrags, // drags that asked for the top k only
  sweep: () => (results.investigate ? results.investigate.sweepRows : null),
  panelsShown: () => Boolean(results.investigate && store.last && (store.embed || results.investigate.last === store.last)),
  audit: () => (results.audit ? results.audit.result : null),
  // the embedding worker's state and counts (chunks embedded, model load ms)
  dense: () => ({ state: computer.dense.state, ...computer.dense.stats, rate: computer.dense.rate(), held: computer.dense.held,
    jobs: computer.dense.running(), aheadBusy: Boolean(computer.dense.aheadBusy) }),
  // the semantic embedding's state and counts (vector jobs posted, texts sent to embed, vectors
  // sent again from the page's keeping) and the curve as drawn (points, the worker's cuts, the cuts shown)
  semantic: () => ({ state: computer.semantic.state, kept: computer.semantic.kept.size, ...computer.semantic.stats,
    points: Number($("semantic-curve").dataset.points || 0), cuts: Number($("semantic-curve").dataset.cuts || 0),
    shownCuts: Number($("semantic-curve").dataset.shownCuts || 0) }),
  // the question set (UTF-16 offsets) and the map ({state, done, grid, cells})
  questions: () => store.state.questions,
  // the set's scores, asked for after the drag's result: {state: "stale" | "fresh" | ..., response, log}
  questionScores: () => (questionScores ? { state: questionScores.state, response: questionScores.shown && questionScores.shown.response, log: questionScores.log.slice() } : null),
  bands: () => picture.scene().bands, // the picture's answer bands, [x0, x1] each
  // the picture's bars (the selected document's chunks) and whether they are your index's
  picture: () => ({ chunks: picture.C.n, stored: picture.scene().stored }),
  // the retrieved chunks' solid bars ([x, y, w, h]) and their rank labels ({text, x, y, w, inside}) as drawn
  pictureRanks: () => { const s = picture.scene(); return { retrieved: s.retrieved, labels: s.labels }; },
  index: () => store.state.index && store.state.index.result,
  map: () => (settingsMap ? { state: settingsMap.state, done: settingsMap.done, grid: settingsMap.grid, cells: settingsMap.cells } : null),
  // workers lost and restarted, the last sentence about it, a fixed deadline (ms; null for
  // the scaled one) for the tests of the deadline, and the state stored and the address bar
  // rewritten (resolves once both are written)
  restarts: () => (supervisor ? supervisor.restarts : 0),
  lastLoss: () => (supervisor ? supervisor.lastLoss : null),
  setDeadline: (ms) => { if (supervisor) supervisor.deadlineMs = ms; },
  setEmbedTimeout: (s) => { EMBED_TIMEOUTS.requestS = s; }, // your model's endpoint: seconds for one request
  setRerankTimeout: (s) => { RERANK_TIMEOUTS.requestS = s; }, // your reranker's endpoint: seconds for one request
  reranker: () => ({ requests: computer.reranker.requests, kept: computer.reranker.kept.size, runs: rerankRuns.runs, stopped: rerankRuns.stopped }),
  stored: () => Promise.all([persist.flush(), share.flush()]),
  quiet: () => asks.quiet(), // resolves at rest with nothing queued or running (asks.js)
  // resolves to Python's memory and start, {heap: bytes, boot: {path, ms, snapshotBytes}}
  memory: async () => { const r = supervisor && await supervisor.send({ type: "memory" }); return r && r.ok ? JSON.parse(r.result) : null; },
});

main();
