// The picture's text alternative: the chunks of the document the picture shows, as a table a
// screen reader can browse (number, extent, rank, retrieved, holds the answer). It is drawn only
// while its <details> is open, and after the controls rest, so a drag over thousands of chunks
// costs nothing here; a book's tens of thousands of chunks are listed around the ones that matter.

import { $, cell } from "../dom.js";
import { int } from "../format.js";

const HOLDS = { whole: "whole", part: "part", null: "no" };
const ALL_UP_TO = 2000; // chunks listed every one; past this, the retrieved, the answer's and their neighbours
const NEIGHBOURS = 2;

/** The positions in [a, b) the table lists: all of them, or for a long document the retrieved
 * chunks and those holding the answer, each with NEIGHBOURS on either side, in document order. */
function listed(cols, a, b) {
  if (b - a <= ALL_UP_TO) return Array.from({ length: b - a }, (_, j) => a + j);
  const keep = new Set();
  const near = (p) => { for (let q = Math.max(a, p - NEIGHBOURS); q < Math.min(b, p + NEIGHBOURS + 1); q++) keep.add(q); };
  cols.top.filter((p) => p >= a && p < b).forEach(near);
  [...cols.holding("whole"), ...cols.holding("part")].filter((p) => p >= a && p < b).forEach(near);
  return [...keep].sort((x, y) => x - y);
}

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
    const cols = response.cols, [a, b] = cols.range(cols.ids.indexOf(snap.docId));
    const positions = listed(cols, a, b);
    const ranks = positions.length > 100 ? cols.ranks() : null; // one sort for every rank, or a count for a few
    const chunks = positions.map((p) => cols.object(p, ranks ? ranks[p] : cols.rank(p)));
    const title = snap.titles[snap.ids.indexOf(snap.docId)];
    const marked = snap.marks[snap.docId] ? "the marked answer" : "a marked answer (none is marked in it)";
    const which = chunks.length === b - a ? `The ${int(chunks.length)} chunks of “${title}”`
      : `${int(chunks.length)} of the ${int(b - a)} chunks of “${title}” (the retrieved ones, those holding the answer and ${NEIGHBOURS} on either side of each)`;
    const caption = cell("caption", `${which} in document order: where each starts and ends ` +
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
        cell("td", c.rank == null ? "—" : `#${c.rank}`), cell("td", c.retrieved ? "yes" : "no"), cell("td", HOLDS[c.holds] || "no"));
      tbody.append(tr);
    }
    $("chunk-table").replaceChildren(caption, thead, tbody);
  }
}
