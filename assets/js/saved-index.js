// Your index as a saved state holds it: a state file is a user's file,
// so every part the page draws from is checked before the page draws it. Chunks that do not fit the
// saved documents leave the index out; a phrase, splitter line or statistics of the wrong kind (a
// `null` among the phrases left the page at "computing" on every render) is left out with a note.
// Pure (no DOM), so Node's test runner checks it (tests/js/saved-index.test.mjs).

import { offsetMap } from "./offsets.js";

const isInt = Number.isInteger;
const isStr = (x) => typeof x === "string";
const isObj = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
const maybe = (ok) => (x) => x == null || ok(x);
const isNum = (x) => typeof x === "number" && Number.isFinite(x);

const STATS = ["chars_min", "chars_median", "chars_max", "overlap_min", "overlap_median", "overlap_max",
  "boundaries_without_overlap"];
const cutOk = (b) => isObj(b) && isStr(b.end_of) && isStr(b.start_of) && isInt(b.at);
const PARTS = { // what index-panel.js reads of each entry (SPEC section 11's shapes)
  phrases: (p) => isObj(p) && isStr(p.text) && isStr(p.verdict) && Array.isArray(p.chunks) && p.chunks.every(isStr)
    && maybe((c) => Array.isArray(c) && c.every(cutOk))(p.cut_by) && maybe(isNum)(p.overlap_needed),
  splitter: (s) => isObj(s) && maybe(isStr)(s.doc) && maybe(isStr)(s.strategy) && maybe(isStr)(s.line)
    && maybe(isInt)(s.reproduced) && maybe(isInt)(s.chunks),
};

/** Your index as a saved state holds it: {index, indexMode} for the state, else null with a note. */
export function readSavedIndex(saved, docs, notes) {
  const index = saved.index;
  if (index == null) return null;
  const lengths = Object.fromEntries(docs.map((d) => [d.id, offsetMap(d.text).cpLength]));
  const r = isObj(index) ? index.result : null;
  const pairOk = (n) => (x) => Array.isArray(x) && x.length === 2 && isInt(x[0]) && isInt(x[1]) && x[0] >= 0 && x[0] < x[1] && x[1] <= n;
  const chunkOk = (c) => isObj(c) && isStr(c.id) && isStr(c.doc) && isStr(c.placement)
    && (c.placement === "unplaced" || (c.doc in lengths && pairOk(lengths[c.doc])([c.start, c.end])));
  const ok = isObj(index) && isStr(index.name) && isObj(index.extents)
    && Object.entries(index.extents).every(([doc, pairs]) => doc in lengths && Array.isArray(pairs) && pairs.every(pairOk(lengths[doc])))
    && isObj(r) && ["chunks", "documents"].every((k) => Array.isArray(r[k])) && r.chunks.every(chunkOk);
  if (!ok) {
    notes.push("The saved chunks of your index do not fit the saved documents, so they are left out; open them again.");
    return null;
  }
  const result = { ...r }, dropped = [];
  for (const [part, entryOk] of Object.entries(PARTS)) {
    const entries = Array.isArray(r[part]) ? r[part] : [];
    result[part] = entries.filter(entryOk);
    if (r[part] !== undefined && (!Array.isArray(r[part]) || result[part].length < entries.length)) dropped.push(part);
  }
  if (r.stats != null && !(isObj(r.stats) && STATS.every((k) => isNum(r.stats[k])))) {
    result.stats = null;
    dropped.push("stats");
  }
  if (dropped.length) {
    notes.push(`The saved ${dropped.join(", ")} of your index are not of the kind the page draws, so they are left out; open your chunks again to check them afresh.`);
  }
  return { index: { name: index.name, extents: index.extents, result, rebuiltAll: Boolean(index.rebuiltAll) },
    indexMode: saved.indexMode === "index" ? "index" : "simulated" };
}
