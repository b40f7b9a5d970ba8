// Every request the page sends, derived here from the state (SPEC section 6), and nowhere else.
//
//   buildRequest(state), params.js     the setting: documents, query, chunking, retrieval, span, fact, …
//   pageRequest(state)                 + the "ask" rows (the set, the panels' questions): ragsim.request(),
//                                      the shown result's `last.request`, and the base of the rest:
//   dragRequests(state)                the drag's own request (in compute.js) and the panels' one at rest
//   embedRequest, aheadRequests        what dense embeds: this setting, the settings one or two steps away
//   setRequest, sweepRequest, rowRequest, mapKey, auditRequest, contextRequest, fixRequest,
//   codeRequest, commandRequest        the asks at rest and the code, each from the page's request
//   recheckRequest(state, phrase)      your index's chunks searched for a phrase again (inspect)
//
// The parameter table's `phase` (in params.js) says where a row's value goes: "setting" rows make the
// drag's request; "ask" rows (find, expand, the sweep's overlaps) only the requests asked at rest;
// "page" rows no request at all. The requests are the ones the page always sent, byte for byte, but
// for the `answers` each ask at rest names (tests/js/requests.test.mjs holds them).

import { buildRequest, rowNamed, storedChunking } from "./params.js";
import { ANSWER_ID, answerSpans, questionsForRequest, refFits, textsOf, toCp } from "./question-wire.js";
import { offsetMap } from "./offsets.js";

/** The page's request: the setting, then the question set (SPEC section 8: the questions whose spans
 * still fit), then the investigation panels' questions (the cuts, an exact phrase, context
 * expansion). The embedded page (`embed`) shows none of the panels, so it does not ask what they draw. */
export function pageRequest(state, { embed = false } = {}) {
  const request = buildRequest(state);
  const questions = questionsForRequest(state);
  if (questions.length) request.questions = questions;
  if (embed) return request;
  if (!storedChunking(state)) request.cuts = true; // stored chunks have no overlap to change (the core refuses cuts)
  const texts = textsOf(state);
  const find = rowNamed("find").wire(state.find, state, (id) => texts.get(id) ?? "");
  if (find !== undefined) request.find = find;
  const expand = rowNamed("expand").wire(state.expand);
  if (expand !== undefined) request.expand = expand;
  return request;
}

/** The drag's own request: the set left out (scored by a second request once the result is shown,
 * question-scores.js); a multi-span answer becomes its one question, so the core's question verdict
 * (intact only when every span is) is the main verdict. `request.span` stays the first span. */
export function mainRequest(request, s) {
  const { questions: _set, ...main } = request;
  const spans = answerSpans(s);
  if (spans.length < 2) return main;
  const texts = textsOf(s);
  const refs = spans.filter((r) => refFits(texts, r)).map((r) => toCp(texts, r));
  return refs.length > 1 ? { ...main, questions: [{ id: ANSWER_ID, query: s.q, references: refs }] } : main;
}

/** The response's answers to the panels' questions (find, cuts, expand). */
export const PANEL_ANSWERS = ["found", "cuts", "expanded"];

/** A request without the panels' questions (find, cuts, expand). */
const withoutPanels = ({ find: _f, cuts: _c, expand: _e, ...rest }) => rest;

/** Whether the drag's request carries the "ask" rows too: dense and hybrid ask the panels' questions
 * with the drag (their answers would need the chunks embedded again beside the sweep's, which an
 * embedding cancels); BM25 asks them at rest (the cuts alone split the document a second time). */
export const dragCarriesAsks = (state) => state.method !== "bm25";

/** The requests of a move: {page} (the page's request, `last.request`), {drag} (sent at once),
 * {panels} (the panels' questions asked at rest, or null when the drag asks them itself), {ahead}
 * (the drag's request without the panels' questions: the base of the settings embedded ahead). */
export function dragRequests(state, { embed = false } = {}) {
  const page = pageRequest(state, { embed });
  const sent = mainRequest(page, state);
  const { find, cuts, expand } = sent, ahead = withoutPanels(sent);
  const deferred = !dragCarriesAsks(state) && [find, cuts, expand].some((v) => v !== undefined);
  const { questions: _set, ...alone } = sent;
  return { page, drag: deferred ? ahead : sent, panels: deferred ? alone : null, ahead };
}

/** The drag's request less the panels' questions (how many chunks the setting embeds: your model's
 * cost), with `method` when given (the Retriever prepared for dense while BM25 ranks), less the
 * set's answer question too then. */
export function embedRequest(state, { embed = false, method } = {}) {
  if (!method) return withoutPanels(mainRequest(pageRequest(state, { embed }), state));
  const { questions: _q, ...bare } = withoutPanels(mainRequest(pageRequest({ ...state, method }, { embed }), state));
  return bare;
}

/** The settings one and two steps from the drag's (size ±1, ±2, then overlap), as requests: the
 * chunks dense embeds ahead of a drag; null for a splitter without a size or your index's chunks. */
export function aheadRequests(request) {
  const c = request.chunking;
  if (typeof c.size !== "number" || c.strategy === "stored") return null;
  const o = c.overlap ?? 0, steps = [[1, 0], [-1, 0], [0, 1], [0, -1], [2, 0], [-2, 0], [0, 2], [0, -2]];
  const near = steps.map(([ds, dov]) => ({ size: c.size + ds, overlap: o + dov }))
    .filter((n) => n.size >= 1 && n.overlap >= 0 && n.overlap < n.size && (c.overlap !== undefined || n.overlap === 0));
  return near.map((n) => ({ ...request, chunking: { ...c, size: n.size, ...(c.overlap !== undefined ? { overlap: n.overlap } : {}) } }));
}

