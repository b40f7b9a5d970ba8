// The question set's results at the current settings (SPEC section 8), drawn from one
// response: each listed question's verdict, the summary line, and the table of Chroma's metrics
// (recall, precision, IoU as mean ± population std, precision Ω) with tokens and cost per query.
// A function of (request, response): the questions' ids and queries are the ones sent.

import { $, cell } from "../dom.js";
import { int, money, plural } from "../format.js";
import { ANSWER_ID } from "../question-wire.js";
import { modelWords } from "./dense-words.js";

const VERDICT_WORDS = { intact: "intact", ranked_out: "ranked out", cut: "cut", pending: "waiting for its embedding" };
const fixed = (x) => (x == null ? "–" : x.toFixed(2));
const pm = (mean, std) => `${fixed(mean)}\u00a0± ${fixed(std)}`; // breaks, if at all, after the ±

/** The summary line's words for `question_stats`. */
export function summaryWords(st) {
  const lost = [st.ranked_out ? `${st.ranked_out} ranked out` : "", st.cut ? `${st.cut} cut` : ""].filter(Boolean).join(", ");
  const kept = st.intact === st.count ? `All ${st.count} ${plural(st.count, "answer", "answers")} intact`
    : `${st.intact} of ${st.count} ${plural(st.count, "answer", "answers")} intact`;
  const tokens = st.context_tokens_mean == null ? "" : ` · ${int(Math.round(st.context_tokens_mean))} tokens, ${money(st.cost_mean)} per query`;
  return `${kept}${lost ? ` (${lost})` : ""} · recall ${pm(st.recall_mean, st.recall_std)} · precision ${pm(st.precision_mean, st.precision_std)}` +
    ` · IoU ${pm(st.iou_mean, st.iou_std)} · precision Ω ${fixed(st.precision_omega_mean)}${tokens}`;
}

/** [kind, headline, sentence] for a marked answer of several spans (a loaded question that needs
 * two places), from the core's question verdict for it (SPEC section 8); null for one span. */
export function answerVerdictWords(response, snap) {
  const n = (snap.spans || []).length;
  const q = n > 1 && (response.questions || []).find((x) => x.id === ANSWER_ID);
  if (!q || q.verdict === "pending") return null; // its document waits for its vectors: the verdict says so
  const k = snap.k;
  if (q.verdict === "intact") {
    return ["intact", "Present and intact", `Each of its ${n} spans is held whole by a chunk in your top ${k}; the last of them ranks #${q.needed_k}.`];
  }
  if (q.verdict === "ranked_out") {
    return ["ranked_out", "Ranked out", `Each of its ${n} spans is held whole by some chunk, but not all of those rank inside your top ${k}: it needs k = ${q.needed_k}.`];
  }
  return ["cut", "Cut in half", `At least one of its ${n} spans is held whole by no chunk, so this answer cannot reach the model whole.`];
}

/** Fill the list's verdicts, the summary and the table; `last` null or without a set clears them. */
export function renderQuestionResults(last) {
  const results = (last && last.response.questions) || [];
  renderBadges(results);
  const st = last && last.response.question_stats;
  $("qs-results").hidden = !st || !results.length;
  if ($("qs-results").hidden) {
    $("qs-summary").textContent = "";
    $("qs-table").replaceChildren();
    return;
  }
  const by = [modelWords(last.response), rerankWords(last.response)].filter(Boolean).join(", "); // your own models, named on the set's verdicts too
  $("qs-summary").textContent = `At these settings${by ? `, ${by}` : ""}: ${summaryWords(st)}.`;
  $("qs-summary").dataset.intact = String(st.intact);
  const thead = document.createElement("thead");
  const hr = document.createElement("tr");
  for (const h of ["Question", "Verdict", "k needed", "Recall", "Precision", "IoU", "Precision Ω", "Tokens"]) hr.append(cell("th", h, { scope: "col" }));
  thead.append(hr);
  const query = new Map(last.request.questions.map((q) => [q.id, q.query]));
  const tbody = document.createElement("tbody");
  tbody.append(...results.map((r) => questionRow(r, query.get(r.id) || "")));
  $("qs-table").replaceChildren(cell("caption", `The question set at these settings: ${st.count} ${plural(st.count, "question", "questions")}, ` +
    "Chroma's character-level metrics, tokens sent per query", { class: "visually-hidden" }), thead, tbody, meanRow(st));
}

/** The set not scored yet: a semantic chunker's sentence windows are being embedded (`sentence`
 * says so, in the embedding's words); each listed question waits too. */
export function renderQuestionsWaiting(sentence) {
  renderBadges([]);
  for (const badge of $("qs-list").querySelectorAll(".qs-verdict")) badge.textContent = "waits for the embedding";
  $("qs-results").hidden = false;
  $("qs-table").replaceChildren();
  delete $("qs-summary").dataset.intact;
  if ($("qs-summary").textContent !== sentence) $("qs-summary").textContent = sentence;
}

/** Each listed question's verdict at these settings (or "not scored": no span of it fits). */
function renderBadges(results) {
  const byId = new Map(results.map((r) => [r.id, r]));
  for (const li of $("qs-list").children) {
    const r = byId.get(li.dataset.id);
    const badge = li.querySelector(".qs-verdict");
    badge.dataset.verdict = r ? r.verdict : "";
    badge.textContent = r ? verdictWord(r) + (r.verdict === "ranked_out" && r.needed_k ? ` (needs k = ${r.needed_k})` : "") : "not scored";
  }
}

/** Your reranker, when the set's scores are after it ("" without one, or before its scores came). */
export function rerankWords(response) {
  const r = response.rerank;
  return r && !r.pending ? `after reranking the first ${r.depth} chunks with your reranker ${r.model}` : "";
}

/** A question's verdict; "cut" beside a recall of 1.00 says why: every piece was sent, none whole. */
function verdictWord(r) {
  if (r.verdict === "cut" && r.recall != null && r.recall >= 0.995) return "cut: all its pieces sent, none whole";
  if (r.verdict === "ranked_out" && r.after_reranking) return "ranked out after reranking";
  return VERDICT_WORDS[r.verdict];
}

function questionRow(r, q) {
  const tr = document.createElement("tr");
  tr.dataset.id = r.id;
  tr.append(cell("th", `${r.id}. ${q.length > 60 ? `${q.slice(0, 59)}…` : q}`, { scope: "row", title: q }),
    cell("td", verdictWord(r), { "data-kind": r.verdict }),
    cell("td", r.needed_k == null ? "–" : String(r.needed_k)),
    cell("td", fixed(r.recall)), cell("td", fixed(r.precision)), cell("td", fixed(r.iou)),
    cell("td", fixed(r.precision_omega)), cell("td", int(r.context_tokens)));
  return tr;
}

function meanRow(st) {
  const tfoot = document.createElement("tfoot");
  const fr = document.createElement("tr");
  fr.append(cell("th", "Mean ± std", { scope: "row" }),
    cell("td", `${st.intact} of ${st.count} intact`), cell("td", ""),
    cell("td", pm(st.recall_mean, st.recall_std)), cell("td", pm(st.precision_mean, st.precision_std)),
    cell("td", pm(st.iou_mean, st.iou_std)), cell("td", fixed(st.precision_omega_mean)),
    cell("td", st.context_tokens_mean == null ? "–" : int(Math.round(st.context_tokens_mean))));
  tfoot.append(fr);
  return tfoot;
}
