// The questions after a verdict (items 3-7 and 9), each a panel drawn from the core's
// response: the fact verdict with the cut quoted, "Find exact phrase in the index", the verdict at
// several k, whether the cuts move with the overlap, the overlap sweep, and context expansion
// next to the overlap that would save the same fact.
//
// Nothing is computed here but wording: every number comes from `api.simulate` (the fields
// `fact`, `at_k`, `found`, `cuts`, `sweep`, `expanded`). Offsets in the response are code points;
// offsetMap converts them before the text is quoted. The sweep is one extra
// `simulate` request with `sweep: [...]`, sent beside the main one (not through the latest-wins
// gate) as an ask of the "sweep" lane once the page rests (asks.js), and only when something but
// the overlap changed, since its rows do not depend on it.

import { $, cell } from "../dom.js";
import { chunkList, int, listNumbers, money } from "../format.js";
import { offsetMap } from "../offsets.js";
import { withColumns } from "../chunk-columns.js";
import { PANEL_ANSWERS, sweepRequest } from "../requests.js";
import { modelWords } from "../render/dense-words.js";

const SWEEP_MAX = 12;

/** The overlaps a person typed ("0, 25, 50"), or {error}. */
export function parseOverlaps(text) {
  const parts = String(text).split(/[\s,;]+/).filter(Boolean);
  if (!parts.length) return { error: "Type at least one overlap, e.g. 0, 25, 50." };
  const out = [];
  for (const p of parts) {
    if (!/^\d{1,6}$/.test(p)) return { error: `Overlaps are whole numbers of at least 0; “${p.slice(0, 20)}” is not one.` };
    const n = parseInt(p, 10);
    if (!out.includes(n)) out.push(n);
  }
  if (out.length > SWEEP_MAX) return { error: `Compare at most ${SWEEP_MAX} overlaps at once.` };
  return { value: out };
}

const KIND_WORDS = {
  intact: "sent whole",
  ranked_out: "ranked out",
  destroyed: "in no chunk",
  cut: "in no chunk",
  not_sent: "not sent",
};

/** At most `words` words of `s` from its end (fromEnd) or its start, with an ellipsis where cut. */
function someWords(s, words, fromEnd) {
  const flat = s.replace(/\s+/g, " ");
  const parts = flat.trim().split(" ");
  if (parts.length <= words) return flat.trim();
  return fromEnd ? `…${parts.slice(-words).join(" ")}` : `${parts.slice(0, words).join(" ")}…`;
}

/** Fill table `el`: a caption (read by screen readers; the panel's heading says it on screen), a
 * head row of column headers, and the body rows. */
function table(el, caption, head, rows) {
  const thead = document.createElement("thead");
  const tr = document.createElement("tr");
  for (const h of head) tr.append(cell("th", h, { scope: "col" }));
  thead.append(tr);
  const tbody = document.createElement("tbody");
  tbody.append(...rows);
  el.replaceChildren(cell("caption", caption, { class: "visually-hidden" }), thead, tbody);
}

export class Investigate {
  /** deps: asks (the scheduler of work at rest), simulate(request) (a reply, the dense round trip
   *  included), and callbacks onFind(text), onOverlaps(list), onExpand(value) that change the
   *  page's state; mark(request), optional: the sweep's request with your reranker's mark. */
  constructor(deps) {
    this.deps = deps;
    this.sweepKey = null; // the key of the sweep on screen or in flight
    this.sweepBusy = false;
    this.sweepWanted = null; // {key, request}: the newest sweep asked for
    this.sweepRows = null;
    this.last = null;
    $("find-phrase").addEventListener("input", (e) => deps.onFind(e.target.value));
    $("sweep-overlaps").addEventListener("change", (e) => this.onOverlaps(e.target.value));
    $("expand").addEventListener("change", (e) => deps.onExpand(e.target.value));
  }

  onOverlaps(text) {
    const { value, error } = parseOverlaps(text);
    const input = $("sweep-overlaps");
    if (error) {
      input.setAttribute("aria-invalid", "true");
      $("sweep-note").textContent = error;
      return;
    }
    input.removeAttribute("aria-invalid");
    this.deps.onOverlaps(value);
  }

