// assets/js/unit-switch.js: a switch of unit keeps the chunks about as long as they were.

import test from "node:test";
import assert from "node:assert/strict";

import { convertLengths, perChar } from "../../assets/js/unit-switch.js";

const TEXT = "The pilot boat leaves the north quay at nine in the morning."; // 12 words, 60 characters

test("words to characters multiplies by the document's characters per word", () => {
  assert.equal(perChar("words", TEXT), 12 / 60);
  const got = convertLengths({ size: 24, overlap: 6, wanted: {}, overlaps: null }, "words", "chars", TEXT);
  assert.deepEqual(got, { size: 120, overlap: 30, wanted: {}, overlaps: null });
});

test("and back, the sweep list and the held values too; nothing below one character", () => {
  const got = convertLengths({ size: 120, overlap: 30, wanted: { overlap: 130 }, overlaps: [0, 25, 50, 52] }, "chars", "words", TEXT);
  assert.deepEqual(got, { size: 24, overlap: 6, wanted: { overlap: 26 }, overlaps: [0, 5, 10] });
  assert.equal(convertLengths({ size: 1, overlap: 0, wanted: {}, overlaps: null }, "chars", "words", TEXT).size, 1);
});

test("the same unit changes nothing", () => {
  const s = { size: 7, overlap: 2, wanted: {}, overlaps: [1] };
  assert.deepEqual(convertLengths(s, "chars", "chars", TEXT), s);
});
