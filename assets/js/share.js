// The state leaves the page: the URL fragment kept current (after the controls rest), "Copy link",
// "Copy embed code", and the embedded page's height for the page around it.

import { $ } from "./dom.js";
import { fragmentFor } from "./url-state.js";
import { announce } from "./render/announce.js";

const NOTE_MS = 6000; // how long a copy confirmation stays beside its button

/** "Link copied." beside the button that was pressed, spoken once, gone after a while; `kind`
 * "problem" styles it as one (the copy was refused). */
export function confirmBeside(button, text, kind = "done") {
  let note = document.getElementById("copy-note");
  if (!note) {
    note = document.createElement("span");
    note.id = "copy-note";
    note.className = "copy-note";
  }
  if (note.previousElementSibling !== button) button.after(note);
  note.textContent = text;
  note.dataset.kind = kind;
  note.hidden = false;
  announce(text);
  clearTimeout(confirmBeside.timer);
  confirmBeside.timer = setTimeout(() => { note.hidden = true; note.textContent = ""; }, NOTE_MS);
}

const URL_DELAY = 300; // ms the controls rest before the address bar is rewritten

const baseUrl = () => location.href.split("#")[0];
// The embed snippet's height, kept where a host strips the resize script: the whole embed at 1000 px
// wide (747 px), and at 420 px (where it needs 1,049) down to past Top k, so no slider is cut off.
const EMBED_HEIGHT = 800;

// Goes with the iframe in "Copy embed code": the host page sizes each ragsim frame to the height
// the frame reports (startResizeMessages below), so the sliders are never cut off.
const RESIZE_LISTENER = `<script>addEventListener("message", (e) => { if (e.data && e.data.type === "ragsim:resize") ` +
  `for (const f of document.querySelectorAll("iframe")) if (f.contentWindow === e.source) f.style.height = e.data.height + "px"; });</script>`;

/** Write the text `made` resolves to: through a ClipboardItem holding the promise where the browser
 * has one (the write is asked at once, inside the click), else writeText once it is made. */
function writeClipboard(made) {
  if (!navigator.clipboard) return Promise.reject(new Error("no clipboard"));
  if (typeof ClipboardItem === "function" && navigator.clipboard.write) {
    const blob = made.then((text) => new Blob([text], { type: "text/plain" }));
    return navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
  }
  return made.then((text) => navigator.clipboard.writeText(text));
}

export class Share {
  /** store: {state, embed}; info(note): a note in the mark line. */
  constructor({ store, info }) {
    Object.assign(this, { store, info });
    this.timer = 0;
    $("copy-link").addEventListener("click", () => this.copyLink());
    $("copy-embed").addEventListener("click", () => this.copyEmbed());
    // Leaving or reloading within URL_DELAY of an edit: the address bar must not keep the previous
    // state's documents, which a reload would prefer to the stored state (persist.js restore).
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") this.flush(); });
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.writeUrl(), URL_DELAY);
  }

  /** Rewrite the address bar now if a rewrite is waiting (resolves once written). */
  flush() {
    if (!this.timer) return Promise.resolve();
    clearTimeout(this.timer);
    this.timer = 0;
    return this.writeUrl();
  }

  async writeUrl() {
    this.timer = 0;
    const fragment = await fragmentFor(this.store.state, { embed: this.store.embed });
    history.replaceState(null, "", `#${fragment}`);
    if (this.store.embed) await this.linkFullPage();
  }

  /** The embedded page's "Open the full simulator" link. */
  async linkFullPage() {
    $("open-full").href = `${baseUrl()}#${await fragmentFor(this.store.state)}`;
  }

  /** Copy `text` (or the text a promise resolves to) and say `done` (or what a function of that
   * name gives once the text is made) beside `button`; where the browser refuses (plain HTTP, no
   * permission), show it in the box under the buttons, selected, with focus, so Ctrl+C (or a long
   * press) copies it. Called in the click's own task: the clipboard is asked before anything is
   * awaited, as Safari requires (a write after an await is outside the user's gesture there, and refused). */
  async share(text, done, button) {
    const out = $("share-output"), made = Promise.resolve(text);
    try {
      await writeClipboard(made);
      out.hidden = true;
      confirmBeside(button, typeof done === "function" ? done() : done);
    } catch {
      out.value = await made;
      out.hidden = false;
      out.focus();
      out.select();
      confirmBeside(button, "Your browser did not allow copying: the text is selected in the box below the buttons; copy it from there (Ctrl+C or ⌘C).", "problem");
    }
  }

  copyLink() {
    const notes = [];
    const url = fragmentFor(this.store.state, { notes }).then((fragment) => `${baseUrl()}#${fragment}`);
    // A document too long for a link travels as a file: say so where the link is made.
    const done = () => (notes.length
      ? `Link copied. ${notes.join(" ")} To pass the documents on, use “Download state” and send the file.` : "Link copied.");
    return this.share(url, done, $("copy-link"));
  }

  copyEmbed() {
    const notes = [];
    const attr = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
    const snippet = fragmentFor(this.store.state, { embed: true, notes }).then((fragment) =>
      `<iframe src="${attr(`${baseUrl()}#${fragment}`)}" title="ragsim: does the answer survive chunking and retrieval?" ` +
      `width="100%" height="${EMBED_HEIGHT}" loading="lazy" style="border:0"></iframe>\n${RESIZE_LISTENER}`);
    return this.share(snippet, () => (notes.length ? `Embed code copied. ${notes.join(" ")}` : "Embed code copied."), $("copy-embed"));
  }
}

/** In an iframe: tell the page around it the height it needs, whenever it changes. */
export function startResizeMessages() {
  if (window.parent === window) return;
  let lastHeight = -1;
  const post = () => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === lastHeight) return;
    lastHeight = height;
    window.parent.postMessage({ type: "ragsim:resize", height }, "*");
  };
  new ResizeObserver(post).observe(document.body);
  post();
}
