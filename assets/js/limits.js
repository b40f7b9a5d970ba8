// The sizes the page accepts, mirroring the core's py/ragsim/limits.py: checked before a
// request is built, so an input over a limit is refused with a sentence naming it instead of
// reaching the worker. The page counts UTF-16 code units (JavaScript's length), the core code
// points: for text outside the Basic Multilingual Plane the page is slightly stricter.

import { int } from "./format.js";

export const MAX_CHARS = 10_000_000; // every document of the collection together (limits.MAX_CHARS)
export const MAX_QUERY_CHARS = 100_000; // the question (limits.MAX_QUERY_CHARS)

/** The characters of every document together (the selected one as edited). */
export const totalChars = (s) => s.docs.reduce((n, d, i) => n + (i === s.sel ? s.doc : d.text).length, 0);

/** Why the documents or the question are too large to simulate, as a sentence, or null. */
export function sizeProblem(s) {
  const total = totalChars(s);
  if (total > MAX_CHARS) {
    const what = s.docs.length > 1 ? "The documents hold" : "The document holds";
    return `${what} ${int(total)} characters, more than the page's limit of ${int(MAX_CHARS)}; ` +
      "split the text and simulate it in parts.";
  }
  if (s.q.length > MAX_QUERY_CHARS) {
    return `The question has ${int(s.q.length)} characters, more than the limit of ${int(MAX_QUERY_CHARS)}; ask a shorter question.`;
  }
  return null;
}

/** Refuse a paste into `input` (the Document box) that would take the collection over MAX_CHARS
 * before the browser inserts it: inserting tens of megabytes into a text box freezes the page for
 * a minute before any check could run. `total()` is the collection's length now; `say(sentence)`. */
export function guardPaste(input, total, say) {
  input.addEventListener("paste", (e) => {
    const text = e.clipboardData && e.clipboardData.getData("text/plain");
    if (!text) return;
    const after = total() - (input.selectionEnd - input.selectionStart) + text.length;
    if (after <= MAX_CHARS) return;
    e.preventDefault();
    say(`The paste was not inserted: with it the documents would hold ${int(after)} characters, more than the page's limit of ` +
      `${int(MAX_CHARS)}; paste a part of the text and simulate it in parts.`);
  });
}
