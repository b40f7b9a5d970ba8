// What a screen reader hears: one polite live region (#announcer) for the whole page. The boxes that
// change on every drag step (the verdicts, the slider values) are not live themselves; the verdict
// is spoken once, when the results have rested, and only when it changed. Confirmations ("Link
// copied.", "Marked …", "Added 2 documents.") are spoken at once.

const REST_MS = 700; // the results stay unchanged this long before the verdict is spoken

let timer = 0;
let spoken = "";
const parts = {}; // source -> sentence: the answer's verdict and the fact's, spoken together

function speak(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  // Emptied first, so the same words twice (two "Link copied.") are spoken twice.
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

/** Speak `text` now. */
export function announce(text) {
  if (text) speak(text);
}

/** Set what `source` says ("" for nothing); the sentences are spoken once the results rest. */
export function announceWhenRested(source, text) {
  parts[source] = text;
  clearTimeout(timer);
  timer = setTimeout(() => {
    const all = Object.values(parts).filter(Boolean).join(" ");
    if (all && all !== spoken) {
      spoken = all;
      speak(all);
    }
  }, REST_MS);
}
