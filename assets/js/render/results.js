// Everything drawn from one response, in order: the verdict and the picture first (what a drag
// must repaint at once), then the numbers, the context, the collection's lanes and counts, and,
// once the page rests (asks.js), the investigation panels. Each renderer is a function of the response
// and the snapshot taken when its request was sent; none reads a control or the state.
//
// A new panel: a module in this folder with render(last) (last = {request, response, snap, ms}; in
// ../panels/ when it owns inputs or asks the worker itself),
// called from render() below, or from renderPanels() when it may wait until a drag stops.

import { $ } from "../dom.js";
import { int, plural } from "../format.js";
import { renderQuestion, renderVerdict } from "./verdict.js";
import { renderOverlapNotice, renderStats } from "./stats.js";
import { renderContext } from "./context.js";
import { lanes, lanesFrom } from "./lanes.js";
import { ChunkTable } from "./chunk-table.js";
import { announceWhenRested } from "./announce.js";
import { mark } from "../drag-timing.js";
import { codeRequest } from "../requests.js";

export class Results {
  /** picture: the chunk picture; asks: the scheduler of work at rest, whose rest draws the panels.
   * The panels (investigate, audit, code) are set once the worker runs. */
  constructor(picture, asks) {
    this.picture = picture;
    this.asks = asks;
    this.panelsFor = null; // the result whose panels wait for the rest
    this.investigate = null;
    this.audit = null;
    this.code = null;
    this.embed = false; // the embedded page shows the verdict, the picture and the sliders only
    this.pendingFocus = null; // {doc, at}: the chunk to focus in the picture after the next render
    this.table = new ChunkTable(); // the picture as a table, for screen readers
    this.semantic = null; // the semantic chunkers' curve and embedding progress (set by the page root)
    this.complete = null; // (last) -> a promise, true once a pruned drag's scores are all there (the Computer)
  }

  render(last) {
    this.latest = last;
    const { response, snap, ms } = last;
    renderVerdict(response, snap);
    if (this.embed) renderQuestion(last.request.query, snap);
    mark("verdict");
    this.picture.setData(response, snap);
    if (this.index) this.index.render(last); // your index's panel (nothing without one)
    if (this.semantic) this.semantic.render(last); // a semantic chunker's curve (hidden for the others)
    mark("picture");
    renderOverlapNotice(response, snap);
    renderStats(response, snap, ms);
    mark("stats");
    renderContext(response, snap);
    mark("context");
    renderDocCounts(response, snap);
    lanes.draw(lanesFrom(response, snap));
    mark("lanes");
    this.renderPanels(last);
    mark("panels");
    const focus = this.pendingFocus;
    if (focus && focus.doc === snap.docId) {
      this.pendingFocus = null;
      this.picture.focusAt(focus.at);
    }
    if (!this.embed && this.code && snap.stored) {
      this.code.none("Your index's chunks were made by your own pipeline, so there is no splitter code to show: press “Simulate from here” for the code of the splitter that makes them.");
    } else if (!this.embed && this.code) {
      this.code.show(codeRequest(last.request, response.rerank));
    }
    mark("code");
  }

  /** The fact verdict at once; the panels below the picture once the page rests (no move and no
   * drag in flight: asks.js), so a drag repaints the verdict and the picture without waiting for
   * their layout, and the panels' own worker calls (the sweep, the audit) never queue between its moves. */
  renderPanels(last) {
    if (this.investigate) this.investigate.renderVerdict(last);
    const fact = $("fact-verdict");
    announceWhenRested("fact", fact.hidden ? "" : `${$("fact-headline").textContent}. ${$("fact-text").textContent}`);
    const waiting = this.panelsFor !== null;
    this.panelsFor = last;
    if (!waiting) this.asks.rest().then(() => { const now = this.panelsFor; this.panelsFor = null; if (now === this.latest) this.panelsAtRest(now); });
  }

  /** The panels' own questions, asked now (not on every drag: compute.js); drawn only while this
   * result is still the newest, so a late reply never paints over a newer result. */
  panelsAtRest(last) {
    const filled = this.investigate && !this.embed ? this.investigate.fill(last) : null;
    // A pruned drag's missing scores (the Computer's completeScores): the table shows every rank.
    // The panels' request brings them when there is one, so the worker moves once, not twice.
    const scored = (filled || Promise.resolve()).then(() => (this.complete ? this.complete(last) : true));
    scored.then(() => { if (this.latest === last) this.table.render(last); });
    if (this.audit) this.audit.check(last.request);
    if (filled) Promise.all([filled, scored]).then(() => { if (this.latest === last) this.investigate.render(last, last.snap.overlaps); });
  }

  /** After the next response for document `doc`: focus the chunk at code point `at`. */
  focusAfterRender(doc, at) {
    this.pendingFocus = { doc, at };
  }
}

/** Each document's row in the list: its chunks, and the ranks of those retrieved. */
function renderDocCounts(response, snap) {
  const cols = response.cols;
  const perDoc = new Map(snap.ids.map((id) => {
    const [a, b] = cols.range(cols.ids.indexOf(id));
    return [id, { chunks: b - a, ranks: [] }];
  }));
  cols.top.forEach((p, i) => perDoc.get(cols.ids[cols.docOf(p)])?.ranks.push(i + 1));
  for (const li of $("doc-list").children) {
    const d = perDoc.get(li.dataset.doc);
    if (!d) continue;
    const ranks = d.ranks.sort((a, b) => a - b).map((r) => `#${r}`).join(" ");
    li.querySelector(".doc-meta").textContent = `${int(d.chunks)} ${plural(d.chunks, "chunk", "chunks")}${ranks ? ` · retrieved ${ranks}` : ""}`;
  }
}
