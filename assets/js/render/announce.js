// What a screen reader hears: one polite live region (#announcer) for the whole page. The boxes that
// change on every drag step (the verdicts, the slider values) are not live themselves; the verdict
// is spoken once, when the results have rested, and only when it changed. Confirmations ("Link
// copied.", "Marked …", "Added 2 documents.") are spoken at once.

const REST_MS = 700; // the results stay unchanged this long before the verdict is spoken

let timer = 0;
let spoken = "";
let moved = false; // the words changed since they were last spoken (a drag passed through other verdicts)
const parts = { verdict: "", fact: "" }; // source -> sentence: the verdicts first, then the overlap note, spoken together

function speak(text, then) {
  const region = document.getElementById("announcer");
  if (!region) return;
  // Emptied first, so the same words twice (two "Link copied.") are spoken twice.
  region.textContent = "";
  setTimeout(() => { region.textContent = text; if (then) then(); }, 50);
}

/** `data-pending` on the region: "true" while the results' verdict waits to be spoken (or not), so
 * a test waits for this event rather than for the time it takes. */
function waiting(on) {
  const region = document.getElementById("announcer");
  if (region) region.dataset.pending = String(on);
}

/** Speak `text` now. */
export function announce(text) {
  if (text) speak(text);
}

/** Set what `source` says ("" for nothing); the sentences are spoken once the results rest. */
export function announceWhenRested(source, text) {
  parts[source] = text;
  const now = () => Object.values(parts).filter(Boolean).join(" ");
  if (now() !== spoken) moved = true;
  clearTimeout(timer);
  waiting(true);
  // A drag's steps are never spoken one by one: once it rests, its final verdict is, also when the
  // drag came back to the words last spoken (they were left on the way).
  const rested = () => {
    // Still computing (a drag goes on, each move slower than the rest on a busy machine): wait again.
    if (document.body.dataset.state === "computing") { timer = setTimeout(rested, REST_MS); return; }
    const all = now();
    timer = 0;
    if (all && moved) {
      spoken = all;
      speak(all, () => { if (!timer) waiting(false); });
    } else {
      waiting(false);
    }
    moved = false;
  };
  timer = setTimeout(rested, REST_MS);
}