  /** Show the state's own values in the panel's inputs (after a link or the collection loaded). */
  sync(state, overlaps) {
    const find = $("find-phrase");
    if (find.value !== state.find) find.value = state.find;
    const sweep = $("sweep-overlaps");
    if (document.activeElement !== sweep) { sweep.value = overlaps.join(", "); sweep.removeAttribute("aria-invalid"); }
    $("expand").value = state.expand;
  }

  /** The panel's worker calls, asks of one lane that runs one at a time (the questions' fill, then
   * the sweep): both embed on the embedding worker's "sweep" lane, where a newer job cancels an
   * older one's embedding. `key`: the same key asked twice is one call. */
  call(key, request) {
    return this.deps.asks.ask("sweep", key, () => this.deps.simulate(request));
  }

  /** The fields of the panels' questions (found, cuts, expanded), which a drag does not ask for
   * (compute.js): one more simulation of `last.panelRequest`, sent once the controls rest, its
   * fields put into `last.response`. Resolves true when they are there (at once when nothing was
   * asked or they came already), false when the worker refused (the panels then say nothing new). */
  fill(last) {
    if (!last.panelRequest || last.panelsFilled) return Promise.resolve(true);
    if (this.filling && this.filling.last === last) return this.filling.promise;
    const promise = this.call(last, { ...last.panelRequest, wire: "binary" }).then((reply) => {
      if (!reply.ok) return false;
      const answer = JSON.parse(reply.result);
      for (const key of PANEL_ANSWERS) if (key in answer) last.response[key] = answer[key];
      // Asked with every score: a pruned drag's missing scores come with it (no request of their own).
      const cols = last.response.cols;
      if (cols && cols.partial && reply.columns) cols.complete(withColumns(answer, reply.columns).cols);
      last.panelsFilled = true;
      return true;
    });
    this.filling = { last, promise };
    return promise;
  }

  /** Everything drawn from one response. `last` = {request, response, snap}; snap has texts, titles. */
  render(last, overlaps) {
    this.last = last;
    const { response, snap } = last;
    this.target = target(last);
    if (this.verdictOf !== last) this.renderVerdict(last);
    this.renderFind(response, snap);
    this.renderAtK(response, snap);
    this.renderCuts(response, snap);
    const box = $("sweep-overlaps"); // after a unit switch or a new size: the list the sweep compares
    if (document.activeElement !== box && box.value !== overlaps.join(", ")) { box.value = overlaps.join(", "); box.removeAttribute("aria-invalid"); }
    this.requestSweep(last, overlaps);
    this.renderFix();
  }

  /** The fact verdict, at once with the page's own verdict (the other panels may follow later). */
  renderVerdict(last) {
    this.verdictOf = last;
    this.renderFact(last.response, last.snap);
  }

  /** The text of document `id` between code points a and z, as last sent. */
  slice(id, a, z) {
    const text = this.verdictOf.snap.texts[id] ?? "";
    const map = offsetMap(text);
    return text.slice(map.toU16(a), map.toU16(z));
  }

