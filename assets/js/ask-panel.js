// Asking your own model: the opt-in panel. Off by default, never built in an embed, and
// nothing is sent until Ask is pressed (a drag never asks). Ask sends the exact context of the
// result on screen (the response's `context`, what "The context that would be sent" shows) in the
// prompt typed here, one request per sample, to a model server on this computer (ask-client.js);
// the worker fills the prompt and checks each answer with ragsim.wire.ask_checks, the command line's
// own functions. Answers are kept per setting (splitter, unit, size, overlap, k, retriever), so two
// settings compare side by side. For a question set, "Ask every question" asks each one with its
// own context at the current setting and at a second one typed here (or the map's cheapest that
// keeps every answer), in a table. Stop aborts what is in flight.

import { $ } from "./dom.js";
import { workerMessage } from "./worker-client.js";
import { offsetMap } from "./offsets.js";
import { contextRequest } from "./requests.js";
import { DEFAULT_PROMPT, chatOnce, localEndpoint } from "./ask-client.js";
import { renderAnswerCards, renderSetTable } from "./render/ask-answers.js";

const MAX_SAMPLES = 10;
const MAX_SET_QUESTIONS = 50; // questions asked per run: each is samples x 2 requests to the model
const CARDS_KEPT = 4; // settings shown side by side for one question

/** The setting a request is at: {key, label, size, overlap}. */
export function settingOf(request, size = request.chunking.size, overlap = request.chunking.overlap) {
  const c = request.chunking, r = request.retrieval || {};
  const strategy = c.strategy || "window", method = r.method || "bm25";
  const parts = [size !== undefined && `size ${size}`, overlap !== undefined && `overlap ${overlap}`, `k ${r.k}`].filter(Boolean);
  const kind = [strategy, c.unit, method === "bm25" ? "" : method].filter(Boolean).join(", ");
  return { key: JSON.stringify([strategy, c.unit ?? null, size ?? null, overlap ?? null, r.k, method]),
    label: `${parts.join(" · ")} (${kind})`, size, overlap };
}

/** The marked answer's texts, trimmed: every span of it, and a marked fact's value (the value is
 * what answers a fact). */
export function markedAnswers(snap) {
  const spans = (snap.spans || []).map((sp) => (snap.texts[sp.doc] ?? "").slice(sp.start, sp.end).trim());
  const value = snap.fact && snap.fact.complete ? snap.factText.value.trim() : "";
  return [...spans, value].filter(Boolean);
}

/** A question's reference texts, from the request's documents (code-point offsets). */
function referenceTexts(request, q) {
  return q.references.map((r) => {
    const text = (request.documents.find((d) => d.id === r.doc) || { text: "" }).text, map = offsetMap(text);
    return text.slice(map.toU16(r.start), map.toU16(r.end)).trim();
  }).filter(Boolean);
}

export class AskPanel {
  /** deps: last() (the result on screen: {request, response, snap}), send(message) (straight to the
   * worker), simulate(request) (a simulation's reply), mapBest() ({size, overlap} or null). */
  constructor(deps) {
    this.deps = deps;
    this.kept = new Map(); // setting key -> entry, the newest last
    this.controller = null;
    this.prompt = $("ask-prompt");
    this.prompt.value = DEFAULT_PROMPT;
    $("ask-on").addEventListener("change", () => { $("ask-body").hidden = !$("ask-on").checked; });
    $("ask-run").addEventListener("click", () => this.askOne());
    $("ask-set-run").addEventListener("click", () => this.askSet());
    $("ask-stop").addEventListener("click", () => this.stop());
    $("ask-clear").addEventListener("click", () => { this.kept.clear(); this.drawCards(""); });
    $("ask-prompt-reset").addEventListener("click", () => { this.prompt.value = DEFAULT_PROMPT; });
    $("ask-use-best").addEventListener("click", () => this.useBest());
    this.drawCards("");
  }

  status(text, kind = "") {
    const el = $("ask-status");
    el.textContent = text;
    el.dataset.kind = kind;
  }

  /** The model and how to ask it, from the fields: {url, model, samples, temperature} or null (said). */
  options() {
    const endpoint = localEndpoint($("ask-endpoint").value);
    const model = $("ask-model").value.trim();
    const samples = Number($("ask-samples").value), temperature = $("ask-temperature").value.trim();
    const problem = endpoint.problem ||
      (!model && "Type the model's name as the server knows it (for Ollama, `ollama list` shows them).") ||
      (!(Number.isInteger(samples) && samples >= 1 && samples <= MAX_SAMPLES) && `Samples takes a whole number from 1 to ${MAX_SAMPLES}.`) ||
      (temperature !== "" && !(Number(temperature) >= 0 && Number(temperature) <= 2) && "Temperature takes a number from 0 to 2, or nothing for the server's default.");
    if (problem) { this.status(problem, "error"); return null; }
    return { url: endpoint.url, model, samples, temperature: temperature === "" ? null : Number(temperature) };
  }

  /** The worker's ragsim.wire.ask_checks call: {prompt, checks} or {problem}. */
  async checks(context, question, answers, samples = []) {
    const request = { template: this.prompt.value, context, question, answers, samples };
    const reply = await this.deps.send(workerMessage(request, { fn: "ask" }));
    if (!reply.ok) return { problem: (reply.error && reply.error.message) || "The worker could not build the prompt." };
    return JSON.parse(reply.result);
  }

