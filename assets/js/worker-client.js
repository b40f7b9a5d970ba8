// The worker client: the latest-wins gate between the page and the Pyodide worker (assets/worker.js).
//
//   import { Gate } from "./assets/js/worker-client.js";
//   const gate = Gate.start();              // starts the worker; or `new Gate(existingWorker)`
//   gate.onstatus = ({stage, message}) => ...  // "runtime" | "snapshot" | "core" | "ready" | "failed"
//   await gate.ready;                       // resolves at "ready", rejects (Error) at "failed"
//   const reply = await gate.submit(request);   // request: an object or a JSON string
//     // reply: {ok: true, result: "<response JSON>", columns?: ArrayBuffer (wire "binary"), ms}
//     //     or {ok: false, error: {field, message}, ms}
//     //     or {dropped: true} when a newer submit replaced this one before it was sent
//   await gate.send({type: "install", package: "snowballstemmer"});  // bypasses the gate
//   await gate.send(workerMessage(request, {fn: "audit"}));  // a call (ragsim.wire.calls), past the gate
//   await gate.send({type: "tokenizer", name: "cl100k_base"}, (p) => p.loaded);  // with its progress
//     // messages {type: "progress", id, ...} (bytes loaded, pages read) go to the second argument
//   gate.terminate();
//
// submit() keeps at most one simulation in flight and one queued: while one runs, a newer submit
// takes the queued slot and the one it displaces resolves {dropped: true} at once. So a drag that
// fires fifty input events costs at most two computations after the first, and the last value
// always gets computed. (The pattern of redblobgames' mapgen4.) Replies never reject; a worker
// that dies answers every pending call with {ok: false, error}.

import { mark } from "./drag-timing.js";

export class Gate {
  /** Start the page's worker (one folder up from this module) and wrap it. */
  static start() {
    return new Gate(new Worker(new URL("../worker.js", import.meta.url), { type: "module" }));
  }

  constructor(worker) {
    this.worker = worker;
    this.onstatus = null;
    this.stage = "runtime";
    this.nextId = 1;
    this.pending = new Map(); // id -> resolve, for every message sent and not yet answered
    this.progress = new Map(); // id -> the progress callback of a message sent with one
    this.inFlight = false;
    this.queued = null; // {message, resolve}
    this.dead = null; // the reason, once the worker is gone
    // Deadlines (set by the page's supervisor): deadline(message) -> ms the worker may spend on it once
    // ready (null: none), each progress message starting the time again; onlate(message) when missed.
    this.deadline = null;
    this.onlate = null;
    this.timers = new Map(); // id -> {message, timer}
    this.held = []; // the texts this worker holds, by slot (`texts` of the messages posted to it)
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // a page that never awaits `ready` sees failure through onstatus
    worker.addEventListener("message", (event) => this.receive(event.data));
    worker.addEventListener("error", (event) => {
      event.preventDefault?.();
      this.fail(`The worker stopped: ${event.message || "it could not be loaded"}.`);
    });
  }

  /** Send a simulation through the gate (latest wins): a JSON string, a request object, or
   * workerMessage's message. */
  submit(request) {
    const message = typeof request === "string" ? { type: "simulate", request }
      : request.type === "simulate" ? request : { type: "simulate", request: JSON.stringify(request) };
    return new Promise((resolve) => {
      if (!this.inFlight) {
        this.dispatch(message, resolve);
        return;
      }
      if (this.queued) this.queued.resolve({ dropped: true });
      this.queued = { message, resolve };
    });
  }

  /** Send any other message straight to the worker; resolves with its reply. `onprogress` gets the
   * worker's {type: "progress"} messages for it; `transfer` lists ArrayBuffers to hand over (not copy). */
  send(message, onprogress = null, transfer = []) {
    return new Promise((resolve) => {
      if (this.dead) {
        resolve({ ok: false, error: { field: "", message: this.dead } });
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, resolve);
      if (onprogress) this.progress.set(id, onprogress);
      // Big texts travel as UTF-8 bytes handed over, not as a string copied (encoded at each post,
      // so a message sent again after a restart still has them). The worker keeps the last text of
      // each slot: a text it already holds goes as null, so a drag over a book sends no text at all.
      let texts = null;
      if (message.type === "simulate") mark("send");
      if (message.texts) {
        texts = message.texts.map((t, i) => (typeof t !== "string" ? t : t === this.held[i] ? null : new TextEncoder().encode(t).buffer));
        this.held = message.texts.map((t) => (typeof t === "string" ? t : undefined));
      }
      if (message.type === "simulate") mark("texts");
      this.worker.postMessage(texts ? { ...message, texts, id } : { ...message, id }, texts ? [...transfer, ...texts.filter(Boolean)] : transfer);
      if (message.type === "simulate") mark("posted");
      if (this.deadline) {
        this.timers.set(id, { message, timer: 0 });
        if (this.stage === "ready") this.arm(id);
        else this.ready.then(() => this.arm(id), () => {});
      }
    });
  }

