// The threshold of a semantic chunker's curve (SPEC section 12), as the page drags it: a
// line at distance t becomes the field the library takes (a percentile, a number of standard
// deviations or of interquartile ranges), and the cuts it would make are previewed until the
// worker's answer comes. Pure: no DOM. The worker's answer (the core's own rule, strict `>`, with
// min_chunk_size's merging) is what is shown once it arrives.
//
//   const rule = ruleOf(strategy, chunking);     // null: the line is not the strategy's to drag
//   rule.amount(curve, t)  -> the field's value whose threshold is (about) t
//   previewCuts(curve, t)  -> the offsets where a cut would be, by the bare rule

/** numpy's percentile of sorted `s` at q (linear interpolation, as np.percentile's default). */
export function percentileOf(s, q) {
  if (!s.length) return NaN;
  const at = (s.length - 1) * (q / 100), i = Math.floor(at), w = at - i;
  if (i + 1 >= s.length) return s[s.length - 1];
  return w >= 0.5 ? s[i + 1] - (s[i + 1] - s[i]) * (1 - w) : s[i] + (s[i + 1] - s[i]) * w;
}

/** The q in [0, 100] whose percentile of `values` is t (the inverse of percentileOf, clamped). */
export function percentileRank(values, t) {
  const s = sorted(values), n = s.length;
  if (n < 2 || t <= s[0]) return 0;
  if (t >= s[n - 1]) return 100;
  let lo = 0, hi = n - 1; // largest i with s[i] <= t
  while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (s[mid] <= t) lo = mid; else hi = mid; }
  const frac = s[hi] > s[lo] ? (t - s[lo]) / (s[hi] - s[lo]) : 0;
  return (100 * (lo + frac)) / (n - 1);
}

const mean = (v) => v.reduce((a, b) => a + b, 0) / (v.length || 1);
const std = (v) => { const m = mean(v); return Math.sqrt(mean(v.map((x) => (x - m) ** 2))); };
const round2 = (x) => Math.round(x * 100) / 100;
// The values sorted, once per array: a key's curve is one array for every move (semantic-client.js
// keeps it), so a drag sorts its 6,000 distances once, not at every step.
const SORTED = new WeakMap();
function sorted(v) {
  let s = SORTED.get(v);
  if (!s || s.length !== v.length) { s = Float64Array.from(v).sort(); SORTED.set(v, s); }
  return s;
}

// LangChain's four rules (langchain-experimental 0.4.2 SemanticChunker._calculate_breakpoint_threshold)
// and LlamaIndex's percentile: the field a drag sets and how a line at t maps back to it.
const RULES = {
  percentile: { field: "breakpoint_threshold_amount", amount: (v, t) => round2(percentileRank(v, t)), words: (a) => `the ${ordinal(a)} percentile` },
  gradient: { field: "breakpoint_threshold_amount", amount: (v, t) => round2(percentileRank(v, t)), words: (a) => `the ${ordinal(a)} percentile of the gradient` },
  standard_deviation: { field: "breakpoint_threshold_amount", amount: (v, t) => { const s = std(v); return s ? round2((t - mean(v)) / s) : 0; },
    words: (a) => `mean + ${a} standard deviations` },
  interquartile: { field: "breakpoint_threshold_amount", amount: (v, t) => {
    const s = sorted(v), iqr = percentileOf(s, 75) - percentileOf(s, 25);
    return iqr ? round2((t - mean(v)) / iqr) : 0;
  }, words: (a) => `mean + ${a} interquartile ranges` },
  llamaindex: { field: "breakpoint_percentile_threshold", amount: (v, t) => Math.round(percentileRank(v, t)), words: (a) => `the ${ordinal(a)} percentile` },
};

/** The drag rule of a chunking, or null where the line is not a setting (Chroma's two chunkers, a
 * LangChain number_of_chunks): {field, amount(curve, t), words(amount), compared(curve)}. */
export function ruleOf(chunking) {
  const strategy = chunking && chunking.strategy;
  let rule = null;
  if (strategy === "llamaindex-semantic") rule = RULES.llamaindex;
  else if (strategy === "langchain-semantic" && !chunking.number_of_chunks) rule = RULES[chunking.breakpoint_threshold_type || "percentile"];
  if (!rule) return null;
  return { ...rule, amount: (curve, t) => rule.amount(compared(curve), t) };
}

/** The values the line is compared with: the gradient for LangChain's gradient rule, else the distances. */
export const compared = (curve) => curve.gradient || curve.distances;

/** The offsets where the bare rule would cut with the line at t: after each value strictly above it. */
export function previewCuts(curve, t) {
  const v = compared(curve), out = [];
  for (let i = 0; i < v.length; i++) if (v[i] > t) out.push(curve.positions[i]);
  return out;
}

function ordinal(x) {
  const n = Number(x), whole = Number.isInteger(n) ? n : null;
  if (whole === null) return `${n}th`;
  const ten = whole % 10, hundred = whole % 100;
  return `${whole}${ten === 1 && hundred !== 11 ? "st" : ten === 2 && hundred !== 12 ? "nd" : ten === 3 && hundred !== 13 ? "rd" : "th"}`;
}