  // Item 3: the fact verdict, with the cut quoted -----------------------------------------------
  renderFact(response, snap) {
    const box = $("fact-verdict");
    const f = snap.fact;
    box.hidden = !f;
    if (!f) return;
    const head = $("fact-headline"), text = $("fact-text");
    const name = snap.factText.name, value = snap.factText.value;
    if (!response.fact || !f.complete) {
      box.dataset.factVerdict = "";
      head.textContent = f.name ? "Name marked" : "Value marked";
      text.textContent = f.name
        ? `Name: “${someWords(name, 12)}”. Now select its value in the same document and press “Mark selection as value”.`
        : `Value: “${someWords(value, 12)}”. Now select its name in the same document and press “Mark selection as name”.`;
      return;
    }
    const fact = response.fact;
    box.dataset.factVerdict = fact.kind;
    const cols = response.cols; // one object per chunk only for the few named (chunk-columns.js)
    const label = `“${someWords(name, 8)}” … “${someWords(value, 8)}”`;
    if (fact.kind === "intact" || fact.kind === "ranked_out") {
      const best = fact.answering.map((n) => cols.object(n - 1)).sort((a, b) => a.rank - b.rank)[0];
      const by = modelWords(response); // your own embedding model ranked: named here too
      const more = (fact.answering.length > 1 ? ` (${fact.answering.length} chunks hold both)` : "") + (by ? `, ${by}` : "");
      head.textContent = fact.kind === "intact" ? "Fact intact: name and value arrive together" : "Fact ranked out";
      text.textContent = fact.kind === "intact"
        ? `Chunk ${best.number} holds both ${label} and ranks #${best.rank}, inside your top ${snap.k}${more}.`
        : `Chunk ${best.number} holds both ${label}, but ranks #${best.rank}, outside your top ${snap.k}${more}.`;
      return;
    }
    head.textContent = "Fact destroyed: no chunk holds both the name and the value";
    const [a, z] = [Math.min(f.cp.name[0], f.cp.value[0]), Math.max(f.cp.name[1], f.cp.value[1])];
    // The last chunk that starts at or before the stretch, and the chunk after it: the cut between them.
    const [from, to] = cols.range(cols.ids.indexOf(f.doc)), { start, end } = cols;
    let i = -1;
    for (let p = from; p < to; p++) if (start[p] <= a && (i < 0 || end[p] >= end[i])) i = p;
    let j = i < 0 ? to : i + 1;
    while (j < to && !(start[j] > start[i])) j++;
    const c1 = i >= 0 ? cols.object(i) : null, c2 = j < to ? cols.object(j) : null;
    if (!c1 || !c2) {
      text.textContent = `No chunk holds both ${label}.`;
      return;
    }
    const before = someWords(this.slice(f.doc, Math.max(a, c1.start), c1.end), 4, true);
    const after = someWords(this.slice(f.doc, c2.start, Math.max(z, c2.start)), 6, false);
    text.textContent = `No chunk holds both: chunk ${c1.number} stops after ‘${before}’; chunk ${c2.number} opens with ‘${after}’.`;
  }

  // Item 4: find an exact phrase ------------------------------------------------------------------
  renderFind(response, snap) {
    const out = $("find-result");
    $("find-phrase").placeholder = snap.findDefault ? `the marked answer: ${someWords(snap.findDefault, 8)}` : "a phrase to look for";
    const found = response.found;
    out.dataset.found = found ? found.verdict : "";
    if (!found) {
      out.textContent = "Mark an answer or a fact, or type a phrase, to look for it in every chunk.";
      return;
    }
    const phrase = `“${someWords(found.phrase, 14)}”`;
    const times = `${int(found.occurrences)} ${found.occurrences === 1 ? "time" : "times"}`;
    if (found.verdict === "absent") {
      out.textContent = `${phrase} does not occur in any document. The search is exact: letters, case and spaces must match.`;
    } else if (found.verdict === "destroyed") {
      out.textContent = `${phrase} occurs ${times} in the documents, but no chunk holds it whole: the answer was destroyed at chunking, not ranked too low. No retriever and no top k can send what no chunk holds.`;
    } else {
      const nums = [...found.chunks].sort((x, y) => x - y);
      out.textContent = `${phrase} occurs ${times} in the documents; ${chunkList(nums, 8)} ${found.chunks.length === 1 ? "holds" : "hold"} it whole.`;
    }
  }

