// The worker that cannot be lost: the page talks to this supervisor exactly as to the
// worker client's Gate (submit, send, ready, onstatus), and it keeps one Gate alive.
//
//   const gate = Supervisor.start();
//   gate.onstatus = (status) => ...      // every worker's boot stages, the restarted ones' too
//   gate.onrestart = (sentence, reason) => ...  // a worker was lost; a new one is booting
//   gate.afterRestart(() => ...)         // a restarted worker is ready (after onstatus "ready"):
//                                        // re-run what was on screen (the audit panel does)
//   const reply = await gate.submit(message);  // as Gate.submit, or {ok: false, lost: true, error}
//
// A worker is lost, terminated and replaced by a fresh one when
//   - it misses a request's deadline (MIN_DEADLINE_MS, more for long documents; the time starts once
//     Python is ready, and each progress message starts it again), e.g. a regular expression
//     that backtracks for ever;
//   - Python reports a MemoryError (after one, Pyodide's memory cannot be trusted) or a fatal error;
//   - a reply is not a JSON object (garbage), or the worker script itself dies.
// Every call still waiting on the lost worker is answered {ok: false, lost: true, error: {field: "",
// message}} with one sentence saying what happened and what to change. The request that was running
// when it happened is remembered: the same request again is refused at once with that sentence, so
// a page that recomputes its current state when the new worker is ready cannot loop.
// The new worker gets the documents, the session and the settings back from that recomputation:
// every simulate request carries all of them.

import { Gate } from "./worker-client.js";

export const MIN_DEADLINE_MS = 10_000;
const MS_PER_MILLION_CHARS = 6_000; // Pyodide chunks and indexes about a million characters a second
const NETWORK_DEADLINE_MS = 120_000; // install, tokenizer, pdf: a download between progress messages
const AUDIT_FACTOR = 4; // the audit asks a question per fact at each overlap
const KILLERS_KEPT = 4;

const SENTENCES = {
  regex: "This separator pattern backtracks catastrophically on this text, so Python was stopped and restarted; use a plain separator or a simpler pattern.",
  deadline: "This took Python longer than {s} seconds, so it was stopped and restarted; use a larger chunk size or a smaller document.",
  memory: "This needs more memory than the page has, so Python was restarted; use a larger chunk size or a smaller document.",
  fatal: "Python stopped after a fatal error and was restarted; change the settings that caused it (a larger chunk size or a smaller document usually helps).",
  garbage: "Python gave a reply that could not be read, so it was restarted; use a larger chunk size or a smaller document.",
  died: "The page's worker stopped, so it was restarted; change the settings that caused it and try again.",
};

// The same, as the few words of the boot line while the new worker loads ("Restarting Python after …").
const REASONS = {
  regex: "a separator pattern that backtracked catastrophically",
  deadline: "a request that missed its deadline",
  memory: "a memory error",
  fatal: "a fatal error",
  garbage: "a reply that could not be read",
  died: "the worker stopped",
};

const MEMORY = /MemoryError|out of memory|Out of bounds memory|memory access out of bounds|Maximum call stack/i;

/** The request JSON of a simulate or call message, and its long texts (workerMessage's forms). */
function parts(message) {
  if (typeof message === "string") return { json: message, texts: [] };
  return { json: typeof message.request === "string" ? message.request : "", texts: message.texts || [] };
}

function sameRequest(a, b) {
  const fn = (m) => (m && typeof m === "object" ? m.fn : undefined);
  if (a.type !== b.type || fn(a.message) !== fn(b.message)) return false;
  const x = parts(a.message), y = parts(b.message);
  return x.json !== "" && x.json === y.json && x.texts.length === y.texts.length && x.texts.every((t, i) => t === y.texts[i]);
}

/** The time a message may take once Python is ready, in ms. */
export function deadlineFor(message) {
  if (["install", "tokenizer", "pdf"].includes(message.type)) return NETWORK_DEADLINE_MS;
  const { json, texts } = parts(message);
  const chars = json.length + texts.reduce((n, t) => n + (typeof t === "string" ? t.length : t.byteLength), 0);
  const ms = MIN_DEADLINE_MS + Math.ceil(chars / 1e6) * MS_PER_MILLION_CHARS;
  return message.fn === "audit" ? ms * AUDIT_FACTOR : ms;
}

/** Whether a request asks LangChain to read its separators as regular expressions. */
function usesRegex(message) {
  const { json } = parts(message);
  const i = json.indexOf('"is_separator_regex"'); // the settings come after the documents' texts, if any
  return i >= 0 && /^"is_separator_regex"\s*:\s*true/.test(json.slice(i, i + 40));
}

export class Supervisor {
  static start() {
    return new Supervisor(() => Gate.start());
  }

