// The verdict: whether the marked answer reaches the model whole, in one headline and one sentence.
// A function of the response and the snapshot; the marked fact has its own verdict, drawn with the
// investigation panels.

import { $ } from "../dom.js";
import { chunkList, int } from "../format.js";
import { partOfSentence } from "../spans.js";
import { announceWhenRested } from "./announce.js";
import { touchScreen } from "./palette.js";
import { denseSentences } from "./dense-words.js";
import { answerVerdictWords } from "./question-set.js";

/** [kind, headline, sentence] for the marked answer. */
export function verdictWords(response, snap) {
  const v = response.verdict;
  const k = snap.k;
  const total = response.stats.chunks;
  if (!snap.span || !v || !v.kind) {
    return ["", "No answer marked",
      `Select the answer sentence in the document and press “Mark selection as answer”, or ${touchScreen() ? "tap" : "click"} a sentence in the picture.`];
  }
  if (v.kind === "pending") { // a semantic chunker still waiting for its sentence windows' vectors
    return ["pending", "Waiting for the embeddings",
      "The semantic chunker cuts once its sentence windows are embedded: the progress is under the picture."];
  }
  const several = answerVerdictWords(response, snap); // a loaded question whose answer needs several places
  if (several) return several;
  const what = markedWords(snap);
  const cols = response.cols;
  const whole = cols.holding("whole").map((p) => ({ number: p + 1, rank: cols.rank(p) })).sort((a, b) => a.rank - b.rank);
  if (v.kind === "intact") {
    const c = whole[0];
    return ["intact", "Present and intact",
      `Chunk ${c.number} holds ${what} and ranks #${c.rank} of ${total}, inside your top ${k}.`];
  }
  if (v.kind === "ranked_out") {
    const c = whole[0];
    if (v.after_reranking && response.rerank) {
      return ["ranked_out", "Ranked out after reranking", `Chunk ${c.number} holds it whole and was inside your top ${k} before reranking, but your reranker ${response.rerank.model} put it at #${c.rank}.`];
    }
    return ["ranked_out", "Ranked out", `Chunk ${c.number} holds it whole but ranks #${c.rank}, outside your top ${k}.`];
  }
  const outside = uncoveredTitle(snap);
  if (outside) return ["cut", "Document not indexed", `Your index holds no chunk of “${outside}”, the document the answer is in, so nothing of it can be retrieved: open chunks that cover it, or press “Simulated”.`];
  return ["cut", "Cut in half", `No chunk holds ${what}: ${cutSentence(response)}`];
}

/** What the verdict says is held: the whole sentence, or, when less than its sentence is marked (a
 * search hit, a few words), the marked text and its length, so a hit held whole is not read as its
 * sentence held whole. */
function markedWords(snap) {
  const span = snap.span, text = snap.texts[span.doc ?? snap.docId] ?? "";
  if (!partOfSentence(text, span)) return "the whole sentence";
  return `the whole of the marked ${snap.hit ? "hit" : "text"} (${int(span.end - span.start)} characters, not its sentence)`;
}

/** The title of the marked answer's document when your index's chunks are shown and none of them is
 * in that document (the index does not cover it), else "". */
export function uncoveredTitle(snap) {
  if (!snap.stored || !snap.index || !snap.span) return "";
  const doc = snap.span.doc ?? snap.docId;
  if ((snap.index.extents[doc] || []).length) return "";
  return snap.titles[snap.ids.indexOf(doc)] || doc;
}

/** Which chunks hold a piece of the cut answer, and which of them were sent: as ranges and counts
 * ("chunks 208–226, 19 of them"), so the sentence stays short at any chunk size. */
function cutSentence(response) {
  const cols = response.cols, parts = cols.holding("part");
  const nums = parts.map((p) => p + 1);
  if (!parts.length) return "no chunk holds any of it.";
  const sent = parts.filter((p) => cols.retrieved(p)).map((p) => p + 1);
  if (parts.length === 1) return `only chunk ${nums[0]} holds part of it, and it was ${sent.length ? "" : "not "}sent.`;
  const split = `it is split across ${chunkList(nums)}, and `;
  if (sent.length === 0) return split + (parts.length === 2 ? "neither was sent." : "none of them was sent.");
  if (sent.length === parts.length) return split + (parts.length === 2 ? "both were sent, each with only a piece of it." : "all of them were sent, each with only a piece of it.");
  return split + `only ${chunkList(sent)} ${sent.length === 1 ? "was" : "were"} sent.`;
}

/** What the verdict says of your reranker: whether it has reordered the first chunks yet ("" without one). */
export function rerankSentence(response) {
  const r = response.rerank;
  if (!r) return "";
  if (r.pending || (response.dense && response.dense.pending)) {
    return `Ranked without your reranker ${r.model} for now: it reorders the first ${r.depth} chunks once the controls rest.`;
  }
  return `The first ${r.depth} chunks were reordered by your reranker ${r.model} (an endpoint on this computer).`;
}

export function renderVerdict(response, snap) {
  const [kind, headline, said] = verdictWords(response, snap);
  const sentence = [said, denseSentences(response, snap), rerankSentence(response)].filter(Boolean).join(" "); // dense, hybrid: truncation
  const box = $("verdict");
  box.dataset.verdict = kind;
  $("verdict-headline").textContent = snap.stored && kind ? `Your index: ${headline}` : headline; // the stored chunks
  $("verdict-text").textContent = sentence;
  box.hidden = !snap.span && Boolean(snap.fact); // a marked fact has its own verdict (#fact-verdict)
  announceWhenRested("verdict", box.hidden ? "" : `${headline}. ${sentence}`);
}

/** The embedded page's line above the verdict: the question and the marked sentence it is about. */
export function renderQuestion(query, snap) {
  const out = $("embed-question");
  const quote = (s) => (s.length > 160 ? `${s.slice(0, 157)}…` : s);
  const parts = [];
  if (query.trim()) parts.push(["Question: ", quote(query.trim())]);
  if (snap.span) {
    const text = snap.texts[snap.span.doc ?? snap.docId] ?? "";
    parts.push(["Marked answer: ", quote(text.slice(snap.span.start, snap.span.end))]);
  } else if (snap.fact && snap.fact.complete) {
    parts.push(["Marked fact: ", `${quote(snap.factText.name)} … ${quote(snap.factText.value)}`]);
  }
  out.replaceChildren(...parts.flatMap(([label, text], i) => {
    const q = document.createElement("q");
    q.textContent = text;
    return [...(i ? [document.createElement("br")] : []), document.createTextNode(label), q];
  }));
}

/** The verdict box when no result is on screen and the input cannot be computed (a setting the core
 * refuses, after a reload or a link): what is wrong and what to change, not "Waiting for Python". */
export function renderVerdictProblem(problem) {
  const box = $("verdict");
  box.dataset.verdict = "refused";
  box.hidden = false;
  $("verdict-headline").textContent = "No verdict for these settings";
  $("verdict-text").textContent = `${problem} Change that and the verdict appears here.`;
}

/** The verdict box while Python cannot run. */
export function renderVerdictFailure(headline, sentence) {
  $("verdict-headline").textContent = headline;
  $("verdict-text").textContent = sentence;
}
