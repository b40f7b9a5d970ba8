// The embedding worker (issue 13, SPEC section 10): all-MiniLM-L6-v2 through transformers.js and
// onnxruntime-web, every file from dist/ (build-config.js says where). A module worker of its own,
// so an inference never holds up a BM25 answer in the Pyodide worker.
//
//   page -> {type: "load", dtype: "fp32" | "q8"}
//        <- {type: "progress", loaded, total}  ...  then {type: "loaded", ms} or {type: "failed", message}
//   page -> {type: "embed", job, query, texts}
//        <- {type: "embedding", job, done, total}  (after each batch)
//        <- {type: "scores", job, scores}  (cosine of each text with the query)  or {type: "cancelled", job}
//   page -> {type: "vectors", job, lane, texts}   (issue 25: a semantic chunker's sentence windows)
//        <- {type: "embedding", ...} as above, then {type: "vectors", job, dims, data} (data: one
//           Float32Array of texts.length x dims, handed over) or {type: "cancelled", job}
//   page -> {type: "stop", lane}   the lane's job stops before its next batch ("cancelled")
//
// Vectors are kept by text (per model), so a text is embedded once. A newer "embed" cancels an
// older one between batches (latest wins); what the older one embedded stays cached.
// Truncation as sentence-transformers does it: the first 255 ids and [SEP] (transformers.js would
// cut [SEP] off: notes/dense_api.md, trap 3).

const configUrl = new URL("./build-config.js", import.meta.url);
const MAX = 256;
const BATCH = 16;
const KEEP = 20000; // vectors kept per model (1.5 KB each)

let loading = null; // promise of {tokenizer, model, Tensor, mean_pooling}
let dtype = null;
const latest = {}; // lane -> the newest job asked for in it (the drag's, the sweep's)
const vectors = new Map(); // dtype -> Map(text -> Float32Array)

async function load(kind) {
  const { dense } = (await import(configUrl.href)).default;
  const at = (p) => new URL(p, configUrl).href;
  const { env, pipeline, Tensor, mean_pooling } = await import(at(dense["transformers.min.js"]));
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  env.localModelPath = new URL(dense.localModelPath, configUrl).pathname; // no scheme (trap 1)
  env.backends.onnx.wasm.wasmPaths = { mjs: at(dense["ort-wasm-simd-threaded.mjs"]), wasm: at(dense["ort-wasm-simd-threaded.wasm"]) };
  env.backends.onnx.wasm.numThreads = 1; // the page is not cross-origin isolated
  const expected = kind === "q8" ? dense.model_quantizedBytes : dense.modelBytes;
  const files = new Map();
  let last = 0;
  const extractor = await pipeline("feature-extraction", dense.model, {
    dtype: kind, device: "wasm",
    progress_callback: (p) => {
      if (p.status !== "progress" || !p.file) return;
      files.set(p.file, [p.loaded || 0, p.total || 0]);
      const now = performance.now();
      if (now - last < 100 && p.loaded !== p.total) return;
      last = now;
      let loaded = 0, total = 0;
      for (const [l, t] of files.values()) { loaded += l; total += t; }
      postMessage({ type: "progress", loaded, total: Math.max(total, expected || 0) });
    },
  });
  const { tokenizer, model } = extractor;
  return { tokenizer, model, Tensor, mean_pooling, sep: tokenizer.sep_token_id };
}

async function embed(m, texts) {
  const ids = (text) => { const all = m.tokenizer.encode(text); return all.length <= MAX ? all : [...all.slice(0, MAX - 1), m.sep]; };
  const rows = texts.map(ids), width = Math.max(...rows.map((r) => r.length)), dims = [rows.length, width];
  const flat = (f) => BigInt64Array.from(rows.flatMap((r) => Array.from({ length: width }, (_, i) => f(r, i))));
  const input_ids = new m.Tensor("int64", flat((r, i) => BigInt(r[i] ?? 0)), dims);
  const attention_mask = new m.Tensor("int64", flat((r, i) => (i < r.length ? 1n : 0n)), dims);
  const token_type_ids = new m.Tensor("int64", flat(() => 0n), dims);
  const { last_hidden_state } = await m.model({ input_ids, attention_mask, token_type_ids });
  const pooled = m.mean_pooling(last_hidden_state, attention_mask).normalize(2, -1);
  const [n, d] = pooled.dims, data = pooled.data;
  return Array.from({ length: n }, (_, i) => Float32Array.from(data.subarray(i * d, (i + 1) * d)));
}

const yieldToMessages = () => new Promise((resolve) => setTimeout(resolve, 0));

async function run({ job, lane, query, texts }) {
  const m = await loading;
  const cache = vectors.get(dtype);
  const want = [...new Set(query === undefined ? texts : [query, ...texts])].filter((t) => !cache.has(t));
  if (query === undefined) for (const t of texts) if (cache.has(t)) { const v = cache.get(t); cache.delete(t); cache.set(t, v); } // newest: never evicted by this job
  want.sort((a, b) => a.length - b.length); // similar lengths together: little padding
  const total = texts.length;
  const unseen = new Set(texts.filter((t) => !cache.has(t)));
  let done = total - unseen.size;
  postMessage({ type: "embedding", job, done, total });
  for (let i = 0; i < want.length; i += BATCH) {
    if (job !== latest[lane]) { postMessage({ type: "cancelled", job }); return; }
    const batch = want.slice(i, i + BATCH);
    const out = await embed(m, batch);
    batch.forEach((t, j) => { cache.set(t, out[j]); if (unseen.delete(t)) done++; });
    while (cache.size > Math.max(KEEP, total + 1)) cache.delete(cache.keys().next().value); // never this job's own
    postMessage({ type: "embedding", job, done, total });
    await yieldToMessages(); // a newer job, if one came, is seen before the next batch
  }
  if (query === undefined) { postVectors(job, texts, cache); return; }
  const q = cache.get(query);
  const scores = texts.map((t) => {
    const v = cache.get(t) || q; // evicted meanwhile cannot happen within one job; guard anyway
    let s = 0;
    for (let i = 0; i < v.length; i++) s += v[i] * q[i];
    return s;
  });
  postMessage({ type: "scores", job, scores });
}

/** The vectors of `texts` in order, as one flat Float32Array handed over (not copied). */
function postVectors(job, texts, cache) {
  const dims = texts.length ? cache.get(texts[0]).length : 0, data = new Float32Array(texts.length * dims);
  texts.forEach((t, i) => data.set(cache.get(t), i * dims));
  postMessage({ type: "vectors", job, dims, data }, [data.buffer]);
}

addEventListener("message", async ({ data }) => {
  try {
    if (data.type === "load") {
      if (!loading || dtype !== data.dtype) {
        dtype = data.dtype;
        if (!vectors.has(dtype)) vectors.set(dtype, new Map());
        const started = performance.now();
        loading = load(dtype);
        loading.catch(() => { loading = null; });
        await loading;
        postMessage({ type: "loaded", ms: performance.now() - started });
      } else {
        await loading;
        postMessage({ type: "loaded", ms: 0 });
      }
    } else if (data.type === "embed" || data.type === "vectors") {
      latest[data.lane] = data.job;
      await run(data.type === "vectors" ? { ...data, query: undefined } : data);
    } else if (data.type === "stop") {
      latest[data.lane] = 0;
    }
  } catch (error) {
    const message = String((error && error.message) || error || "unknown error");
    postMessage({ type: "failed", job: data.job, message });
  }
});
