// The Web Worker that owns Pyodide and the ragsim core (an ES module worker).
//
// Boot (warm-start.js): Python is restored from this browser's memory snapshot of this very build
// when there is one, else Pyodide loads while the core wheel is fetched, the wheel is unpacked into
// site-packages, the prelude below runs (one `ragsim.api.Session()` that keeps the indexed
// documents between requests) and a snapshot is kept for the next visit.
// Progress goes to the page as {type: "status", stage} with stage "runtime", "snapshot" (restoring),
// "core", "ready" (with `boot: {path: "snapshot" | "files", ms}`), or {type: "status", stage:
// "failed", message} saying why.
//
// Messages in (each with an `id` the reply echoes):
//   {id, type: "simulate", request: "<request JSON>"}
//       -> {id, ok: true, result: "<response JSON>", ms}
//       -> {id, ok: false, error: {field, message}, ms}     (the core refused the request)
//       -> {id, ok: true, result, columns: ArrayBuffer, ms} for "wire": "binary": the chunks' packed
//          columns (docs/wire.md), transferred
//   {id, type: "simulate", request, texts: [ArrayBuffer]}  (long documents: their UTF-8 bytes, in the
//       order of request.documents, whose texts are left empty; handed over, not copied)
//   {id, type: "call", fn, request}  (fn: "audit", "inspect", "code", "ask", "questions.import",
//       "questions.export"; long documents as `texts`, as for simulate): the same shape, answered by
//       ragsim.wire.calls.call_json, the one table from each fn to the wire module that writes it
//   {id, type: "install", package: "snowballstemmer"}      (on demand, from this site only)
//       -> {id, ok: true, result: "{\"package\": ..., \"version\": ...}", ms}
//   {id, type: "tokenizer", name: "cl100k_base"}           (before the first token request)
//       -> {type: "progress", id, stage: "tokenizer", loaded, total} while the rank file arrives
//       -> {id, ok: true, result: "{\"name\": ...}", ms}   (the file checked and given to ragsim.tokens)
//   {id, type: "pdf", name, mode: "page" | "single", bytes: ArrayBuffer (transferred)}
//       -> {type: "progress", id, stage: "pdf", done, total} every 10 pages (pypdf installed first time)
//       -> {id, ok: true, result: "{\"documents\": [{title, text, ...}]}", ms}   (ragsim.pdf.read)
//       -> {id, ok: false, error: {field: "file", message}}  (encrypted, broken, no text: one sentence)
//   {id, type: "memory"} -> {id, ok: true, result: "{\"heap\": bytes, \"boot\": {path, ms, snapshotBytes}}"}
//       (the WebAssembly heap, Python's whole memory; it grows and never shrinks)
//   anything else -> {id, ok: false, error: {field: "type", message}}
// Strings cross the boundary as JSON, so no Python proxy ever leaves this file. A Python exception
// reaches the page as one line, {field: "", message: "Internal error: ..."}; the traceback goes to
// the console.
//
// Where Pyodide and the wheels are comes from build-config.js, a module build.py generates (and,
// like this file, renames by content hash).
import config from "./build-config.js";
import { startPython } from "./warm-start.js";

const here = import.meta.url;
const pyodideURL = new URL(config.pyodide, here).href;
const coreWheelURL = new URL(config.coreWheel, here).href;
// Packages a page may ask for with {type: "install"}; each is in the rewritten pyodide-lock.json.
const ON_DEMAND = new Set(Object.keys(config.onDemand || {}));

const status = (stage, extra = {}) => self.postMessage({ type: "status", stage, ...extra });

