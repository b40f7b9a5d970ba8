// The settings map's axes for the semantic chunkers (SPEC section 12): the strategy's
// registered grid fields (py/ragsim/split/registry.py `grid`), not size and overlap. LangChain's
// SemanticChunker maps its breakpoint threshold amount (rows) against min_chunk_size (columns);
// LlamaIndex's its percentile, Chroma's two their chunk size, each one column (`overlaps: [0]`,
// as the core asks). The core re-cuts every cell from the distances its session already holds, so
// the map embeds nothing (a dense retriever still embeds each cell's chunks).
//
//   semanticAxes(s)  -> {fields, names, words, sizes, overlaps, numbers, one} | null (not semantic)
//   axisValue(request.chunking, field)  -> the value a request has on that axis (0 when not sent)
//   pickAxes(state, grid, a, b)       a map cell clicked: its fields set in the state
//   waitsForVectors(response)         the core still names sentence windows to embed
//   withKeptVectors(semantic, simulate, request)  a worker that lost its session given the kept vectors

import { SPLITTERS, forgetWanted, settle, splitterOf } from "./params.js";

const PERCENTILES = [50, 60, 70, 75, 80, 85, 90, 95, 98, 99];
// A breakpoint threshold amount's sensible values by threshold type: percentiles for the percentile
// and gradient rules, multiples of the spread for the two others (LangChain's defaults 3 and 1.5 among them).
const AMOUNTS = {
  percentile: PERCENTILES, gradient: PERCENTILES,
  standard_deviation: [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5],
  interquartile: [0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3],
};
const MIN_SIZES = [0, 100, 200, 400, 800, 1600]; // characters: LangChain's min_chunk_size (0 = none)
const TOKEN_SIZES = [100, 200, 300, 400, 500, 600, 800, 1000, 1500, 2000]; // Chroma's chunk sizes (400 its default)

/** The axis' label in the map (rows or columns), and its short word in a cell's description. */
function axisNames(sp, field, s) {
  if (field === "breakpoint_threshold_amount") return [`Breakpoint threshold (${s.breakpoint_threshold_type || "percentile"})`, "threshold"];
  if (field === "breakpoint_percentile_threshold") return ["Breakpoint percentile threshold", "percentile"];
  if (field === "min_chunk_size") return ["Min chunk size", "min size"];
  const library = (sp.fields.find((f) => f.name === field) || {}).library;
  if (library === "avg_chunk_size") return ["Average chunk size", "average size"];
  return ["Max chunk size", "max size"];
}

/** The values mapped on `field`: the sensible ones within the registered bounds. */
function axisValues(sp, field, s) {
  const f = sp.fields.find((x) => x.name === field) || {};
  const most = field === "size" ? sp.size_max ?? Infinity : f.max ?? Infinity;
  const list = field === "breakpoint_threshold_amount" ? AMOUNTS[s.breakpoint_threshold_type] || PERCENTILES
    : field === "breakpoint_percentile_threshold" ? PERCENTILES : field === "min_chunk_size" ? MIN_SIZES : TOKEN_SIZES;
  return list.filter((v) => v >= (f.min ?? 0) && v <= most);
}

// A typed grid is kept only where the axis takes it (another strategy's typed values would be refused).
const fits = (list, lo, hi, whole = true) => Array.isArray(list) && list.every((v) => v >= lo && v <= hi && (!whole || Number.isInteger(v)));

/** The map's grid for a semantic strategy, or null for any other splitter. The grid typed in the
 * map's boxes (`s.mapSizes`, `s.mapOverlaps`) is kept where it fits the axes' bounds. */
export function semanticAxes(s) {
  const sp = splitterOf(s);
  if (!sp.embeds || !sp.grid) return null;
  const fields = sp.grid.slice(0, 2), one = fields.length === 1;
  const names = fields.map((f) => axisNames(sp, f, s));
  const first = sp.fields.find((x) => x.name === fields[0]) || {};
  const top = fields[0] === "size" ? sp.size_max ?? Infinity : first.max ?? Infinity;
  const sizes = fits(s.mapSizes, first.min ?? 0, top, !first.number) ? s.mapSizes : axisValues(sp, fields[0], s);
  const overlaps = one ? [0] : fits(s.mapOverlaps, 0, Infinity) ? s.mapOverlaps : axisValues(sp, fields[1], s);
  return {
    fields, one, sizes, overlaps, numbers: Boolean(first.number), min: first.min ?? 0,
    names: names.map((n) => n[0]), words: names.map((n) => n[1]),
  };
}

/** The value a request's chunking has on a map axis: a field the page leaves out (LangChain's
 * min_chunk_size 0 is not sent) counts as 0, as the core cuts it. */
export const axisValue = (chunking, field) => (field ? chunking[field] ?? 0 : 0);

/** A map cell clicked: the state's rows for the grid's fields set to its values (each field's row
 * has the field's name), held to their bounds as a control would. */
export function pickAxes(state, grid, a, b) {
  forgetWanted(state);
  grid.fields.forEach((f, i) => { state[f] = i ? b : a; });
  settle(state);
}

/** Whether a response still waits for sentence windows (or pieces) to be embedded. */
export const waitsForVectors = (response) => Boolean(response && response.semantic_needs && response.semantic_needs.length);

/** A semantic request sent by a panel (the question set, the map): if the worker answers that it
 * lacks vectors the page keeps (its session was replaced), sent once more with them. Nothing is
 * embedded here: vectors the page does not hold are the main computation's to embed. */
export async function withKeptVectors(semantic, simulate, request) {
  const reply = await simulate(request);
  const strategy = request.chunking && SPLITTERS[request.chunking.strategy];
  if (!reply.ok || !strategy || !strategy.embeds) return reply;
  let needs = [];
  try { needs = JSON.parse(reply.result).semantic_needs || []; } catch { return reply; }
  if (!needs.length || !needs.every((n) => semantic.has(n.key))) return reply;
  return simulate(semantic.attach(request, needs));
}
