// "Find in the document": searches the whole selected document, also one over a million
// characters whose box shows only its start (big-text.js), steps through the hits, shows each in
// its context with the hit marked, selects it in the box when the box holds it, and marks it as the
// answer on request. The search is literal and ignores case; offsets are UTF-16, like the box's.

import { $ } from "./dom.js";
import { int } from "./format.js";

const MAX_HITS = 10_000; // hits kept; past them the count says "10,000 or more"
const CONTEXT = 60; // characters shown on each side of a hit
const DELAY = 150; // ms the box rests before a search (megabytes take a few ms)

/** Every hit of `query` in `text`: [start, end) UTF-16 offsets, at most MAX_HITS. */
export function findAll(text, query) {
  if (!query) return [];
  const re = new RegExp(query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi");
  const hits = [];
  for (let m = re.exec(text); m && hits.length < MAX_HITS; m = re.exec(text)) {
    hits.push([m.index, m.index + m[0].length]);
    if (m[0].length === 0) re.lastIndex++;
  }
  return hits;
}

export class FindText {
  /** store: {state}; docInput: the Document box; mark(span, note): mark a span as the answer. */
  constructor({ store, docInput, mark }) {
    Object.assign(this, { store, docInput, mark });
    this.box = $("doc-find");
    this.status = $("doc-find-status");
    this.hits = [];
    this.at = -1;
    this.text = null; // the text the hits are in
    this.timer = 0;
    this.box.addEventListener("input", () => { clearTimeout(this.timer); this.timer = setTimeout(() => this.search(), DELAY); });
    this.box.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      this.step(e.shiftKey ? -1 : 1);
    });
    $("find-next").addEventListener("click", () => this.step(1));
    $("find-prev").addEventListener("click", () => this.step(-1));
    $("find-mark").addEventListener("click", () => this.markHit());
    this.buttons(false);
  }

  buttons(on) {
    for (const id of ["find-next", "find-prev", "find-mark"]) $(id).disabled = !on;
  }

  /** Search the selected document's whole text for the box's words; the first hit shown. */
  search() {
    clearTimeout(this.timer);
    const query = this.box.value;
    this.text = this.store.state.doc;
    this.hits = findAll(this.text, query);
    this.at = this.hits.length ? 0 : -1;
    if (!query) { this.say([]); this.buttons(false); return; }
    if (!this.hits.length) {
      this.say([`“${query.slice(0, 60)}” is not in this document (the search ignores case, not spaces or punctuation).`]);
      this.buttons(false);
      return;
    }
    this.buttons(true);
    this.show();
  }

  /** The next (1) or previous (-1) hit, round the end; a search first if the text changed. */
  step(by) {
    if (this.text !== this.store.state.doc || !this.hits.length) this.search();
    if (!this.hits.length) return;
    this.at = (this.at + by + this.hits.length) % this.hits.length;
    this.show();
  }

  /** The current hit: its number, where it is, its context with the hit marked; selected in the box. */
  show() {
    const [a, b] = this.hits[this.at], text = this.text;
    const count = this.hits.length >= MAX_HITS ? `${int(MAX_HITS)} or more` : int(this.hits.length);
    const inBox = this.docInput.value.length >= b && this.docInput.value.slice(a, b) === text.slice(a, b);
    const where = inBox ? "" : " (beyond the part the box shows; “Mark as answer” marks it in the picture)";
    const from = Math.max(0, a - CONTEXT), to = Math.min(text.length, b + CONTEXT);
    const hit = document.createElement("mark");
    hit.textContent = text.slice(a, b);
    this.say([`Hit ${int(this.at + 1)} of ${count}, at character ${int(a + 1)} of ${int(text.length)}${where}: `,
      `${from > 0 ? "…" : ""}${text.slice(from, a)}`, hit, `${text.slice(b, to)}${to < text.length ? "…" : ""}`]);
    this.status.dataset.hit = String(this.at + 1);
    if (inBox) this.select(a, b);
  }

  /** Select [a, b) in the box and scroll the box to it, the find box keeping focus. */
  select(a, b) {
    const back = document.activeElement;
    this.docInput.focus({ preventScroll: true });
    this.docInput.setSelectionRange(a, b);
    if (back && back !== this.docInput && back.focus) back.focus({ preventScroll: true });
  }

  /** "Mark as answer": the current hit becomes the marked answer (a band in the picture). */
  markHit() {
    if (!this.hits.length || this.text !== this.store.state.doc) { this.search(); if (!this.hits.length) return; }
    const [a, b] = this.hits[this.at];
    this.mark({ start: a, end: b }, `Marked hit ${int(this.at + 1)} of ${int(this.hits.length)} as the answer.`);
  }

  say(parts) {
    this.status.replaceChildren(...parts.map((p) => (typeof p === "string" ? document.createTextNode(p) : p)));
  }
}
