// Asking your own model: the answers drawn. One card per setting for the current question
// (side by side, so two settings compare as the study compared them), and the question set's table
// at two settings. Every answer is the model's text, shown verbatim as text (textContent), labelled
// as the model's, with the two plain checks of ragsim.wire.ask_checks beside it, never instead of the verdict.

import { cell } from "../dom.js";

const VERDICT_WORDS = { intact: "intact", ranked_out: "ranked out", cut: "cut", destroyed: "destroyed" };
const yes = (v) => (v === null || v === undefined ? "no answer marked" : v ? "yes" : "no");
const flag = (v) => (v === null || v === undefined ? "none" : v ? "yes" : "no");

/** What the first check looks for, said once per card. */
function markedLine(answers) {
  const text = answers.length ? `The marked answer: ${answers.map((a) => `“${a}”`).join(" + ")}.`
    : "No answer is marked, so only NOT IN CONTEXT is checked.";
  return cell("p", text, { class: "ask-marked" });
}

/** One sample as a list item: who said it, what it said (verbatim), and both checks. */
function sampleItem(s, i, model) {
  const li = document.createElement("li");
  li.className = "ask-sample";
  li.dataset.contains = flag(s.contains_answer);
  li.dataset.notInContext = flag(s.not_in_context);
  li.append(cell("p", `Sample ${i + 1}, the model's answer (${model}):`, { class: "ask-who" }));
  li.append(cell("p", s.text, { class: "ask-text" })); // the model's own words, as text
  const checks = document.createElement("p");
  checks.className = "ask-checks";
  checks.append("contains the marked answer: ", cell("strong", yes(s.contains_answer), { "data-check": "contains" }),
    " · says NOT IN CONTEXT: ", cell("strong", yes(s.not_in_context), { "data-check": "not-in-context" }));
  li.append(checks);
  return li;
}

/** The context sent, folded: its length in the summary, the text itself inside. */
function contextBox(context) {
  const box = document.createElement("details");
  box.className = "ask-context";
  box.append(cell("summary", `The context sent: ${context.length.toLocaleString("en")} characters`), cell("pre", context));
  return box;
}

/** How many samples pass each check, in a few words. */
export function tally(samples) {
  const n = samples.length;
  const hits = samples.filter((s) => s.contains_answer).length, nic = samples.filter((s) => s.not_in_context).length;
  const none = n > 0 && samples.every((s) => s.contains_answer === null);
  return `${none ? "no answer marked" : `${hits} of ${n} contain the answer`} · ${nic} of ${n} say NOT IN CONTEXT`;
}

/** One setting's card: its name, the verdict at it, the context sent, the samples and their checks. */
function card(entry) {
  const article = document.createElement("article");
  article.className = "ask-card";
  article.dataset.key = entry.key;
  article.dataset.state = entry.state;
  article.append(cell("h3", entry.label));
  const verdict = VERDICT_WORDS[entry.verdict] || "no answer marked";
  article.append(cell("p", `Verdict at this setting: ${verdict}. Model ${entry.model}, temperature ${entry.temperature ?? "the server's default"}.`, { class: "ask-meta", "data-verdict": entry.verdict || "" }));
  article.append(markedLine(entry.answers), contextBox(entry.context));
  const list = document.createElement("ol");
  list.className = "ask-samples";
  entry.samples.forEach((s, i) => list.append(sampleItem(s, i, entry.model)));
  article.append(list);
  const left = entry.wanted - entry.samples.length;
  if (entry.problem) article.append(cell("p", entry.problem, { class: "ask-problem", role: "alert" }));
  else if (entry.state === "stopped") article.append(cell("p", `Stopped after ${entry.samples.length} of ${entry.wanted} samples.`, { class: "ask-note" }));
  else if (left > 0) article.append(cell("p", `Asking… ${entry.samples.length} of ${entry.wanted} samples so far.`, { class: "ask-note" }));
  else article.append(cell("p", tally(entry.samples), { class: "ask-tally" }));
  return article;
}

/** The cards of the current question, oldest first (each a setting), into `box`. */
export function renderAnswerCards(box, entries) {
  if (!entries.length) {
    box.replaceChildren(cell("p", "No answers yet: press Ask. Then move a slider and ask again to compare two settings.", { class: "hint" }));
    return;
  }
  box.replaceChildren(...entries.map(card));
}

/** One cell of the set table: the verdict, then the samples' tally and the samples themselves, folded. */
function setCell(result, model, answers) {
  const verdict = cell("td", result ? VERDICT_WORDS[result.verdict] || "-" : "…", { "data-kind": result ? result.verdict : "" });
  const td = document.createElement("td");
  td.className = "ask-set-samples";
  if (!result) { td.textContent = "…"; return [verdict, td]; }
  if (result.problem) { td.append(cell("span", result.problem, { class: "ask-problem" })); return [verdict, td]; }
  td.dataset.contains = String(result.samples.filter((s) => s.contains_answer).length);
  td.dataset.notInContext = String(result.samples.filter((s) => s.not_in_context).length);
  const box = document.createElement("details");
  const list = document.createElement("ol");
  list.className = "ask-samples";
  result.samples.forEach((s, i) => list.append(sampleItem(s, i, model)));
  box.append(cell("summary", tally(result.samples)), markedLine(answers), contextBox(result.context), list);
  td.append(box);
  return [verdict, td];
}

/** The question set asked at two settings: a row per question, a verdict and the samples at each. */
export function renderSetTable(table, run) {
  const head = document.createElement("tr");
  head.append(cell("th", "Question", { scope: "col" }));
  for (const s of run.settings) head.append(cell("th", `Verdict at ${s.label}`, { scope: "col" }), cell("th", `The model at ${s.label}`, { scope: "col" }));
  const thead = document.createElement("thead");
  thead.append(head);
  const tbody = document.createElement("tbody");
  for (const row of run.rows) {
    const tr = document.createElement("tr");
    tr.dataset.question = row.id;
    tr.append(cell("th", row.query, { scope: "row" }));
    row.results.forEach((r) => tr.append(...setCell(r, run.model, row.answers)));
    tbody.append(tr);
  }
  table.replaceChildren(thead, tbody);
}
