// "Rerank with your reranker (an endpoint on this computer)": the first chunks of the question's
// ranking put in the order of a `/rerank` endpoint of the user's own (TEI, Infinity, vLLM, LiteLLM;
// `POST {base}/rerank {"model", "query", "documents", "top_n"}` -> `{"results": [{"index",
// "relevance_score"}]}`, TEI's bare list taken too), before k is taken. Opt-in as your embedding
// model is: nothing is sent until "Use this reranker" is pressed, and only to localhost or
// 127.0.0.1 (ask-client.js localEndpoint); the choice lives in `state.yourReranker`, never in a
// link, the saved state or an embed.
//
// The core reranks with the scores the request carries (`retrieval.rerank.scores`, by query and the
// list of texts: a listwise reranker's score depends on the list) and names the lists it lacks
// (`rerank.needs`). A drag never waits on the endpoint: the page ranks without the reranker, asks
// it once the controls rest (asks.js, lane "rerank"), then computes again. Scores are kept by
// (model, query, texts), so a list is asked once. A bad reply is one sentence, and the built-in
// ranking goes on.
//
// The question set, the panels below the picture and the settings map are reranked too
// (`RerankRuns`): their request is sent with every list kept for their queries; when the core
// names lists it lacks, the built-in ranking's reply stands while they are asked (with progress,
// "412 of 2,480 lists reranked", and Stop), then the request is sent again with them.

import { localEndpoint } from "./ask-client.js";
import { oneAtATime, postJson, problem } from "./local-post.js";
import { field } from "./your-model.js";
import { RerankRuns } from "./rerank-runs.js";

export const TIMEOUTS = { requestS: 120 }; // one request; the tests shorten it
export const DEPTH = 20; // chunks reordered by default, as --rerank-depth
const KEEP = 20_000; // lists kept (a settings map of a big set asks thousands)
const SENT = 64; // kept lists of the query sent with a request (a list not sent is found kept, then sent)
const WAITING = "Type your reranker's endpoint and name, then press Use this reranker; the built-in ranking stays until then.";
const SHAPE = '{"results": [{"index", "relevance_score"}]}';

/** One finite score per text, in the texts' order, from a reply of either shape; a sentence else. */
export function readScores(target, data, count) {
  const rows = Array.isArray(data) ? data : data && data.results;
  if (!Array.isArray(rows) || !rows.every((r) => r && typeof r === "object")) {
    throw problem(`${target} did not answer with rerank results (${SHAPE}, or TEI's [{"index", "score"}]); is it a /rerank endpoint?`);
  }
  const scores = new Array(count).fill(null);
  for (const r of rows) {
    const i = r.index, s = r.relevance_score ?? r.score;
    if (!Number.isInteger(i) || typeof s !== "number") throw problem(`${target} answered a result without an integer index and a numeric score (${SHAPE}).`);
    if (i < 0 || i >= count) throw problem(`${target} answered index ${i} for ${count} texts; an index names a text sent (0 to ${count - 1}).`);
    if (scores[i] !== null) throw problem(`${target} answered index ${i} twice; each text needs one score.`);
    if (!Number.isFinite(s)) throw problem(`${target} answered a score that is NaN or infinite; the model failed on some text.`);
    scores[i] = s;
  }
  const got = scores.filter((s) => s !== null).length;
  if (got < count) throw problem(`${target} answered ${got} results for ${count} texts; every text needs its score (check that the server does not cut top_n).`);
  return scores;
}

/** The scores asked of your reranker, kept by (model, query, texts). */
export class Reranker {
  constructor() {
    this.kept = new Map(); // JSON [model, query, texts] -> {model, query, texts, scores}
    this.requests = 0; // sent, for the tests
    this.tei = new Set(); // [endpoint, model] that asked for TEI's form
    this.asking = new Map(); // key -> the promise of its request in flight
  }

  static key(model, query, texts) { return JSON.stringify([model, query, texts]); }

  /** Whether the scores of `list` ({query, texts}) by the chosen reranker are kept. */
  has(chosen, { query, texts }) { return this.kept.has(Reranker.key(chosen.model, query, texts)); }

