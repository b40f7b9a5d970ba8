// assets/js/rerank-runs.js and your-reranker.js's Reranker: a long run reranked with the scores kept,
// the built-in ranking's reply standing while the lists the core names are asked, Stop and a failure
// leaving it, and a list never asked twice. The core and the endpoint are stood in for: `simulate`
// answers `rerank.needs` for the lists a request lacks, `Reranker.ask` answers reversed scores.

import test from "node:test";
import assert from "node:assert/strict";

import { RerankRuns, pendingNeeds, unmarked } from "../../assets/js/rerank-runs.js";
import { Reranker } from "../../assets/js/your-reranker.js";

const CHOSEN = { endpoint: "http://127.0.0.1:9/v1", model: "reverse", depth: 3 };
const LISTS = [{ query: "a", texts: ["x", "y"] }, { query: "b", texts: ["y", "z"] }, { query: "c", texts: ["z", "x"] }];
const REQUEST = { query: "a", questions: [{ id: "1", query: "b" }, { id: "2", query: "c" }], retrieval: { k: 1 } };

/** A core: the lists of LISTS its request lacks named in `rerank.needs`; `sent` records each request. */
function core(sent) {
  return async (request) => {
    sent.push(request);
    const r = request.retrieval.rerank;
    const response = { questions: [] };
    if (r) {
      const given = new Set((r.scores || []).map((e) => JSON.stringify([e.query, e.texts])));
      const needs = LISTS.filter((l) => !given.has(JSON.stringify([l.query, l.texts])));
      response.rerank = { model: r.model, depth: r.depth, pending: needs.length > 0, needs };
    }
    return { ok: true, result: JSON.stringify(response) };
  };
}

/** A Reranker whose endpoint answers reversed scores (after `wait`), counting what it was asked. */
function reranker(asked, { wait = null, fail = null } = {}) {
  const r = new Reranker();
  r.ask = async (chosen, target, query, texts) => {
    asked.push(JSON.stringify([query, texts]));
    if (wait) await wait();
    if (fail && asked.length >= fail) throw Object.assign(new Error(`${target} did not answer with rerank results.`), { said: true });
    return { results: texts.map((_, i) => ({ index: i, relevance_score: i })) };
  };
  return r;
}

const runs = (r, extra = {}) => new RerankRuns({ reranker: r, chosen: () => CHOSEN, failed: () => {}, again: () => {}, ...extra });

test("without a reranker the request goes as it is, its mark taken off", async () => {
  const sent = [];
  const reply = await new RerankRuns({ reranker: new Reranker(), chosen: () => null, failed() {}, again() {} })
    .run(core(sent), "questions", { ...REQUEST, retrieval: { k: 1, rerank: { ...CHOSEN } } });
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].retrieval, { k: 1 });
  assert.equal(pendingNeeds(reply), null);
});

test("the lists named are asked once each, the built-in reply shown meanwhile, then the reranked reply with exactly them", async () => {
  const sent = [], asked = [], shown = [], r = reranker(asked);
  const reply = await runs(r).run(core(sent), "questions", REQUEST, { interim: (x) => shown.push(JSON.parse(x.result)) });
  assert.equal(asked.length, 3);
  assert.equal(shown.length, 1);
  assert.equal(shown[0].rerank.pending, true); // the built-in ranking's: no scores sent, every list named
  assert.equal(sent[0].retrieval.rerank.scores.length, 0);
  const response = JSON.parse(reply.result);
  assert.equal(response.rerank.pending, false);
  assert.equal(sent.at(-1).retrieval.rerank.scores.length, 3); // exactly the lists named
  // again: every list kept, nothing asked, nothing shown meanwhile
  const again = await runs(r).run(core(sent), "questions", REQUEST, { interim: (x) => shown.push(x) });
  assert.equal(asked.length, 3);
  assert.equal(shown.length, 1);
  assert.equal(JSON.parse(again.result).rerank.pending, false);
});

test("two runs needing the same list ask it once", async () => {
  const asked = [];
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const r = reranker(asked, { wait: () => gate });
  const both = Promise.all([runs(r).run(core([]), "questions", REQUEST), runs(r).run(core([]), "map", REQUEST)]);
  await new Promise((resolve) => setTimeout(resolve, 10));
  release();
  const replies = await both;
  assert.deepEqual([...new Set(asked)].length, asked.length);
  assert.ok(replies.every((x) => JSON.parse(x.result).rerank.pending === false));
});

test("Stop asks nothing more and leaves the built-in reply; Resume goes on", async () => {
  const asked = [];
  let again = 0;
  const rr = runs(null, { again: () => { again++; } });
  rr.reranker = reranker(asked, { wait: async () => { if (asked.length === 1) rr.stop(); } });
  const reply = await rr.run(core([]), "questions", REQUEST);
  assert.equal(asked.length, 1);
  assert.equal(JSON.parse(reply.result).rerank.pending, true); // the built-in ranking's
  assert.equal(again, 1); // the long runs computed again without the reranker
  assert.equal(rr.counts.questions.done, 1);
  const still = await rr.run(core([]), "questions", REQUEST); // stopped: not asked, built-in
  assert.equal(asked.length, 1);
  assert.equal(JSON.parse(still.result).rerank, undefined);
  rr.resume();
  const done = await rr.run(core([]), "questions", REQUEST);
  assert.equal(asked.length, 3);
  assert.equal(JSON.parse(done.result).rerank.pending, false);
});

test("a bad reply is the reranker's one sentence and the built-in reply stands", async () => {
  const said = [];
  const rr = runs(reranker([], { fail: 2 }), { failed: (s) => said.push(s) });
  const reply = await rr.run(core([]), "questions", REQUEST);
  assert.deepEqual(said, ["http://127.0.0.1:9/v1/rerank did not answer with rerank results."]);
  assert.equal(JSON.parse(reply.result).rerank.pending, true); // the built-in ranking's
});

test("unmarked takes retrieval.rerank off and leaves a request without one as it is", () => {
  assert.deepEqual(unmarked({ query: "q", retrieval: { k: 2, rerank: CHOSEN } }), { query: "q", retrieval: { k: 2 } });
  const plain = { query: "q", retrieval: { k: 2 } };
  assert.equal(unmarked(plain), plain);
});
