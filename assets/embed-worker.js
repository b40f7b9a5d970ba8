// The embedding worker (SPEC section 10): all-MiniLM-L6-v2 through transformers.js and
// onnxruntime-web, every file from dist/ (build-config.js says where). A module worker of its own,
// so an inference never holds up a BM25 answer in the Pyodide worker.
//
//   page -> {type: "load", dtype: "fp32" | "q8"}
//        <- {type: "progress", loaded, total}  ...  then {type: "loaded", ms, backend, phases} or {type: "failed", message}
//           backend: {device: "webgpu" | "wasm", threads, isolated}: what the model runs on; phases: the
//           load's ms by step (import: transformers.js; pipeline: the files fetched and the session made;
//           warm: the session's first run)
//   page -> {type: "embed", job, lane, priority, query, texts, reply?}
//        <- {type: "embedding", job, done, total, embedded}  (after each batch that advanced it; `embedded`:
//           the texts this job's own batches gave the model so far)
//        <- {type: "scores", job, lane, scores, embedded, ms}  (cosine of each text with the query; `embedded`:
//           texts the model ran on for this job, `ms`: the model's time for them)  or {type: "cancelled", job, lane, embedded, ms}
//   page -> {type: "cancel", job} | {type: "cancel", lane}
//   page -> {type: "count", job, texts} <- {type: "count", job, missing}: how many the model has not read yet
//   page -> {type: "hold", on}  (the user is dragging: only priority 0 runs until it is off)
//   page -> {type: "vectors", job, lane, texts}   (a semantic chunker's sentence windows, priority 0)
//        <- {type: "embedding", ...} as above, then {type: "vectors", job, lane, dims, data} (data: one
//           Float32Array of texts.length x dims, handed over) or {type: "cancelled", job}
//   page -> {type: "stop", lane}   the lane's job stops before its next batch ("cancelled")
//
// A small job queue. Every job waits in `queue`; before each batch the worker takes the
// job of the lowest `priority` (0: the setting on screen; then its question set; then the settings
// embedded ahead; then the panels below the picture; then the map: the JOBS table of the page's dense client), the oldest first
// among equals, and runs one batch of its texts the model has not read. So a drag's job overtakes the
// map between two batches, and the map resumes where it was. A newer job in the same lane replaces
// the older (latest wins); what the older one embedded stays cached. Another kind of job joins with
// a lane and a priority of its own, and, when it wants something other than one cosine per text
// with a query, a `reply` named in REPLIES.
//
// Vectors are kept by what the model reads: the word-piece ids after truncation (a chunk longer
// than 256 pieces is kept by its first 255 and [SEP], which is all the model sees), so two chunks
// that differ only past that point are embedded once. Truncation as sentence-transformers does it
// (transformers.js would cut [SEP] off: notes/dense_api.md, trap 3).

const configUrl = new URL("./build-config.js", import.meta.url);
const MAX = 256;
// Texts per model call. Batches of 8 (sorted by length) embedded fastest here: 96 chunks of 24 words
// at 19.3 chunks/s on 2 threads against 18.3 in 16s and 15.2 in 32s (11.9 / 9.9 / 8.7 on one), and
// a drag waits for at most one of them.
const BATCH = 8;
const KEEP = 20000; // vectors kept per model (1.5 KB each)

let loading = null; // promise of {tokenizer, model, Tensor, mean_pooling, backend}
let dtype = null;
const vectors = new Map(); // dtype -> Map(key -> Float32Array)
const queue = new Map(); // job -> {job, lane, priority, query, keys, rows: Map(key -> ids), want, ...}
const lanes = new Map(); // lane -> its newest job
let held = false;
let pumping = false;
let order = 0; // jobs' arrival order

/** What the model can run on here: WebGPU when the browser gives an adapter, else WebAssembly on
 * `modelThreads` threads where the page is cross-origin isolated. On this project's 2-core
 * machine, 96 chunks of 24 words in batches of 16: 18.1 chunks/s on 2 threads against 7.1 on one
 * (benchmark notes); the drag's Python waits little, since a moving control holds every
 * job but the setting on screen. */
async function backendHere() {
  const isolated = Boolean(self.crossOriginIsolated);
  const threads = isolated ? modelThreads(navigator.hardwareConcurrency) : 1;
  try {
    if (navigator.gpu && await navigator.gpu.requestAdapter()) return { device: "webgpu", threads, isolated };
  } catch { /* no adapter: WebAssembly */ }
  return { device: "wasm", threads, isolated };
}

/** The model's threads for the cores the browser reports: half of them (Python's worker computes
 * each drag and the page paints beside it), but 2 where 2 are reported, and 4 at most. Half also
 * undoes WebKit's rounding: it reports 4 cores for anything under 8 (4 on a 2-core machine), where
 * one thread per reported core gave the model twice the cores there are. */
function modelThreads(reported) {
  const cores = Math.max(1, reported || 2);
  return Math.min(4, Math.max(Math.min(2, cores), Math.ceil(cores / 2)));
}