  /** Start (again) the time the worker has for message `id`. */
  arm(id) {
    const t = this.timers.get(id);
    const ms = t && this.deadline && this.deadline(t.message);
    if (!ms) return;
    clearTimeout(t.timer);
    t.timer = setTimeout(() => { if (this.timers.delete(id) && this.onlate) this.onlate(t.message); }, ms);
  }

  disarm(id) {
    const t = this.timers.get(id);
    if (t) clearTimeout(t.timer);
    this.timers.delete(id);
  }

  terminate() {
    this.worker.terminate();
    this.fail("The worker was stopped.");
  }

  dispatch(message, resolve) {
    this.inFlight = true;
    this.send(message).then((reply) => {
      this.inFlight = false;
      resolve(reply);
      const next = this.queued;
      this.queued = null;
      if (next) this.dispatch(next.message, next.resolve);
    });
  }

  receive(data) {
    if (data && data.type === "status") {
      this.stage = data.stage;
      if (data.stage === "ready") this.resolveReady(data);
      if (data.stage === "failed") this.rejectReady(new Error(data.message || "Python failed to load."));
      if (this.onstatus) this.onstatus(data);
      return;
    }
    if (data && data.type === "progress") {
      const onprogress = this.progress.get(data.id);
      if (onprogress) onprogress(data);
      this.arm(data.id);
      return;
    }
    const resolve = this.pending.get(data && data.id);
    if (!resolve) return;
    if (data.timing) mark("received");
    this.pending.delete(data.id);
    this.progress.delete(data.id);
    this.disarm(data.id);
    resolve(data);
  }

  fail(message) {
    this.dead = this.dead || message;
    for (const id of [...this.timers.keys()]) this.disarm(id);
    const error = { field: "", message };
    for (const resolve of this.pending.values()) resolve({ ok: false, error });
    this.pending.clear();
    if (this.queued) this.queued.resolve({ ok: false, error });
    this.queued = null;
    if (this.stage !== "ready" && this.stage !== "failed") {
      this.stage = "failed";
      this.rejectReady(new Error(message));
      if (this.onstatus) this.onstatus({ type: "status", stage: "failed", message });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The simulate protocol: the page asks for the chunks as packed bytes (`wire: "binary"`,
// docs/wire.md); the worker hands them over beside the JSON as `reply.columns`, and
// chunk-columns.js's withColumns(response, reply.columns) gives the renderers typed arrays
// (`response.cols`), SPEC section 6's objects (`response.chunks`) only when something reads them.

// Documents longer than this together go to the worker as bytes (`texts`, handed over), not inside
// the request's JSON: no giant string is built or copied on the main thread, and the worker keeps
// them, so a drag sends no text at all (65,000 words: a drag 43 -> 34 ms median).
export const BYTES_OVER = 100_000;

/** The one message encoder: `request` (an object) as the worker is sent it. A simulation goes as
 * {type: "simulate", request}, with `binary` as the drag asks (`"wire": "binary"`, docs/wire.md);
 * `fn` makes it {type: "call", fn, request} (ragsim.wire.calls). Documents longer than BYTES_OVER
 * together travel as `texts` (their texts left empty in the JSON, in order), bytes handed over by
 * send, or nothing when the worker holds them, so no giant JSON string is built on the page's thread. */
export function workerMessage(request, { fn = null, binary = false } = {}) {
  const documents = Array.isArray(request.documents) ? request.documents : [];
  const long = documents.reduce((n, d) => n + d.text.length, 0) > BYTES_OVER;
  const body = long ? { ...request, documents: documents.map((d) => ({ ...d, text: "" })) } : request;
  const json = JSON.stringify(binary ? { ...body, wire: "binary" } : body);
  const message = fn ? { type: "call", fn, request: json } : { type: "simulate", request: json };
  if (long) message.texts = documents.map((d) => d.text);
  return message;
}