  /** The request with `retrieval.rerank`: the reranker chosen, its depth and the scores kept for the
   * request's query (a copy; the request itself when no reranker is chosen). `only`: the scores kept
   * of exactly these lists ({query, texts}; [] for none: the core then names every list it needs). */
  attach(request, chosen, { only = null } = {}) {
    if (!chosen) return request;
    const kept = only ? only.map(({ query, texts }) => this.kept.get(Reranker.key(chosen.model, query, texts))).filter(Boolean)
      : [...this.kept.values()].filter((e) => e.model === chosen.model && e.query === request.query).slice(-SENT);
    const scores = kept.map(({ query, texts, scores: s }) => ({ query, texts, scores: s }));
    const rerank = { endpoint: chosen.endpoint, model: chosen.model, depth: chosen.depth, scores };
    return { ...request, retrieval: { ...request.retrieval, rerank } };
  }

  /** Ask the reranker for every list the core named (`needs`) and not kept: {ok: true}, or {ok:
   * false, message} with the reply's sentence. One request at a time per endpoint. `watch`, for a
   * long run: progress(done) after each list, stop() asked before each request ({ok: false,
   * stopped: true, done} when it says stop). */
  async fill(chosen, needs, watch = null) {
    const target = `${chosen.endpoint}/rerank`;
    let done = 0;
    try {
      for (const { query, texts } of needs) {
        const key = Reranker.key(chosen.model, query, texts);
        if (!this.kept.has(key)) {
          if (watch && watch.stop()) return { ok: false, stopped: true, done };
          await this.asked(key, chosen, target, query, texts);
        }
        done++;
        if (watch) watch.progress(done);
      }
      return { ok: true, done };
    } catch (error) {
      return { ok: false, message: error && error.said ? error.message : `The reranker failed: ${String((error && error.message) || error)}.` };
    }
  }

  /** The list's scores asked and kept; a list another run is asking already is waited for, not
   * asked again. */
  asked(key, chosen, target, query, texts) {
    if (!this.asking.has(key)) {
      this.asking.set(key, this.ask(chosen, target, query, texts).then((data) => {
        this.kept.set(key, { model: chosen.model, query, texts, scores: readScores(target, data, texts.length) });
        while (this.kept.size > KEEP) this.kept.delete(this.kept.keys().next().value);
      }).finally(() => this.asking.delete(key)));
    }
    return this.asking.get(key);
  }

  /** One request (TEI's form, {"query", "texts"}, once the server answered 422 about `texts`). */
  async ask(chosen, target, query, texts) {
    const post = (body) => {
      this.requests++;
      return oneAtATime(chosen.endpoint, () => postJson(target, body, { timeoutS: TIMEOUTS.requestS, holder: this,
        again: "“Use this reranker”", readme: "Your own reranker", shape: "a /rerank endpoint",
        hints: { 404: " (check the reranker's name and that the endpoint is the server's base URL)" },
        nan: `${target} answered a score that is NaN or infinite; the model failed on some text.` }));
    };
    const which = JSON.stringify([chosen.endpoint, chosen.model]);
    if (this.tei.has(which)) return post({ model: chosen.model, query, texts });
    try {
      return await post({ model: chosen.model, query, documents: texts, top_n: texts.length });
    } catch (error) {
      if (!(error.said && /HTTP 422/.test(error.message) && /texts/.test(error.message))) throw error;
      this.tei.add(which);
      return post({ model: chosen.model, query, texts });
    }
  }
}

