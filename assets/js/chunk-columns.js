// The chunks of a response as columns (typed arrays over the bytes the worker handed over, or
// built once from SPEC section 6's objects), so a drag over 70,000 chunks builds no object per
// chunk: renderers read `response.cols`; `response.chunks` (the objects) is built only when read.
//
//   const cols = response.cols;
//   for (let p = a; p < b; p++) cols.start[p] ...       // [a, b) = cols.range(docIndex)
//   cols.top            // retrieved positions (0-based), best rank first
//   cols.rank(p), cols.retrieved(p), cols.holds(p)      // one chunk; rank(p) is O(1) for the top and
//                                                       // the chunks holding the span or fact
//   cols.object(p)      // SPEC section 6's object for one chunk (the detail box, the table)
//   cols.partial        // true when the drag asked for the top k only ("scores": "top", docs/wire.md):
//                       // scores and ranks known for the top k and the ranked chunks, null elsewhere,
//                       // until cols.complete(fullColumns) (the Computer's completeScores, once the controls rest)
//
// The bytes' layout is docs/wire.md (ragsim.encode.chunk_bytes).

const VIEWS = { f64: Float64Array, i32: Int32Array };

export class ChunkColumns {
  /** From the binary wire: `meta` is the response's `chunk_bytes`, `buffer` the bytes, `counts`
   * each document's number of chunks (the response's `documents[].chunks`). */
  static fromBytes(meta, buffer, counts) {
    const n = meta.count;
    const view = (name) => {
      const c = meta.columns[name];
      return c ? new VIEWS[c[0]](buffer, c[1], n) : null;
    };
    return new ChunkColumns({
      ids: meta.ids, counts, score: view("score"), start: view("start"), end: view("end"), units: view("units"),
      readEnd: view("read_end"), top: meta.top, holds: meta.holds, ranks: meta.ranks, scores: meta.scores,
    });
  }

  /** From SPEC section 6's objects (a response sent with `chunks`), with the documents' `ids`. */
  static fromObjects(chunks, ids) {
    const n = chunks.length, col = (T, f) => T.from(chunks, f);
    const held = {}, ranks = {};
    chunks.forEach((c, p) => { if (c.holds) { held[p] = c.holds; ranks[p] = c.rank; } });
    const top = chunks.map((c, p) => p).filter((p) => chunks[p].retrieved).sort((a, b) => chunks[a].rank - chunks[b].rank);
    return new ChunkColumns({
      ids, counts: ids.map((id) => chunks.filter((c) => c.doc === id).length), score: col(Float64Array, (c) => c.score),
      start: col(Int32Array, (c) => c.start), end: col(Int32Array, (c) => c.end), units: col(Int32Array, (c) => c.units),
      readEnd: n && "read_end" in chunks[0] ? col(Int32Array, (c) => (c.read_end == null ? -1 : c.read_end)) : null,
      top, holds: held, ranks,
    });
  }

  constructor({ ids, counts, score, start, end, units, readEnd, top, holds, ranks, scores }) {
    Object.assign(this, { ids, score, start, end, units, readEnd, top });
    // without the score column: the scores the core sent (the top k's and the ranked chunks'), by position
    this.scoreAt = score ? null : new Map(Object.entries(scores || {}).map(([p, v]) => [Number(p), v]));
    this.length = start.length;
    this.holdsAt = holds || {}; // position (as a string) -> "whole" | "part"
    this.known = new Map(Object.entries(ranks || {}).map(([p, r]) => [Number(p), r]));
    top.forEach((p, i) => this.known.set(p, i + 1));
    this.topSet = new Set(top);
    // Chunks are in document order: document i's are first[i] .. first[i + 1] - 1.
    this.first = new Int32Array(ids.length + 1);
    counts.forEach((k, i) => { this.first[i + 1] = this.first[i] + k; });
    this.shared = null; // overlap_prev, made on first use
  }

