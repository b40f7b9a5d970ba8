// Computing: the input checks, the packages the settings need, then the request through the
// worker client's latest-wins gate; the response goes to the renderers with the snapshot taken
// when the request was sent.
//
//   state -> dragRequests (in requests.js) -> gate.submit -> worker -> api.simulate -> response -> onResult(last)
//
// The phase of the row that changed (in params.js) decides whether the worker is asked at all: a
// "setting" sends the drag's request; an "ask" row (find, expand, the sweep's overlaps) changes
// only what the panels ask at rest, so the result on screen is drawn again with the new page
// request and nothing is sent now (redraw); a "page" row reaches no request.
//
// Requests are numbered; a reply older than what is already on screen (or than a problem shown
// since) is dropped, so the page always shows its newest input.

import { PARAMS, FIELD_LABELS, applies, tokenizersNeeded } from "./params.js";
import { PANEL_ANSWERS, aheadRequests, dragCarriesAsks, dragRequests, embedRequest } from "./requests.js";
import { snapshot } from "./state.js";
import { cap } from "./format.js";
import { workerMessage } from "./worker-client.js";
import { withColumns } from "./chunk-columns.js";
import { sizeProblem } from "./limits.js";
import { DenseClient } from "./dense-client.js";
import { Reranker } from "./your-reranker.js";
import { SemanticClient } from "./semantic-client.js";
import { mark, markWorker } from "./drag-timing.js";

/** Why the state cannot be computed at all, as a sentence, or null. */
export function inputProblem(s) {
  if (!s.docs.some((d, i) => (i === s.sel ? s.doc : d.text).trim())) {
    return s.docs.length > 1 ? "Every document is empty: paste or type the text to chunk." : "The document is empty: paste or type the text to chunk.";
  }
  if (!/[\p{L}\p{N}_]/u.test(s.q)) return "The question has no words to search with: type a question with at least one word.";
  return sizeProblem(s); // the core's limits, before any work (limits.js)
}

// A drag over more chunks than this asks for the top k without every score ("scores": "top",
// docs/wire.md): the core then scores only the chunks that can reach the top (bm25.Pruned). The
// rest of the scores (the detail box, the chunk table) come once the controls rest (completeScores).
export const PRUNE_CHUNKS = 2_000;

/** What the retriever's note says when the model cannot load. */
const turnedOff = (message) => `${message} BM25 ranks instead: choose dense or hybrid again to retry.`;

/** Why rank file `name` could not be loaded, in one sentence: offline, what still works and what to
 * change; else the worker's reason. `rows`: the rows that asked for it. */
export function tokenizerProblem(name, reason, rows) {
  const why = String(reason || "no reason was given");
  const offline = (typeof navigator !== "undefined" && navigator.onLine === false) || /failed to fetch|networkerror|network error|load failed/i.test(why);
  const where = rows.map((p) => `“${p.label}”`).join(" and ") || "the tokenizer";
  if (offline) {
    return `The page is offline and the ${name} tokenizer was never downloaded, so it cannot count tokens now. ` +
      `Everything else works offline: choose another setting for ${where}, or reconnect and it loads.`;
  }
  return `The ${name} tokenizer could not be loaded (${why.replace(/\.\s*$/, "")}): choose another setting for ${where}, or try again.`;
}