  // Item 5: the verdict at several k ----------------------------------------------------------------
  renderAtK(response, snap) {
    const el = $("k-table"), out = $("k-conclusion");
    const which = this.target;
    // Spoken only when it has something to say: not for an answer already sent whole.
    const kind = which && (which.key === "fact" ? response.fact && response.fact.kind : response.verdict.kind);
    $("k-panel").hidden = !which || !kind || kind === "intact";
    $("k-heading").textContent = kind === "ranked_out" ? "How many results it takes" : "Why more results don't help";
    if (!which) {
      el.replaceChildren();
      out.textContent = "Mark an answer or a fact to see its verdict at k = 1, 3, 5 and 10.";
      return;
    }
    const rows = response.at_k || [];
    const tr = document.createElement("tr");
    tr.append(cell("th", "Verdict", { scope: "row" }));
    for (const r of rows) {
      const kind = r[which.key];
      const td = cell("td", KIND_WORDS[kind] || "–", { "data-k": String(r.k), "data-kind": kind || "" });
      if (r.k === snap.k) td.className = "current";
      tr.append(td);
    }
    const head = document.createElement("thead");
    const hr = document.createElement("tr");
    hr.append(cell("th", "Top k"));
    for (const r of rows) hr.append(cell("th", r.k === snap.k ? `${r.k} (yours)` : String(r.k), { scope: "col" }));
    head.append(hr);
    const body = document.createElement("tbody");
    body.append(tr);
    el.replaceChildren(cell("caption", "The verdict at other values of top k", { class: "visually-hidden" }), head, body);
    const best = which.key === "fact" ? response.fact && response.fact.best_rank : response.verdict.best_rank;
    const kindNow = which.key === "fact" ? response.fact && response.fact.kind : response.verdict.kind;
    if (kindNow === "destroyed" || kindNow === "cut") {
      out.textContent = `The ${which.noun} is in no chunk at all, so every k gives the same answer: retrieval can only send chunks, and none holds ${which.whole}. More results only add context that does not contain it.`;
    } else if (kindNow === "ranked_out") {
      out.textContent = `A chunk holding ${which.whole} ranks #${best}: top k = ${best} would send it, with ${best - snap.k} more ${best - snap.k === 1 ? "chunk" : "chunks"} of context per query.`;
    } else {
      out.textContent = `Sent at your k = ${snap.k}; the smallest k that sends it is ${best}.`;
    }
  }

  // Item 6: does the cut move? ---------------------------------------------------------------------
  renderCuts(response, snap) {
    const box = $("cuts");
    const cuts = response.cuts;
    if (!cuts) { box.replaceChildren(); return; }
    const id = snap.ids[cuts.doc];
    const quote = (p) => {
      const a = someWords(this.slice(id, Math.max(0, p - 60), p), 3, true);
      const b = someWords(this.slice(id, p, p + 60), 3, false);
      return `${a} ✂ ${b}`;
    };
    const unit = snap.unitName;
    const zeroOnly = cuts.overlap === 0; // one column: at overlap 0 the two would be the same
    const intro = cell("p", zeroOnly ? `The first cuts of “${snap.titles[cuts.doc]}”, at overlap 0:`
      : `The first cuts of “${snap.titles[cuts.doc]}”, at overlap 0 and at your overlap of ${cuts.overlap} ${unit}:`);
    const t = document.createElement("table");
    t.className = "cuts-table";
    const rows = [];
    const n = Math.max(cuts.at_zero ? cuts.at_zero.length : 0, cuts.at_current.length);
    for (let i = 0; i < n; i++) {
      const tr = document.createElement("tr");
      const z = cuts.at_zero ? cuts.at_zero[i] : undefined, c = cuts.at_current[i];
      tr.append(cell("th", `Cut ${i + 1}`, { scope: "row" }), cell("td", z === undefined ? "–" : quote(z)));
      if (!zeroOnly) tr.append(cell("td", c === undefined ? "–" : quote(c), z !== undefined && z === c ? { "data-same": "true" } : {}));
      rows.push(tr);
    }
    table(t, zeroOnly ? `Where the first chunk boundaries fall in “${snap.titles[cuts.doc]}”, at overlap 0`
      : `Where the first chunk boundaries fall in “${snap.titles[cuts.doc]}”, at overlap 0 and at ${cuts.overlap}`,
    zeroOnly ? ["Cut", "At overlap 0"] : ["Cut", "At overlap 0", `At overlap ${cuts.overlap}`], rows);
    let conclusion;
    if (cuts.at_zero === null) {
      conclusion = "This splitter cannot run at overlap 0 with these settings, so there is nothing to compare.";
    } else if (cuts.overlap === 0) {
      conclusion = "You are at overlap 0: move the overlap to see whether the cuts move.";
    } else if (cuts.moves) {
      conclusion = `This splitter moves its cuts when the overlap changes: only ${cuts.shared} of the ${cuts.total_current} cuts at overlap ${cuts.overlap} are where a cut was at overlap 0. So whether one fact survives a change of overlap is mostly luck; what is not luck is that a fixed window never destroys a fact no longer than the overlap.`;
    } else {
      conclusion = `This splitter keeps its first cuts in place when the overlap changes (${cuts.shared} of ${cuts.total_current} cuts are the same); the overlap only adds shared text around them.`;
    }
    box.replaceChildren(intro, t, cell("p", conclusion, { class: "conclusion", "data-moves": String(cuts.moves) }));
  }

