// The picture's text alternative: the chunks of the document the picture shows, as a table a
// screen reader can browse (number, extent, rank, retrieved, holds the answer). It is drawn only
// while its <details> is open, and after the controls rest, so a drag over thousands of chunks
// costs nothing here.

import { $, cell } from "../dom.js";
import { int } from "../format.js";

const HOLDS = { whole: "whole", part: "part", null: "no" };

export class ChunkTable {
  constructor() {
    this.box = $("chunk-table-box");
    this.last = null;
    this.drawn = null;
    this.box.addEventListener("toggle", () => this.render(this.last));
  }

  /** last: {response, snap}; drawn when the box is open and `last` is new. */
  render(last) {
    this.last = last;
    if (!last || !this.box.open || this.drawn === last) return;
    this.drawn = last;
    const { response, snap } = last;
    const chunks = response.chunks.filter((c) => c.doc === snap.docId);
    const title = snap.titles[snap.ids.indexOf(snap.docId)];
    const marked = snap.marks[snap.docId] ? "the marked answer" : "a marked answer (none is marked in it)";
    const caption = cell("caption", `The ${int(chunks.length)} chunks of “${title}” in document order: where each starts and ends ` +
      `(characters), its rank, whether it is among the top ${snap.k} sent to the model, and whether it holds ${marked}.`);
    const thead = document.createElement("thead");
    const hr = document.createElement("tr");
    for (const h of ["Chunk", "Extent", "Rank", "Retrieved", "Holds the answer"]) hr.append(cell("th", h, { scope: "col" }));
    thead.append(hr);
    const tbody = document.createElement("tbody");
    for (const c of chunks) {
      const tr = document.createElement("tr");
      if (c.retrieved) tr.className = "current";
      tr.append(cell("th", String(c.number), { scope: "row" }), cell("td", `${int(c.start)}–${int(c.end)}`),
        cell("td", `#${c.rank}`), cell("td", c.retrieved ? "yes" : "no"), cell("td", HOLDS[c.holds] || "no"));
      tbody.append(tr);
    }
    $("chunk-table").replaceChildren(caption, thead, tbody);
  }
}
