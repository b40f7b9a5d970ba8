// Offsets: UTF-16 (browser) <-> code points (Python), with a fast path for texts without pairs.
// The core speaks code points, the browser UTF-16 code units: every offset crosses here, at the
// boundary (in the request, and when a response is drawn).

const SURROGATE = /[\uD800-\uDFFF]/;
const mapCache = new Map(); // text -> map, for the last few texts (one per document of a collection)
const MAP_CACHE_SIZE = 8;

/** {toCp(u16), toU16(cp), cpLength, identity} for `text`; the identity (`identity: true`) when it has
 * no surrogate pairs. */
export function offsetMap(text) {
  if (mapCache.has(text)) return mapCache.get(text);
  let map;
  if (!SURROGATE.test(text)) {
    map = { toCp: (u) => u, toU16: (c) => c, cpLength: text.length, identity: true };
  } else {
    const highs = []; // UTF-16 index of each surrogate pair's first half
    for (let i = 0; i < text.length - 1; i++) {
      const a = text.charCodeAt(i);
      if (a >= 0xd800 && a <= 0xdbff) {
        const b = text.charCodeAt(i + 1);
        if (b >= 0xdc00 && b <= 0xdfff) highs.push(i++);
      }
    }
    const u16 = Int32Array.from(highs);
    const cps = u16.map((u, j) => u - j); // the code-point index of each astral character
    const below = (arr, x) => { // how many entries are < x
      let lo = 0, hi = arr.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (arr[mid] < x) lo = mid + 1; else hi = mid; }
      return lo;
    };
    map = { toCp: (u) => u - below(u16, u), toU16: (c) => c + below(cps, c), cpLength: text.length - highs.length };
  }
  if (mapCache.size >= MAP_CACHE_SIZE) mapCache.delete(mapCache.keys().next().value);
  mapCache.set(text, map);
  return map;
}
