// Dense and hybrid retrieval in the page (SPEC section 10): the similarities the core
// needs, from the embedding worker (assets/embed-worker.js), started only when dense or hybrid is
// first chosen.
//
// The core in Pyodide cannot embed, so a dense request carries `retrieval.similarities`, the
// cosines this page already has for the request's query by chunk position. When some are missing
// the core answers by BM25 for now with `dense.pending` and `dense.needs`; fill() embeds those
// chunks and the caller asks again. Cosines are kept by (model, query) and by chunk text, vectors
// in the worker by what the model reads: a drag back over settings seen before needs no embedding.
//
// Scheduling: every embedding is a job of a kind in JOBS, and the worker runs the most
// urgent kind first, one batch at a time: the setting on screen, then its question set, then the
// settings embedded ahead (so the next step of a drag is ready), then the panels below the picture
// (the overlap sweep, the audit), then the map. While the user drags (hold()), only the setting
// on screen is embedded; the rest resume once the page rests (asks.js). Another kind of job joins with
// one row in JOBS (or addJobKind): its priority and the words its note says.
//
//   const dense = new DenseClient({ onStatus: ({ state, text }) => ... });
//   dense.use("fp32");                       // or "q8", the int8 approximation
//   request = dense.prepare(request);        // + retrieval.similarities (a copy; bm25: unchanged)
//   const r = await dense.fill(request, response, "main");   // {ok} | {cancelled} | {ok: false, message}
//   const reply = await dense.simulate((req) => gate.send(...), request, "sweep");  // the round trip
//   dense.hold();                            // a drag: everything but "main" waits until the controls rest
//   await dense.ahead(send, [request, ...]); // the neighbouring settings embedded, within a budget

import { offsetMap } from "./offsets.js";
import { PRIORITY } from "./asks.js";
import { EndpointWorker } from "./endpoint-embedder.js";

const QUERIES_KEPT = 8; // queries whose cosines are kept (each: by position and by text)
export const AHEAD_BUDGET_S = 20; // the model time the settings ahead may take, at most, per rest
const DEFAULT_RATE = 20; // chunks per second until the model has been timed here
const ENDPOINT_RATE = 100; // the same for your own model's endpoint (a local server, batches of 64)
// Your own model (an endpoint on this computer: endpoint-embedder.js) is the dtype `YOURS`, with
// its endpoint and name once the user pressed "Use this model"; it has a worker of its own.
export const YOURS = "yours";
const workerKey = (dtype) => (dtype.startsWith(YOURS) ? dtype : "minilm");

const count = (n, one = "chunk", many = "chunks") => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** The kinds of embedding job: the worker runs the lowest priority first (the page's one order,
 * asks.js PRIORITY). `words(done, total, label)` is the note while one runs; `label` is what the
 * caller said the job is about. */
export const JOBS = {
  main: { priority: PRIORITY.main, words: (d, t) => `Embedding this setting: ${d} of ${count(t)}` },
  questions: { priority: PRIORITY.questions, words: (d, t) => `Question set: ${d} of ${count(t)}` },
  ahead: { priority: PRIORITY.ahead, words: (d, t, label) => `Ahead: ${label} (${d} of ${count(t)})` },
  sweep: { priority: PRIORITY.sweep, words: (d, t) => `Overlap sweep: ${d} of ${count(t)}` },
  audit: { priority: PRIORITY.audit, words: (d, t) => `Corpus audit: ${d} of ${count(t)}` },
  ask: { priority: PRIORITY.ask, words: (d, t) => `Your model's prompts: ${d} of ${count(t)}` },
  map: { priority: PRIORITY.map, words: (d, t) => `Map: ${d.toLocaleString("en-US")} of ${count(t)}` },
};

/** Another kind of embedding job (a lane of its own): `priority` among JOBS', `words` for its note. */
export function addJobKind(lane, { priority, words }) { JOBS[lane] = { priority, words }; }

const kindOf = (lane) => JOBS[lane] || JOBS[String(lane).replace(/\d+$/, "")] || { priority: 1, words: (d, t) => `Embedding ${d} of ${count(t)}` };

export const isDense = (request) => Boolean(request.retrieval && request.retrieval.method && request.retrieval.method !== "bm25");

/** The sentence that says what the model runs on. */
export function backendWords(b) {
  if (!b) return "";
  if (b.device === "endpoint") return `Embedding with ${b.model} at ${b.url} (${b.dims} dimensions).`;
  if (b.device === "webgpu") return "Embedding on WebGPU.";
  const threads = b.threads > 1 ? `${b.threads} threads` : "1 thread";
  return `Embedding on WebAssembly, ${threads}${b.isolated ? "" : " (this page is not cross-origin isolated, so one)"}.`;
}

