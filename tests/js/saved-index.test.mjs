// assets/js/saved-index.js: your index as a saved state file holds it, checked before the page draws it.

import test from "node:test";
import assert from "node:assert/strict";

import { readSavedIndex } from "../../assets/js/saved-index.js";

const docs = [{ id: "d", text: "The harbour opens at dawn. Ships wait outside." }];
const chunk = { id: "c1", doc: "d", placement: "exact", start: 0, end: 26, chars: 26 };
const phrase = { text: "opens at dawn", verdict: "present", chunks: ["c1"], cut_by: [], overlap_needed: null };
const splitter = { doc: "d", strategy: "window", line: "fixed windows", reproduced: 1, chunks: 1, moves_with_overlap: false };
const stats = { chars_min: 26, chars_median: 26, chars_max: 26, overlap_min: 0, overlap_median: 0, overlap_max: 0,
  boundaries_without_overlap: 0 };
const saved = (result) => ({ indexMode: "index", index: { name: "c.jsonl", extents: { d: [[0, 26]] },
  result: { chunks: [chunk], documents: [{ id: "d" }], splitter: [splitter], phrases: [phrase], stats, ...result } } });

test("a whole saved index is kept as it was, with no note", () => {
  const notes = [];
  const got = readSavedIndex(saved({}), docs, notes);
  assert.deepEqual(notes, []);
  assert.equal(got.indexMode, "index");
  assert.deepEqual(got.index.result.phrases, [phrase]);
  assert.deepEqual(got.index.result.splitter, [splitter]);
  assert.deepEqual(got.index.result.stats, stats);
});

test("phrases holding null, or null for phrases, are left out with a note, the index kept", () => {
  for (const phrases of [null, [null], [phrase, 7, { text: "x" }], "opens", [{ ...phrase, chunks: [null] }],
    [{ ...phrase, cut_by: [{ at: "3" }] }]]) {
    const notes = [];
    const got = readSavedIndex(saved({ phrases }), docs, notes);
    assert.ok(got, JSON.stringify(phrases));
    const kept = Array.isArray(phrases) ? phrases.filter((p) => p === phrase) : [];
    assert.deepEqual(got.index.result.phrases, kept);
    assert.equal(notes.length, 1);
    assert.match(notes[0], /^The saved phrases of your index are not of the kind the page draws, so they are left out/);
  }
});

test("splitter lines and statistics of the wrong kind are left out and named", () => {
  const notes = [];
  const got = readSavedIndex(saved({ splitter: [null, splitter, { doc: 3 }], stats: { chars_min: "a" } }), docs, notes);
  assert.deepEqual(got.index.result.splitter, [splitter]);
  assert.equal(got.index.result.stats, null);
  assert.match(notes[0], /^The saved splitter, stats of your index/);
});

test("chunks that do not fit the saved documents leave the whole index out", () => {
  for (const result of [{ chunks: [{ ...chunk, end: 999 }] }, { chunks: [null] }, { documents: null }]) {
    const notes = [];
    assert.equal(readSavedIndex(saved(result), docs, notes), null);
    assert.match(notes[0], /do not fit the saved documents/);
  }
  assert.equal(readSavedIndex({ index: "x" }, docs, []), null);
  assert.equal(readSavedIndex({}, docs, []), null);
});
