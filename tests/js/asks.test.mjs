// assets/js/asks.js: the one scheduler of work at rest.

import test from "node:test";
import assert from "node:assert/strict";

import { Asks, PRIORITY, REST_MS } from "../../assets/js/asks.js";

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const answer = (log, name, value = { ok: true, name }) => () => { log.push(name); return Promise.resolve(value); };

test("nothing is asked before the page rests; at rest the most urgent lane goes first", async () => {
  const asks = new Asks(), log = [];
  asks.moved();
  const map = asks.ask("map", 1, answer(log, "map"));
  const sweep = asks.ask("sweep", 1, answer(log, "sweep"));
  const questions = asks.ask("questions", 1, answer(log, "questions"));
  await wait(REST_MS / 3);
  assert.deepEqual(log, []);
  await Promise.all([map, sweep, questions]);
  assert.deepEqual(log, ["questions", "sweep", "map"]);
  assert.ok(PRIORITY.questions < PRIORITY.sweep && PRIORITY.sweep < PRIORITY.map);
});

test("a move or a drag in flight puts the rest off", async () => {
  const asks = new Asks(), log = [];
  let answered;
  asks.track(new Promise((resolve) => { answered = resolve; }));
  const code = asks.ask("code", "a", answer(log, "code"));
  await wait(REST_MS * 1.5);
  assert.deepEqual(log, []); // the drag is still in flight
  answered();
  await code;
  assert.deepEqual(log, ["code"]);
  assert.equal(asks.resting, true);
  asks.moved();
  assert.equal(asks.resting, false);
});

test("the same lane and key are merged; a newer key replaces the one still queued", async () => {
  const asks = new Asks(), log = [];
  asks.moved();
  const a = asks.ask("code", "a", answer(log, "a"));
  const b = asks.ask("code", "b", answer(log, "b"));
  const b2 = asks.ask("code", "b", answer(log, "b again"));
  assert.equal(b, b2);
  assert.deepEqual(await a, { dropped: true });
  assert.deepEqual(await b, { ok: true, name: "b" });
  assert.deepEqual(log, ["b"]);
});

test("a lane runs one ask at a time unless it asks for the latest", async () => {
  const asks = new Asks(), log = [];
  let finish;
  asks.moved();
  await asks.rest();
  const first = asks.ask("sweep", 1, () => { log.push("fill"); return new Promise((resolve) => { finish = resolve; }); });
  const second = asks.ask("sweep", 2, answer(log, "sweep"));
  await wait(5);
  assert.deepEqual(log, ["fill"]);
  finish({ ok: true });
  await Promise.all([first, second]);
  assert.deepEqual(log, ["fill", "sweep"]);
  asks.ask("questions", 1, () => { log.push("old set"); return new Promise(() => {}); }, { latest: true });
  await asks.ask("questions", 2, answer(log, "new set"), { latest: true });
  assert.deepEqual(log.slice(2), ["old set", "new set"]);
});

test("an ask that throws answers {ok: false} and the lane goes on", async () => {
  const asks = new Asks();
  asks.moved();
  const reply = await asks.ask("map", 1, () => { throw new Error("boom"); });
  assert.equal(reply.ok, false);
  assert.match(reply.error.message, /boom/);
  assert.deepEqual(await asks.ask("map", 2, () => Promise.resolve({ ok: true })), { ok: true });
});

test("quiet resolves once the page rests and every ask it set going, and those they set, is done", async () => {
  const asks = new Asks(), log = [];
  let release;
  asks.moved();
  asks.ask("map", 1, () => new Promise((resolve) => { release = () => { log.push("map"); resolve({ ok: true }); }; }));
  let quiet = false;
  const done = asks.quiet().then(() => { quiet = true; });
  await wait(REST_MS * 1.5);
  assert.equal(quiet, false); // at rest, but the map is still running
  asks.ask("sweep", 1, answer(log, "sweep")); // asked while it runs: runs at once (at rest)
  release();
  await done;
  assert.deepEqual(log, ["sweep", "map"]);
  await asks.quiet(); // at rest with nothing left: at once
});