/** "size 25", "sizes 23–25", "sizes 23–25, overlaps 5–7": the settings a list of chunkings covers. */
export function settingsWords(chunkings) {
  const span = (name, values) => {
    const v = [...new Set(values)].sort((a, b) => a - b);
    return v.length === 1 ? `${name} ${v[0]}` : `${name}s ${v[0]}–${v[v.length - 1]}`;
  };
  const sizes = chunkings.map((c) => c.size), overlaps = chunkings.map((c) => c.overlap ?? 0);
  return new Set(overlaps).size > 1 ? `${span("size", sizes)}, ${span("overlap", overlaps)}` : span("size", sizes);
}

export class DenseClient {
  constructor({ onStatus = () => {} } = {}) {
    this.onStatus = onStatus;
    this.dtype = "fp32";
    this.miniDtype = "fp32"; // all-MiniLM-L6-v2's, the last chosen: the semantic chunkers embed with it whatever ranks
    // by "minilm" or your model's dtype: its worker, what it runs on (once loaded), its pace {embedded, ms}
    Object.assign(this, { workers: {}, backends: {}, rates: {} });
    this.yours = null; // your model, {endpoint, model}, once "Use this model" was pressed
    this.paused = false; // your model's Stop (your-model.js): nothing more is sent to it until "Use this model"
    this.loaded = {}; // dtype -> promise of {ok, message?}
    this.jobs = new Map(); // job -> {resolve, lane, label, done, total}
    this.nextJob = 1;
    this.latest = {}; // lane -> newest job
    this.byQuery = new Map(); // `${dtype}\u0001${query}` -> {positions: Map(doc -> {text, sims: Map}), texts: Map(text -> cosine)}
    this.state = "idle";
    this.held = false;
    this.stats = { embedded: 0, lanes: {}, modelMs: 0, loadMs: null, backend: null };
  }

  /** The model: "fp32" or "q8" (all-MiniLM-L6-v2), or "yours" with `yours` ({endpoint, model}; null before "Use this model"). */
  use(dtype, yours = null) {
    if (dtype !== YOURS) { this.dtype = this.miniDtype = dtype === "q8" ? "q8" : "fp32"; return; }
    this.yours = yours;
    this.dtype = yours ? `${YOURS}\u0001${yours.endpoint}\u0001${yours.model}` : YOURS;
  }

  get isEndpoint() { return this.dtype.startsWith(YOURS); }
  get worker() { return this.workers[workerKey(this.dtype)] || null; }
  get backend() { return this.backends[workerKey(this.dtype)] || null; }

  /** Chunks per second the model has embedded here (a default until it has run). */
  rate() { return paceOf(this.rates[workerKey(this.dtype)], this.isEndpoint ? ENDPOINT_RATE : DEFAULT_RATE); }

  status(state, text = "") {
    this.state = state;
    document.body.dataset.dense = state;
    this.onStatus({ state, text });
  }

  /** The note for the most urgent job still running, or the backend once none is. */
  report() {
    const running = [...this.jobs.values()].filter((j) => j.total > 0 && j.done < j.total);
    if (!running.length) { this.status("ready", backendWords(this.backend)); return; }
    const kinds = (j) => kindOf(j.lane).priority;
    const j = running.filter((x) => !this.held || kinds(x) === 0).sort((a, b) => kinds(a) - kinds(b) || a.job - b.job)[0];
    if (!j) { this.status("embedding", `${running.length === 1 ? "One job waits" : `${running.length} jobs wait`} while you drag.`); return; }
    const who = this.isEndpoint && this.yours ? `${this.yours.model}: ` : "";
    this.status("embedding", `${who}${kindOf(j.lane).words(j.done, j.total, j.label || "")}…`);
  }

  /** A drag is on: only the setting on screen is embedded until the page rests (release, called at
   * the scheduler's rest: asks.js). */
  hold() {
    if (this.held) return;
    this.held = true;
    for (const w of Object.values(this.workers)) w.postMessage({ type: "hold", on: true });
  }