  /** make(): a new Gate (a test passes one over a fake worker). */
  constructor(make) {
    this.make = make;
    this.onstatus = null;
    this.onrestart = null;
    this.restarts = 0;
    this.deadlineMs = null; // a fixed deadline for every request instead of deadlineFor (tests)
    this.calls = new Set(); // {type, message, resolve, gate} not yet answered
    this.killers = []; // [{type, message, sentence}] the requests that lost a worker, newest last
    this.lastLoss = null; // the last sentence, for tests and the page
    this.restarted = []; // afterRestart's callbacks
    this.boot();
  }

  get stage() {
    return this.gate.stage;
  }

  boot() {
    const gate = this.make();
    this.gate = gate;
    this.ready = gate.ready;
    gate.deadline = (message) => this.deadlineMs ?? deadlineFor(message);
    gate.onlate = (message) => {
      const culprit = [...this.calls].find((c) => c.gate === gate && (c.message === message || sameRequest(c, { type: message.type, message })));
      const seconds = ((this.deadlineMs ?? deadlineFor(message)) / 1000).toLocaleString("en-US", { maximumSignificantDigits: 3 });
      const kind = culprit && usesRegex(culprit.message) ? "regex" : "deadline";
      this.lose(gate, kind, culprit, SENTENCES[kind].replace("{s}", String(seconds)));
    };
    let wasReady = false;
    gate.onstatus = (status) => {
      if (gate !== this.gate) return;
      const firstReady = status.stage === "ready" && !wasReady;
      if (status.stage === "ready") wasReady = true;
      if (status.stage === "failed" && wasReady) { // Python's fatal error: the runtime is gone
        const running = [...this.calls].find((c) => c.gate === gate && c.type === "simulate") || [...this.calls].find((c) => c.gate === gate);
        this.lose(gate, "fatal", running);
        return;
      }
      if (this.onstatus) this.onstatus(status);
      if (firstReady && this.restarts > 0) for (const f of this.restarted) f();
    };
  }

  /** Call `f` each time a worker booted after a loss is ready. */
  afterRestart(f) {
    this.restarted.push(f);
  }

  submit(message) {
    return this.call("simulate", message, (gate) => gate.submit(message));
  }

  send(message, onprogress = null, transfer = []) {
    return this.call(message.type, message, (gate) => gate.send(message, onprogress, transfer));
  }

  terminate() {
    this.gate.terminate();
  }

  call(type, message, post) {
    const known = this.killers.find((k) => sameRequest(k, { type, message }));
    if (known) return Promise.resolve({ ok: false, lost: true, known: true, error: { field: "", message: known.sentence } });
    return new Promise((resolve) => {
      const gate = this.gate;
      const c = { type, message, resolve, gate };
      this.calls.add(c);
      post(gate).then((reply) => this.answered(c, gate, reply));
    });
  }

  answered(c, gate, reply) {
    if (!this.calls.has(c)) return; // already answered when its worker was lost
    if (gate.dead && gate === this.gate) { this.lose(gate, "died", c); return; }
    if (gate !== this.gate) return;
    const message = reply && reply.error && reply.error.message;
    if (reply && reply.ok === false && message && MEMORY.test(message)) { this.lose(gate, "memory", c); return; }
    if (reply && reply.ok && typeof reply.result === "string" && !/^\s*\{[\s\S]*\}\s*$/.test(reply.result.slice(0, 64) + reply.result.slice(-64))) {
      this.lose(gate, "garbage", c);
      return;
    }
    this.calls.delete(c);
    c.resolve(reply);
  }

  /** The worker behind `gate` is lost (`kind`, `culprit`: the call running when it happened): answer
   * every call waiting on it, terminate it and boot a fresh one. Also for a reply that could not be
   * parsed: compute.js calls lost("garbage", ...) itself. */
  lose(gate, kind, culprit = null, sentence = SENTENCES[kind].replace("{s}", "")) {
    if (gate !== this.gate) return;
    this.lastLoss = sentence;
    this.restarts++;
    if (culprit && culprit.type !== "pdf" && culprit.type !== "install" && culprit.type !== "tokenizer") {
      this.killers.push({ type: culprit.type, message: culprit.message, sentence });
      this.killers = this.killers.slice(-KILLERS_KEPT);
    }
    const waiting = [...this.calls].filter((c) => c.gate === gate);
    for (const c of waiting) {
      this.calls.delete(c);
      const text = c === culprit || !culprit ? sentence : "Python was restarted before this was answered; the message above says why.";
      c.resolve({ ok: false, lost: true, culprit: c === culprit, error: { field: "", message: text } });
    }
    gate.onstatus = null;
    gate.onlate = null;
    gate.worker.terminate();
    gate.fail(sentence);
    this.boot();
    if (this.onrestart) this.onrestart(sentence, REASONS[kind]);
  }

  /** A reply the caller could not parse (the runtime is broken): lose the worker that sent it. */
  garbled(message) {
    this.lose(this.gate, "garbage", { type: "simulate", message });
  }
}