/** An ask's request names the answers it wants (the core's `answers`, wire/answers.py): the verdict and
 * those of `names` whose field it holds, so a field it carries for another reason (the sweep's and the
 * map's question set) is not answered again. The drag's own request names none: it wants every answer
 * its fields ask for. */
const ASKED_BY = { questions: ["questions"], panels: ["find", "cuts", "sweep", "expand"], map: ["map"] };
const asking = (request, names) => ({
  ...request, answers: ["verdict", ...names.filter((n) => ASKED_BY[n].some((f) => request[f] != null))],
});

/** The set's request: the page's request for the set alone (no investigation panels' questions). */
export const setRequest = (request) => asking(withoutPanels(request), ["questions"]);

/** The overlap sweep's request (in investigate.js): the page's request at `overlaps`, no panels'
 * questions; the sweep's rows alone are answered (the set is scored by its own ask). */
export const sweepRequest = (request, overlaps) => asking(withoutPanels({ ...request, sweep: overlaps }), ["panels"]);

/** The map's request for some rows (`sizes`): the page's request without the investigation's
 * questions, its own setting made one of the rows' cells (their largest size, with the smallest
 * overlap: fewest chunks to rank and send back, and the core ranks the question set once for both),
 * unless `keep` (that setting was refused: the page's own). `fields`: the two the grid varies. */
export function rowRequest(request, sizes, overlaps, keep = false, largest = Math.max(...sizes), fields = ["size", "overlap"]) {
  const rest = withoutPanels(request);
  const least = Math.min(...overlaps), [rows, cols] = fields;
  const second = cols ? { [cols]: cols !== "overlap" || least < largest ? least : 0 } : {};
  const chunking = keep ? request.chunking : { ...request.chunking, [rows]: largest, ...second };
  return asking({ ...rest, chunking, wire: "columns", map: { sizes, overlaps } }, ["map"]); // the set is read as the map's questions
}

/** What the map depends on: the request but for the fields it varies itself (`fields`). */
export function mapKey(request, grid, fields) {
  const { chunking, ...rest } = withoutPanels(request);
  const others = { ...chunking };
  for (const f of fields) delete others[f];
  return JSON.stringify([rest, others, grid]);
}

/** The audit's request for one overlap, from the page's request. */
export function auditRequest(request, overlap, precisionK = 3) {
  const { overlap: _, ...chunking } = request.chunking;
  return { documents: request.documents, chunking, retrieval: request.retrieval, overlaps: [overlap], precision_k: precisionK };
}

/** The simulation that gives one question's context (and verdict) at a size and overlap (in ask-panel.js). */
export function contextRequest(request, q, size, overlap) {
  const { questions: _q, map: _m, ...base } = withoutPanels(request);
  return asking({ ...base, query: q.query, span: null, fact: null, chunking: { ...base.chunking, size, overlap },
    questions: [{ id: q.id, query: q.query, references: q.references }] }, ["questions"]);
}

// A document longer than this is not split again the hundred-odd times a fix takes (the worker would
// be busy for seconds while the user moves on); the verdict then says nothing of a fix.
export const MAX_FIX_CHARS = 200_000;

/** The request for the fix of a cut answer (JSON), or null when there is none to find: no cut
 * answer, your index's stored chunks, or a document too long to split again that often. */
export function fixRequest(last) {
  const req = last && last.request, v = last && last.response && last.response.verdict;
  if (!req || !v || v.kind !== "cut" || !req.span || !req.chunking || req.chunking.strategy === "stored") return null;
  const doc = req.documents.find((d) => d.id === req.span.doc) || req.documents[0];
  if (!doc || doc.text.length > MAX_FIX_CHARS) return null;
  return JSON.stringify({ documents: [doc], query: req.query, chunking: req.chunking, retrieval: { k: req.retrieval.k },
    span: { ...req.span, doc: doc.id }, ...(req.tokenizer ? { tokenizer: req.tokenizer } : {}) });
}

/** The equivalent code's request (JSON): the question, the splitter and the retriever. */
export function codeRequest({ query, chunking, retrieval }, reranked = null) {
  // your reranker as the response names it (`rerank`): the code reranks as the verdict was reranked
  const rerank = reranked ? { rerank: { endpoint: reranked.endpoint, model: reranked.model, depth: reranked.depth } } : {};
  return JSON.stringify({ query, chunking, retrieval: reranked ? { ...retrieval, ...rerank } : retrieval });
}

/** "Copy as command line": the page's request (the full page's, even in an embed) with your
 * reranker as the command line reaches it (never in an embed). */
export function commandRequest(state, { embed = false } = {}) {
  const r = pageRequest(state), yours = embed ? null : state.yourReranker;
  return yours ? { ...r, retrieval: { ...r.retrieval, rerank: { ...yours } } } : r;
}

/** Your index's placed chunks searched again for `phrase` (the worker's inspect; your-index.js): each
 * chunk's text is the page documents' own at its extents. */
export function recheckRequest(state, phrase) {
  const chunks = [];
  for (const d of state.docs) {
    const map = offsetMap(d.text);
    for (const c of state.index.result.chunks) {
      if (c.doc === d.id && c.placement !== "unplaced") chunks.push({ id: c.id, doc: c.doc, start: c.start, end: c.end, text: d.text.slice(map.toU16(c.start), map.toU16(c.end)) });
    }
  }
  return { chunks, documents: state.docs.map(({ id, text }) => ({ id, text })), phrases: phrase ? [phrase] : [] };
}