export class Computer {
  /** store: {state, embed}; controls: for invalid fields and package notes; asks: the scheduler of
   * work at rest (asks.js: the drag's request is tracked there, the page rests once it is answered);
   * onResult(last), onProblem(message) (null clears it), onTurnedOff(): a row was turned off because
   * its package could not be installed. */
  constructor({ store, controls, asks, onResult, onProblem, onTurnedOff }) {
    Object.assign(this, { store, controls, asks, onResult, onProblem, onTurnedOff });
    this.gate = null; // the worker client, once started
    this.ready = false; // Python is ready: until then the body stays "loading"
    this.installs = {}; // package -> the worker's install reply (a promise until it arrives)
    this.tokenizers = {}; // rank file name -> the worker's reply (a promise until it arrives)
    this.tokenizerProblems = {}; // rank file name -> why it could not be loaded the last time it was tried
    this.sequence = 0;
    this.problemAt = 0;
    this.renderedAt = 0;
    this.lastChunks = 0; // chunks of the result on screen: over PRUNE_CHUNKS, a drag asks for the top k only
    this.prunedDrags = 0;
    // Dense and hybrid: the embedding worker, started when first needed; its state
    // (download, "Embedding 12 of 40 chunks…") beside the retriever.
    // A failed model is said once, in the same words whichever reports it first (the status here or
    // followDense below), so a later report never replaces the sentence with a shorter one. Once BM25
    // has taken over, a panel's late call for the old dense request (the sweep at rest, say) may start
    // loading the model again: its "Loading…" does not replace the sentence that says BM25 ranks instead.
    this.onDenseStatus = () => {}; // your model's panel: its Stop button follows the state
    this.dense = new DenseClient({ onStatus: ({ state, text }) => {
      this.onDenseStatus(state);
      if (state === "failed") { this.turnOff(text); return; } // said and BM25 on at once, not when the drag's own job fails
      if (this.store.state.method === "bm25") return;
      this.controls.note("method", state === "ready" ? "ready" : "loading", text);
    } });
    asks.on("rest", () => this.dense.release()); // a drag held every job but its own: resumed at rest
    // Semantic chunkers: the sentence windows the core names (`semantic_needs`) embedded
    // in the same embedding worker, kept by key; their vectors go with the next request while the
    // last answer still asks for them (`semanticOwed`). Stopped, nothing is embedded until resumed.
    this.semantic = new SemanticClient({ dense: this.dense, onStatus: (s) => this.onSemantic(s) });
    this.onSemantic = () => {};
    this.semanticOwed = [];
    // Your reranker (your-reranker.js): its scores kept by list, sent with the question's request;
    // the lists the core still needs asked at rest. onRerankFailed(sentence): a reply it cannot use.
    this.reranker = new Reranker();
    this.onRerankFailed = () => {};
    this.onReranked = () => {}; // its scores came back
  }

  /** data-state on <body>: "loading" until Python is ready, then "computing", "ready" or "error". */
  setBodyState(value) {
    if (!this.ready) return; // a boot failure sets "error" itself
    document.body.dataset.state = value;
  }

