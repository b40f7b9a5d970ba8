// Semantic chunkers' embeddings in the page (issue 25, SPEC section 12). The core in Pyodide cannot
// embed: where its session lacks a document's vectors it answers with `semantic_needs`
// ([{document, key, count, texts}]) and the verdict pending; this module embeds those texts in the
// embedding worker (assets/embed-worker.js, the dense retriever's own, all-MiniLM-L6-v2 from dist/),
// batched, with progress and a Stop, and keeps the vectors by key, so the next request carries them
// (`semantic_vectors`: [{key, dimension, f32}], the float32 bytes in base64) and a worker that lost its session gets them again without
// embedding anything again. A threshold drag re-cuts from the distances the worker keeps: no vector
// travels and nothing is embedded.
//
//   const sem = new SemanticClient({ dense, onStatus: ({state, text, done, total}) => ... });
//   const r = await sem.fill(response.semantic_needs);   // {ok} | {stopped} | {ok: false, message}
//   request = sem.attach(request, response.semantic_needs);  // + semantic_vectors for those keys
//   sem.stop();                                          // the embedding stops before its next batch

const KEEP_CHARS = 256 * 1024 * 1024; // vectors kept in the page, as base64 (about 190 MB of float32; oldest key first)
const LANE = "semantic";

export class SemanticClient {
  /** dense: the DenseClient, whose embedding worker this shares (started here if it is not yet). */
  constructor({ dense, onStatus = () => {} }) {
    Object.assign(this, { dense, onStatus });
    this.kept = new Map(); // `${dtype}\u0001${key}` -> {dimension, f32: base64 of the float32 vectors}
    this.running = null; // {key, promise, job}
    this.nextJob = 1;
    this.listening = null; // the worker our listener is on
    this.waiters = new Map(); // job -> resolve
    // jobs: vector jobs posted to the embedding worker; embedded: texts in them; attached: vectors sent
    // again from what the page keeps; ms: a need's whole embedding (model load included), embedMs: its
    // job alone, loadMs: the model's load
    this.stats = { jobs: 0, embedded: 0, attached: 0, ms: null, embedMs: null, loadMs: null };
    this.state = "idle";
    this.paused = false; // stopped by the person: nothing is embedded until resume()
  }

  status(state, text = "", done = 0, total = 0) {
    this.state = state;
    document.body.dataset.semantic = state;
    this.onStatus({ state, text, done, total });
  }

  keyOf(key) { return `${this.dense.dtype}\u0001${key}`; }

  has(key) { return this.kept.has(this.keyOf(key)); }

  /** The request with the kept vectors of each need's key (a copy; unchanged when none is kept). */
  attach(request, needs = []) {
    const vectors = [];
    for (const need of needs) {
      const v = this.kept.get(this.keyOf(need.key));
      if (v && !vectors.some((x) => x.key === need.key)) vectors.push({ key: need.key, dimension: v.dimension, f32: v.f32 });
    }
    if (!vectors.length) return request;
    this.stats.attached += vectors.length;
    return { ...request, semantic_vectors: vectors };
  }

  /** Embed every need whose vectors are not kept, one after another; {ok: true} once all are. */
  async fill(needs = [], what = "sentence windows") {
    this.what = what;
    for (const need of needs) {
      if (this.has(need.key)) continue;
      const r = await this.embedNeed(need);
      if (!r.ok) return r;
    }
    return { ok: true };
  }

  embedNeed(need) {
    if (this.running && this.running.key === this.keyOf(need.key)) return this.running.promise; // a drag during the embedding: the same job
    const key = this.keyOf(need.key), started = performance.now();
    const promise = this.embedTexts(need.texts).then((r) => {
      if (this.running && this.running.promise === promise) this.running = null;
      if (!r.ok) return r;
      this.keep(key, { dimension: r.dims, f32: base64(r.data) });
      this.stats.ms = performance.now() - started;
      this.status("ready", "");
      return { ok: true };
    });
    this.running = { key, promise };
    return promise;
  }

  keep(key, v) {
    this.kept.delete(key);
    this.kept.set(key, v);
    let chars = 0;
    for (const x of this.kept.values()) chars += x.f32.length;
    for (const [k, x] of this.kept) {
      if (chars <= KEEP_CHARS || k === key) break;
      this.kept.delete(k);
      chars -= x.f32.length;
    }
  }

