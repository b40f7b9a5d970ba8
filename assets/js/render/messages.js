// The page's two message lines: the problem with the current input (#message; the last good
// result stays on screen, greyed) and the notes about what a link could not carry (#notice).

import { $ } from "../dom.js";

/** Show a problem, or clear it (null). `stale`: a result is on screen that the problem outdates. */
export function showMessage(text, stale) {
  const el = $("message");
  el.textContent = text || "";
  el.hidden = !text;
  $("results").classList.toggle("stale", Boolean(text) && stale);
}

/** The notes about the link the page was opened with, until the user changes something. */
export const linkNotes = {
  list: [],
  set(notes) {
    this.list = notes;
    this.show();
  },
  clear() {
    if (this.list.length) { this.list = []; this.show(); }
  },
  show() {
    const el = $("notice");
    el.textContent = this.list.join(" ");
    el.hidden = this.list.length === 0;
  },
};