  /** `phase`: the phase of the row that changed ("setting" for anything else). */
  async compute(phase = "setting") {
    if (phase === "page") return; // no request holds it
    if (phase === "ask" && this.redraw()) return;
    const seq = ++this.sequence;
    this.asks.moved();
    const state = this.store.state;
    const problem = inputProblem(state);
    if (problem) {
      this.problemAt = seq;
      this.onProblem(problem);
      this.setBodyState("error");
      return;
    }
    // Back to BM25 (or reloaded with it): a dense model's loading line beside the retriever is old news.
    if (state.method === "bm25" && this.controls.noteKind("method") !== "error") this.controls.note("method", "", "");
    if (!this.ready) return; // computed as soon as Python is ready
    const installing = [this.installNeeds(state), this.loadTokenizers(state)].filter(Boolean);
    if (installing.length) {
      this.setBodyState("computing");
      await this.asks.track(Promise.all(installing));
      if (seq !== this.sequence) return; // a newer computation (started while this waited) takes over
    }
    // A rank file that could not be loaded (offline, say): said once, here, and nothing is sent (the
    // core would only add that the file is not loaded yet).
    const unloaded = tokenizersNeeded(state).map((name) => this.tokenizerProblems[name]).find(Boolean);
    if (unloaded) {
      this.problemAt = seq;
      this.onProblem(unloaded);
      this.setBodyState("error");
      return;
    }
    mark("compute");
    // The question set is scored after the result (in question-scores.js); the investigation panels'
    // questions (find, cuts, expand) are asked once the controls rest (`panels`, investigate.js),
    // except by dense and hybrid drags (in requests.js dragCarriesAsks).
    const { page: request, drag, panels: panelRequest, ahead: bare } = dragRequests(state, { embed: this.store.embed });
    const snap = snapshot(state, request);
    mark("request");
    this.setBodyState("computing");
    this.dense.use(state.model, state.yourModel);
    if (state.method !== "bm25") this.dense.hold(); // a move: only this setting is embedded until the controls rest
    const reranker = this.store.embed ? null : state.yourReranker; // never in an embed
    const prune = this.lastChunks > PRUNE_CHUNKS && state.method === "bm25" && !reranker;
    if (prune) this.prunedDrags++;
    const owed = this.semanticOwed; // + the kept vectors the last answer asked for (semantic chunkers)
    const prepared = this.reranker.attach(this.semantic.attach(this.dense.prepare(prune ? { ...drag, scores: "top" } : drag), owed), reranker); // + the cosines known (dense, hybrid), your reranker's scores
    const given = new Set((prepared.semantic_vectors || []).map((v) => v.key));
    const message = workerMessage(prepared, { binary: true });
    mark("message");
    let reply = await this.asks.track(this.gate.submit(message));
    mark("replied");
    markWorker(reply.timing);
    if (reply.dropped) return;
    if (reply.lost && !reply.culprit && !reply.known) return; // the worker was lost under another call: recomputed when the new one is ready
    if (seq < this.problemAt || seq < this.renderedAt) return; // something newer already decided what is shown
    let response = null;
    if (reply.ok) {
      try { response = this.semantic.complete(JSON.parse(reply.result)); } catch { // garbage from a broken runtime: replace the worker
        this.gate.garbled?.(message);
        reply = { ok: false, error: { field: "", message: this.gate.lastLoss || "Python gave a reply that could not be read." } };
      }
    }
    if (!reply.ok) {
      this.problemAt = seq;
      this.showError(reply.error || {});
      this.setBodyState("error");
      return;
    }
    this.renderedAt = seq;
    this.lastChunks = response.stats ? response.stats.chunks : 0;
    mark("parsed");
    const last = { request, response: withColumns(response, reply.columns), snap, ms: reply.ms, panelRequest,
      fullRequest: prune ? drag : null };
    mark("columns");
    this.shown = last;
    this.onResult(last);
    mark("rendered");
    if (seq === this.sequence) this.setBodyState("ready");
    if (response.dense && response.dense.pending) this.followDense(seq, drag, response);
    else if (response.dense && seq === this.sequence) this.embedAhead(seq, bare);
    this.followSemantic(seq, response.semantic_needs || [], given);
    if (reranker && response.rerank && response.rerank.pending) this.followRerank(seq, reranker, response.rerank.needs);
  }

  /** An "ask" row changed: the drag's request is the one on screen, so nothing is sent now; the
   * result on screen is drawn again with the page's new request, and its panels ask theirs at rest.
   * False when it cannot be: nothing shown for the latest computation (one in flight, a problem
   * since), or dense and hybrid, whose drag asks the panels' questions itself. */
  redraw() {
    const shown = this.shown, state = this.store.state;
    if (!shown || this.renderedAt !== this.sequence || this.problemAt > this.renderedAt || dragCarriesAsks(state) || inputProblem(state)) return false;
    this.asks.moved(); // the panels ask again at rest
    const { page, panels } = dragRequests(state, { embed: this.store.embed });
    // the same response (its columns too: `cols` is not enumerable), less the old panels' answers
    const response = Object.defineProperties({}, Object.getOwnPropertyDescriptors(shown.response));
    for (const key of PANEL_ANSWERS) delete response[key];
    this.shown = { ...shown, request: page, response, snap: snapshot(state, page), panelRequest: panels, panelsFilled: false, completing: undefined };
    this.onResult(this.shown);
    return true;
  }

  /** Your reranker's lists the core named: asked once the page rests (a drag never waits on the
   * endpoint), then computed again with their scores. A reply it cannot use turns it off, said. */
  async followRerank(seq, chosen, needs) {
    const r = await this.asks.ask("rerank", JSON.stringify([chosen, needs]), () => this.reranker.fill(chosen, needs), { latest: true });
    if (r.dropped || chosen !== this.store.state.yourReranker) return; // another choice since: its own request
    if (r.ok) { this.onReranked(chosen); if (seq === this.sequence) this.compute(); return; }
    this.onRerankFailed(r.message || (r.error && r.error.message) || "The reranker failed.");
    this.compute();
  }

