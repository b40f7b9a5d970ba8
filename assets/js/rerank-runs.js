// Your reranker over the long runs: the question set, the panels below the picture and the
// settings map. Each of their requests goes out first with `retrieval.rerank` and no scores: the
// core ranks as the retriever does (the built-in ranking's reply) and names every list it needs
// (`rerank.needs`). Lists not kept are asked of the endpoint one at a time, the built-in reply
// shown meanwhile, with progress ("412 of 2,480 lists reranked") and a Stop button; then the
// request goes again with exactly the scores it needs (Reranker.attach with `only`).
//
//   const runs = new RerankRuns({ reranker, chosen, failed, again });
//   const simulate = runs.wrap(plainSimulate, "questions");  // (request, {current, interim}) -> reply
//
// Stopped, no long run asks the endpoint until Resume: the built-in ranking's results stand, said
// under the panel. A bad reply is the reranker's one sentence (`failed`: the box says it and turns
// the reranker off); the built-in retrievers go on. The question's own verdict is reranked as
// before (by the Computer: one list, asked at rest).

const int = (n) => n.toLocaleString("en-US");
const WHAT = { questions: "the question set", map: "this row of the settings map", sweep: "the panels below the picture" };

/** `request` without `retrieval.rerank` (the built-in ranking's request). */
export function unmarked(request) {
  if (!request.retrieval || !request.retrieval.rerank) return request;
  const { rerank: _r, ...retrieval } = request.retrieval;
  return { ...request, retrieval };
}

/** The lists a reply's core still lacks (`rerank.needs` of a pending reply), or null. */
export function pendingNeeds(reply) {
  if (!reply || !reply.ok) return null;
  let response;
  try { response = JSON.parse(reply.result); } catch { return null; }
  const r = response && response.rerank;
  return r && r.pending && Array.isArray(r.needs) && r.needs.length ? r.needs : null;
}

export class RerankRuns {
  /** reranker: the page's Reranker (its kept scores); chosen(): the reranker in use or null;
   * failed(sentence): a reply it cannot use (turns it off); again(): compute again (Resume). */
  constructor({ reranker, chosen, failed, again }) {
    Object.assign(this, { reranker, chosen, failed, again });
    this.stopped = false; // Stop pressed: no long run asks the endpoint until Resume
    this.lines = {}; // lane -> {box, text, button}: the progress line under its panel
    this.counts = {}; // lane -> {done, total, before} of its last run
    this.mapLists = { key: null, lists: 0 }; // lists reranked for the map's earlier rows (`before`)
    this.runs = 0; // long runs that asked the endpoint (for tests)
  }

  /** `request` marked with the reranker in use (no scores), so that a panel which keys its work by
   * its request (the map, the sweep) asks again when the reranker is chosen, stopped or resumed. */
  mark(request) {
    const chosen = this.chosen();
    return chosen && !this.stopped ? { ...request, retrieval: { ...request.retrieval, rerank: { ...chosen } } } : request;
  }

  /** `simulate` with your reranker, when one is in use, for the long runs of `lane`. */
  wrap(simulate, lane) {
    return (request, ctx = {}) => this.run(simulate, lane, request, ctx);
  }

  /** The reply to `request`: reranked when every list it needs is kept or could be asked; else the
   * built-in ranking's (stopped, failed, or overtaken: `current()` false). First sent with no scores,
   * so the core names every list it needs (its reply, ranked as the retriever ranks, is the built-in
   * one: `interim(reply)` shows it while the lists are asked), then with exactly those: a request
   * never carries the lists of other settings (a map's other rows). */
  async run(simulate, lane, marked, { current = () => true, interim = null } = {}) {
    const chosen = this.chosen(), request = unmarked(marked);
    if (!chosen) { this.say(lane, ""); return simulate(request); }
    if (this.stopped) {
      const plain = await simulate(request);
      if (current()) this.sayStopped(lane);
      if (current()) this.counts[lane] = null; // said once: a later setting's run was never started
      return plain;
    }
    const plain = await simulate(this.reranker.attach(request, chosen, { only: [] }));
    const needs = pendingNeeds(plain);
    if (!needs) { if (current()) this.finish(lane, chosen, plain); return plain; } // no list of two chunks to reorder (or refused)
    const missing = needs.filter((list) => !this.reranker.has(chosen, list));
    if (missing.length) {
      if (!current() || chosen !== this.chosen()) return plain;
      if (interim) interim(plain);
      const r = await this.ask(lane, chosen, missing, current, request);
      if (!r.ok) return plain;
    }
    const reranked = await simulate(this.reranker.attach(request, chosen, { only: needs }));
    if (pendingNeeds(reranked)) { // the kept lists could not hold them all
      if (current()) this.say(lane, `Not reranked: ${WHAT[lane] || "this run"} needs more lists than the page keeps (${int(needs.length)}); these are the built-in ranking's results.`);
      return plain;
    }
    if (current()) this.finish(lane, chosen, reranked);
    return reranked;
  }