  /** Every sample of one context into `entry.samples` (each checked as it arrives); `draw` after each. */
  async sample(opts, entry, draw) {
    const built = await this.checks(entry.context, entry.question, entry.answers);
    if (built.problem) { entry.problem = built.problem; entry.state = "failed"; draw(); return false; }
    const messages = [{ role: "user", content: built.prompt }];
    for (let i = 0; i < opts.samples; i++) {
      const r = await chatOnce({ ...opts, messages, signal: this.controller.signal });
      if (r.stopped) { entry.state = "stopped"; draw(); return false; }
      if (r.problem) { entry.problem = r.problem; entry.state = "failed"; draw(); return false; }
      const checked = await this.checks(entry.context, entry.question, entry.answers, [r.text]);
      if (checked.problem) { entry.problem = checked.problem; entry.state = "failed"; draw(); return false; }
      entry.samples.push({ text: r.text, ...checked.checks[0] });
      draw();
    }
    entry.state = "done";
    draw();
    return true;
  }

  begin() {
    if (this.controller) return false; // one run at a time
    this.controller = new AbortController();
    $("ask-stop").disabled = false;
    $("ask-run").disabled = $("ask-set-run").disabled = true;
    return true;
  }

  end(text, kind = "") {
    this.controller = null;
    $("ask-stop").disabled = true;
    $("ask-run").disabled = $("ask-set-run").disabled = false;
    this.status(text, kind);
  }

  stop() {
    if (this.controller) this.controller.abort();
  }

  /** Ask: the current question with the context on screen, its answers kept under its setting. */
  async askOne() {
    const last = this.deps.last();
    if (!last) { this.status("Nothing to ask yet: the simulator has not shown a result.", "error"); return; }
    const opts = this.options();
    if (!opts || !this.begin()) return;
    const { request, response, snap } = last;
    const setting = settingOf(request);
    const entry = { ...setting, question: request.query, answers: markedAnswers(snap), context: response.context,
      verdict: snap.spans.length ? response.verdict.kind : response.fact ? response.fact.kind : null,
      model: opts.model, temperature: opts.temperature, wanted: opts.samples, samples: [], state: "asking" };
    this.kept.delete(setting.key);
    this.kept.set(setting.key, entry);
    this.status(`Asking ${opts.model} at ${setting.label}…`);
    const draw = () => this.drawCards(request.query);
    const ok = await this.sample(opts, entry, draw);
    this.end(ok ? `${opts.model} answered ${entry.samples.length} of ${opts.samples} samples at ${setting.label}.`
      : entry.state === "stopped" ? "Stopped." : entry.problem, ok || entry.state === "stopped" ? "" : "error");
  }

  /** The kept answers of `question` (the newest CARDS_KEPT settings), side by side. */
  drawCards(question) {
    const entries = [...this.kept.values()].filter((e) => e.question === question).slice(-CARDS_KEPT);
    renderAnswerCards($("ask-answers"), entries);
  }

  /** The second setting's fields from the map's cheapest setting that keeps every answer. */
  useBest() {
    const best = this.deps.mapBest();
    if (!best) { this.status("The settings map has no setting that keeps every answer yet.", "error"); return; }
    $("ask-other-size").value = best.size;
    $("ask-other-overlap").value = best.overlap;
    this.status(`Second setting: size ${best.size}, overlap ${best.overlap} (the map's cheapest that keeps every answer).`);
  }

  /** The second setting typed: {size, overlap} or null (said). */
  other(request) {
    if (request.chunking.size === undefined) { this.status("This splitter has no chunk size, so there is no second setting to compare.", "error"); return null; }
    const size = Number($("ask-other-size").value), overlap = Number($("ask-other-overlap").value || 0);
    if (!Number.isInteger(size) || size < 1 || !Number.isInteger(overlap) || overlap < 0) {
      this.status("Type the second setting's size (a whole number from 1) and overlap (from 0).", "error");
      return null;
    }
    return { size, overlap };
  }

  /** Ask every question of the set with its own context, at the current setting and the second one. */
  async askSet() {
    const last = this.deps.last();
    const questions = (last && last.request.questions) || [];
    if (!questions.length) { this.status("The question set is empty: add questions to it first.", "error"); return; }
    const opts = this.options();
    const second = opts && this.other(last.request);
    if (!second || !this.begin()) return;
    const request = last.request, asked = questions.slice(0, MAX_SET_QUESTIONS);
    const settings = [settingOf(request), settingOf(request, second.size, second.overlap)];
    const run = { model: opts.model, settings, rows: asked.map((q) => ({ id: q.id, query: q.query, answers: referenceTexts(request, q), results: [null, null] })) };
    const draw = () => renderSetTable($("ask-set-table"), run);
    draw();
    for (let j = 0; j < settings.length; j++) {
      for (let i = 0; i < asked.length; i++) {
        if (this.controller.signal.aborted) { this.end("Stopped."); return; }
        this.status(`Asking question ${i + 1} of ${asked.length} at ${settings[j].label}…`);
        const result = { samples: [], context: "", verdict: null, question: asked[i].query, answers: run.rows[i].answers, state: "asking" };
        run.rows[i].results[j] = result;
        const reply = await this.deps.simulate(contextRequest(request, asked[i], settings[j].size, settings[j].overlap));
        if (!reply.ok) { result.problem = `Not asked: ${(reply.error && reply.error.message) || "the simulation failed."}`; draw(); continue; }
        const response = JSON.parse(reply.result);
        Object.assign(result, { context: response.context, verdict: response.questions[0].verdict });
        const ok = await this.sample(opts, result, draw);
        if (!ok && result.problem) { this.end(result.problem, "error"); return; } // the model failed: it would fail again
        if (!ok) { this.end("Stopped."); return; }
      }
    }
    const more = questions.length > asked.length ? ` (the first ${MAX_SET_QUESTIONS} of ${questions.length})` : "";
    this.end(`Asked ${asked.length} questions${more} at two settings.`);
  }
}