  // Item 7: the overlap sweep -----------------------------------------------------------------------
  requestSweep(last, overlaps) {
    const request = this.deps.mark ? this.deps.mark(last.request) : last.request; // with your reranker's mark
    if (request.chunking.strategy === "stored") { // your index's chunks: one overlap, the stored one
      Object.assign(this, { sweepWanted: null, sweepAsked: null, sweepKey: null, sweepRows: null,
        sweepError: "Your index's chunks have the one overlap they were stored with: press “Simulate from here” to sweep the overlap of the splitter that made them." });
      this.renderSweep();
      return;
    }
    const base = sweepRequest(request, overlaps);
    // The key: the documents by identity (texts can be megabytes), everything else as JSON.
    const { documents, ...rest } = base;
    const key = { docs: documents.map((d) => [d.id, d.title, d.text]),
      settings: JSON.stringify({ ...rest, chunking: { ...rest.chunking, overlap: 0 } }) };
    this.sweepAsked = key; // the sweep the page shows or waits for
    if (sameSweep(key, this.sweepKey) && this.sweepRows) {
      this.sweepWanted = null; // back to what is on screen: forget a sweep asked for since
      if (!this.sweepBusy) this.renderSweep();
      return;
    }
    this.sweepWanted = { key, request: base };
    $("sweep").dataset.state = "computing";
    this.pumpSweep(); // an ask: sent at rest, so a drag never waits behind a sweep in the worker
  }

  async pumpSweep() {
    if (this.sweepBusy || !this.sweepWanted) return;
    const { key, request } = this.sweepWanted;
    this.sweepWanted = null;
    this.sweepBusy = true;
    const reply = await this.call(key, request); // dense and hybrid: with the cosines (dense-client.js)
    this.sweepBusy = false;
    if (this.sweepWanted) { this.pumpSweep(); return; } // a newer one is waiting: show that instead
    if (reply.dropped || !sameSweep(key, this.sweepAsked)) { this.renderSweep(); return; } // the page went back meanwhile
    this.sweepKey = key;
    this.sweepRows = reply.ok ? JSON.parse(reply.result).sweep : null;
    this.sweepError = reply.ok ? null : (reply.error && reply.error.message) || "The sweep failed.";
    this.renderSweep();
    this.renderFix();
  }

