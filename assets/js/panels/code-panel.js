// The "Equivalent code" panel: the few lines of Python that build the current splitter and BM25 in
// the real libraries (LangChain / Haystack, bm25s), as ragsim.codegen writes them. The page calls
// show(requestJson) after each successful simulation; the worker's `call {fn: "code"}` is an ask of
// the "code" lane (asks.js), sent once the page rests, so a drag asks once (a newer setting replaces
// the one still waiting), and only the newest answer is shown. The code reaches the page as text
// (textContent), never as HTML.
//
//   const panel = new CodePanel({ send: (m) => gate.send(m), asks, code, status, copy });
//   panel.show(JSON.stringify({query, chunking, retrieval}));

export class CodePanel {
  /** send: posts a message to the worker and resolves with its reply; asks: the scheduler of work
   * at rest; code: the <code> element; status: a line for errors and "copied"; copy: the "Copy
   * code" button. */
  constructor({ send, asks, code, status, copy }) {
    this.send = send;
    this.asks = asks;
    this.code = code;
    this.status = status;
    this.asked = null; // the request JSON whose code is shown (or on its way)
    this.seq = 0;
    copy.addEventListener("click", () => this.copy());
  }

  show(requestJson) {
    if (requestJson === this.asked) return;
    this.fetch(requestJson);
  }

  /** No code to show (your index's chunks: no splitter wrote them): the old code goes, a sentence says why. */
  none(sentence) {
    this.seq++;
    this.asked = null;
    this.code.textContent = "";
    this.say(sentence);
  }

  async fetch(requestJson) {
    const seq = ++this.seq;
    this.asked = requestJson;
    const reply = await this.asks.ask("code", requestJson, () => {
      this.code.closest("pre").setAttribute("aria-busy", "true");
      return this.send({ type: "call", fn: "code", request: requestJson });
    }, { latest: true });
    if (seq !== this.seq) return; // a newer request was asked meanwhile
    this.code.closest("pre").removeAttribute("aria-busy");
    if (reply.ok) {
      this.code.textContent = JSON.parse(reply.result).code;
      this.say("");
    } else {
      this.asked = null;
      this.say(`The code could not be written: ${(reply.error && reply.error.message) || "no reason was given"}`);
    }
  }

  async copy() {
    try {
      await navigator.clipboard.writeText(this.code.textContent);
      this.say("Code copied.");
    } catch {
      // No clipboard permission: select the code so the user can copy it themselves.
      const range = document.createRange();
      range.selectNodeContents(this.code);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      this.say("Your browser did not allow copying: the code is selected, copy it from there.");
    }
  }

  say(text) {
    this.status.textContent = text;
  }
}