// The Python side: one session, one entry point that takes and returns strings.
const PRELUDE = `
import gc as _ragsim_gc
from ragsim.wire import api as _ragsim_api
_ragsim_session = _ragsim_api.Session()

def _ragsim_collect():
    """The cycle collector off while requests run, and one full pass now. A collection
    walks every object the session keeps (an index's columns, its cached splits): 60-80 ms at 65,000
    words, and one fell inside every few drag moves, the slowest moves of a drag. A request makes no
    cycles (measured: 0 unreachable after 100 moves), so what it frees goes by reference counting; the
    worker calls this once at start and when it has been idle (COLLECT_IDLE_MS)."""
    _ragsim_gc.disable()
    return _ragsim_gc.collect()

def _ragsim_simulate(request_json):
    return _ragsim_api.simulate_json(request_json, _ragsim_session)

_ragsim_texts = []  # the long documents' texts, by slot, as Python strings kept between requests

def _ragsim_hold_text(slot, text):
    _ragsim_texts.extend([""] * (slot + 1 - len(_ragsim_texts)))
    _ragsim_texts[slot] = text

def _ragsim_simulate_packed(request_json, slots=0):
    return _ragsim_api.simulate_packed(request_json, _ragsim_session, _ragsim_texts[:slots] if slots else None)

def _ragsim_call(fn, request_json):
    from ragsim.wire import calls
    return calls.call_json(fn, request_json, _ragsim_session)

def _ragsim_tokenizer(name, path):
    from ragsim.text import tokens
    if not tokens.loaded(name):
        with open(path, "rb") as f:
            tokens.provide(name, f.read())

def _ragsim_pdf(path, name, mode, progress):
    import json
    from ragsim.host.clients import pdf
    with open(path, "rb") as f:
        data = f.read()
    try:
        docs = pdf.read(data, name, mode, progress=lambda done, total: progress(done, total))
    except pdf.PdfError as e:
        return json.dumps({"error": {"field": "file", "message": str(e)}})
    return json.dumps({"documents": docs})
`;

// How Python started, for {type: "memory"}.
let booted = null;

async function boot() {
  // The snapshot's key names this build: the worker's file name carries a hash of its content, which
  // covers the prelude, warm-start.js and build-config.js (Pyodide's version, the wheel's path).
  const key = [config.pyodideVersion, config.coreWheel, here.split("/").pop()].join(" ");
  const { pyodide, boot: how, save } = await startPython({ pyodideURL, coreWheelURL, key, prelude: PRELUDE, status });
  booted = how;
  const collect = pyodide.globals.get("_ragsim_collect");
  collect(); // also after a snapshot's restore: the collector is off from the first request on
  if (save) setTimeout(() => save().catch((err) => console.warn(`ragsim: the snapshot was not kept: ${err.message}`)));
  const simulate = pyodide.globals.get("_ragsim_simulate");
  status("ready", { versions: { pyodide: pyodide.version, ragsim: config.ragsimVersion }, boot: { path: how.path, ms: how.ms } });
  return { pyodide, collect, simulate, simulatePacked: pyodide.globals.get("_ragsim_simulate_packed"), holdText: pyodide.globals.get("_ragsim_hold_text"), call: pyodide.globals.get("_ragsim_call"), tokenizer: pyodide.globals.get("_ragsim_tokenizer"), pdf: pyodide.globals.get("_ragsim_pdf") };
}

// One line for the page; the full text (a Python traceback, usually) for the console.
// A PythonError's message is the whole traceback; the exception's own line is the last one that
// starts with its type (notes, such as json's "when serializing ...", may follow it).
function internalError(err) {
  console.error(err);
  const lines = String((err && err.message) || err).split("\n").map((l) => l.trim()).filter(Boolean);
  const type = err && err.type;
  const own = type ? lines.filter((l) => l === type || l.startsWith(`${type}:`)).pop() : undefined;
  return { field: "", message: `Internal error: ${own || lines.pop() || "unknown"}` };
}

const booting = boot();
let fatal = null; // set when Pyodide reports a fatal error: the runtime cannot be used again
booting.catch((err) => {
  console.error(err);
  status("failed", { message: String((err && err.message) || err).split("\n")[0] });
});