  renderSweep() {
    const el = $("sweep-table"), note = $("sweep-note");
    const rows = this.sweepRows;
    $("sweep").dataset.state = rows ? "ready" : "error";
    if (!rows) { el.replaceChildren(); note.textContent = this.sweepError || ""; return; }
    const snap = this.last.snap, which = this.target;
    const trs = rows.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.overlap = String(r.overlap);
      if (r.overlap === snap.overlap) tr.className = "current";
      if (r.error) {
        tr.append(cell("td", `${r.overlap}`), cell("td", r.error, { colspan: "5" }));
        return tr;
      }
      const kind = which ? r[which.key] : null;
      const rank = which ? (which.key === "fact" ? r.fact_best_rank : r.best_rank) : null;
      tr.dataset.sweepVerdict = kind || "";
      tr.append(cell("td", `${r.overlap}`), cell("td", int(r.chunks)), cell("td", int(r.units_stored)),
        cell("td", kind ? KIND_WORDS[kind] + (kind === "ranked_out" && which.key === "span" && r.after_reranking ? " after reranking" : "") : "–", { "data-kind": kind || "" }), cell("td", rank == null ? "none" : `#${rank}`),
        cell("td", int(r.context_tokens)));
      return tr;
    });
    table(el, "The overlap sweep: chunks, storage, verdict and context at each overlap", [`Overlap (${snap.unitName})`, "Chunks", `${snap.unitName[0].toUpperCase()}${snap.unitName.slice(1)} stored`,
      which ? `The ${which.noun}` : "Verdict", "Best rank", "Context tokens"], trs);
    const out = snap.overlapsLeftOut || [], u = snap.unitName;
    const left = out.length ? `Left out ${listNumbers(out)} ${u}: the chunk size (${snap.size} ${u}) cannot take that much overlap; they come back once the size allows.` : "";
    note.textContent = [which ? "" : "Mark an answer or a fact to see its verdict at each overlap.", left].filter(Boolean).join(" ");
  }

  // Item 9: the fix and its price ---------------------------------------------------------------------
  renderFix() {
    const box = $("fix");
    if (!this.last) return;
    const { response, snap, request } = this.last;
    const which = this.target;
    const parts = [];
    const base = response.stats;
    const ex = response.expanded;
    const say = (text, attrs) => parts.push(cell("p", text, attrs));
    if (!which) say("Mark an answer or a fact to see what expansion or overlap would cost to save it.");
    const kindNow = which ? (which.key === "fact" ? response.fact && response.fact.kind : response.verdict.kind) : null;
    if (ex) {
      const how = ex.section ? "each retrieved chunk's whole section" : `${ex.neighbours} neighbouring ${ex.neighbours === 1 ? "chunk" : "chunks"} on each side of each retrieved chunk`;
      const kind = which ? ex[which.key] : null;
      say(`Sending ${how}: the ${which ? which.noun : "answer"} ${kind === "intact" ? "arrives whole" : kind === "not_sent" ? "still does not arrive whole" : "–"}; ` +
        `${int(ex.context_chars)} characters, about ${int(ex.context_tokens)} tokens, ${money(ex.cost)} per query ` +
        `(without expansion: ${int(base.context_tokens)} tokens, ${money(base.cost)}).`, { "data-expanded": kind || "" });
    } else {
      say(`No expansion: the top ${snap.k} chunks, ${int(base.context_tokens)} tokens, ${money(base.cost)} per query. Choose an expansion to see its verdict and price.`);
    }
    if (which && this.sweepRows) {
      const saving = this.sweepRows.find((r) => !r.error && r[which.key] === "intact");
      if (saving) {
        const zero = this.sweepRows.find((r) => !r.error && r.overlap === 0) || null;
        const stored = zero ? ` (${(saving.units_stored / zero.units_stored).toFixed(2)}× the index at overlap 0)` : "";
        say(`The smallest overlap in the sweep that sends it whole: ${saving.overlap} ${snap.unitName}, with ${int(saving.chunks)} chunks and ${int(saving.units_stored)} ${snap.unitName} stored${stored}; ` +
          `${int(saving.context_tokens)} tokens, ${money(saving.cost)} per query.`, { "data-saving-overlap": String(saving.overlap) });
      } else {
        say("No overlap in the sweep sends it whole.", { "data-saving-overlap": "" });
      }
    }
    if (kindNow === "intact") say(`It already arrives whole at these settings (overlap ${request.chunking.overlap}).`);
    box.replaceChildren(...parts);
  }
}

function sameSweep(a, b) {
  return Boolean(a && b) && a.settings === b.settings && a.docs.length === b.docs.length &&
    a.docs.every((d, i) => d[0] === b.docs[i][0] && d[1] === b.docs[i][1] && d[2] === b.docs[i][2]);
}

/** What the panels talk about: the marked fact when there is one, else the marked answer. */
function target({ snap, response }) {
  if (snap.fact && snap.fact.complete && response.fact) {
    return { key: "fact", noun: "fact", whole: "both its name and its value" };
  }
  if (snap.span) return { key: "span", noun: "answer", whole: "the whole answer" };
  return null;
}