async function load(kind) {
  const t0 = performance.now(), phases = {};
  const { dense } = (await import(configUrl.href)).default;
  const at = (p) => new URL(p, configUrl).href;
  const { env, pipeline, Tensor, mean_pooling } = await import(at(dense["transformers.min.js"]));
  phases.import = performance.now() - t0;
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  env.localModelPath = new URL(dense.localModelPath, configUrl).pathname; // no scheme (trap 1)
  env.backends.onnx.wasm.wasmPaths = { mjs: at(dense["ort-wasm-simd-threaded.mjs"]), wasm: at(dense["ort-wasm-simd-threaded.wasm"]) };
  const backend = await backendHere();
  env.backends.onnx.wasm.numThreads = backend.threads;
  const expected = kind === "q8" ? dense.model_quantizedBytes : dense.modelBytes;
  const files = new Map();
  let last = 0;
  const progress_callback = (p) => {
    if (p.status !== "progress" || !p.file) return;
    files.set(p.file, [p.loaded || 0, p.total || 0]);
    const now = performance.now();
    if (now - last < 100 && p.loaded !== p.total) return;
    last = now;
    let loaded = 0, total = 0;
    for (const [l, t] of files.values()) { loaded += l; total += t; }
    postMessage({ type: "progress", loaded, total: Math.max(total, expected || 0) });
  };
  let extractor;
  try {
    extractor = await pipeline("feature-extraction", dense.model, { dtype: kind, device: backend.device, progress_callback });
  } catch (error) {
    if (backend.device === "wasm") throw error;
    backend.device = "wasm"; // WebGPU offered but the model could not start on it
    extractor = await pipeline("feature-extraction", dense.model, { dtype: kind, device: "wasm", progress_callback });
  }
  phases.pipeline = performance.now() - t0 - phases.import;
  const { tokenizer, model } = extractor;
  const m = { tokenizer, model, Tensor, mean_pooling, sep: tokenizer.sep_token_id, backend, phases };
  await embed(m, [readIds(m, "warm up")]); // the session's first run sets itself up: here, not in a job's first batch
  phases.warm = performance.now() - t0 - phases.import - phases.pipeline;
  return m;
}

/** The ids the model reads for `text`: at most MAX, ending with [SEP]. */
const readIds = (m, text) => { const all = m.tokenizer.encode(text); return all.length <= MAX ? all : [...all.slice(0, MAX - 1), m.sep]; };

async function embed(m, rows) {
  const width = Math.max(...rows.map((r) => r.length)), dims = [rows.length, width];
  const flat = (f) => BigInt64Array.from(rows.flatMap((r) => Array.from({ length: width }, (_, i) => f(r, i))));
  const input_ids = new m.Tensor("int64", flat((r, i) => BigInt(r[i] ?? 0)), dims);
  const attention_mask = new m.Tensor("int64", flat((r, i) => (i < r.length ? 1n : 0n)), dims);
  const token_type_ids = new m.Tensor("int64", flat(() => 0n), dims);
  const { last_hidden_state } = await m.model({ input_ids, attention_mask, token_type_ids });
  const pooled = m.mean_pooling(last_hidden_state, attention_mask).normalize(2, -1);
  const [n, d] = pooled.dims, data = pooled.data;
  return Array.from({ length: n }, (_, i) => Float32Array.from(data.subarray(i * d, (i + 1) * d)));
}

const dot = (a, b) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; };

// What a finished job sends back, by its `reply` (default "cosines"): another kind of job adds its own.
const REPLIES = {
  cosines: (job, get) => ({ scores: job.keys.map((k) => dot(get(k), get(job.queryKey))) }),
};

const yieldToMessages = () => new Promise((resolve) => setTimeout(resolve, 0));

async function enqueue(data) {
  const m = await loading;
  const older = lanes.get(data.lane);
  if (older !== undefined && queue.has(older)) finish(older, cancelled(queue.get(older)));
  lanes.set(data.lane, data.job);
  const cache = vectors.get(dtype), rows = new Map();
  const keyOf = (text) => { const ids = readIds(m, text), key = ids.join(","); if (!cache.has(key)) rows.set(key, ids); return key; };
  const queryKey = data.query === undefined ? null : keyOf(data.query);
  const keys = data.texts.map(keyOf);
  if (data.reply === "vectors") for (const k of keys) if (cache.has(k)) { const v = cache.get(k); cache.delete(k); cache.set(k, v); } // newest: not evicted before this job is answered
  const job = { ...data, priority: data.priority ?? 0, queryKey, keys, rows, total: data.texts.length, embedded: 0, told: 0, ms: 0, at: order++ };
  job.done = keys.filter((k) => cache.has(k)).length;
  delete job.texts;
  queue.set(job.job, job);
  postMessage({ type: "embedding", job: job.job, done: job.done, total: job.total, embedded: 0 });
  if (!rows.size) advance(job, cache); // every vector cached: answered at once, even while a drag holds the rest
  else pump();
}

