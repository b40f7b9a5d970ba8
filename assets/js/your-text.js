// Text of the user's own on the page: the example's question goes when a paste replaces the example
// (and comes back with it), a fragment cleared on its own keeps the text, and the skip link.
//
//   const pasted = watchPastes(docInput);   // pasted(): the box's last input was a paste or a drop
//   followExampleQuestion(state, before, after, paste)  // -> "went", "back" or ""
//   watchFragment((event, afterLink) => ...)            // the hashchanges, the last of a task's applied

import { $ } from "./dom.js";
import { EXAMPLE } from "./examples.js";
import { dropExampleQuestion } from "./state.js";

/** A function saying whether `input`'s last input was a paste or a drop (read before the box's own
 * listener runs: the document's capture phase comes first). */
export function watchPastes(input) {
  let pasted = false;
  document.addEventListener("input", (e) => { if (e.target === input) pasted = /^insertFrom(Paste|Drop)/.test(e.inputType || ""); }, true);
  return () => pasted;
}

/** The example's question goes when a paste (or a drop) replaces the example's text with the user's
 * own, and comes back with the example's text (an undo); an edit of the example keeps it. */
export function followExampleQuestion(state, before, after, paste) {
  if (after === EXAMPLE.text && !state.q) {
    state.q = EXAMPLE.question;
    return "back";
  }
  const own = paste && before === EXAMPLE.text && after.trim() && !after.includes(EXAMPLE.title);
  return own && dropExampleQuestion(state) ? "went" : "";
}

/** Two changes in one task (a link's settings, then the fragment cleared) queue two events that both
 * find the last fragment in the address bar: only the last is applied, as one link would be, and
 * `afterLink` says a link's fragment came before it (a clear after a link opens the example like any
 * link; only a clear on its own keeps your text). */
export function watchFragment(apply) {
  let skippedLink = false;
  window.addEventListener("hashchange", (e) => {
    const hash = new URL(e.newURL).hash;
    if (hash !== location.hash) { skippedLink ||= !/^#?$/.test(hash); return; } // a later change follows
    const afterLink = skippedLink;
    skippedLink = false;
    apply(e, afterLink);
  });
}

/** "Skip to the settings": the chunk size slider focused (else the first setting the splitter has),
 * not the link's fragment followed (the fragment is the page's state). */
export function attachSkipLink() {
  $("skip-settings").addEventListener("click", (e) => {
    e.preventDefault();
    const size = $("param-size");
    const first = size && !size.closest("[hidden]") ? size : $("dock").querySelector("input, select");
    if (!first) return;
    first.focus();
    first.scrollIntoView({ block: "center" });
  });
}
