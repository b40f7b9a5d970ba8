// A switch of the unit (words, characters, tokens) keeps the chunks about as long as they were: the
// size, the overlap, the values a smaller size holds down and a typed sweep list are converted by the
// document's own ratio of units, instead of keeping "24" (24 words became 24 characters). Pure.

// Characters per token for English text with cl100k/o200k (about four); the page converts before any
// tokenizer is loaded, and the core counts the real tokens once it is.
const CHARS_PER_TOKEN = 4;

/** Units of `unit` per character of `text`: words by runs of non-space, tokens about a quarter. */
export function perChar(unit, text) {
  const chars = Math.max(1, (text || "").length);
  if (unit === "chars") return 1;
  if (unit === "tokens") return 1 / CHARS_PER_TOKEN;
  const words = ((text || "").match(/\S+/g) || []).length;
  return words ? words / chars : 1 / 6; // an empty document: about six characters a word
}

/** The setting's lengths from unit `from` to unit `to` over `text`: {size, overlap, wanted, overlaps}. */
export function convertLengths({ size, overlap, wanted, overlaps }, from, to, text) {
  if (from === to) return { size, overlap, wanted, overlaps };
  const factor = perChar(to, text) / perChar(from, text);
  const length = (n) => Math.max(1, Math.round(n * factor));
  const gap = (n) => Math.max(0, Math.round(n * factor));
  const out = { size: length(size), overlap: gap(overlap), wanted: {}, overlaps };
  for (const [name, value] of Object.entries(wanted || {})) {
    out.wanted[name] = name === "size" ? length(value) : name === "overlap" ? gap(value) : value;
  }
  if (Array.isArray(overlaps)) out.overlaps = [...new Set(overlaps.map(gap))];
  return out;
}
