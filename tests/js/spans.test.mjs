// assets/js/spans.js: trimming a span, the sentence under a click, a mark across edits, the marked text.

import test from "node:test";
import assert from "node:assert/strict";

import { factComplete, followSpan, markedText, partOfSentence, sentenceAround, sentenceAt, trimSpan } from "../../assets/js/spans.js";

const quote = (text, span) => (span ? text.slice(span.start, span.end) : null);

test("trimSpan drops the spaces around a span, and a span of spaces is none", () => {
  const text = "  alpha beta \n";
  assert.deepEqual(trimSpan(text, 0, text.length), { start: 2, end: 12 });
  assert.equal(trimSpan(text, 0, 2), null);
  assert.equal(trimSpan(text, 3, 3), null);
});

test("sentenceAt finds the sentence around an offset, bounded by . ! ? and a space", () => {
  const text = "The harbour opens at dawn. Ships wait outside when fog rolls in! The pilot boat leaves at nine.";
  assert.equal(quote(text, sentenceAt(text, text.indexOf("fog"))), "Ships wait outside when fog rolls in!");
  assert.equal(quote(text, sentenceAt(text, 0)), "The harbour opens at dawn.");
  assert.equal(quote(text, sentenceAt(text, text.length - 1)), "The pilot boat leaves at nine.");
  assert.equal(sentenceAt("   ", 1), null); // nothing but spaces
});

test("a line break inside a paragraph is hard wrapping; a blank line or a heading ends the sentence", () => {
  const wrapped = "Hourly snapshots are kept\nfor 48 hours before compaction merges them. Daily ones stay.";
  assert.equal(quote(wrapped, sentenceAt(wrapped, 3)), "Hourly snapshots are kept\nfor 48 hours before compaction merges them.");
  const blocks = "# Backups\nThe nightly job copies every volume\n\nRestores take minutes";
  assert.equal(quote(blocks, sentenceAt(blocks, 3)), "# Backups");
  assert.equal(quote(blocks, sentenceAt(blocks, blocks.indexOf("nightly"))), "The nightly job copies every volume");
  assert.equal(quote(blocks, sentenceAt(blocks, blocks.indexOf("minutes"))), "Restores take minutes");
  const list = "Steps:\n- open the valve\n- close it";
  assert.equal(quote(list, sentenceAt(list, list.indexOf("valve"))), "- open the valve");
  const cjk = "東京は大きい。大阪も大きい。";
  assert.equal(quote(cjk, sentenceAt(cjk, 8)), "大阪も大きい。");
});

test("followSpan shifts a mark after an edit before it, keeps it after one after it, drops it inside", () => {
  const old = "The pilot boat leaves at nine.";
  const span = { start: 4, end: 14 }; // "pilot boat"
  const before = "Then the pilot boat leaves at nine.";
  assert.deepEqual(followSpan(old, before, span), { start: 9, end: 19 });
  assert.equal(quote(before, followSpan(old, before, span)), "pilot boat");
  assert.deepEqual(followSpan(old, "The pilot boat leaves at ten.", span), span);
  assert.equal(followSpan(old, "The pilot ship leaves at nine.", span), null);
  // typing right before the mark, the caret after the typed text: shifted, not lost
  assert.deepEqual(followSpan(old, "The big pilot boat leaves at nine.", span, 8), { start: 8, end: 18 });
  // typing right after the mark (a letter like its last): the caret says it is after, not inside
  assert.deepEqual(followSpan(old, "The pilot boatt leaves at nine.", span, 15), span);
  assert.equal(followSpan(old, "The pilot boatt leaves at nine.", span), null); // without it, inside
});

test("a fact counts once both its name and value are marked; markedText is that stretch, else the answer", () => {
  const text = "Cargo is weighed on the North Quay, at 40 tonnes.";
  const textOf = () => text;
  const name = { start: text.indexOf("North"), end: text.indexOf("North") + 10 };
  const value = { start: text.indexOf("40"), end: text.indexOf("40") + 9 };
  assert.equal(factComplete({ doc: "d", name, value: null }), false);
  assert.equal(factComplete(null), false);
  const state = { docs: [{ id: "d" }], sel: 0, fact: { doc: "d", name, value }, span: { start: 0, end: 5 } };
  assert.equal(markedText(state, textOf), "North Quay, at 40 tonnes");
  assert.equal(markedText({ ...state, fact: null }, textOf), "Cargo");
  assert.equal(markedText({ ...state, fact: null, span: null }, textOf), "");
});

test("sentenceAround grows a span to its sentences, and partOfSentence says when a span is less", () => {
  const text = "The harbour opens at dawn. Ships wait outside when fog rolls in! The pilot boat leaves at nine.";
  const hit = { start: text.indexOf("fog rolls"), end: text.indexOf("fog rolls") + 9 };
  assert.equal(quote(text, sentenceAround(text, hit.start, hit.end)), "Ships wait outside when fog rolls in!");
  assert.equal(partOfSentence(text, hit), true);
  const across = { start: text.indexOf("dawn"), end: text.indexOf("Ships") + 5 };
  assert.equal(quote(text, sentenceAround(text, across.start, across.end)), "The harbour opens at dawn. Ships wait outside when fog rolls in!");
  const whole = sentenceAt(text, 0);
  assert.equal(partOfSentence(text, whole), false);
});
