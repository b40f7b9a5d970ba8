// The corpus audit on the page (item 8): every name-value fact the core detects in every
// document, checked at each overlap of the sweep list. One worker call (`{type: "call", fn: "audit"}` ->
// ragsim.wire.audit.audit) per overlap, so the <progress> bar moves and the page stays responsive;
// the rows are joined here. "Dropped out of the top k" compares each overlap with the first one
// of the list, as the core does within one call: facts found in the top k at the first overlap,
// still answered by some chunk, and no longer in the top k.
//
// Each call is an ask of the "audit" lane (asks.js), sent while the page rests. A worker lost while
// the audit runs (supervisor.js) leaves it waiting; when the new worker is ready (the scheduler's
// "restart") the audit runs again from the start (a finished table stays: it is still the core's answer).
//
// Each destroyed fact is a button: it selects the fact's document, marks its name and value, and
// brings the picture into view (the `follow` callback the page passes in).

import { $, cell } from "../dom.js";
import { int } from "../format.js";
import { SPLITTERS } from "../params.js";
import { auditRequest } from "../requests.js";

const LIST_LIMIT = 200; // destroyed facts listed; the count is exact

/** A fact's sentence (the part the core keeps: `quote_text`) with its name and value in <mark>s,
 * built from text nodes (the document's text is data, never HTML), "…" where the sentence goes on. */
export function markedSentence(f) {
  const q = document.createElement("q");
  q.className = "fact-sentence";
  const [qa, qz] = f.quote;
  const text = f.quote_text;
  const marks = [f.name, f.value].map(([a, z]) => [a - qa, z - qa]).sort((x, y) => x[0] - y[0]);
  const squeeze = (s) => s.replace(/\s+/g, " ");
  let at = 0;
  if (qa > f.sentence[0]) q.append("…");
  for (const [a, z] of marks) {
    q.append(squeeze(text.slice(at, a)));
    const m = document.createElement("mark");
    m.textContent = squeeze(text.slice(a, z));
    q.append(m);
    at = z;
  }
  q.append(squeeze(text.slice(at)));
  if (qz < f.sentence[1]) q.append("…");
  return q;
}

/** Join one-overlap replies into the shape of one audit over every overlap. */
export function joinAudits(replies, overlaps) {
  const facts = replies[0].facts.map((f) => ({ ...f, destroyed_at: [], found_at: [], answering: {} }));
  const rows = [];
  let baseline = null; // indexes of the facts found in the top k at the first overlap that ran
  replies.forEach((r, j) => {
    const row = r.rows[0];
    if (row.error) { rows.push(row); return; }
    const o = overlaps[j];
    r.facts.forEach((f, i) => {
      facts[i].destroyed_at.push(...f.destroyed_at);
      facts[i].found_at.push(...f.found_at);
      Object.assign(facts[i].answering, f.answering);
    });
    const found = new Set(r.facts.flatMap((f, i) => (f.found_at.length ? [i] : [])));
    if (baseline === null) baseline = found;
    const dropped = [...baseline].filter((i) => !found.has(i) && r.facts[i].answering[String(o)].length > 0).length;
    rows.push({ ...row, dropped_top_k: dropped });
  });
  return { facts, rows, precision_k: replies[0].precision_k, overlaps };
}

export class AuditPanel {
  /** deps: asks (the scheduler of work at rest), simulate(request) (an audit call's reply, the dense
   *  round trip included), request() (the page's simulation request), overlaps(), follow(fact),
   *  titles(), strategy() (the splitter's name). */
  constructor(deps) {
    this.deps = deps;
    this.run = 0;
    this.result = null;
    this.key = null;
    $("audit-run").addEventListener("click", () => this.start());
    deps.asks.on("restart", () => this.resume());
  }

  /** A restarted worker is ready: run again the audit the lost one interrupted. */
  resume() {
    if (["running", "waiting"].includes($("audit").dataset.state)) this.start();
  }

  static keyOf(request) {
    const { overlap: _, ...chunking } = request.chunking;
    return JSON.stringify([request.documents.map((d) => [d.id, d.text.length, d.title]), chunking, request.retrieval]);
  }

  /** Mark the table stale when the documents or settings changed since it ran. */
  check(request) {
    if (!this.result) return;
    const stale = AuditPanel.keyOf(request) !== this.key;
    $("audit").classList.toggle("stale", stale);
    $("audit-stale").hidden = !stale;
  }

  async start() {
    const run = ++this.run;
    const request = this.deps.request();
    const overlaps = this.deps.overlaps();
    const bar = $("audit-progress"), status = $("audit-status"), button = $("audit-run");
    const section = $("audit");
    section.dataset.state = "running";
    bar.hidden = false;
    bar.max = overlaps.length;
    bar.value = 0;
    button.textContent = "Run the audit again";
    const replies = [];
    const started = performance.now();
    let ms = 0;
    for (const [j, o] of overlaps.entries()) {
      status.textContent = `Checking overlap ${o} (${j + 1} of ${overlaps.length})…`;
      const reply = await this.deps.asks.ask("audit", `${run} ${j}`, () => this.deps.simulate(auditRequest(request, o))); // dense, hybrid: with each fact name's cosines
      if (run !== this.run) return; // a newer run took over
      if (reply.lost && !reply.culprit && !reply.known) { // another request lost the worker: run again on the new one
        section.dataset.state = "waiting";
        bar.hidden = true;
        status.textContent = "Python was restarted (the message above says why): the audit runs again once it is ready…";
        return;
      }
      if (!reply.ok) {
        section.dataset.state = "error";
        bar.hidden = true;
        status.textContent = `The audit stopped: ${(reply.error && reply.error.message) || "no reason was given"}`;
        return;
      }
      ms += reply.ms;
      replies.push(JSON.parse(reply.result));
      bar.value = j + 1;
      this.show(joinAudits(replies, overlaps.slice(0, j + 1)), request);
    }
    this.key = AuditPanel.keyOf(request);
    this.check(request);
    const seconds = (performance.now() - started) / 1000;
    bar.hidden = true;
    const facts = replies.length ? replies[0].facts.length : 0;
    status.textContent = `${int(facts)} ${facts === 1 ? "fact" : "facts"} in ${request.documents.length} ${request.documents.length === 1 ? "document" : "documents"}, ` +
      `${overlaps.length} overlaps, in ${seconds.toFixed(2)} s (${(ms / 1000).toFixed(2)} s in Python).`;
    section.dataset.seconds = String(seconds);
    section.dataset.state = "done";
  }