  /** The lists `missing` of `request` asked of the endpoint, with progress; {ok} (false: stopped,
   * overtaken or failed, said). */
  async ask(lane, chosen, missing, current, request) {
    this.runs++;
    const total = missing.length, count = this.counts[lane] = { done: 0, total, before: this.before(lane, request) };
    this.progress(lane, chosen, count);
    const r = await this.reranker.fill(chosen, missing, {
      progress: (done) => { count.done = done; if (current()) this.progress(lane, chosen, count); },
      stop: () => this.stopped || !current() || chosen !== this.chosen(),
    });
    if (lane === "map") this.mapLists.lists += count.done;
    if (!r.ok && r.stopped) { if (this.stopped && current()) this.sayStopped(lane); }
    else if (!r.ok) {
      this.say(lane, "");
      if (chosen === this.chosen()) this.failed(r.message);
    }
    return r;
  }

  /** Lists reranked before this run in the same map (its earlier rows: the same request but for
   * the rows and their chunking; 0 for another lane). */
  before(lane, request) {
    if (lane !== "map") return 0;
    const { map: _m, chunking: _c, documents, ...rest } = request;
    const key = JSON.stringify([rest, (documents || []).map((d) => [d.id, d.text.length])]);
    if (this.mapLists.key !== key) this.mapLists = { key, lists: 0 };
    return this.mapLists.lists;
  }

  /** A reranked reply: the map's and the sweep's lines name the reranker (the set's summary says
   * it itself); a refused request says nothing here. */
  finish(lane, chosen, reply) {
    const whose = { map: "The map's cells are", sweep: "The overlap sweep's verdicts and the expanded context are" }[lane];
    this.say(lane, whose && reply.ok ? `${whose} after reranking the first ${chosen.depth} chunks with your reranker ${chosen.model}.` : "");
  }

  progress(lane, chosen, { done, total, before }) {
    const so = before ? `; ${int(before + done)} for the map so far` : "";
    this.say(lane, `Reranking ${WHAT[lane] || "this run"} with your reranker ${chosen.model}: ${int(done)} of ${int(total)} ${total === 1 ? "list" : "lists"} reranked${so}; the built-in ranking's results are shown until it is done.`, "running");
  }

  sayStopped(lane) {
    const c = this.counts[lane];
    const at = c ? ` at ${int(c.done)} of ${int(c.total)} lists` : "";
    this.say(lane, `Reranking was stopped${at}: these are the built-in ranking's results, not reranked. Press Resume reranking to go on.`, "stopped");
  }

  /** Stop: the request in flight is let finish, nothing more is asked; the built-in ranking's
   * results stand, and are computed again where a run had some reranked already (a map's first
   * rows), so no panel mixes the two. */
  stop() {
    this.stopped = true;
    for (const lane of Object.keys(this.lines)) if (this.lines[lane].box.dataset.kind === "running") this.sayStopped(lane);
    this.again();
  }

  resume() {
    this.stopped = false;
    for (const lane of Object.keys(this.lines)) this.say(lane, "");
    this.again();
  }

  /** The progress line of `lane` (under its panel), made on first use; "" hides it. */
  say(lane, text, kind = "") {
    const line = this.line(lane);
    if (!line) return;
    line.text.textContent = text;
    line.box.dataset.kind = kind;
    line.box.hidden = !text;
    line.button.hidden = !kind;
    line.button.textContent = kind === "stopped" ? "Resume reranking" : "Stop reranking";
    line.button.setAttribute("aria-label", `${line.button.textContent} (${WHAT[lane]}; every run stops or goes on)`);
  }

  line(lane) {
    if (this.lines[lane]) return this.lines[lane];
    const anchor = typeof document !== "undefined" && PLACES[lane] && PLACES[lane](); // none under Node's tests
    if (!anchor) return null;
    const box = Object.assign(document.createElement("p"), { id: `${lane}-rerank`, className: "rerank-progress", hidden: true });
    const text = Object.assign(document.createElement("span"), { className: "rerank-progress-text" });
    text.setAttribute("role", "status");
    const button = Object.assign(document.createElement("button"), { type: "button", className: "rerank-stop", hidden: true });
    button.addEventListener("click", () => (box.dataset.kind === "stopped" ? this.resume() : this.stop()));
    box.append(text, " ", button);
    anchor.after(box);
    return (this.lines[lane] = { box, text, button });
  }
}

// Where each lane's line goes: under the set's summary, under the map's status row, under the
// overlap sweep's note.
const PLACES = {
  questions: () => document.getElementById("qs-summary"),
  map: () => document.querySelector("#map-section .map-row"),
  sweep: () => document.getElementById("sweep-note"),
};
