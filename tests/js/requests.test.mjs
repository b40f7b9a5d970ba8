// assets/js/requests.js: every request the page sends, derived from the state in one place. The
// requests of a few states are pinned against what the page sent before they were derived there
// (requests.recorded.json, recorded from the old builders: params.js buildRequest with the set and
// the panels' questions, compute.js, question-wire.js, the map, the audit, the ask, the fix, the
// code and the command line).

import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { pageModule } from "./page-modules.mjs";
import { pageStates } from "./request-states.mjs";

const RECORDED = JSON.parse(readFileSync(new URL("./requests.recorded.json", import.meta.url), "utf-8"));
const R = await pageModule("requests.js");
const { defaultState, sweepOverlaps } = await pageModule("state.js");
const { PARAMS } = await pageModule("params.js");

/** Each request of one state, as the page derives it now, in the recorded form (JSON text). */
function derived(state, embed) {
  const { page, drag, panels, ahead } = R.dragRequests(state, { embed });
  const r = { page, drag, panels, ahead };
  r.prepareDense = R.embedRequest(state, { embed, method: "dense" });
  r.embedCost = R.embedRequest(state, { embed });
  r.set = R.setRequest(page);
  r.mapRows = R.rowRequest(page, [6, 10], [0, 2]);
  r.mapRowsKept = R.rowRequest(page, [10], [1, 4], true);
  r.mapKey = R.mapKey(page, { sizes: [6, 10], overlaps: [0, 2] }, ["size", "overlap"]);
  r.audit = R.auditRequest(page, 3);
  if (page.questions) r.context = R.contextRequest(page, page.questions[0], 9, 1);
  r.fix = R.fixRequest({ request: page, response: { verdict: { kind: "cut" } } });
  r.code = R.codeRequest(page);
  r.sweep = R.sweepRequest(page, sweepOverlaps(state));
  for (const key of Object.keys(ASKS)) { // each ask at rest names its answers: recorded before it did
    if (!r[key]) continue;
    const { answers, ...rest } = r[key];
    const own = ASKS[key].filter((n) => n !== "questions" || r[key].questions); // a set only where there is one
    assert.deepEqual(answers, own, `${key}'s answers`);
    r[key] = rest;
  }
  return r;
}

/** The answers each ask at rest names (the core's `answers`): the verdict and its own. */
const ASKS = { set: ["verdict", "questions"], mapRows: ["verdict", "map"], mapRowsKept: ["verdict", "map"],
  context: ["verdict", "questions"], sweep: ["verdict", "panels"] };

test("every request of every state is the one the page sent before, byte for byte", async () => {
  const { commandLine } = await pageModule("copy-command.js");
  const states = pageStates(defaultState);
  assert.deepEqual(Object.keys(states), Object.keys(RECORDED));
  for (const [name, { state, embed }] of Object.entries(states)) {
    const now = derived(state, embed);
    now.command = commandLine(R.commandRequest(state, { embed }));
    const json = Object.fromEntries(Object.entries(now).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
    assert.deepEqual(Object.keys(json).sort(), Object.keys(RECORDED[name]).sort(), name);
    for (const key of Object.keys(json)) assert.equal(json[key], RECORDED[name][key], `${name}: ${key}`);
  }
});

test("the drag's request carries no panel question under BM25, and the page's request every one", () => {
  const { state } = pageStates(defaultState).set;
  const { page, drag, panels } = R.dragRequests(state);
  assert.deepEqual([page.find, page.expand, page.cuts, page.questions.length], ["ferry", { neighbours: 1 }, true, 2]);
  for (const key of ["find", "expand", "cuts", "questions"]) assert.ok(!(key in drag), key);
  assert.deepEqual([panels.find, panels.cuts, "questions" in panels], ["ferry", true, false]);
  const dense = R.dragRequests({ ...state, method: "dense" });
  assert.equal(dense.panels, null);
  assert.equal(dense.drag.find, "ferry"); // dense asks the panels' questions with the drag
});

test("find, expand and the sweep's overlaps are rows of the table that reach only the requests at rest", () => {
  const rows = Object.fromEntries(PARAMS.map((p) => [p.name, p]));
  for (const name of ["find", "expand", "overlaps"]) assert.equal(rows[name].phase, "ask", name);
  assert.equal(rows.pdf_mode.phase, "page");
  assert.equal(rows.size.phase, "setting");
  const { state } = pageStates(defaultState).plain;
  const before = R.dragRequests(state).drag;
  for (const change of [{ find: "pilot" }, { expand: "section" }, { overlaps: [0, 5] }, { pdf_mode: "single" }]) {
    assert.deepEqual(R.dragRequests({ ...state, ...change }).drag, before, JSON.stringify(change));
  }
  assert.notDeepEqual(R.dragRequests({ ...state, size: 9 }).drag, before);
});

const TEXT = "🙂 Fog closes the harbour. The pilot boat leaves at nine.";
const FOG = { start: TEXT.indexOf("Fog"), end: TEXT.indexOf("Fog") + "Fog closes the harbour.".length };
const qpage = (questions, extra = {}) => ({
  docs: [{ id: "a", text: TEXT }, { id: "b", text: "stored text" }], sel: 0, doc: TEXT, q: "fog", questions, ...extra,
});

test("the drag's request leaves the set out; a multi-span answer becomes its one question", () => {
  const request = { query: "fog", questions: [{ id: "1" }], cuts: true, find: "x", expand: { neighbours: 1 } };
  assert.deepEqual(R.mainRequest(request, qpage([])), { query: "fog", cuts: true, find: "x", expand: { neighbours: 1 } });
  const pilot = { doc: "a", start: TEXT.indexOf("The pilot"), end: TEXT.length };
  const s = qpage([], { span: { doc: "a", ...FOG }, spans: [{ doc: "a", ...FOG }, pilot] });
  assert.deepEqual(R.mainRequest(request, s).questions, [{ id: "answer", query: "fog", references: [
    { doc: "a", start: FOG.start - 1, end: FOG.end - 1 }, { doc: "a", start: pilot.start - 1, end: pilot.end - 1 }] }]);
  assert.deepEqual(R.setRequest(request), { query: "fog", questions: [{ id: "1" }], answers: ["verdict", "questions"] });
});

test("the settings dense embeds ahead are one and two steps from the drag's, none for stored chunks", () => {
  const states = pageStates(defaultState);
  const { ahead } = R.dragRequests(states.plain.state);
  const near = R.aheadRequests(ahead).map((r) => [r.chunking.size, r.chunking.overlap]);
  assert.deepEqual(near, [[9, 2], [7, 2], [8, 3], [8, 1], [10, 2], [6, 2], [8, 4], [8, 0]]);
  assert.deepEqual(R.aheadRequests(ahead)[0], { ...ahead, chunking: { ...ahead.chunking, size: 9 } });
  assert.equal(R.aheadRequests(R.dragRequests(states.stored.state).ahead), null);
});