  show(result, request) {
    this.result = result;
    const unit = (result.rows.find((r) => !r.error) || {}).unit || request.chunking.unit;
    const unitName = { chars: "characters" }[unit] || unit;
    const head = [`Overlap (${unitName})`, "Facts destroyed", "Destroyed though no longer than the overlap", "Chunks",
      `Found in top ${result.precision_k}`, `Dropped out of top ${result.precision_k}`];
    const thead = document.createElement("thead");
    const hr = document.createElement("tr");
    head.forEach((h) => hr.append(cell("th", h, { scope: "col" })));
    thead.append(hr);
    const tbody = document.createElement("tbody");
    for (const r of result.rows) {
      const tr = document.createElement("tr");
      tr.dataset.overlap = String(r.overlap);
      if (r.error) {
        tr.append(cell("td", String(r.overlap)), cell("td", r.error, { colspan: "5" }));
      } else {
        tr.append(cell("td", String(r.overlap)), cell("td", `${int(r.destroyed)} of ${int(r.facts)}`, { "data-value": String(r.destroyed) }),
          cell("td", int(r.destroyed_within_overlap), { "data-value": String(r.destroyed_within_overlap), class: r.destroyed_within_overlap ? "alarm" : "" }),
          cell("td", int(r.chunks), { "data-value": String(r.chunks) }),
          cell("td", int(r.found_top_k), { "data-value": String(r.found_top_k) }),
          cell("td", int(r.dropped_top_k), { "data-value": String(r.dropped_top_k) }));
      }
      tbody.append(tr);
    }
    const caption = cell("caption", "The corpus audit: facts destroyed and found at each overlap", { class: "visually-hidden" });
    $("audit-table").replaceChildren(caption, thead, tbody);
    const within = result.rows.reduce((n, r) => n + (r.destroyed_within_overlap || 0), 0);
    // a splitter registered as keeping every stretch of at most `overlap` units whole (fixed windows)
    const fixed = Boolean((SPLITTERS[this.deps.strategy()] || {}).overlap_kept);
    $("audit-note").textContent = within === 0
      ? "No fact was destroyed whose name-to-value stretch is no longer than the overlap. For fixed windows this must be zero: a window that overlaps the next by o units holds every stretch of at most o units whole. Library splitters cut at separators and may not keep that promise."
      : fixed
        ? `${int(within)} destroyed facts were no longer than the overlap: fixed windows must never do that, so this is a bug worth reporting.`
        : `${int(within)} destroyed facts were no longer than the overlap. Fixed windows never do that; this splitter cuts at separators, so a short fact can still fall across a cut.`;
    this.renderFacts(result);
  }

  renderFacts(result) {
    const titles = this.deps.titles();
    const destroyed = result.facts.filter((f) => f.destroyed_at.length);
    const list = $("audit-facts");
    const items = destroyed.slice(0, LIST_LIMIT).map((f) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "link";
      b.dataset.doc = f.doc;
      b.dataset.name = f.name.join("-");
      b.dataset.value = f.value.join("-");
      const name = cell("strong", f.name_text);
      b.append(name, document.createTextNode(" … "), cell("strong", f.value_text),
        document.createTextNode(` · ${titles[f.doc] || f.doc}`));
      b.addEventListener("click", () => this.deps.follow(f));
      const at = cell("span", ` destroyed at overlap ${f.destroyed_at.join(", ")}`, { class: "muted" });
      li.append(b, at, markedSentence(f));
      return li;
    });
    list.replaceChildren(...items);
    $("audit-facts-head").textContent = destroyed.length
      ? `Destroyed facts (${int(destroyed.length)} at one overlap or more${destroyed.length > LIST_LIMIT ? `; the first ${LIST_LIMIT} listed` : ""}): click one to see it in the picture`
      : result.facts.length ? "No fact was destroyed at any of these overlaps." : "No facts of this shape found.";
    // every fact counted, each with its sentence, so a reader can see a pair that is not a fact
    const all = result.facts.slice(0, LIST_LIMIT).map((f) => {
      const li = document.createElement("li");
      li.append(cell("strong", f.name_text), document.createTextNode(" = "), cell("strong", f.value_text),
        document.createTextNode(` · ${titles[f.doc] || f.doc} `), markedSentence(f));
      return li;
    });
    $("audit-all").replaceChildren(...all);
    $("audit-all-facts").hidden = !result.facts.length;
    $("audit-all-head").textContent = `Every fact counted (${int(result.facts.length)}${result.facts.length > LIST_LIMIT
      ? `; the first ${LIST_LIMIT} listed` : ""}), with the sentence it came from: check that each is a fact`;
  }
}
