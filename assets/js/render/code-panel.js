// The "Equivalent code" panel: the few lines of Python that build the current splitter and BM25 in
// the real libraries (LangChain / Haystack, bm25s), as ragsim.codegen writes them. The page calls
// show(requestJson) after each successful simulation; the worker's `code` message is sent 300 ms
// after the last call, so a drag asks once, and only the newest answer is shown. The code reaches
// the page as text (textContent), never as HTML.
//
//   const panel = new CodePanel({ send: (m) => gate.send(m), code, status, copy });
//   panel.show(JSON.stringify({query, chunking, retrieval}));

const DEBOUNCE_MS = 300;

export class CodePanel {
  /** send: posts a message to the worker and resolves with its reply; code: the <code> element;
   * status: a line for errors and "copied"; copy: the "Copy code" button. */
  constructor({ send, code, status, copy }) {
    this.send = send;
    this.code = code;
    this.status = status;
    this.timer = 0;
    this.asked = null; // the request JSON whose code is shown (or on its way)
    this.seq = 0;
    copy.addEventListener("click", () => this.copy());
  }

  show(requestJson) {
    clearTimeout(this.timer);
    if (requestJson === this.asked) return;
    this.timer = setTimeout(() => this.fetch(requestJson), DEBOUNCE_MS);
  }

  /** No code to show (your index's chunks: no splitter wrote them): the old code goes, a sentence says why. */
  none(sentence) {
    clearTimeout(this.timer);
    this.seq++;
    this.asked = null;
    this.code.textContent = "";
    this.say(sentence);
  }

  async fetch(requestJson) {
    const seq = ++this.seq;
    this.asked = requestJson;
    this.code.closest("pre").setAttribute("aria-busy", "true");
    const reply = await this.send({ type: "call", fn: "code", request: requestJson });
    if (seq !== this.seq) return; // a newer request was sent meanwhile
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
