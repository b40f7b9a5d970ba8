// assets/js/limits.js: the sizes the page accepts, checked before a request is built.

import test from "node:test";
import assert from "node:assert/strict";

import { MAX_CHARS, MAX_QUERY_CHARS, guardPaste, sizeProblem, totalChars } from "../../assets/js/limits.js";

const state = (texts, { sel = 0, doc = texts[sel], q = "" } = {}) =>
  ({ docs: texts.map((text, i) => ({ id: String(i), text })), sel, doc, q });

test("totalChars counts the selected document as edited, the others as stored", () => {
  assert.equal(totalChars(state(["abc", "de"])), 5);
  assert.equal(totalChars(state(["abc", "de"], { sel: 1, doc: "defgh" })), 8);
});

test("the limits are the core's (py/ragsim/limits.py)", () => {
  assert.equal(MAX_CHARS, 10_000_000);
  assert.equal(MAX_QUERY_CHARS, 100_000);
});

test("sizeProblem is null within the limits and a sentence naming the limit past them", () => {
  assert.equal(sizeProblem(state(["a short text"], { q: "short" })), null);
  const big = "x".repeat(MAX_CHARS + 1);
  assert.equal(sizeProblem(state([big])),
    "The document holds 10,000,001 characters, more than the page's limit of 10,000,000; " +
    "split the text and simulate it in parts.");
  assert.match(sizeProblem(state([big.slice(2), "abc"])), /^The documents hold 10,000,002 characters/);
  assert.equal(sizeProblem(state(["x".repeat(MAX_CHARS)])), null); // the limit itself is allowed
  assert.match(sizeProblem(state(["text"], { q: "q".repeat(MAX_QUERY_CHARS + 1) })),
    /^The question has 100,001 characters, more than the limit of 100,000; ask a shorter question\.$/);
});

/** A stand-in for the Document box: the one listener guardPaste adds, and a selection. */
function fakeInput(selectionStart, selectionEnd) {
  const input = { selectionStart, selectionEnd, listeners: {} };
  input.addEventListener = (kind, f) => { input.listeners[kind] = f; };
  return input;
}

function paste(input, text) {
  const event = { clipboardData: { getData: (t) => (t === "text/plain" ? text : "") }, prevented: false };
  event.preventDefault = () => { event.prevented = true; };
  input.listeners.paste(event);
  return event;
}

test("guardPaste refuses a paste that would take the documents past the limit, before it is inserted", () => {
  const said = [];
  const input = fakeInput(0, 0);
  guardPaste(input, () => MAX_CHARS - 10, (s) => said.push(s));
  assert.equal(paste(input, "x".repeat(10)).prevented, false); // exactly at the limit: inserted
  assert.deepEqual(said, []);
  const refused = paste(input, "x".repeat(11));
  assert.equal(refused.prevented, true);
  assert.equal(said.length, 1);
  assert.match(said[0], /^The paste was not inserted: with it the documents would hold 10,000,001 characters/);
});

test("guardPaste counts the selection the paste replaces", () => {
  const said = [];
  const input = fakeInput(100, 200); // 100 characters selected
  guardPaste(input, () => MAX_CHARS, (s) => said.push(s));
  assert.equal(paste(input, "y".repeat(100)).prevented, false);
  assert.equal(paste(input, "y".repeat(101)).prevented, true);
});

test("guardPaste lets a paste of nothing through, even when the documents are already past the limit", () => {
  const said = [];
  const input = fakeInput(0, 0);
  guardPaste(input, () => MAX_CHARS + 5, (s) => said.push(s));
  assert.equal(paste(input, "").prevented, false);
  assert.equal(paste(input, "z").prevented, true);
  assert.equal(said.length, 1);
});
