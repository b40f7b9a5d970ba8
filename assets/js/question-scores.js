// The question set's scores, off the drag's path. A drag's request leaves the set out
// (mainRequest in requests.js), so its verdict never waits for 400 questions to be ranked; once
// its result is on screen, this asks for the set at that result's settings in a second request, an
// ask of the "questions" lane sent once the page rests (asks.js: a newer drag goes first). Until the
// scores arrive the list and the table are marked stale; the latest wins: a newer result makes an
// older set's reply be ignored, and one not yet sent is never sent.
//
//   result shown -> update(last) -> stale -> (rest) -> simulate(setRequest) -> render
//
// A semantic chunker whose sentence windows are not yet embedded: the set is not sent
// (every answer would read as cut with no chunks); the panel says it waits for the embedding, in
// the embedding's own words ("Embedding sentence windows: 12 of 40"), and the result that follows
// the embedding scores it from the vectors the worker then holds.

import { $ } from "./dom.js";
import { setRequest } from "./requests.js";
import { renderQuestionResults, renderQuestionsWaiting } from "./render/question-set.js";
import { waitsForVectors } from "./semantic-map.js";

export class QuestionScores {
  /** simulate(request) -> the worker's reply (the dense round trip included); asks: the scheduler
   * of work at rest. */
  constructor({ simulate, asks }) {
    Object.assign(this, { simulate, asks });
    this.run = 0;
    this.state = "none"; // "stale" (asked for, not arrived), "fresh", "error", "none" (no set), "waiting" (embedding),
    // "reranking" (the built-in ranking's scores shown while your reranker's lists are asked)
    this.embedding = { state: "idle", text: "" }; // the semantic embedding's last status (SemanticClient)
    this.shown = null; // {request, response} of the set on screen
    this.log = []; // for tests: [what, run] in the order things happened ("main", "sent", "set")
  }

  /** After each result of the drag's request: the set's scores for that result's request. */
  async update(last) {
    const run = ++this.run;
    const request = last.request;
    this.note("main", run);
    if (!request.questions || !request.questions.length) {
      this.shown = null;
      this.mark("none");
      renderQuestionResults(null);
      return;
    }
    if (waitsForVectors(last.response)) { this.wait(); return; }
    this.mark("stale");
    if (this.shown) renderQuestionResults(this.shown); // the last scores (greyed) on a list drawn since
    // At rest (the result painted first); a newer result's ask replaces this one while it waits, and
    // starts without waiting for it once sent (its embedding, if any, cancels this one's).
    // With your reranker (RerankRuns): the built-in ranking's scores shown (`interim`) while
    // the lists it needs are asked, then the reranked ones.
    const ctx = { current: () => run === this.run, interim: (reply) => this.interim(run, request, reply) };
    const reply = await this.asks.ask("questions", run, () => {
      this.note("sent", run);
      return this.simulate(setRequest(request), ctx);
    }, { latest: true });
    if (run !== this.run) return; // a newer result took over while this one waited or was computed
    let response = null;
    try { response = reply.ok ? JSON.parse(reply.result) : null; } catch { response = null; }
    if (!response) {
      this.mark("error");
      $("qs-summary").textContent = `The question set was not scored: ${(reply.error && reply.error.message) || "the worker gave no reply that could be read."}`;
      return;
    }
    if (waitsForVectors(response)) { this.wait(); return; } // the worker lost the vectors and the page has none
    this.note("set", run);
    this.shown = { request, response };
    this.mark("fresh");
    renderQuestionResults(this.shown);
  }

  /** The built-in ranking's scores while your reranker's lists are asked: shown, not greyed
   * ("reranking" until the reranked scores replace them). */
  interim(run, request, reply) {
    let response = null;
    try { response = JSON.parse(reply.result); } catch { return; }
    if (run !== this.run || !response || waitsForVectors(response)) return;
    this.shown = { request, response };
    this.mark("reranking");
    renderQuestionResults(this.shown);
  }

  /** The semantic embedding's status (SemanticClient onStatus): said in the panel while the set waits. */
  follow(status) {
    this.embedding = status;
    if (this.state === "waiting") renderQuestionsWaiting(waitingWords(status));
  }

  wait() {
    this.shown = null;
    this.mark("waiting");
    renderQuestionsWaiting(waitingWords(this.embedding));
  }

  /** The list's verdicts and the table greyed (data-stale) while they are not for the current result. */
  mark(state) {
    this.state = state;
    for (const id of ["qs-list", "qs-results"]) {
      const el = $(id);
      if (state === "stale" || state === "error") el.dataset.stale = "1";
      else delete el.dataset.stale;
    }
  }

  note(what, run) {
    this.log.push([what, run]);
    if (this.log.length > 200) this.log.splice(0, 100);
  }
}

/** The panel's sentence while the set waits for the sentence windows' vectors. */
export function waitingWords({ state, text } = {}) {
  const now = state === "stopped" ? "the embedding was stopped: press “Resume embedding” under the picture"
    : state === "failed" ? text || "the embedding failed" : text || "the sentence windows are embedded first";
  return `The question set waits for the embedding (${now.replace(/[.…]+$/, "")}); it is scored as soon as the vectors are held.`;
}
