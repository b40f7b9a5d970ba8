// assets/js/compute.js: the phase of the row that changed (params.js) decides whether the worker
// is asked. A "page" row sends nothing; an "ask" row (find, expand, the sweep's overlaps) under BM25
// sends no drag request but draws the result again with the page's new request, so the panels ask
// theirs at rest; a "setting" sends the drag's request.

import test from "node:test";
import assert from "node:assert/strict";

import { pageModule } from "./page-modules.mjs";
import { pageStates } from "./request-states.mjs";

globalThis.document ??= { body: { dataset: {} } }; // the Computer sets data-state on <body>
const { Computer } = await pageModule("compute.js");
const { Asks } = await pageModule("asks.js");
const { defaultState } = await pageModule("state.js");
const { rowNamed } = await pageModule("params.js");

/** A Computer over a fake worker that counts what it is sent and answers every simulation. */
function computer(state) {
  const sent = [], results = [];
  const gate = {
    submit: (message) => { sent.push(message); return Promise.resolve({ ok: true, ms: 1, result: JSON.stringify({ verdict: { kind: "intact" }, chunks: [], documents: [] }) }); },
    send: (message) => { sent.push(message); return Promise.resolve({ ok: true, result: "{}" }); },
  };
  const controls = { note() {}, noteKind: () => "", invalid() {} };
  const c = new Computer({ store: { state, embed: false }, controls, asks: new Asks(), onResult: (last) => results.push(last),
    onProblem: (p) => { if (p) throw new Error(p); }, onTurnedOff() {} });
  Object.assign(c, { gate, ready: true });
  return { c, sent, results };
}

test("a page-phase change sends nothing to the worker, and an ask-phase change no drag request", async () => {
  const { state } = pageStates(defaultState).plain;
  const { c, sent, results } = computer(state);
  await c.compute();
  assert.equal(sent.length, 1);
  assert.equal(results.length, 1);
  state.pdf_mode = "single";
  await c.compute(rowNamed("pdf_mode").phase);
  assert.deepEqual([sent.length, results.length], [1, 1]); // nothing sent, nothing drawn again
  state.find = "pilot boat";
  await c.compute(rowNamed("find").phase);
  assert.equal(sent.length, 1); // the drag's request is the one on screen
  assert.equal(results.length, 2); // drawn again: the page's request and the panels' ask the new phrase
  assert.equal(results[1].request.find, "pilot boat");
  assert.equal(results[1].panelRequest.find, "pilot boat");
  assert.equal(results[1].response.verdict, results[0].response.verdict);
  assert.ok(results[0].response.cols && results[1].response.cols === results[0].response.cols); // the columns kept (not enumerable)
  state.size = 9;
  await c.compute(rowNamed("size").phase);
  assert.equal(sent.length, 2); // a setting: the drag's request
  assert.equal(JSON.parse(sent[1].request).chunking.size, 9);
});

test("an ask-phase change under dense sends the drag's request (it asks the panels' questions itself)", async () => {
  const { state } = pageStates(defaultState).plain;
  const { c, sent } = computer(state);
  await c.compute();
  state.method = "dense";
  c.store.state.method = "dense";
  c.dense.prepare = (r) => r; // no embedding worker under Node: the request as it is
  c.dense.use = () => {};
  c.dense.hold = () => {};
  await c.compute();
  const before = sent.length;
  state.expand = "section";
  await c.compute(rowNamed("expand").phase);
  assert.equal(sent.length, before + 1);
  assert.deepEqual(JSON.parse(sent.at(-1).request).expand, { section: true });
});
