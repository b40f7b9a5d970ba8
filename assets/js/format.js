// How numbers and lists read on the page.

export const plural = (n, one, many) => (n === 1 ? one : many);
// One formatter, made once: Number.prototype.toLocaleString makes one at every call (tens of µs each,
// and a drag formats dozens of numbers). The same output: en-US grouping, up to 3 fraction digits.
const INT = new Intl.NumberFormat("en-US");
export const int = (n) => INT.format(Number(n));
export const cap = (w) => w[0].toUpperCase() + w.slice(1);

/** "1, 2 and 3". */
export function listNumbers(nums) {
  if (nums.length <= 1) return nums.join("");
  return `${nums.slice(0, -1).join(", ")} and ${nums[nums.length - 1]}`;
}

/** Chunk numbers as a person reads them, never as a list of hundreds: "chunk 7", "chunks 4 and 5",
 * "chunks 4, 5 and 9", "chunks 208–226, 19 of them", "chunks 3–5 and 9–12, 7 of them", and past
 * `maxRuns` runs "19 chunks between 208 and 400". `nums`: ascending chunk numbers. */
export function chunkList(nums, maxRuns = 3) {
  const n = nums.length;
  if (n === 0) return "no chunk";
  if (n === 1) return `chunk ${nums[0]}`;
  if (n <= 3) return `chunks ${listNumbers(nums)}`;
  const runs = [];
  for (const x of nums) {
    const last = runs[runs.length - 1];
    if (last && x === last[1] + 1) last[1] = x; else runs.push([x, x]);
  }
  const run = ([a, b]) => (a === b ? String(a) : b === a + 1 ? `${a}, ${b}` : `${a}–${b}`);
  if (runs.length <= maxRuns) {
    const text = `chunks ${listNumbers(runs.map(run))}`;
    return runs.some(([a, b]) => b > a + 1) ? `${text}, ${int(n)} of them` : text;
  }
  return `${int(n)} chunks between ${nums[0]} and ${nums[n - 1]}`;
}

/** Dollars with enough digits that a tiny cost does not read as $0.00. */
export function money(v) {
  if (v === 0) return "$0.00";
  const digits = v >= 1 ? 2 : Math.min(12, Math.max(2, 2 - Math.floor(Math.log10(v))));
  return `$${v.toFixed(digits)}`;
}
