// A document too large for the Document box: the way big-file editors do it. A text box
// that is given megabytes lays them out on the page's thread for a second or more (5 MB: 0.4-0.9 s
// in one task), so a paste or file over BIG_CHARS never enters the box: the text is kept in the
// state (and stored in IndexedDB, downloaded and loaded back with it, like any document), and the
// box shows its first PREVIEW_CHARS characters, read-only, under a line that says so and offers
// "Edit in full (may be slow)", "Replace" and "Download". The preview is the text's prefix, so a
// selection in it has the document's own offsets: marks can be made there (or in the picture).
//
// While a big paste or file is taken, sent and indexed, a progress bar with a sentence shows what
// is happening (`progress` below, also used when files and state files are read).

import { $, downloadFile } from "./dom.js";
import { int } from "./format.js";

export const BIG_CHARS = 1_000_000; // over this the box shows a preview (a paste is intercepted)
export const PREVIEW_CHARS = 50_000; // a text box lays out about a megabyte a second: some 50 ms

/** "5.2 MB" for a text of `n` UTF-16 code units (as UTF-8 bytes of ASCII text: near enough to say). */
export const megabytes = (n) => `${(n / 1e6).toFixed(1)} MB`;

/** The first `n` code units of `text`, never splitting a surrogate pair. */
function prefix(text, n) {
  if (text.length <= n) return text;
  const c = text.charCodeAt(n - 1);
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

// Progress ------------------------------------------------------------------------------------

let bar = null; // {wrap, text}, made on first use under the Document box
let watcher = null;

function progressBox() {
  if (bar) return bar;
  const wrap = document.createElement("p");
  wrap.id = "big-progress";
  wrap.className = "big-progress";
  wrap.setAttribute("role", "status");
  wrap.hidden = true;
  const meter = document.createElement("progress"); // indeterminate: the worker reports no fraction
  meter.setAttribute("aria-label", "Working on the large text");
  const text = document.createElement("span");
  wrap.append(meter, text);
  $("param-doc").before(wrap);
  bar = { wrap, text };
  return bar;
}

export const progress = {
  /** Show `sentence` beside a moving bar (until done() or follow()'s end). */
  say(sentence) {
    const { wrap, text } = progressBox();
    text.textContent = sentence;
    wrap.hidden = false;
  },
  done() {
    if (watcher) { watcher.disconnect(); watcher = null; }
    if (bar) bar.wrap.hidden = true;
  },
  /** A text of `chars` went into the state: say it is being sent, then indexed, following the
   * page's data-state (computing, then ready or error), and hide the bar when the result is shown. */
  follow(chars) {
    const size = megabytes(chars);
    const body = document.body;
    if ($("boot").classList.contains("failed")) { this.done(); return; } // no Python: nothing will index it
    const sentence = () => (body.dataset.state === "loading"
      ? `${size} kept; Python is still loading and will chunk it when ready…`
      : body.dataset.state === "computing" ? `Python is chunking and indexing ${size}…` : `Sending ${size} to Python…`);
    this.say(sentence());
    if (watcher) watcher.disconnect();
    let computing = body.dataset.state === "computing";
    watcher = new MutationObserver(() => {
      const state = body.dataset.state;
      if (state === "computing") computing = true;
      if ((state === "ready" && computing) || state === "error") { this.done(); return; }
      this.say(sentence());
    });
    watcher.observe(body, { attributes: true, attributeFilter: ["data-state"] });
  },
};

// The Document box --------------------------------------------------------------------------------

export class BigText {
  /** input: the Document box; current(): the selected document's {id, title, text};
   * onEdit(text, caret): the selected document is now `text` (as an edit in the box would say);
   * info(sentence): a note in the mark line. */
  constructor({ input, current, onEdit, info }) {
    Object.assign(this, { input, current, onEdit, info });
    this.full = false; // the user asked to edit this document in full, in the box
    this.shown = null; // the id of the document the box shows a preview of, or null
    this.id = null; // the id of the document last shown
    this.previewed = null; // the text last shown in preview
    this.line = document.createElement("span");
    const button = (label, act) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "quiet";
      b.textContent = label;
      b.addEventListener("click", act);
      return b;
    };
    this.bar = document.createElement("p");
    this.bar.id = "big-doc";
    this.bar.className = "big-doc";
    this.bar.hidden = true;
    this.bar.append(this.line, " ",
      button("Edit in full (may be slow)", () => this.editInFull()),
      button("Replace", () => this.replace()),
      button("Download", () => this.download()));
    input.before(this.bar);
    // Heard as the paste bubbles up from the box, so after limits.js's guardPaste on the box itself,
    // which refuses a paste over the page's limit (defaultPrevented).
    input.parentElement.addEventListener("paste", (e) => { if (e.target === input) this.paste(e); });
  }

  /** Show the selected document: a preview when it is big (returns true: the box is done), else
   * returns false and the caller writes the text into the box as usual. */
  show() {
    const { id, text } = this.current();
    if (id !== this.id) this.full = false;
    this.id = id;
    if (text.length <= BIG_CHARS || this.full) {
      this.plain();
      return false;
    }
    if (text !== this.previewed) progress.follow(text.length); // new to the box: a reload, a file, a state file
    this.preview(text);
    return true;
  }

  /** The box back to an ordinary, editable one (its value is the caller's to write). */
  plain() {
    if (this.shown === null) return;
    this.shown = null;
    this.input.readOnly = false;
    this.input.removeAttribute("aria-describedby");
    this.input.classList.remove("big");
    this.bar.hidden = true;
  }

  preview(text) {
    const part = prefix(text, PREVIEW_CHARS);
    this.shown = this.id;
    this.previewed = text;
    this.input.readOnly = true;
    this.input.classList.add("big");
    this.input.setAttribute("aria-describedby", "big-doc");
    if (this.input.value !== part) this.input.value = part;
    this.input.setSelectionRange(0, 0);
    this.line.textContent = `This ${megabytes(text.length)} document (${int(text.length)} characters) is kept in full; ` +
      `the box shows its first ${int(part.length)} characters, read-only, so the page stays quick. ` +
      "Mark answers in this part or in the picture.";
    this.bar.hidden = false;
  }

  /** A paste that would make the selected document big: taken into the state, not into the box. */
  paste(e) {
    if (e.defaultPrevented) return;
    if (this.input.readOnly) {
      this.info("The box shows only the start of this document: press “Edit in full” or “Replace” to change it.");
      return;
    }
    const pasted = e.clipboardData && e.clipboardData.getData("text/plain");
    if (!pasted) return;
    const ta = this.input, a = ta.selectionStart, b = ta.selectionEnd;
    const before = this.full ? this.current().text : ta.value; // in full, the box holds the whole text
    if (before.length - (b - a) + pasted.length <= BIG_CHARS) return; // the box takes it as usual
    e.preventDefault();
    const text = before.slice(0, a) + pasted + before.slice(b);
    this.full = false;
    this.onEdit(text, a + pasted.length);
    progress.follow(text.length);
    this.preview(text);
  }

  /** "Edit in full": the whole text into the box (the browser may freeze while it lays it out). */
  editInFull() {
    const { text } = this.current();
    this.full = true;
    this.plain();
    this.input.value = text;
    this.input.focus();
    this.input.setSelectionRange(0, 0);
  }

  /** "Replace": the selected document emptied, for a new paste (its text can be downloaded first). */
  replace() {
    const { text } = this.current();
    this.full = false;
    this.onEdit("", 0);
    this.plain();
    this.input.value = "";
    this.input.focus();
    this.info(`The ${megabytes(text.length)} document was emptied: paste or type the text to chunk in its place.`);
  }

  /** "Download": the selected document as a text file. */
  download() {
    const { title, text } = this.current();
    const name = `${(title || "document").replace(/[\\/:*?"<>|]+/g, "_").slice(0, 100)}.txt`;
    downloadFile(new Blob([text], { type: "text/plain;charset=utf-8" }), name);
  }
}
