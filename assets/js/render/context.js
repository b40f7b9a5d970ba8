// The context that would be sent: the retrieved chunks in rank order, each in its own document's
// text, the answer (or the fact's stretch) marked where it arrives and the cuts shown.

import { $ } from "../dom.js";
import { int } from "../format.js";
import { offsetMap } from "../offsets.js";

const CONTEXT_SHOW_LIMIT = 20_000; // characters of one chunk shown in the context panel
const SCROLLS_FROM = 400; // characters from which a chunk's text may overflow its box on a phone

export function renderContext(response, snap) {
  const cols = response.cols;
  const items = cols.top.map((p, i) => cols.object(p, i + 1)); // the retrieved chunks, in rank order
  const nodes = items.map((c) => chunkArticle(c, snap));
  if (!nodes.length) {
    const p = document.createElement("p");
    p.className = "context-empty";
    p.textContent = "Nothing would be sent: there are no chunks.";
    nodes.push(p);
  }
  $("context").replaceChildren(...nodes);
}

/** One retrieved chunk: a heading, then its text with the mark and a ✂ where the mark is cut. */
function chunkArticle(c, snap) {
  const text = snap.texts[c.doc] ?? snap.doc, map = offsetMap(text), span = snap.marks[c.doc] || null;
  const start = map.toU16(c.start), end = map.toU16(c.end);
  const article = document.createElement("article");
  article.className = "context-chunk";
  const h = document.createElement("h3");
  const holds = c.holds === "whole" ? " · holds the whole answer" : c.holds === "part" ? " · holds part of the answer" : "";
  h.textContent = `Chunk ${c.number} · rank #${c.rank} · score ${c.score.toFixed(3)}${holds}${snap.docCount > 1 ? ` · ${snap.titles[snap.ids.indexOf(c.doc)]}` : ""}`;
  const body = document.createElement("div");
  body.className = "chunk-text";
  const shownEnd = Math.min(end, start + CONTEXT_SHOW_LIMIT);
  const piece = (a, b) => document.createTextNode(text.slice(a, b));
  const a = span ? Math.max(span.start, start) : 0, b = span ? Math.min(span.end, shownEnd) : 0;
  if (span && a < b) {
    const mark = document.createElement("mark");
    mark.textContent = text.slice(a, b);
    body.append(piece(start, a));
    if (span.start < start) body.append(cutMark());
    body.append(mark);
    if (span.end > end) body.append(cutMark());
    body.append(piece(b, shownEnd));
  } else {
    body.append(piece(start, shownEnd));
  }
  if (shownEnd < end) body.append(document.createTextNode(` … (${int(end - shownEnd)} more characters)`));
  // A text that may scroll inside its box (22rem) takes focus, so the keyboard can scroll it.
  if (shownEnd - start > SCROLLS_FROM || (text.slice(start, shownEnd).match(/\n/g) || []).length > 12) {
    body.tabIndex = 0;
    body.setAttribute("role", "region");
    body.setAttribute("aria-label", `Text of chunk ${c.number}`);
  }
  article.append(h, body);
  return article;
}

function cutMark() {
  const m = document.createElement("span");
  m.className = "cut-mark";
  m.textContent = "✂ cut";
  m.title = "A chunk boundary cuts the answer here";
  return m;
}
