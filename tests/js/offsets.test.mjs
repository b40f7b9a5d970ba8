// assets/js/offsets.js: UTF-16 offsets (the browser's) to code points (the core's) and back.

import test from "node:test";
import assert from "node:assert/strict";

import { offsetMap } from "../../assets/js/offsets.js";

/** The reference: code points counted one by one (a string iterates by code point). */
function codePointsBefore(text, u16) {
  return [...text.slice(0, u16)].length;
}

test("a text without surrogate pairs maps every offset to itself", () => {
  const text = "Ünïcödé façade, 東京 and ΑΘΗΝΑ";
  const map = offsetMap(text);
  assert.equal(map.identity, true);
  assert.equal(map.cpLength, text.length);
  assert.equal(map.toCp(7), 7);
  assert.equal(map.toU16(7), 7);
});

test("an emoji is two UTF-16 units and one code point", () => {
  const text = "🙂 The pilot boat leaves at nine.";
  const map = offsetMap(text);
  assert.ok(!map.identity);
  assert.equal(map.cpLength, text.length - 1);
  const pilot = text.indexOf("pilot"); // 7 in UTF-16, 6 in code points
  assert.equal(pilot, 7);
  assert.equal(map.toCp(pilot), 6);
  assert.equal(map.toCp(1), 0); // inside the pair: the emoji's own code point
  assert.equal(map.toU16(6), pilot);
  assert.equal(map.toCp(0), 0);
  assert.equal(map.toCp(text.length), map.cpLength);
});

test("every code-point boundary round-trips and agrees with counting code points", () => {
  const text = "a😀b𝄞c\ud800d 😀😀 e" + "x".repeat(50) + "🙂";  // a lone surrogate counts as one
  const map = offsetMap(text);
  assert.equal(map.cpLength, [...text].length);
  let u16 = 0;
  for (const ch of [...text, ""]) {
    const cp = codePointsBefore(text, u16);
    assert.equal(map.toCp(u16), cp, `toCp(${u16})`);
    assert.equal(map.toU16(cp), u16, `toU16(${cp})`);
    u16 += ch.length;
  }
});

test("the same text gives the same map (cached), another text its own", () => {
  const a = offsetMap("x🙂y");
  assert.equal(offsetMap("x🙂y"), a);
  assert.notEqual(offsetMap("y🙂x"), a);
});