  /** Stop the embedding before its next batch: the page stays usable (the verdict says it waits),
   * and what was embedded stays in the worker, so going on embeds only the rest. */
  stop() {
    this.paused = true;
    if (this.running && this.dense.worker) this.dense.worker.postMessage({ type: "stop", lane: LANE });
    else this.status("stopped", "");
  }

  /** Embedding allowed again (the caller asks the worker again, which names what is still needed). */
  resume() { this.paused = false; }

  async embedTexts(texts) {
    const loaded = await this.load();
    if (!loaded.ok) return loaded;
    if (this.paused) { this.status("stopped", "", 0, texts.length); return { ok: false, stopped: true }; } // stopped while the model loaded
    const job = `semantic-${this.nextJob++}`;
    this.stats.jobs++;
    this.stats.embedded += texts.length;
    this.status("embedding", progressText(0, texts.length, this.what), 0, texts.length);
    const posted = performance.now();
    return new Promise((resolve) => {
      this.waiters.set(job, resolve);
      this.dense.worker.postMessage({ type: "vectors", job, lane: LANE, texts });
    }).then((r) => { if (r.ok) this.stats.embedMs = performance.now() - posted; return r; });
  }

  /** The model, loaded once in the shared worker (as dense loads it). */
  load() {
    this.dense.start();
    this.listen();
    if (this.loading && this.loadingWorker === this.dense.worker) return this.loading;
    this.loadingWorker = this.dense.worker;
    this.status("loading", "Loading the embedding model…");
    const started = performance.now();
    this.loading = new Promise((resolve) => {
      this.loadWaiter = resolve;
      this.dense.worker.postMessage({ type: "load", dtype: this.dense.dtype });
    }).then((r) => {
      if (!r.ok) { this.loading = null; this.status("failed", r.message); } else this.stats.loadMs ??= performance.now() - started;
      return r;
    });
    return this.loading;
  }

  listen() {
    const worker = this.dense.worker;
    if (this.listening === worker) return;
    this.listening = worker;
    worker.addEventListener("message", (e) => this.receive(e.data));
    worker.addEventListener("error", () => this.lost("the embedding worker stopped"));
  }

  lost(reason) {
    const message = `The sentence windows could not be embedded: ${reason}.`;
    for (const resolve of this.waiters.values()) resolve({ ok: false, message });
    this.waiters.clear();
    if (this.loadWaiter) this.loadWaiter({ ok: false, message }), this.loadWaiter = null;
    this.loading = null;
    this.running = null;
    this.status("failed", message);
  }

  receive(m) {
    const mb = (n) => (n / 1e6).toFixed(1);
    if (m.type === "progress" && this.state === "loading") { this.status("loading", `Loading the embedding model: ${mb(m.loaded)} of ${mb(m.total)} MB`); return; }
    if ((m.type === "loaded" || (m.type === "failed" && m.job === undefined)) && this.loadWaiter) {
      this.loadWaiter(m.type === "loaded" ? { ok: true } : { ok: false, message: `The embedding model could not be loaded: ${String(m.message || "no reason was given").replace(/\.\s*$/, "")}.` });
      this.loadWaiter = null;
      return;
    }
    const resolve = this.waiters.get(m.job);
    if (!resolve) return;
    if (m.type === "embedding") { this.progress = [m.done, m.total]; this.status("embedding", progressText(m.done, m.total, this.what), m.done, m.total); return; }
    this.waiters.delete(m.job);
    if (m.type === "vectors") resolve({ ok: true, dims: m.dims, data: m.data });
    else if (m.type === "cancelled" && this.paused) { this.status("stopped", "", ...(this.progress || [])); resolve({ ok: false, stopped: true }); }
    else if (m.type === "cancelled") resolve({ ok: false, cancelled: true }); // a newer need's job took over the lane
    else if (m.type === "failed") resolve({ ok: false, message: `The sentence windows could not be embedded: ${String(m.message || "no reason was given").replace(/\.\s*$/, "")}.` });
  }
}

export const progressText = (done, total, what = "sentence windows") => `Embedding ${what}: ${done.toLocaleString("en")} of ${total.toLocaleString("en")}`;

/** Float32 values as base64 of their little-endian bytes (the core's `f32`; every browser here is
 * little-endian, as typed arrays are in the platform's order). */
function base64(floats) {
  const bytes = new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength), parts = [];
  for (let i = 0; i < bytes.length; i += 0x8000) parts.push(String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000)));
  return btoa(parts.join(""));
}
