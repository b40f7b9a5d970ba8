// Text helpers over UTF-16 offsets: trimming a span, finding the sentence under a click, tracking a
// mark across edits, and the marked text a phrase search looks for.

const isSpace = (c) => /\s/.test(c);

/** [start, end) without surrounding spaces, or null when nothing but spaces is left. */
export function trimSpan(text, start, end) {
  while (start < end && isSpace(text[start])) start++;
  while (end > start && isSpace(text[end - 1])) end--;
  return start < end ? { start, end } : null;
}

const SENTENCE_END = /[.!?。！？]/;
const SENTENCE_SCAN = 5000; // never scan further than this either way (a document without full stops)

// A line that starts a block of its own: a Markdown heading, list item or quote, a table row.
const BLOCK_START = /^[ \t]*(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|\|)/;

/** Whether the line break ending at `b` (text[b - 1] is "\n") ends a block: a blank line follows or
 * precedes it, or the line before or after is a heading, list item, quote or table row. A single
 * line break inside a paragraph is hard wrapping, not the end of a sentence. */
function blockBreak(text, b) {
  const lineStart = text.lastIndexOf("\n", b - 2) + 1;
  const before = text.slice(lineStart, b - 1), next = text.indexOf("\n", b);
  const after = text.slice(b, next < 0 ? text.length : next);
  return !before.trim() || !after.trim() || BLOCK_START.test(after) || /^[ \t]*#{1,6}\s/.test(before);
}

/** The sentence around UTF-16 offset `i`: bounded by . ! ? followed by a space, and by the end of a
 * paragraph or of a block (a heading, a list item); a line break inside a paragraph is not a bound. */
export function sentenceAt(text, i) {
  const boundary = (b) => b <= 0 || b >= text.length || (text[b - 1] === "\n" && blockBreak(text, b)) ||
    "。！？".includes(text[b - 1]) || (isSpace(text[b - 1]) && b >= 2 && SENTENCE_END.test(text[b - 2]));
  let a = Math.min(Math.max(i, 0), text.length);
  const lo = Math.max(0, a - SENTENCE_SCAN), hi = Math.min(text.length, a + SENTENCE_SCAN);
  let e = a + 1;
  while (a > lo && !boundary(a)) a--;
  while (e < hi && !boundary(e)) e++;
  return trimSpan(text, a, Math.min(e, text.length));
}

/** The sentences around [start, end): from the start of the sentence holding `start` to the end of
 * the one holding its last character (never narrower than the span), or null in blank text. */
export function sentenceAround(text, start, end) {
  const a = sentenceAt(text, start), b = sentenceAt(text, Math.max(start, end - 1));
  return a && b ? { start: Math.min(a.start, start), end: Math.max(b.end, end) } : null;
}

/** Whether [start, end) of `text` is less than the sentence (or sentences) around it. */
export const partOfSentence = (text, span) => {
  const around = sentenceAround(text, span.start, span.end);
  return Boolean(around && (around.start < span.start || around.end > span.end));
};

/** Where an edit changed `old` into `neu`: [start, oldEnd, newEnd]. `caret` (the selection end after
 * the edit) pins the change's end, so typing next to a mark is never mistaken for typing inside it. */
function editRegion(old, neu, caret) {
  let tail = -1;
  if (caret != null && caret <= neu.length && neu.length - caret <= old.length) {
    tail = neu.length - caret;
    for (let j = 1; j <= tail; j++) if (old.charCodeAt(old.length - j) !== neu.charCodeAt(neu.length - j)) { tail = -1; break; }
  }
  if (tail < 0) {
    const most = Math.min(old.length, neu.length);
    tail = 0;
    while (tail < most && old.charCodeAt(old.length - 1 - tail) === neu.charCodeAt(neu.length - 1 - tail)) tail++;
  }
  const most = Math.min(old.length, neu.length) - tail;
  let head = 0;
  while (head < most && old.charCodeAt(head) === neu.charCodeAt(head)) head++;
  return [head, old.length - tail, neu.length - tail];
}

/** The mark after an edit: shifted when the edit was before it, kept when after, null when inside. */
export function followSpan(old, neu, span, caret) {
  const [head, oldEnd, newEnd] = editRegion(old, neu, caret);
  if (oldEnd <= span.start) return { start: span.start + newEnd - oldEnd, end: span.end + newEnd - oldEnd };
  if (head >= span.end) return span;
  return null;
}

/** A fact counts once both its name and its value are marked. */
export const factComplete = (f) => Boolean(f && f.name && f.value);

/** The marked fact's name-to-value stretch, else the marked answer, as text (the phrase to find). */
export function markedText(state, textOf) {
  if (factComplete(state.fact)) {
    const { name, value } = state.fact;
    return textOf(state.fact.doc).slice(Math.min(name.start, value.start), Math.max(name.end, value.end));
  }
  if (state.span) return textOf(state.span.doc ?? state.docs[state.sel].id).slice(state.span.start, state.span.end);
  return "";
}