  /** The Retriever pointed at or focused under BM25 (in app.js): the embedding model loaded and,
   * while nothing moves, this setting's chunks embedded at the settings-ahead priority (when their
   * model time fits the ahead budget), so choosing Dense finds them. Nothing is shown meanwhile. */
  prepareDense() {
    const state = this.store.state;
    if (state.method !== "bm25" || !this.ready || this.preparedAt === this.sequence) return;
    this.preparedAt = this.sequence; // once per setting, however often the controls get focus
    this.dense.use(state.model, state.yourModel);
    this.dense.warm();
    const seq = this.sequence, current = () => seq === this.sequence && this.store.state.method === "bm25";
    const bare = embedRequest(state, { embed: this.store.embed, method: "dense" });
    this.dense.prepareSetting((r) => this.gate.send(workerMessage(r, { binary: true })), bare, current);
  }

  /** How many chunks this setting still has to embed with the chosen model (your model's cost, said
   * before it starts), or null when the core could not say. */
  async embedCost() {
    const state = this.store.state;
    this.dense.use(state.model, state.yourModel);
    const p = await this.dense.plan((r) => this.gate.send(workerMessage(r, { binary: true })), embedRequest(state, { embed: this.store.embed }));
    return p.ok ? p.chunks : null;
  }

  /** Dense or hybrid, this setting's verdict drawn: once the page rests, the chunks of the
   * neighbouring settings embedded ahead (dense-client.js `ahead`: nearest first, within a budget),
   * so the next step of a drag finds them. A newer plan replaces this one. */
  embedAhead(seq, request) {
    this.dense.aheadBusy = false;
    const requests = aheadRequests(request);
    if (!requests) return;
    this.dense.aheadBusy = true; // planned: a page at rest is not done until these are embedded
    this.asks.ask("ahead", seq, () => {
      if (seq !== this.sequence) { this.dense.aheadBusy = false; return null; }
      return this.dense.ahead((r) => this.gate.send(workerMessage(r, { binary: true })), requests, () => seq === this.sequence);
    }, { latest: true });
  }

  /** A semantic chunker's windows the worker's session lacks: embedded (or taken from the kept
   * vectors, when the worker lost its session), then computed again with them. */
  async followSemantic(seq, needs, given) {
    this.semanticOwed = needs;
    if (!needs.length) return;
    if (needs.some((n) => given.has(n.key))) { // given and still asked for: say so, never loop
      this.onProblem("The worker asked again for the sentence windows' vectors it was just given; change a setting to try again.");
      return;
    }
    if (this.semantic.paused && !needs.every((n) => this.semantic.has(n.key))) return; // stopped: Resume goes on
    const r = await this.semantic.fill(needs, String(this.store.state.strategy).startsWith("chroma") ? "pieces" : "sentence windows");
    if (r.ok && seq === this.sequence) this.compute(); // else a newer answer's own followSemantic computes
  }

  /** Stop the embedding of sentence windows; nothing more is embedded until resumeSemantic(). */
  stopSemantic() {
    this.semantic.stop();
  }

  resumeSemantic() {
    this.semantic.resume();
    this.compute();
  }

  /** The scores a pruned drag left out (`last.response.cols.partial`): the same request with every
   * score, asked of the worker at rest (results.js); resolves true once `cols` has them (at once
   * when it had them already). */
  completeScores(last) {
    const cols = last.response.cols;
    if (!cols || !cols.partial || !last.fullRequest) return Promise.resolve(true);
    if (last.completing) return last.completing;
    last.completing = this.asks.ask("scores", last, () => this.gate.send(workerMessage(last.fullRequest, { binary: true })), { latest: true }).then((reply) => {
      if (!reply.ok || !reply.columns) return false;
      let full;
      try { full = withColumns(JSON.parse(reply.result), reply.columns); } catch { return false; }
      return cols.complete(full.cols);
    });
    return last.completing;
  }

