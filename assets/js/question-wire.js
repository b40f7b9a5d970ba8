// The question set (SPEC section 8) as data: the page keeps it in the state as
//   state.questions = [{id, query, refs: [{doc, start, end}, ...]}, ...]   (UTF-16 offsets)
// and converts it here, at the boundary, to the core's code points: for the request, for the
// import and export helpers (ragsim.question_io), and for links (`qs=`).
//
// A reference follows its document through edits (the set's actions); one that no longer fits (its
// document removed, its text edited away) is left out of the request, and a question left without
// any reference is not scored, rather than the whole simulation refused.
//
// This module imports only offsets.js, so the request builders may import it without a cycle.

import { offsetMap } from "./offsets.js";

export const QS_LINK_LIMIT = 40_000; // longer question sets (as JSON) are left out of links

/** doc id -> its current text (the selected document's from the Document box). */
export const textsOf = (s) => new Map(s.docs.map((d, i) => [d.id, i === s.sel ? s.doc : d.text]));

/** Whether reference `r` (UTF-16) still lies inside its document and holds more than spaces. */
export function refFits(texts, r) {
  const t = texts.get(r.doc);
  return t !== undefined && r.start >= 0 && r.start < r.end && r.end <= t.length && t.slice(r.start, r.end).trim() !== "";
}

/** Reference `r` (UTF-16) in code points. */
export const toCp = (texts, r) => {
  const map = offsetMap(texts.get(r.doc));
  return { doc: r.doc, start: map.toCp(r.start), end: map.toCp(r.end) };
};

/** The request's `questions`, in code points: the scorable questions only (at least one reference
 * that fits); [] when none is. */
export function questionsForRequest(s) {
  if (!s.questions || !s.questions.length) return [];
  const texts = textsOf(s);
  const out = [];
  for (const q of s.questions) {
    const refs = q.refs.filter((r) => refFits(texts, r)).map((r) => toCp(texts, r));
    if (refs.length) out.push({ id: q.id, query: q.query, references: refs });
  }
  return out;
}

/** Questions in the core's shape (code points, `references`) into the page's (UTF-16, `refs`).
 * References whose document is not in `texts` or that do not fit it are dropped. */
export function questionsFromWire(list, texts) {
  return list.map((q) => ({
    id: String(q.id),
    query: String(q.query ?? ""),
    refs: q.references.flatMap((r) => {
      const t = texts.get(r.doc);
      if (t === undefined) return [];
      const map = offsetMap(t);
      if (!(r.start >= 0 && r.start < r.end && r.end <= map.cpLength)) return [];
      const ref = { doc: r.doc, start: map.toU16(r.start), end: map.toU16(r.end) };
      return refFits(texts, ref) ? [ref] : [];
    }),
  }));
}

/** The set as a link parameter: JSON `[[id, query, [[doc, start, end], ...]], ...]` in code points,
 * or null when it is too long for a link. */
export function questionsToLink(s) {
  const texts = textsOf(s);
  const rows = s.questions.map((q) => [q.id, q.query, q.refs.filter((r) => refFits(texts, r)).map((r) => {
    const c = toCp(texts, r);
    return [c.doc, c.start, c.end];
  })]);
  const json = JSON.stringify(rows);
  return json.length <= QS_LINK_LIMIT ? json : null;
}

/** `qs=` back into questions ({questions, dropped}: how many references did not fit), or null when
 * it cannot be read at all. */
export function questionsFromLink(raw, texts) {
  let rows;
  try { rows = JSON.parse(raw); } catch { return null; }
  const ok = Array.isArray(rows) && rows.length <= 2000 && rows.every((q) => Array.isArray(q) && q.length === 3 &&
    typeof q[0] === "string" && typeof q[1] === "string" && Array.isArray(q[2]) &&
    q[2].every((r) => Array.isArray(r) && r.length === 3 && typeof r[0] === "string" && Number.isInteger(r[1]) && Number.isInteger(r[2])));
  if (!ok || new Set(rows.map((q) => q[0])).size !== rows.length) return null;
  const wire = rows.map(([id, query, refs]) => ({ id, query, references: refs.map(([doc, start, end]) => ({ doc, start, end })) }));
  const questions = questionsFromWire(wire, texts);
  const dropped = wire.reduce((n, q) => n + q.references.length, 0) - questions.reduce((n, q) => n + q.refs.length, 0);
  return { questions, dropped };
}

// The answer on screen (the drag's request for it: requests.js mainRequest) ---------------------

const same = (a, b) => a.doc === b.doc && a.start === b.start && a.end === b.end;

/** The marked answer's spans (UTF-16): every span of a loaded multi-span question while the first is
 * still the one marked (`state.spans`), else the marked span alone; [] when nothing is marked. */
export function answerSpans(s) {
  if (!s.span) return [];
  const span = { ...s.span, doc: s.span.doc ?? s.docs[s.sel].id };
  return s.spans && s.spans.length > 1 && same(s.spans[0], span) ? s.spans : [span];
}

export const ANSWER_ID = "answer"; // the drag's one question for a multi-span answer (mainRequest in requests.js)
