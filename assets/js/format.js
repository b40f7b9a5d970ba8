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

/** Dollars with enough digits that a tiny cost does not read as $0.00. */
export function money(v) {
  if (v === 0) return "$0.00";
  const digits = v >= 1 ? 2 : Math.min(12, Math.max(2, 2 - Math.floor(Math.log10(v))));
  return `$${v.toFixed(digits)}`;
}
