// Dense and hybrid retrieval in the page (issue 13, SPEC section 10): the similarities the core
// needs, from the embedding worker (assets/embed-worker.js), started only when dense or hybrid is
// first chosen.
//
// The core in Pyodide cannot embed, so a dense request carries `retrieval.similarities`, the
// cosines this page already has for the request's query by chunk position. When some are missing
// the core answers by BM25 for now with `dense.pending` and `dense.needs`; fill() embeds those
// chunks and the caller asks again. Cosines are kept by (model, query) and by chunk text, vectors
// by text in the worker: a drag back over settings seen before needs no embedding and one request.
//
//   const dense = new DenseClient({ onStatus: ({ state, text }) => ... });
//   dense.use("fp32");                       // or "q8", the int8 approximation
//   request = dense.prepare(request);        // + retrieval.similarities (a copy; bm25: unchanged)
//   const r = await dense.fill(request, response, "main");   // {ok} | {cancelled} | {ok: false, message}
//   const reply = await dense.simulate((req) => gate.send(...), request, "sweep");  // the round trip

import { offsetMap } from "./offsets.js";

const QUERIES_KEPT = 8; // queries whose cosines are kept (each: by position and by text)

export const isDense = (request) => Boolean(request.retrieval && request.retrieval.method && request.retrieval.method !== "bm25");

export class DenseClient {
  constructor({ onStatus = () => {} } = {}) {
    this.onStatus = onStatus;
    this.dtype = "fp32";
    this.worker = null;
    this.loaded = {}; // dtype -> promise of {ok, message?}
    this.jobs = new Map(); // job -> {resolve, lane}
    this.nextJob = 1;
    this.latest = {}; // lane -> newest job
    this.byQuery = new Map(); // `${dtype}\u0001${query}` -> {positions: Map(doc -> {text, sims: Map}), texts: Map(text -> cosine)}
    this.state = "idle";
    this.stats = { embedded: 0, loadMs: null };
  }

  use(dtype) { this.dtype = dtype === "q8" ? "q8" : "fp32"; }

  status(state, text = "") {
    this.state = state;
    document.body.dataset.dense = state;
    this.onStatus({ state, text });
  }

  cosines(query) {
    const key = `${this.dtype}\u0001${query}`;
    let c = this.byQuery.get(key);
    if (!c) {
      c = { positions: new Map(), texts: new Map() };
      this.byQuery.set(key, c);
      while (this.byQuery.size > QUERIES_KEPT) this.byQuery.delete(this.byQuery.keys().next().value);
    }
    return c;
  }

  /** The request with every cosine known for its query and documents as they are (a copy), and
   * for each question's query of its question set (`question_similarities`). */
  prepare(request, extra = []) {
    if (!isDense(request)) return request;
    const known = (query) => {
      const c = this.cosines(query), out = [];
      for (const d of request.documents) {
        const at = c.positions.get(d.id);
        if (!at || at.text !== d.text) continue;
        for (const [se, s] of at.sims) {
          const [start, end] = se.split(",").map(Number);
          out.push([d.id, start, end, s]);
        }
      }
      return out;
    };
    const retrieval = { ...request.retrieval, similarities: known(request.query) };
    const queries = [...new Set([...(request.questions || []).map((q) => q.query), ...extra])].filter((q) => q !== request.query);
    if (queries.length) retrieval.question_similarities = Object.fromEntries(queries.map((q) => [q, known(q)]));
    return { ...request, retrieval };
  }

  remember(c, doc, text, start, end, s) {
    let at = c.positions.get(doc);
    if (!at || at.text !== text) { at = { text, sims: new Map() }; c.positions.set(doc, at); }
    at.sims.set(`${start},${end}`, s);
  }

  /** Embed the chunks `response.dense.needs` names, and `question_needs` for each question's
   * query; their cosines are then known to prepare(). A chunk's vector is made once whatever the query. */
  async fill(request, response, lane = "main") {
    const d = response.dense || {};
    const asks = [[request.query, d.needs || []], ...Object.entries(d.question_needs || {})];
    for (const [query, needs] of asks) {
      const r = await this.fillQuery(request, query, needs, lane);
      if (!r.ok) return r;
    }
    return { ok: true };
  }

  async fillQuery(request, query, needs, lane) {
    if (!needs.length) return { ok: true };
    const c = this.cosines(query);
    const docs = new Map(request.documents.map((d) => [d.id, d.text]));
    const todo = []; // [doc, start, end, chunk text] still without a cosine
    for (const [doc, start, end] of needs) {
      const text = docs.get(doc) ?? "";
      const map = offsetMap(text);
      const chunk = text.slice(map.toU16(start), map.toU16(end));
      const known = c.texts.get(chunk);
      if (known !== undefined) this.remember(c, doc, text, start, end, known);
      else todo.push([doc, start, end, chunk]);
    }
    if (!todo.length) return { ok: true };
    const loaded = await this.load();
    if (!loaded.ok) return loaded;
    const texts = [...new Set(todo.map((t) => t[3]))];
    const reply = await this.embed(query, texts, lane);
    if (!reply.ok) return reply;
    texts.forEach((t, i) => c.texts.set(t, reply.scores[i]));
    for (const [doc, start, end, chunk] of todo) this.remember(c, doc, docs.get(doc), start, end, c.texts.get(chunk));
    this.stats.embedded += texts.length;
    return { ok: true };
  }