// The core's refusal is `{"error": {...}}`; test the start of the string instead of parsing a
// possibly large successful response.
const ERROR_RESPONSE = /^\s*\{\s*"error"\s*:/;

// JSON nested deeper than this is refused here: Python's parser would recurse once per level and,
// in WebAssembly, can overflow the stack and take the interpreter down with it.
const MAX_DEPTH = 64;

// True when brackets outside strings nest deeper than `limit`; string bodies are skipped with
// indexOf, so a large document inside the request costs little.
function tooDeep(json, limit = MAX_DEPTH) {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34) { // a string: jump to its closing quote (one not escaped by an odd run of \)
      for (;;) {
        const q = json.indexOf('"', i + 1);
        if (q < 0) return false;
        let slashes = 0;
        while (json.charCodeAt(q - 1 - slashes) === 92) slashes++;
        i = q;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return false;
}

// Long documents arrive as UTF-8 bytes (`texts`, one ArrayBuffer per document, in order) beside a
// request whose documents' texts are empty: the full request JSON is built here, off the page's thread.
function withTexts(json, texts) {
  const request = JSON.parse(json);
  if (!Array.isArray(request.documents) || !Array.isArray(texts) || texts.length !== request.documents.length) return json;
  request.documents.forEach((d, i) => { d.text = typeof texts[i] === "string" ? texts[i] : ""; });
  return JSON.stringify(request);
}

// The last text of each slot of `texts`: the page sends a text this worker already holds as null
// (the page's worker client), so a drag over a book moves no text. `versions` counts each slot's
// new texts, `inPython` the version Python holds (given to it only when it changed).
const held = { texts: [], versions: [], inPython: [] };

/** The texts of a message as strings, its new ones (ArrayBuffers of UTF-8) decoded and kept. Called
 * as each message arrives, in the order the page posted them. */
function holdTexts(texts) {
  const decoder = new TextDecoder();
  return texts.map((t, i) => {
    if (t instanceof ArrayBuffer || typeof t === "string") {
      held.texts[i] = typeof t === "string" ? t : decoder.decode(t);
      held.versions[i] = (held.versions[i] || 0) + 1;
    }
    return held.texts[i] ?? "";
  });
}

// A request the worker refuses before Python sees it, as the reply; null when it may go on.
function refusal(msg) {
  if (typeof msg.request !== "string") {
    return { ok: false, error: { field: "", message: "The request must be sent as a JSON string." } };
  }
  if (tooDeep(msg.request)) {
    return { ok: false, error: { field: "request", message: "The request is nested too deeply; send a flat request object." } };
  }
  return null;
}

// Every call but the drag's: `fn` named, the request's JSON in and the answer's JSON out
// (ragsim.wire.calls, which refuses an unknown fn naming the field).
async function call(msg, runtime) {
  const refused = refusal(msg);
  if (refused) return refused;
  const result = runtime.call(String(msg.fn), msg.texts ? withTexts(msg.request, msg.texts) : msg.request);
  if (ERROR_RESPONSE.test(result)) return { ok: false, error: JSON.parse(result).error };
  return { ok: true, result };
}

// A simulation: the response's JSON and, for "wire": "binary" (docs/wire.md), its chunks' packed
// bytes as `columns`, an ArrayBuffer handed over to the page (`transfer`), not copied.
async function simulatePacked(msg, runtime) {
  const refused = refusal(msg);
  if (refused) return refused;
  // Long texts go to Python as strings it keeps (only when new), not inside the request's JSON, so a
  // drag parses a small request and the session finds its index by the same string object.
  (msg.texts || []).forEach((text, i) => {
    if (held.inPython[i] === msg.versions[i]) return;
    runtime.holdText(i, text);
    held.inPython[i] = msg.versions[i];
  });
  const timing = msg.timing;
  timing.python = now();
  const out = runtime.simulatePacked(msg.request, msg.texts ? msg.texts.length : 0);
  timing.pythonDone = now();
  let result, data;
  try {
    result = out.get(0);
    data = out.get(1);
  } finally {
    out.destroy();
  }
  if (ERROR_RESPONSE.test(result)) return { ok: false, error: JSON.parse(result).error };
  if (!data) return { ok: true, result };
  let bytes;
  try {
    bytes = data.toJs(); // a Uint8Array of its own (a copy out of Python's memory)
  } finally {
    data.destroy();
  }
  timing.copied = now();
  return { ok: true, result, columns: bytes.buffer, transfer: [bytes.buffer] };
}

/** The body of `response` as bytes, `onbytes(loaded, total)` as they arrive (total from Content-Length, or 0). */
async function readWithProgress(response, onbytes) {
  const total = Number(response.headers.get("Content-Length")) || 0;
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    onbytes(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  return bytes;
}

/** Install a package of this site's lock (sha256 checked): {version} (null when it was already
 * loaded), or {error} when it cannot be. */
async function installPackage(pyodide, name) {
  // Pyodide's loader, not micropip.install: both take the wheel from this site's lock entry with its
  // sha256 checked, but micropip never settles when that download fails, and the page would hang.
  // loadPackage does not reject when the download fails either: it logs and loads nothing.
  const [loaded] = await pyodide.loadPackage(name, { checkIntegrity: true });
  if (!loaded && !pyodide.loadedPackages[name]) {
    return { error: { field: "package", message: `${name} could not be downloaded from this site; the browser console has details.` } };
  }
  return { version: loaded ? loaded.version : null };
}

const progressOf = (msg) => (extra) => self.postMessage({ type: "progress", id: msg.id, ...extra });

const handlers = {
  simulate: simulatePacked, // {id, type: "simulate", request} -> the response of api.simulate (+ columns)
  call, // {id, type: "call", fn, request} -> the answer of ragsim.wire.calls.CALLS[fn]
  // Python's memory (the WebAssembly heap) and how it started.
  async memory(msg, { pyodide }) {
    return { ok: true, result: JSON.stringify({ heap: pyodide._module.HEAPU8.buffer.byteLength, boot: booted }) };
  },
  async install(msg, { pyodide }) {
    if (!ON_DEMAND.has(msg.package)) {
      const known = [...ON_DEMAND].join(", ") || "none";
      return { ok: false, error: { field: "package", message: `Only these packages can be installed: ${known}.` } };
    }
    const { error, version } = await installPackage(pyodide, msg.package);
    if (error) return { ok: false, error };
    return { ok: true, result: JSON.stringify({ package: msg.package, version }) };
  },
  // The tiktoken rank file, fetched from this site only when a request first counts tokens.
  async tokenizer(msg, { pyodide, tokenizer }) {
    const rel = Object.hasOwn(config.tiktoken || {}, msg.name) ? config.tiktoken[msg.name] : null;
    if (!rel) return { ok: false, error: { field: "tokenizer", message: `Unknown tokenizer ${JSON.stringify(msg.name)}; use cl100k_base or o200k_base.` } };
    if (!pyodide.runPython(`from ragsim.text import tokens; tokens.loaded(${JSON.stringify(msg.name)})`)) {
      const progress = progressOf(msg);
      const response = await fetch(new URL(rel, here));
      if (!response.ok) {
        return { ok: false, error: { field: "tokenizer", message: `The ${msg.name} rank file could not be fetched from this site (HTTP ${response.status}).` } };
      }
      const bytes = await readWithProgress(response, (loaded, total) => progress({ stage: "tokenizer", name: msg.name, loaded, total }));
      const path = `/tmp/${msg.name}.tiktoken`;
      pyodide.FS.writeFile(path, bytes);
      try {
        tokenizer(msg.name, path);
      } catch (err) { // tokens.provide: the bytes are not the official file (sha256)
        console.error(err);
        return { ok: false, error: { field: "tokenizer", message: `The ${msg.name} rank file from this site is not the official one (its sha256 differs); rebuild the site.` } };
      } finally {
        pyodide.FS.unlink(path);
      }
    }
    return { ok: true, result: JSON.stringify({ name: msg.name }) };
  },
  // A PDF read as LangChain's PyPDFLoader reads it (ragsim.pdf); pypdf is installed with the first one.
  async pdf(msg, { pyodide, pdf }) {
    if (!(msg.bytes instanceof ArrayBuffer)) return { ok: false, error: { field: "bytes", message: "Send the PDF's bytes as an ArrayBuffer." } };
    const progress = progressOf(msg);
    progress({ stage: "pdf", done: 0, total: 0 });
    const { error } = await installPackage(pyodide, "pypdf");
    if (error) return { ok: false, error };
    const path = `/tmp/upload-${msg.id}.pdf`;
    pyodide.FS.writeFile(path, new Uint8Array(msg.bytes));
    let result;
    try {
      result = pdf(path, String(msg.name || "document.pdf"), msg.mode === "single" ? "single" : "page",
        (done, total) => progress({ stage: "pdf", done, total }));
    } finally {
      pyodide.FS.unlink(path);
    }
    if (ERROR_RESPONSE.test(result)) return { ok: false, error: JSON.parse(result).error };
    return { ok: true, result };
  },
};

// Python's cycle collector runs only here (see _ragsim_collect): once no message has come for this
// long, so never between two moves of a drag. A message that arrives during the pass waits for it.
const COLLECT_IDLE_MS = 2000;
let collectTimer = null;
function collectWhenIdle(runtime) {
  clearTimeout(collectTimer);
  collectTimer = setTimeout(() => {
    if (fatal) return;
    try { runtime.collect(); } catch (err) { console.error(err); }
  }, COLLECT_IDLE_MS);
}

// Absolute times (on any thread's clock), for the page's opt-in drag timings (assets/js/drag-timing.js).
const now = () => performance.timeOrigin + performance.now();

self.onmessage = async (event) => {
  const arrived = now();
  const msg = event.data || {};
  msg.timing = { arrived };
  const id = msg.id;
  if (Array.isArray(msg.texts)) { // before any await: in posting order
    msg.texts = holdTexts(msg.texts);
    msg.versions = msg.texts.map((_, i) => held.versions[i]);
  }
  const handler = Object.prototype.hasOwnProperty.call(handlers, msg.type) ? handlers[msg.type] : null;
  if (!handler) {
    self.postMessage({
      id, ok: false,
      error: { field: "type", message: `Unknown message type ${JSON.stringify(msg.type)}; use one of: ${Object.keys(handlers).join(", ")}.` },
    });
    return;
  }
  let runtime;
  try {
    runtime = await booting;
  } catch (err) {
    self.postMessage({ id, ok: false, error: { field: "", message: `Python failed to load: ${String((err && err.message) || err).split("\n")[0]}` } });
    return;
  }
  if (fatal) {
    self.postMessage({ id, ok: false, error: { field: "", message: fatal } });
    return;
  }
  const started = performance.now();
  let reply;
  try {
    reply = await handler(msg, runtime);
  } catch (err) {
    reply = { ok: false, error: internalError(err) };
    if (err && err.pyodide_fatal_error) {
      // The interpreter is gone (e.g. its stack overflowed); every later request gets this answer.
      fatal = "Python stopped after a fatal error; reload the page to start it again.";
      status("failed", { message: fatal });
    }
  }
  const { transfer = [], ...answer } = reply; // ArrayBuffers handed over with the reply
  if (msg.type === "simulate") answer.timing = { ...msg.timing, posting: now() };
  self.postMessage({ id, ...answer, ms: performance.now() - started }, transfer);
  collectWhenIdle(runtime);
};