export class YourRerankerPanel {
  /** after: the element the panel follows; store: {state, embed}; changed(): the state changed,
   * compute again; computer: the page's Computer (the verdict's reranking reports here; `runs`
   * reranks the long runs with its kept scores). */
  constructor({ after, store, changed, computer }) {
    Object.assign(this, { store, changed });
    computer.onRerankFailed = (sentence) => this.failed(sentence);
    computer.onReranked = (chosen) => this.scored(chosen, computer.reranker.requests);
    this.runs = new RerankRuns({ reranker: computer.reranker, chosen: () => (store.embed ? null : store.state.yourReranker),
      failed: (sentence) => { this.failed(sentence); changed(); }, again: () => changed() });
    const box = this.box = document.createElement("div");
    box.id = "reranker";
    box.className = "yours reranker";
    const on = this.on = Object.assign(document.createElement("input"), { id: "reranker-on", type: "checkbox" });
    const toggle = Object.assign(document.createElement("label"), { className: "reranker-toggle" });
    toggle.append(on, " Rerank with your reranker (an endpoint on this computer)");
    const endpoint = field("reranker-endpoint", "Your reranker's base URL", "http://localhost:8080");
    const model = field("reranker-model", "Your reranker's name", "BAAI/bge-reranker-base");
    const depth = field("reranker-depth", "Chunks to rerank", "20");
    Object.assign(depth.input, { type: "number", min: 1, max: 1000, value: String(DEPTH) });
    Object.assign(this, { endpoint: endpoint.input, model: model.input, depth: depth.input });
    this.use = Object.assign(document.createElement("button"), { id: "reranker-use", type: "button", textContent: "Use this reranker" });
    this.status = Object.assign(document.createElement("p"), { id: "reranker-status", className: "yours-status" });
    this.status.setAttribute("role", "status");
    const hint = Object.assign(document.createElement("p"), { className: "hint yours-hint",
      textContent: "A /rerank endpoint on this computer (TEI, Infinity, vLLM, LiteLLM) reorders the first chunks of each question's ranking before k is taken (your question, the question set, the panels below and the settings map); nothing is sent until you press Use." });
    this.fields = document.createElement("div");
    this.fields.className = "reranker-fields";
    this.fields.hidden = true;
    this.fields.append(endpoint.wrap, model.wrap, depth.wrap, this.use, this.status, hint);
    box.append(toggle, this.fields);
    after.after(box);
    on.addEventListener("change", () => this.toggle());
    this.use.addEventListener("click", () => this.start());
  }

  say(text, kind = "") {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  /** The box follows the state (none in an embed): its fields keep what was typed; a reranker
   * chosen shows them. */
  sync(state, embed = false) {
    if (this.box.hidden !== embed) this.box.hidden = embed;
    if (state.yourReranker && !this.on.checked) this.on.checked = true;
    this.fields.hidden = !this.on.checked;
    if (!state.yourReranker && this.status.dataset.kind !== "error") this.say(this.on.checked ? WAITING : "");
  }

  toggle() {
    this.fields.hidden = !this.on.checked;
    if (this.on.checked) {
      if (!this.store.state.yourReranker) this.say(WAITING);
      return;
    }
    if (!this.store.state.yourReranker) return;
    this.store.state.yourReranker = null;
    this.say("");
    this.changed();
  }

  /** "Use this reranker": checked here (this computer only, a name, a depth), then computed again:
   * the core names the lists to score, asked at rest. */
  start() {
    const ep = localEndpoint(this.endpoint.value), name = this.model.value.trim(), depth = Number(this.depth.value);
    const problemText = ep.problem || (!name && "Type the reranker's name as the server knows it.")
      || (!(Number.isInteger(depth) && depth >= 1 && depth <= 1000) && "Chunks to rerank is a whole number from 1 to 1,000.");
    if (problemText) { this.say(problemText, "error"); return; }
    this.store.state.yourReranker = { endpoint: ep.url.replace(/\/rerank$/, ""), model: name, depth };
    this.runs.stopped = false; // pressed again: the long runs are reranked again too
    this.say(`Reranking the first ${depth} chunks with ${name}: asked once the controls rest.`);
    this.changed();
  }

  /** Its scores came back: said with the requests sent so far (a list is asked once). */
  scored(chosen, requests) {
    this.say(`${chosen.model} reorders the first ${chosen.depth} chunks of the question's ranking; ${requests.toLocaleString("en-US")} ${requests === 1 ? "request" : "requests"} sent so far, each list asked once. A drag ranks without it until the controls rest.`);
  }

  /** A reply the core's reranking could not use: said, and the built-in ranking goes on. */
  failed(message) {
    this.store.state.yourReranker = null;
    this.say(`${message} The built-in ranking is shown; press Use this reranker to try again.`, "error");
  }
}
