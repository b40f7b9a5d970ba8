// The semantic chunkers' box under the chunk picture: the embedding's progress line
// with its Stop (or Resume) button, the curve (semantic-curve.js) and one sentence saying what the
// curve shows for the chosen strategy. Shown only for the four semantic strategies.
//
//   const panel = new SemanticPanel({ onThreshold, onStop, onResume });
//   panel.render(last);                    // after each result (from Results.render)
//   panel.status({state, text, done, total});  // the SemanticClient's state

import { $ } from "../dom.js";
import { SemanticCurve } from "./semantic-curve.js";
import { ruleOf } from "../semantic-threshold.js";
import { int, plural } from "../format.js";

export const SEMANTIC = new Set(["langchain-semantic", "llamaindex-semantic", "chroma-cluster", "chroma-kamradt"]);

/** The response's curve for document `id` (SPEC section 12: per document, beside its chunks). */
export function semanticOf(response, id) {
  const s = response && response.semantic;
  if (s && !Array.isArray(s) && s[id]) return s[id];
  const docs = response && (response.documents || response.docs);
  const d = Array.isArray(docs) ? docs.find((x) => x && (x.id === id || x.document === id)) : null;
  return (d && d.semantic) || (Array.isArray(s) ? (s.find((x) => x.document === id) || null) : null);
}

export class SemanticPanel {
  constructor({ onThreshold, onStop, onResume }) {
    this.box = $("semantic");
    this.line = $("semantic-status");
    this.button = $("semantic-stop");
    this.caption = $("semantic-caption");
    this.curve = new SemanticCurve({ svg: $("semantic-curve"), base: $("semantic-base"), plot: $("semantic-plot"), onThreshold });
    this.button.addEventListener("click", () => (this.button.dataset.action === "resume" ? onResume() : onStop()));
    this.last = null;
    this.state = "idle";
  }

  render(last) {
    this.last = last;
    const chunking = last.request.chunking || {};
    const on = SEMANTIC.has(chunking.strategy);
    if (this.box.hidden === on) this.box.hidden = !on;
    if (!on) return;
    const semantic = semanticOf(last.response, last.snap.docId);
    this.curve.setData(semantic && !semantic.pending ? semantic : null, last.snap, chunking);
    const text = captionFor(chunking, semantic, pending(last.response));
    if (this.caption.textContent !== text) this.caption.textContent = text;
  }

  /** The embedding's state from the SemanticClient: "loading" | "embedding" | "stopped" | "ready" | "failed". */
  status({ state, text, done = 0, total = 0 }) {
    this.state = state;
    let line = text, action = "";
    if (state === "embedding" || state === "loading") action = "stop";
    if (state === "stopped") {
      line = `Embedding stopped${total ? ` at ${int(done)} of ${int(total)}` : ""}: the chunks wait for the rest. ` +
        "Press “Resume embedding” to embed the rest (what is embedded is kept), or choose another splitter.";
      action = "resume";
    }
    if (this.line.textContent !== line) this.line.textContent = line;
    this.line.dataset.kind = state === "failed" ? "error" : "";
    this.button.hidden = !action;
    this.button.dataset.action = action;
    this.button.textContent = action === "resume" ? "Resume embedding" : "Stop";
  }
}

const pending = (response) => Boolean(response && response.semantic_needs && response.semantic_needs.length);


/** What the curve shows, in one sentence for the chosen strategy. */
function captionFor(chunking, semantic, waiting) {
  if (waiting || !semantic) return "The curve is drawn once the sentence windows are embedded.";
  const n = semantic.distances.length, cuts = (semantic.cuts || []).length;
  const counts = `${int(n)} ${plural(n, "distance", "distances")}, ${int(cuts)} ${plural(cuts, "cut", "cuts")}`;
  switch (chunking.strategy) {
    case "chroma-cluster":
      return `ClusterSemanticChunker has no threshold: the curve is the distance between neighbouring pieces, the dashed line 1 − their mean similarity (a pair closer than it adds to a cluster's score), and the marks are the cuts its dynamic program chose. Move Chunk size to re-cut (${counts}).`;
    case "chroma-kamradt":
      return `KamradtModifiedChunker searches its threshold from the chunk size (aiming at total tokens ÷ size cuts): move Chunk size and the line follows (${counts}).`;
    default: {
      const rule = ruleOf(chunking);
      const what = semantic.gradient ? "the gradient of the distance (1 − cosine) between neighbouring sentence windows" : "the distance (1 − cosine) between neighbouring sentence windows";
      const drag = rule ? "drag the line (or focus it and use the arrow keys) to move the threshold; the cuts re-cut from the kept distances, nothing is embedded again"
        : "number_of_chunks sets the line: clear it to drag the threshold";
      return `The curve is ${what}, the line the threshold, each mark a cut: ${drag} (${counts}).`;
    }
  }
}
