// What the verdict adds for dense and hybrid retrieval (SPEC section 10): that the ranking
// is BM25's until the chunks are embedded, and which chunks the model reads only in part. Also
// the picture's mark for a chunk's unread tail. Functions of the response and the snapshot.

import { listNumbers, plural } from "../format.js";
import { offsetMap } from "../offsets.js";

const SHOWN = 3; // truncated chunks named in one sentence

/** Words in the document `text` between code points [start, end). */
function wordsBetween(text, start, end) {
  const map = offsetMap(text);
  return (text.slice(map.toU16(start), map.toU16(end)).match(/\S+/g) || []).length;
}

/** "ranked by your model X": what a question set's summary says of the model that ranked it ("" for
 * all-MiniLM-L6-v2 and BM25). */
export const modelWords = (response) => (response.dense && response.dense.model && !response.dense.pending ? `ranked by your model ${response.dense.model}` : "");

/** The sentences the verdict adds for a dense or hybrid response ("" for BM25). */
export function denseSentences(response, snap) {
  const d = response.dense;
  if (!d) return "";
  const out = [];
  if (d.pending && d.model) out.push(`Ranked by BM25 for now: the ranking by your model ${d.model} follows once the chunks are embedded.`);
  else if (d.pending) out.push("Ranked by BM25 for now: the dense ranking follows once the chunks are embedded.");
  else if (d.model) out.push(`Ranked ${d.method === "hybrid" ? "by BM25 fused with" : "by"} your model ${d.model} (an endpoint on this computer).`);
  const tail = (n) => { // chunk number n's unread words
    const c = n >= 1 && n <= response.cols.length ? response.cols.object(n - 1) : null;
    if (!c || c.read_end == null) return 0;
    return wordsBetween(snap.texts[c.doc] ?? "", c.read_end, c.end);
  };
  const unread = d.answer_unread || [];
  for (const n of unread.slice(0, SHOWN)) {
    const w = tail(n);
    out.push(`Chunk ${n} holds the answer but is longer than the model reads (${d.max_pieces} word pieces): its last ${w} ${plural(w, "word", "words")}, the answer's end among them, are invisible to dense retrieval (the context still carries them if the chunk is sent).`);
  }
  const others = (d.retrieved_truncated || []).filter((n) => !unread.includes(n));
  if (others.length === 1) {
    const w = tail(others[0]);
    out.push(`Retrieved chunk ${others[0]} is longer than the model reads: its last ${w} ${plural(w, "word", "words")} ${plural(w, "is", "are")} invisible to dense retrieval.`);
  } else if (others.length > 1) {
    const shown = others.slice(0, SHOWN);
    const more = others.length > SHOWN ? ` and ${others.length - SHOWN} more` : "";
    out.push(`Retrieved chunks ${listNumbers(shown)}${more} are longer than the model reads: their last ${listNumbers(shown.map((n) => tail(n)))} words respectively are invisible to dense retrieval.`);
  }
  return out.join(" ");
}

/** Hatch the unread tails [x, y, w, h] of truncated chunks (the part the model never reads):
 * washed with `wash`, striped with `color`, outlined. */
export function paintUnread(ctx, rects, color, wash) {
  if (!rects.length) return;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.5;
  for (const [x, y, w, h] of rects) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.clip();
    ctx.fillStyle = wash;
    ctx.fillRect(x, y, w, h);
    ctx.beginPath();
    for (let i = x - h; i < x + w; i += 6) { ctx.moveTo(i, y + h); ctx.lineTo(i + h, y); }
    ctx.stroke();
    ctx.restore();
    ctx.strokeRect(x + 0.5, y + 0.5, Math.max(w - 1, 0), h - 1);
  }
  ctx.restore();
}
