// Your own embedding model in the page: an OpenAI-compatible `POST {endpoint}/embeddings` on this
// computer (`{"model", "input": [...]}` -> `{"data": [{"embedding", "index"}]}`: Ollama, LM Studio,
// llama.cpp's server, vLLM, TEI), spoken to from the page itself, so the page's policy
// (connect-src localhost and 127.0.0.1 only) holds for every request; the endpoint is checked as
// the ask panel checks its own (ask-client.js localEndpoint).
//
// EndpointWorker speaks the embedding worker's messages (the embed-worker module's header: load,
// embed, vectors, count, cancel, stop, hold), so the dense client schedules it as it schedules
// all-MiniLM-L6-v2: the most urgent job first, one batch at a time, only the setting on screen
// while a drag holds the rest. Here a batch is one request of BATCH texts, and one request is in
// flight per endpoint at a time. Vectors are kept by text (one EndpointWorker per endpoint and
// model), unit length, so a cosine is a dot product. Every bad reply is one sentence (`said: true`):
// down, slow, another shape, vectors of varying dimension, NaN, fewer vectors than texts, HTTP 429
// (retried after Retry-After, or 1, 2, 4 s, then a sentence), a redirect (never followed): the
// request itself is local-post.js's, shared with your reranker.

import { oneAtATime, postJson, problem, sleep } from "./local-post.js";

export const BATCH = 64; // texts per request
export const TIMEOUTS = { requestS: 120 }; // one request; the tests shorten it
const KEEP = 50000; // vectors kept per model

const dot = (a, b) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; };
const NAN = (target) => `${target} returned an embedding holding NaN, infinity or something not a number; the model failed on some text: check the server's log.`;

/** The vectors of one reply, unit length, in input order; a sentence (thrown) for any other reply. */
export function readVectors(target, data, count, dims) {
  const rows = data && Array.isArray(data.data) ? data.data : null;
  if (!rows || !rows.every((r) => r && Array.isArray(r.embedding))) {
    throw problem(`${target} did not answer with embeddings ({"data": [{"embedding": [...], "index"}]}); is it an OpenAI-compatible embeddings endpoint?`);
  }
  if (rows.length !== count) throw problem(`${target} returned ${rows.length} vectors for ${count} texts; every text needs its vector: check the server's log.`);
  const ordered = rows.every((r) => Number.isInteger(r.index)) ? [...rows].sort((a, b) => a.index - b.index) : rows;
  if (ordered.some((r, i) => r.index !== undefined && r.index !== i)) throw problem(`${target} returned vectors whose indexes do not number the texts 0 to ${count - 1}; check the server.`);
  return ordered.map(({ embedding }) => {
    if (!embedding.every((x) => typeof x === "number" && Number.isFinite(x))) throw problem(NAN(target));
    const want = dims.value ?? embedding.length;
    if (embedding.length !== want || !want) {
      throw problem(`${target} returned vectors of ${want} and ${embedding.length} dimensions; one model gives one dimension: check that the model's name is the one you meant.`);
    }
    dims.value = want;
    const v = Float32Array.from(embedding), n = Math.sqrt(dot(v, v));
    if (!n) throw problem(`${target} returned an all-zero embedding, which has no direction to compare.`);
    return v.map((x) => x / n);
  });
}

export class EndpointWorker {
  /** url: the base URL (localEndpoint's), model: its name at the server, dtype: the dense client's key. */
  constructor({ url, model, dtype }) {
    Object.assign(this, { url, model, dtype, target: `${url}/embeddings` });
    this.listeners = { message: [], error: [] };
    this.cache = new Map(); // text -> unit Float32Array
    this.queue = new Map(); // job -> {job, lane, priority, query, texts, reply, embedded, ms, at, done}
    this.lanes = new Map();
    this.dims = { value: null };
    this.held = false;
    this.pumping = false;
    this.order = 0;
    this.abort = null; // the request in flight, to stop it
  }

  addEventListener(type, fn) { (this.listeners[type] ||= []).push(fn); }
  removeEventListener(type, fn) { this.listeners[type] = (this.listeners[type] || []).filter((f) => f !== fn); }
  terminate() { this.stopAll(); this.listeners = { message: [], error: [] }; }
  emit(data) { queueMicrotask(() => { for (const fn of this.listeners.message) fn({ data }); }); }

  postMessage(data) {
    const on = {
      load: () => this.load(),
      embed: () => this.enqueue(data),
      vectors: () => this.enqueue({ ...data, query: undefined, reply: "vectors" }),
      count: () => this.emit({ type: "count", job: data.job, missing: new Set(data.texts.filter((t) => !this.cache.has(t))).size }),
      cancel: () => this.cancel(data),
      stop: () => this.cancel({ lane: data.lane }),
      stopAll: () => this.stopAll(),
      hold: () => { this.held = Boolean(data.on); if (!this.held) this.pump(); },
    }[data.type];
    if (on) on();
  }

