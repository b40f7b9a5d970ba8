// assets/js/question-wire.js: the question set between the page (UTF-16, `refs`) and the core (code
// points, `references`), in requests and in links.

import test from "node:test";
import assert from "node:assert/strict";

import {
  QS_LINK_LIMIT, questionsForRequest, questionsFromLink, questionsFromWire, questionsToLink, refFits, textsOf,
} from "../../assets/js/question-wire.js";

const TEXT = "🙂 Fog closes the harbour. The pilot boat leaves at nine.";
const FOG = { start: TEXT.indexOf("Fog"), end: TEXT.indexOf("Fog") + "Fog closes the harbour.".length };

const page = (questions, extra = {}) => ({
  docs: [{ id: "a", text: TEXT }, { id: "b", text: "stored text" }], sel: 0, doc: TEXT, q: "fog", questions, ...extra,
});

test("textsOf takes the selected document from the Document box", () => {
  const texts = textsOf({ docs: [{ id: "a", text: "old" }, { id: "b", text: "b" }], sel: 0, doc: "edited" });
  assert.equal(texts.get("a"), "edited");
  assert.equal(texts.get("b"), "b");
});

test("refFits: inside its document, non-empty, more than spaces", () => {
  const texts = new Map([["a", "abc   def"]]);
  assert.ok(refFits(texts, { doc: "a", start: 0, end: 3 }));
  assert.ok(!refFits(texts, { doc: "a", start: 3, end: 6 })); // spaces only
  assert.ok(!refFits(texts, { doc: "a", start: 2, end: 2 }));
  assert.ok(!refFits(texts, { doc: "a", start: 5, end: 99 }));
  assert.ok(!refFits(texts, { doc: "gone", start: 0, end: 1 }));
});

test("the request's questions are in code points, and a question with no fitting reference is left out", () => {
  const s = page([
    { id: "1", query: "fog", refs: [{ doc: "a", ...FOG }] },
    { id: "2", query: "gone", refs: [{ doc: "nowhere", start: 0, end: 3 }] },
    { id: "3", query: "both", refs: [{ doc: "a", ...FOG }, { doc: "a", start: 0, end: 999 }] },
  ]);
  assert.deepEqual(questionsForRequest(s), [
    { id: "1", query: "fog", references: [{ doc: "a", start: FOG.start - 1, end: FOG.end - 1 }] },
    { id: "3", query: "both", references: [{ doc: "a", start: FOG.start - 1, end: FOG.end - 1 }] },
  ]);
  assert.deepEqual(questionsForRequest(page([])), []);
});

test("questionsFromWire turns the core's code points back into the page's UTF-16 offsets", () => {
  const texts = textsOf(page([]));
  const wire = [{ id: 7, query: "fog", references: [{ doc: "a", start: FOG.start - 1, end: FOG.end - 1 },
    { doc: "a", start: 5, end: 9999 }, { doc: "x", start: 0, end: 1 }, { doc: "a", start: 1, end: 2 }] }];
  // kept: the first; dropped: past the end, an unknown document, a space
  assert.deepEqual(questionsFromWire(wire, texts), [{ id: "7", query: "fog", refs: [{ doc: "a", ...FOG }] }]);
});

test("a set goes into a link and comes back as it was", () => {
  const s = page([{ id: "1", query: "fog", refs: [{ doc: "a", ...FOG }] }, { id: "2", query: "none", refs: [] }]);
  const link = questionsToLink(s);
  assert.deepEqual(JSON.parse(link), [["1", "fog", [["a", FOG.start - 1, FOG.end - 1]]], ["2", "none", []]]);
  assert.deepEqual(questionsFromLink(link, textsOf(s)), { questions: s.questions, dropped: 0 });
  // a reference that no longer fits its document is dropped and counted
  const shorter = new Map([["a", "🙂 Fog"]]);
  assert.deepEqual(questionsFromLink(link, shorter).dropped, 1);
});

test("a set too long for a link is left out of it, and a link that cannot be read is refused", () => {
  const long = page([{ id: "1", query: "q".repeat(QS_LINK_LIMIT), refs: [] }]);
  assert.equal(questionsToLink(long), null);
  const texts = textsOf(page([]));
  for (const raw of ["{not json", "[1]", '[["1", "q", [["a", 0]]]]', '[["1", "q", []], ["1", "r", []]]']) {
    assert.equal(questionsFromLink(raw, texts), null, raw);
  }
});