  /** The whole round trip for a caller outside the drag's gate (the overlap sweep, the map, the
   * audit): `send(request)` -> the worker's reply; asked again once the chunks it names are embedded
   * (with the cosines of every query it named: the audit's fact names). */
  async simulate(send, request, lane = "side") {
    let reply = await send(this.prepare(request));
    const queries = new Set();
    for (let round = 0; round < 3 && reply.ok && isDense(request); round++) {
      const response = JSON.parse(reply.result);
      if (!response.dense || !response.dense.pending) return reply;
      const filled = await this.fill(request, response, lane);
      if (!filled.ok) return filled.cancelled ? reply : { ok: false, error: { field: "retrieval.method", message: filled.message } };
      for (const q of Object.keys(response.dense.question_needs || {})) queries.add(q);
      reply = await send(this.prepare(request, [...queries]));
    }
    return reply;
  }

  start() {
    if (this.worker) return;
    this.worker = new Worker(new URL("../embed-worker.js", import.meta.url), { type: "module" });
    this.worker.addEventListener("message", (e) => this.receive(e.data));
    this.worker.addEventListener("error", (e) => {
      e.preventDefault?.();
      this.broken(`the embedding worker stopped (${e.message || "it could not be loaded"})`);
    });
  }

  /** The worker is gone: every waiting call fails, the next one starts a new worker. */
  broken(message) {
    if (this.worker) this.worker.terminate();
    this.worker = null;
    for (const [dtype, p] of Object.entries(this.loadWaiters || {})) p({ ok: false, message: sentence(message) }), delete this.loadWaiters[dtype];
    this.loaded = {};
    for (const { resolve } of this.jobs.values()) resolve({ ok: false, message: sentence(message) });
    this.jobs.clear();
  }

  load() {
    const dtype = this.dtype;
    if (this.loaded[dtype]) return this.loaded[dtype];
    this.start();
    const mb = (n) => (n / 1e6).toFixed(1);
    const name = dtype === "q8" ? "the int8 embedding model" : "the embedding model";
    this.status("loading", `Loading ${name}…`);
    this.onProgress = ({ loaded, total }) => this.status("loading", `Loading ${name}: ${mb(loaded)} of ${mb(total)} MB`);
    const started = performance.now();
    const promise = new Promise((resolve) => {
      this.loadWaiters = { ...(this.loadWaiters || {}), [dtype]: resolve };
      this.worker.postMessage({ type: "load", dtype });
    }).then((r) => {
      if (r.ok) { this.stats.loadMs = performance.now() - started; this.status("ready", ""); }
      else { delete this.loaded[dtype]; this.status("failed", r.message); }
      return r;
    });
    this.loaded[dtype] = promise;
    return promise;
  }

  embed(query, texts, lane) {
    const job = this.nextJob++;
    const superseded = this.latest[lane];
    this.latest[lane] = job;
    if (superseded && this.jobs.has(superseded)) this.jobs.get(superseded).resolve({ ok: false, cancelled: true });
    return new Promise((resolve) => {
      this.jobs.set(job, { resolve, lane, total: texts.length });
      this.worker.postMessage({ type: "embed", job, lane, query, texts });
    }).finally(() => {
      this.jobs.delete(job);
      if (!this.jobs.size && this.state === "embedding") this.status("ready", "");
    });
  }

  receive(m) {
    if (m.type === "progress") { if (this.onProgress) this.onProgress(m); return; }
    if (m.type === "loaded" || (m.type === "failed" && m.job === undefined)) {
      const waiters = this.loadWaiters || {};
      const dtype = Object.keys(waiters)[0];
      if (dtype) { waiters[dtype](m.type === "loaded" ? { ok: true } : { ok: false, message: modelSentence(m.message) }); delete waiters[dtype]; }
      return;
    }
    const j = this.jobs.get(m.job);
    if (!j) return;
    if (m.type === "embedding") {
      if (m.done < m.total) this.status("embedding", `Embedding ${m.done} of ${m.total} ${m.total === 1 ? "chunk" : "chunks"} for ${LANE_WORDS[j.lane] || "the page"}…`);
      else if (this.state === "embedding") this.status("ready", "");
    } else if (m.type === "scores") {
      j.resolve({ ok: true, scores: m.scores });
    } else if (m.type === "cancelled") {
      j.resolve({ ok: false, cancelled: true });
    } else if (m.type === "failed") {
      this.status("failed", modelSentence(m.message));
      j.resolve({ ok: false, message: modelSentence(m.message) });
    }
  }
}

// Which job a lane's embedding is for (issue 23: the counts of several jobs no longer jump in one line).
const LANE_WORDS = { main: "the picture", questions: "the question set", map: "the settings map",
  sweep: "the panels below the picture", audit: "the corpus audit" };

const sentence = (reason) => `The embedding model could not be loaded: ${reason}.`;
const modelSentence = (reason) => sentence(String(reason || "no reason was given").replace(/\.\s*$/, "").slice(0, 200));