  /** The index of the document of position `p`. */
  docOf(p) {
    let lo = 0, hi = this.ids.length - 1; // the last document whose first chunk is at or before p
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (this.first[mid] <= p) lo = mid; else hi = mid - 1; }
    return lo;
  }

  /** Per position, the characters shared with the previous chunk of its document (the core's
   * overlap_prev: max(0, previous end - start)), -1 for a document's first chunk. */
  get overlap() {
    if (this.shared) return this.shared;
    const n = this.length, out = new Int32Array(n), { start, end, first } = this;
    for (let p = 1; p < n; p++) out[p] = Math.max(0, end[p - 1] - start[p]);
    for (let i = 0; i < this.ids.length; i++) if (first[i] < first[i + 1]) out[first[i]] = -1;
    if (n) out[0] = -1;
    this.shared = out;
    return out;
  }

  /** [a, b): the positions of document `i`'s chunks (empty for -1 or a document without any). */
  range(i) {
    if (i < 0 || i >= this.ids.length) return [0, 0];
    return [this.first[i], this.first[i + 1]];
  }

  retrieved(p) { return this.topSet.has(p); }

  /** True while only the top k's and the ranked chunks' scores are known. */
  get partial() { return !this.score; }

  /** Chunk `p`'s score, or null when the drag did not ask for it. */
  scoreOf(p) { return this.score ? this.score[p] : this.scoreAt.get(p) ?? null; }

  /** Take every score from the same result's full columns (the same bits the core sent for the top). */
  complete(full) {
    if (!full || !full.score || full.length !== this.length) return false;
    this.score = full.score;
    this.scoreAt = null;
    return true;
  }

  holds(p) { return this.holdsAt[p] ?? null; }

  /** 1-based rank: the core's for the top and the chunks holding the span or fact; any other from
   * the scores as the core ranks (best score first, ties by position). */
  rank(p) {
    const known = this.allRanks ? this.allRanks[p] : this.known.get(p);
    if (known !== undefined) return known;
    if (!this.score) return null; // not known until the scores are complete
    const s = this.score[p], score = this.score;
    let r = 1;
    for (let q = 0; q < score.length; q++) if (score[q] > s || (score[q] === s && q < p)) r++;
    this.known.set(p, r);
    return r;
  }

  /** SPEC section 6's object for position `p` (with `rank` when the caller knows it). */
  object(p, rank = this.rank(p)) {
    const o = this.overlap[p];
    const c = {
      doc: this.ids[this.docOf(p)], number: p + 1, start: this.start[p], end: this.end[p], units: this.units[p],
      score: this.scoreOf(p), rank, retrieved: this.retrieved(p), holds: this.holds(p),
      overlap_prev: o < 0 ? null : o,
    };
    if (this.readEnd) { const e = this.readEnd[p]; c.read_end = e < 0 ? null : e; c.truncated = e >= 0; } // dense, hybrid
    return c;
  }

  /** Every chunk's rank (by position), from one sort of the scores; kept once made. */
  ranks() {
    if (this.allRanks) return this.allRanks;
    if (!this.score) return null; // partial: each known rank through rank(p)
    const n = this.length, score = this.score, order = new Int32Array(n);
    for (let p = 0; p < n; p++) order[p] = p;
    order.sort((a, b) => (score[b] - score[a]) || (a - b));
    const rank = new Int32Array(n);
    for (let i = 0; i < n; i++) rank[order[i]] = i + 1;
    for (const [p, r] of this.known) rank[p] = r;
    this.allRanks = rank;
    return rank;
  }

  /** Every chunk's object, in position order. */
  objects() {
    const rank = this.ranks();
    return Array.from({ length: this.length }, (_, p) => this.object(p, rank ? rank[p] : this.rank(p)));
  }

  /** The positions of the chunks holding the span, "whole" or "part", in position order. */
  holding(kind) {
    return Object.entries(this.holdsAt).filter(([, h]) => h === kind).map(([p]) => Number(p)).sort((a, b) => a - b);
  }
}

/** The response with its chunks as `cols` (not enumerable) and `chunks` built on first read. */
export function withColumns(response, buffer) {
  let cols;
  if (response.chunk_bytes && buffer) {
    cols = ChunkColumns.fromBytes(response.chunk_bytes, buffer, response.documents.map((d) => d.chunks));
    delete response.chunk_bytes;
  } else if (response.chunks) {
    cols = ChunkColumns.fromObjects(response.chunks, (response.documents || []).map((d) => d.id));
    return Object.defineProperty(response, "cols", { value: cols, enumerable: false });
  } else {
    return response;
  }
  let chunks = null;
  Object.defineProperty(response, "cols", { value: cols, enumerable: false });
  Object.defineProperty(response, "chunks", {
    get: () => (chunks ??= cols.objects()), enumerable: true, configurable: true,
  });
  return response;
}