  release() {
    if (!this.held) return;
    this.held = false;
    for (const w of Object.values(this.workers)) w.postMessage({ type: "hold", on: false });
    if (this.jobs.size) this.report();
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
   * query; their cosines are then known to prepare(). A chunk's vector is made once whatever the
   * query: the first job embeds every text any query needs (one job, one progress count), the
   * other queries' jobs then find every vector made. */
  async fill(request, response, lane = "main", label = "") {
    const d = response.dense || {};
    const asks = [[request.query, d.needs || []], ...Object.entries(d.question_needs || {})]
      .map(([query, needs]) => [query, this.unknown(request, query, needs)]).filter(([, todo]) => todo.length);
    if (!asks.length) return { ok: true };
    if (this.isEndpoint && this.paused) return { ok: false, cancelled: true }; // stopped: "Use this model" goes on
    const loaded = await this.load();
    if (!loaded.ok) return loaded;
    const all = [...new Set(asks.flatMap(([, todo]) => todo.map((t) => t[3])))];
    for (const [i, [query, todo]] of asks.entries()) {
      const r = await this.fillQuery(request, query, todo, i === 0 ? all : [...new Set(todo.map((t) => t[3]))], lane, label);
      if (!r.ok) return r;
    }
    return { ok: true };
  }

  /** The chunk texts of `needs` ([doc, start, end]) that have no cosine for `query` yet: [[doc, start, end, text]]. */
  unknown(request, query, needs) {
    const c = this.cosines(query), docs = new Map(request.documents.map((d) => [d.id, d.text])), maps = new Map();
    const todo = [];
    for (const [doc, start, end] of needs) {
      const text = docs.get(doc) ?? "";
      if (!maps.has(doc)) maps.set(doc, offsetMap(text));
      const map = maps.get(doc), chunk = text.slice(map.toU16(start), map.toU16(end));
      const known = c.texts.get(chunk);
      if (known !== undefined) this.remember(c, doc, text, start, end, known);
      else todo.push([doc, start, end, chunk]);
    }
    return todo;
  }

  /** `texts` embedded (or found) and their cosines with `query` kept; `todo`'s positions remembered. */
  async fillQuery(request, query, todo, texts, lane, label) {
    const c = this.cosines(query), docs = new Map(request.documents.map((d) => [d.id, d.text]));
    const reply = await this.embed(query, texts, lane, label);
    if (!reply.ok) return reply;
    texts.forEach((t, i) => c.texts.set(t, reply.scores[i]));
    for (const [doc, start, end, chunk] of todo) this.remember(c, doc, docs.get(doc), start, end, c.texts.get(chunk));
    return { ok: true };
  }

  /** The whole round trip for a caller outside the drag's gate (the overlap sweep, the map, the
   * audit): `send(request)` -> the worker's reply; asked again once the chunks it names are embedded
   * (with the cosines of every query it named: the audit's fact names). */
  async simulate(send, request, lane = "side", label = "") {
    let reply = await send(this.prepare(request));
    const queries = new Set();
    for (let round = 0; round < 3 && reply.ok && isDense(request); round++) {
      const response = JSON.parse(reply.result);
      if (!response.dense || !response.dense.pending) return reply;
      const filled = await this.fill(request, response, lane, label);
      if (!filled.ok) return filled.cancelled ? reply : { ok: false, error: { field: "retrieval.method", message: filled.message } };
      for (const q of Object.keys(response.dense.question_needs || {})) queries.add(q);
      reply = await send(this.prepare(request, [...queries]));
    }
    return reply;
  }

  /** What embedding `request` still needs, asked of the core once (`send` -> its reply): {ok,
   * response, chunks (distinct texts without a cosine), seconds (at this page's rate)}. */
  async plan(send, request) {
    const reply = await send(this.prepare(request));
    if (!reply.ok) return { ok: false, error: reply.error };
    const response = JSON.parse(reply.result), d = response.dense || {};
    const texts = new Set();
    for (const [query, needs] of [[request.query, d.needs || []], ...Object.entries(d.question_needs || {})]) {
      for (const t of this.unknown(request, query, needs)) texts.add(t[3]);
    }
    const chunks = await this.missing([...texts]);
    return { ok: true, response, chunks, seconds: chunks / this.rate() };
  }

  /** The chunks of `request` (the setting on screen, ranked by BM25 still) embedded in the lane of
   * the settings ahead once the model is loaded, when their model time fits AHEAD_BUDGET_S and
   * `isCurrent()` still holds (the computer's `prepareDense`). */
  async prepareSetting(send, request, isCurrent) {
    const loaded = await (this.loaded[this.dtype] || this.load());
    if (!loaded.ok || !isCurrent()) return;
    const p = await this.plan(send, request);
    if (!p.ok || !p.chunks || p.seconds > AHEAD_BUDGET_S || !isCurrent()) return;
    await this.fill(request, p.response, "ahead0", settingsWords([request.chunking]));
  }

  /** How many of `texts` the model has not read yet (all of them before the model is loaded). */
  missing(texts) {
    if (!texts.length || !this.worker || !this.loaded[this.dtype]) return Promise.resolve(texts.length);
    return this.loaded[this.dtype].then((r) => (!r.ok ? texts.length : new Promise((resolve) => {
      const job = this.nextJob++;
      this.counting = { ...(this.counting || {}), [job]: resolve };
      this.worker.postMessage({ type: "count", job, texts });
    })));
  }

  /** While the controls rest: the chunks of `requests` (the neighbouring settings, nearest first)
   * embedded ahead, each its own job behind the panels', as many as fit in AHEAD_BUDGET_S of the
   * model's time. Resolves once they are embedded, replaced by a newer plan, or stopped. */
  async ahead(send, requests, isCurrent = () => true) {
    this.aheadBusy = true;
    try { await this.aheadPlanned(send, requests, isCurrent); } finally { this.aheadBusy = false; }
  }

  async aheadPlanned(send, requests, isCurrent) {
    const plans = [];
    let seconds = 0;
    for (const request of requests) {
      if (!isCurrent()) return;
      const p = await this.plan(send, request);
      if (!p.ok || !p.chunks) continue;
      if (plans.length && seconds + p.seconds > AHEAD_BUDGET_S) break;
      seconds += p.seconds;
      plans.push({ request, ...p });
    }
    if (!isCurrent()) return;
    for (const lane of Object.keys(this.latest)) {
      if (/^ahead\d+$/.test(lane) && Number(lane.slice(5)) >= plans.length) this.cancel(lane);
    }
    const label = settingsWords(plans.map((p) => p.request.chunking));
    await Promise.all(plans.map((p, i) => this.fill(p.request, p.response, `ahead${i}`, label)));
  }

  /** The jobs waiting or running: [{lane, done, total, embedded}] (the page's test hook). */
  running() { return [...this.jobs.values()].map(({ lane, done, total, embedded = 0 }) => ({ lane, done, total, embedded })); }

  /** How far the newest job of `lane` is: {done, total}, or null when none runs. */
  progress(lane) {
    const j = this.jobs.get(this.latest[lane]);
    return j ? { done: j.done, total: j.total } : null;
  }

  /** Stop a lane's job (the map's Stop button): what it embedded so far stays. */
  cancel(lane) {
    const job = this.latest[lane];
    if (job && this.jobs.has(job)) this.jobs.get(job).resolve({ ok: false, cancelled: true });
    if (this.worker) this.worker.postMessage({ type: "cancel", lane });
  }

  start() {
    if (this.worker) return;
    if (this.isEndpoint) adopt(this, this.dtype, new EndpointWorker({ url: this.yours.endpoint, model: this.yours.model, dtype: this.dtype }));
    else this.startMini();
  }

  /** all-MiniLM-L6-v2's worker (the embed-worker module), started once: the dense retriever's and
   * the semantic chunkers' (which embed with it whichever model ranks). */
  startMini() {
    if (this.workers.minilm) return this.workers.minilm;
    const w = adopt(this, "minilm", new Worker(new URL("../embed-worker.js", import.meta.url), { type: "module" }));
    w.addEventListener("error", (e) => { e.preventDefault?.(); this.broken(`the embedding worker stopped (${e.message || "it could not be loaded"})`); });
    return w;
  }

  get miniWorker() { return this.workers.minilm || null; }

  /** The worker is gone: every waiting call fails, the next one starts a new worker. */
  broken(message) {
    if (this.workers.minilm) this.workers.minilm.terminate();
    delete this.workers.minilm;
    for (const [dtype, p] of Object.entries(this.loadWaiters || {})) p({ ok: false, message: sentence(message) }), delete this.loadWaiters[dtype];
    this.loaded = {};
    for (const { resolve } of this.jobs.values()) resolve({ ok: false, message: sentence(message) });
    this.jobs.clear();
  }

  /** Load the model ahead, embedding nothing: called when the user points at the
   * Retriever, so its 3-4 s of loading run while they choose. Once per page. Its failure is not said
   * (nobody asked for the model yet) unless dense is chosen meanwhile; load() tries again then. */
  warm() {
    if (this.isEndpoint || this.warmed || this.loaded[this.dtype]) return; // your model: only once asked
    this.warmed = true;
    this.load(true);
  }

  load(warming = false) {
    const dtype = this.dtype;
    if (dtype === YOURS) return Promise.resolve({ ok: false, idle: true }); // not chosen yet: nothing is asked
    if (this.loaded[dtype]) {
      if (!warming) this.warming = false; // asked for now: a failure is said
      return this.loaded[dtype];
    }
    this.warming = warming;
    this.start();
    const mb = (n) => (n / 1e6).toFixed(1);
    const name = dtype === "q8" ? "the int8 embedding model" : "the embedding model";
    this.status("loading", this.isEndpoint ? `Asking ${this.yours.model} at ${this.yours.endpoint}…` : `Loading ${name}…`);
    this.onProgress = ({ loaded, total }) => this.status("loading", `Loading ${name}: ${mb(loaded)} of ${mb(total)} MB`);
    const started = performance.now();
    const promise = new Promise((resolve) => {
      this.loadWaiters = { ...(this.loadWaiters || {}), [dtype]: resolve };
      this.worker.postMessage({ type: "load", dtype });
    }).then((r) => {
      if (r.ok) { this.stats.loadMs = performance.now() - started; this.status("ready", backendWords(this.backend)); }
      else { delete this.loaded[dtype]; if (this.warming || r.cancelled) { this.warming = false; this.status("idle"); } else this.status("failed", r.message); }
      return r;
    });
    this.loaded[dtype] = promise;
    return promise;
  }

  embed(query, texts, lane, label = "") {
    const job = this.nextJob++;
    const superseded = this.latest[lane];
    this.latest[lane] = job;
    if (superseded && this.jobs.has(superseded)) this.jobs.get(superseded).resolve({ ok: false, cancelled: true });
    return new Promise((resolve) => {
      this.jobs.set(job, { job, resolve, lane, label, done: 0, total: texts.length });
      this.worker.postMessage({ type: "embed", job, lane, priority: kindOf(lane).priority, query, texts });
    }).finally(() => {
      this.jobs.delete(job);
      if (this.state === "embedding") this.report();
    });
  }

  receive(m, key = "minilm") {
    if (m.type === "progress") { if (this.onProgress) this.onProgress(m); return; }
    if (m.type === "loaded" || (m.type === "failed" && m.job === undefined)) {
      if (m.backend) this.backends[key] = this.stats.backend = m.backend;
      if (m.phases) this.stats.loadPhases = m.phases;
      const waiters = this.loadWaiters || {};
      const dtype = m.dtype ?? Object.keys(waiters).find((d) => workerKey(d) === key);
      const r = m.type === "loaded" ? { ok: true } : m.stopped ? { ok: false, cancelled: true } : { ok: false, message: said(m) };
      if (waiters[dtype]) { waiters[dtype](r); delete waiters[dtype]; }
      return;
    }
    if (m.type === "count") {
      const resolve = (this.counting || {})[m.job];
      if (resolve) { delete this.counting[m.job]; resolve(m.missing); }
      return;
    }
    if (m.embedded !== undefined && m.type !== "embedding") { // the model's work for a job that ended (answered or cancelled)
      const kind = String(m.lane).replace(/\d+$/, "");
      this.stats.embedded += m.embedded;
      this.stats.lanes[kind] = (this.stats.lanes[kind] || 0) + m.embedded;
      this.stats.modelMs += m.ms;
      const r = (this.rates[key] ||= { embedded: 0, ms: 0 });
      r.embedded += m.embedded;
      r.ms += m.ms;
    }
    const j = this.jobs.get(m.job);
    if (!j) return;
    if (m.type === "embedding") {
      Object.assign(j, { done: m.done, total: m.total, embedded: m.embedded });
      this.report();
    } else if (m.type === "scores") {
      j.resolve({ ok: true, scores: m.scores });
    } else if (m.type === "cancelled") {
      j.resolve({ ok: false, cancelled: true });
    } else if (m.type === "failed") {
      this.status("failed", said(m));
      j.resolve({ ok: false, message: said(m) });
    }
  }
}

/** `w` (a worker, or your model's EndpointWorker) as `client`'s worker `key`: its messages received, a drag's hold passed on. */
function adopt(client, key, w) {
  w.addEventListener("message", (e) => client.receive(e.data, key));
  if (client.held) w.postMessage({ type: "hold", on: true });
  client.workers[key] = w;
  return w;
}

/** Chunks per second from a model's {embedded, ms} here, or `fallback` until it has run enough. */
const paceOf = (r, fallback) => (r && r.embedded >= 16 && r.ms > 0 ? r.embedded / (r.ms / 1000) : fallback);

const sentence = (reason) => `The embedding model could not be loaded: ${reason}.`;
const modelSentence = (reason) => sentence(String(reason || "no reason was given").replace(/\.\s*$/, "").slice(0, 200));
const said = (m) => (m.said ? m.message : modelSentence(m.message)); // your model's endpoint says its own sentence