  /** "Loading" is one request: the model's dimension learned, or the sentence why not. */
  async load() {
    const started = performance.now();
    try {
      const [v] = await this.request(["ragsim"]);
      this.emit({ type: "loaded", dtype: this.dtype, ms: performance.now() - started,
        backend: { device: "endpoint", model: this.model, url: this.url, dims: v.length } });
    } catch (error) {
      const stopped = error === "stopped" || (error && error.name === "AbortError"); // Stop pressed
      this.emit({ type: "failed", dtype: this.dtype, said: true, stopped, message: said(error) });
    }
  }

  enqueue(data) {
    const older = this.lanes.get(data.lane);
    if (older !== undefined && this.queue.has(older)) this.finish(older, this.cancelled(this.queue.get(older)));
    this.lanes.set(data.lane, data.job);
    const job = { ...data, priority: data.priority ?? 0, embedded: 0, ms: 0, at: this.order++, done: -1 };
    this.queue.set(job.job, job);
    this.advance(job);
    if (this.queue.has(job.job)) this.pump();
  }

  /** The texts a job still needs: the query first. */
  todo(j) {
    const all = j.query === undefined ? j.texts : [j.query, ...j.texts];
    return [...new Set(all.filter((t) => !this.cache.has(t)))];
  }

  next() {
    let best = null;
    for (const j of this.queue.values()) {
      if (this.held && j.priority > 0) continue;
      if (!best || j.priority < best.priority || (j.priority === best.priority && j.at < best.at)) best = j;
    }
    return best;
  }

  async pump() {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let job = this.next(); job; job = this.next()) {
        const texts = this.todo(job).slice(0, BATCH), started = performance.now();
        if (texts.length) {
          let vectors;
          try { vectors = await this.request(texts); } catch (error) {
            if (error.name === "AbortError" || error === "stopped") continue; // stopped: its jobs were answered
            const message = said(error); // the endpoint fails every job alike: each is told
            for (const j of [...this.queue.values()]) this.finish(j.job, { type: "failed", job: j.job, lane: j.lane, said: true, message });
            continue;
          }
          texts.forEach((t, i) => this.cache.set(t, vectors[i]));
          while (this.cache.size > KEEP) this.cache.delete(this.cache.keys().next().value);
          if (this.queue.has(job.job)) Object.assign(job, { embedded: job.embedded + texts.length, ms: job.ms + performance.now() - started });
        }
        for (const j of [...this.queue.values()]) this.advance(j);
        await sleep(0); // a newer job, a cancel or a hold is seen before the next request
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Tell the page how far job `j` is; answer it once every vector it needs is kept. */
  advance(j) {
    const done = j.texts.filter((t) => this.cache.has(t)).length;
    if (done !== j.done) {
      j.done = done;
      this.emit({ type: "embedding", job: j.job, done, total: j.texts.length, embedded: j.embedded });
    }
    if (this.todo(j).length) return;
    const base = { job: j.job, lane: j.lane, embedded: j.embedded, ms: j.ms };
    if (j.reply === "vectors") {
      const dims = j.texts.length ? this.cache.get(j.texts[0]).length : 0, data = new Float32Array(j.texts.length * dims);
      j.texts.forEach((t, i) => data.set(this.cache.get(t), i * dims));
      this.finish(j.job, { type: "vectors", ...base, dims, data });
    } else {
      const q = this.cache.get(j.query);
      this.finish(j.job, { type: "scores", ...base, scores: j.texts.map((t) => dot(this.cache.get(t), q)) });
    }
  }

  cancelled(j) { return { type: "cancelled", job: j.job, lane: j.lane, embedded: j.embedded, ms: j.ms }; }

  finish(id, message) {
    this.queue.delete(id);
    this.emit(message);
  }

  cancel(data) {
    for (const j of [...this.queue.values()]) {
      if (j.job === data.job || (data.lane !== undefined && j.lane === data.lane)) this.finish(j.job, this.cancelled(j));
    }
  }

  /** Stop: every job answered as cancelled and the request in flight aborted (what came back stays). */
  stopAll() {
    for (const j of [...this.queue.values()]) this.finish(j.job, this.cancelled(j));
    if (this.abort) this.abort.abort("stopped");
  }

  /** One request for `texts`, after the endpoint's request in flight (one at a time per endpoint). */
  request(texts) {
    return oneAtATime(this.url, async () => readVectors(this.target, await postJson(this.target, { model: this.model, input: texts }, {
      timeoutS: TIMEOUTS.requestS, holder: this, again: "“Use this model”", readme: "Your own embedding model",
      hints: { 404: " (check the model's name and that the endpoint ends in /v1)" }, nan: NAN(this.target),
      shape: "an OpenAI-compatible endpoint" }), texts.length, this.dims));
  }
}

const said = (error) => (error && error.said ? error.message : `The embedding endpoint failed: ${String((error && error.message) || error || "no reason was given")}.`);