const cancelled = (j) => ({ type: "cancelled", job: j.job, lane: j.lane, embedded: j.embedded, ms: j.ms });

function finish(id, message) {
  queue.delete(id);
  postMessage(message);
}

/** The job to run a batch of next, or null (nothing queued, or only jobs that wait for the drag). */
function next() {
  let best = null;
  for (const j of queue.values()) {
    if (held && j.priority > 0) continue;
    if (!best || j.priority < best.priority || (j.priority === best.priority && j.at < best.at)) best = j;
  }
  return best;
}

/** Run batches, the most urgent job's first, until nothing can run. */
async function pump() {
  if (pumping) return;
  pumping = true;
  try {
    for (let job = next(); job; job = next()) {
      const m = await loading, cache = vectors.get(dtype);
      for (const k of job.rows.keys()) if (cache.has(k)) job.rows.delete(k); // embedded meanwhile, for another job
      const todo = [...job.rows].sort((a, b) => a[1].length - b[1].length).slice(0, BATCH);
      if (todo.length) {
        const started = performance.now();
        let out;
        try {
          out = await embed(m, todo.map((t) => t[1]));
        } catch (error) {
          finish(job.job, { type: "failed", job: job.job, message: String((error && error.message) || error || "unknown error") });
          continue;
        }
        const ms = performance.now() - started;
        todo.forEach(([k], i) => { cache.set(k, out[i]); job.rows.delete(k); });
        job.embedded += todo.length;
        job.ms += ms;
        // never a queued job's own (a semantic chunker's windows may outnumber KEEP)
        const room = Math.max(KEEP, ...[...queue.values()].map((q) => q.total + 1));
        while (cache.size > room) cache.delete(cache.keys().next().value);
      }
      for (const j of [...queue.values()]) advance(j, cache);
      await yieldToMessages(); // a newer job, a cancel or a hold, if one came, is seen before the next batch
    }
  } finally {
    pumping = false;
  }
}

/** Tell the page how far job `j` is; answer it once every vector it needs is cached. */
function advance(j, cache) {
  const done = j.keys.filter((k) => cache.has(k)).length;
  if (done !== j.done || j.embedded !== j.told) {
    Object.assign(j, { done, told: j.embedded });
    postMessage({ type: "embedding", job: j.job, done, total: j.total, embedded: j.embedded });
  }
  if (done < j.total || (j.queryKey !== null && !cache.has(j.queryKey))) return;
  const get = (k) => cache.get(k);
  if (j.reply === "vectors") { postVectors(j, get); return; }
  finish(j.job, { type: "scores", job: j.job, lane: j.lane, embedded: j.embedded, ms: j.ms, ...REPLIES[j.reply || "cosines"](j, get) });
}

/** A vectors job's answer: its texts' vectors in order, as one flat Float32Array handed over (not copied). */
function postVectors(j, get) {
  queue.delete(j.job);
  const dims = j.keys.length ? get(j.keys[0]).length : 0, data = new Float32Array(j.keys.length * dims);
  j.keys.forEach((k, i) => data.set(get(k), i * dims));
  postMessage({ type: "vectors", job: j.job, lane: j.lane, embedded: j.embedded, ms: j.ms, dims, data }, [data.buffer]);
}

function cancel(data) {
  for (const j of [...queue.values()]) {
    if (j.job === data.job || (data.lane !== undefined && j.lane === data.lane)) finish(j.job, cancelled(j));
  }
}

addEventListener("message", async ({ data }) => {
  try {
    if (data.type === "load") {
      if (!loading || dtype !== data.dtype) {
        for (const j of [...queue.values()]) finish(j.job, cancelled(j)); // another model's jobs
        dtype = data.dtype;
        if (!vectors.has(dtype)) vectors.set(dtype, new Map());
        const started = performance.now();
        loading = load(dtype);
        loading.catch(() => { loading = null; });
        const m = await loading;
        postMessage({ type: "loaded", ms: performance.now() - started, backend: m.backend, phases: m.phases });
      } else {
        const m = await loading;
        postMessage({ type: "loaded", ms: 0, backend: m.backend });
      }
    } else if (data.type === "embed") {
      await enqueue(data);
    } else if (data.type === "vectors") {
      await enqueue({ ...data, query: undefined, reply: "vectors" });
    } else if (data.type === "stop") {
      cancel({ lane: data.lane });
    } else if (data.type === "count") {
      const m = await loading, cache = vectors.get(dtype);
      const missing = new Set(data.texts.map((t) => readIds(m, t).join(",")).filter((k) => !cache.has(k))).size;
      postMessage({ type: "count", job: data.job, missing });
    } else if (data.type === "cancel") {
      cancel(data);
    } else if (data.type === "hold") {
      held = Boolean(data.on);
      if (!held) pump();
    }
  } catch (error) {
    const message = String((error && error.message) || error || "unknown error");
    if (data.job !== undefined) queue.delete(data.job);
    postMessage({ type: "failed", job: data.job, message });
  }
});