  /** Dense or hybrid: BM25's ranking is on screen; embed the chunks the core named, then compute
   * again from the cosines (latest wins: a newer drag cancels this one's embedding between batches).
   * A model that cannot load is said beside the retriever and BM25 takes over; nothing typed is lost. */
  async followDense(seq, request, response) {
    const r = await this.dense.fill(request, response, "main");
    if (r.ok) { if (seq === this.sequence) this.compute(); return; }
    if (r.cancelled || r.idle || this.store.state.method === "bm25") return; // idle: your model not chosen yet
    this.turnOff(r.message);
  }

  /** The dense model failed (whichever job said it first): the sentence beside the retriever, and
   * BM25 ranks from now on (the retriever shows it at once); nothing typed is lost. */
  turnOff(message) {
    this.controls.note("method", "error", turnedOff(message));
    if (this.store.state.method === "bm25") return;
    this.store.state.method = "bm25";
    this.onTurnedOff();
    queueMicrotask(() => this.compute()); // not inside the dense client's report
  }

  /** The core's {field, message}: the field's control marked invalid, the message in its words. */
  showError(error) {
    const param = FIELD_LABELS[error.field];
    if (param) this.controls.invalid(param.name);
    this.onProblem(param ? `${param.label}: ${error.message}` : error.message || "The simulation failed.");
  }

  /** Install, once, what the rows that are on need (`needs`); null when nothing is missing. A failure
   * turns its row off and says why beside it. */
  installNeeds(state) {
    const missing = PARAMS.filter((p) => p.needs && p.needs.package && state[p.name] && applies(p, state) && this.installs[p.needs.package]?.ok !== true);
    if (!missing.length) return null;
    return Promise.all(missing.map(async (p) => {
      const { package: name, loading, what } = p.needs;
      this.controls.note(p.name, "loading", loading);
      this.installs[name] ??= this.gate.send({ type: "install", package: name });
      const reply = await this.installs[name];
      this.installs[name] = reply;
      if (reply.ok) {
        if (this.controls.noteKind(p.name) === "loading") this.controls.note(p.name, null, "");
        return;
      }
      delete this.installs[name]; // the next time the row is turned on tries again
      this.store.state[p.name] = false;
      this.onTurnedOff();
      this.controls.note(p.name, "error", `${cap(what)} could not be loaded, so it is off: ${reply.error?.message || "no reason was given"}`);
    }));
  }

  /** Load, once, the tiktoken rank files the settings count with, the bytes loaded shown
   * beside the rows that asked; null when every one is loaded. A failure is said beside them and the
   * core's own error (the file is not loaded) shows in the message line. */
  loadTokenizers(state) {
    const missing = tokenizersNeeded(state).filter((name) => this.tokenizers[name]?.ok !== true);
    if (!missing.length) return null;
    const rows = PARAMS.filter((p) => p.needs && p.needs.tokenizer && applies(p, this.store.state));
    const note = (name, kind, text) => {
      for (const p of rows) if (p.needs.tokenizer(this.store.state) === name) this.controls.note(p.name, kind, text);
    };
    return Promise.all(missing.map(async (name) => {
      if (!this.tokenizers[name]) {
        note(name, "loading", `Loading the ${name} tokenizer…`);
        this.tokenizers[name] = this.gate.send({ type: "tokenizer", name }, (m) => {
          const mb = (n) => (n / 1e6).toFixed(1);
          note(name, "loading", `Loading the ${name} tokenizer: ${mb(m.loaded)}${m.total ? ` of ${mb(m.total)}` : ""} MB`);
        });
      }
      const reply = await this.tokenizers[name];
      this.tokenizers[name] = reply;
      note(name, null, "");
      if (reply.ok) { delete this.tokenizerProblems[name]; return; }
      delete this.tokenizers[name]; // the next computation tries again
      this.tokenizerProblems[name] = tokenizerProblem(name, reply.error?.message, rows.filter((p) => p.needs.tokenizer(this.store.state) === name));
    }));
  }
}
