// "Your model (an endpoint on this computer)": the Embedding model's third choice, beside
// all-MiniLM-L6-v2. Opt-in as the ask panel is: nothing is sent until "Use this model" is pressed,
// and only to localhost or 127.0.0.1 (ask-client.js localEndpoint, the page's policy). Pressed, the
// chunks this setting needs are counted and said first ("2,480 chunks to embed"), then embedded
// through the dense client as all-MiniLM-L6-v2's are (endpoint-embedder.js: batches, one request in
// flight, vectors kept by text, so a drag embeds only chunks never seen); Stop ends the run and keeps
// what came back. The endpoint and name live in `state.yourModel` (never in a link or the saved
// state: a link opened, or a state loaded, asks for "Use this model" again; the fields keep what was
// typed), and the request names them (`retrieval.embedding`), so every verdict and the equivalent
// code name the model.

import { localEndpoint } from "./ask-client.js";

const count = (n) => `${n.toLocaleString("en-US")} ${n === 1 ? "chunk" : "chunks"}`;

/** A labelled text field (your model's and your reranker's rows). */
export function field(id, label, placeholder) {
  const wrap = document.createElement("label");
  wrap.className = "yours-field";
  const input = document.createElement("input");
  Object.assign(input, { id, type: "text", placeholder, spellcheck: false, autocomplete: "off" });
  wrap.append(label, input);
  return { wrap, input };
}

export class YourModelPanel {
  /** after: the element the panel follows (the Embedding model row); method: the Retriever's select
   * (its dense and hybrid choices name the model); store: {state}; computer: the Computer (its dense
   * client and embedCost); changed(): the state changed, compute again. */
  constructor({ after, method, store, computer, changed }) {
    Object.assign(this, { store, computer, changed });
    this.choices = [...method.options].filter((o) => o.value !== "bm25").map((o) => [o, o.text]);
    const box = this.box = document.createElement("div");
    box.id = "yours";
    box.className = "yours";
    box.hidden = true;
    const endpoint = field("yours-endpoint", "Your model's base URL", "http://localhost:11434/v1");
    const model = field("yours-model", "Your model's name", "nomic-embed-text");
    this.endpoint = endpoint.input;
    this.model = model.input;
    this.use = Object.assign(document.createElement("button"), { id: "yours-use", type: "button", textContent: "Use this model" });
    this.stop = Object.assign(document.createElement("button"), { id: "yours-stop", type: "button", textContent: "Stop", disabled: true });
    this.status = Object.assign(document.createElement("p"), { id: "yours-status", className: "yours-status" });
    this.status.setAttribute("role", "status");
    const hint = Object.assign(document.createElement("p"), { className: "hint yours-hint",
      textContent: "An OpenAI-compatible /embeddings endpoint on this computer (Ollama, LM Studio, llama.cpp, vLLM, TEI); nothing is sent until you press Use." });
    const row = document.createElement("div");
    row.className = "yours-buttons";
    row.append(this.use, this.stop);
    box.append(endpoint.wrap, model.wrap, row, this.status, hint);
    after.after(box);
    this.use.addEventListener("click", () => this.start());
    this.stop.addEventListener("click", () => this.halt());
    computer.onDenseStatus = (state) => {
      const running = computer.dense.isEndpoint && (state === "embedding" || state === "loading");
      if (this.stop.disabled === running) this.stop.disabled = !running;
    };
  }

  /** Shown while your model is the dense or hybrid retriever's; the fields keep what was typed. */
  sync(state) {
    const shown = state.method !== "bm25" && state.model === "yours";
    for (const [option, text] of this.choices) { // "Dense (all-MiniLM-L6-v2)" would say the wrong model
      const words = state.model === "yours" ? text.replace("all-MiniLM-L6-v2", "your model").replace("dense", "your model") : text;
      if (option.text !== words) option.text = words;
    }
    if (this.box.hidden === shown) this.box.hidden = !shown;
    if (shown && !state.yourModel && this.status.dataset.kind !== "error") this.say("Type your model's endpoint and name, then press Use this model; BM25 ranks until then.");
  }

  say(text, kind = "") {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  /** "Use this model": checked here (this computer only, a name given), the cost counted and said,
   * then the setting computed again, which embeds through the endpoint. */
  async start() {
    const ep = localEndpoint(this.endpoint.value), name = this.model.value.trim();
    const problem = ep.problem || (!name && "Type the model's name as the server knows it (for Ollama, `ollama list` shows them).");
    if (problem) { this.say(problem, "error"); return; }
    const state = this.store.state;
    state.yourModel = { endpoint: ep.url, model: name };
    this.computer.dense.paused = false;
    this.say(`Counting the chunks to embed with ${name}…`);
    const chunks = await this.computer.embedCost();
    if (state !== this.store.state) return; // another page state since: its own Use
    this.say(chunks === null ? `Embedding with ${name}…`
      : chunks ? `${count(chunks)} to embed with ${name} for this setting; Stop ends the run and keeps what came back.`
        : `Every chunk of this setting is embedded with ${name} already.`);
    this.changed();
  }

  /** Stop: every job of the endpoint stopped (what came back stays); nothing more is sent to it
   * until "Use this model". */
  halt() {
    const dense = this.computer.dense;
    dense.paused = true;
    if (dense.isEndpoint && dense.worker) dense.worker.postMessage({ type: "stopAll" });
    this.stop.disabled = true;
    const name = this.store.state.yourModel ? this.store.state.yourModel.model : "your model";
    this.say(`Stopped: what ${name} embedded is kept, and BM25 ranks what it has not; press Use this model to go on.`);
  }
}
