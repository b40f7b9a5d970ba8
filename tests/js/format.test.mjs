// assets/js/format.js: how numbers and lists read on the page.

import test from "node:test";
import assert from "node:assert/strict";

import { cap, chunkList, int, listNumbers, money, plural } from "../../assets/js/format.js";

test("plural picks the word for one and for every other count", () => {
  assert.equal(plural(1, "chunk", "chunks"), "chunk");
  assert.equal(plural(0, "chunk", "chunks"), "chunks");
  assert.equal(plural(2, "chunk", "chunks"), "chunks");
});

test("int groups thousands the en-US way, from numbers and numeric strings", () => {
  assert.equal(int(1234567), "1,234,567");
  assert.equal(int("4200"), "4,200");
  assert.equal(int(999), "999");
  assert.equal(int(1234.5678), "1,234.568");
});

test("cap capitalises the first letter only", () => {
  assert.equal(cap("ranked out"), "Ranked out");
});

test("listNumbers joins with commas and a final 'and'", () => {
  assert.equal(listNumbers([]), "");
  assert.equal(listNumbers([7]), "7");
  assert.equal(listNumbers([4, 5]), "4 and 5");
  assert.equal(listNumbers([1, 2, 3]), "1, 2 and 3");
});

test("chunkList reads chunk numbers as a person would, never as hundreds of numbers", () => {
  assert.equal(chunkList([]), "no chunk");
  assert.equal(chunkList([7]), "chunk 7");
  assert.equal(chunkList([4, 5]), "chunks 4 and 5");
  assert.equal(chunkList([4, 5, 9]), "chunks 4, 5 and 9");
  const run = Array.from({ length: 19 }, (_, i) => 208 + i);
  assert.equal(chunkList(run), "chunks 208–226, 19 of them");
  assert.equal(chunkList([3, 4, 5, 9, 10, 11, 12]), "chunks 3–5 and 9–12, 7 of them");
  assert.equal(chunkList([1, 2, 5, 6]), "chunks 1, 2 and 5, 6"); // runs of two: no count needed
  // past maxRuns runs: a count and the range
  assert.equal(chunkList([1, 3, 5, 7]), "4 chunks between 1 and 7");
  assert.equal(chunkList([1, 3, 5, 7], 4), "chunks 1, 3, 5 and 7");
  const many = Array.from({ length: 1200 }, (_, i) => 2 * i + 1);
  assert.equal(chunkList(many), "1,200 chunks between 1 and 2399");
});

test("money keeps a tiny cost from reading as $0.00: three significant places below a dollar", () => {
  assert.equal(money(0), "$0.00");
  assert.equal(money(1), "$1.00");
  assert.equal(money(12.5), "$12.50");
  assert.equal(money(0.5), "$0.500");
  assert.equal(money(0.0042), "$0.00420");
  assert.equal(money(3e-9), "$0.00000000300");
  assert.equal(money(1e-15), "$0.000000000000"); // at most 12 digits
});
