// The marks: the answer (a span in one document) and the fact (a name and a value, marked one
// after the other in one document). Marking changes the state and asks for a recompute; the line
// beside the buttons (#mark-info) says what is marked, or what just happened.

import { $ } from "./dom.js";
import { offsetMap } from "./offsets.js";
import { followSpan, partOfSentence, sentenceAround, trimSpan } from "./spans.js";
import { selectIndex, selectedId, textOfDoc, titleOf } from "./state.js";
import { linkNotes } from "./render/messages.js";
import { announce } from "./render/announce.js";

const NOTE_MS = 6000; // how long a note stays before the line shows the mark again

export class Marks {
  /** store: {state}; docInput: the Document box; changed(): recompute and write the URL;
   * sync({withDoc}) and syncList(): show a restructured state; focusAfterRender(doc, at). */
  constructor({ store, docInput, changed, sync, syncList, focusAfterRender }) {
    Object.assign(this, { store, docInput, changed, sync, syncList, focusAfterRender });
    this.timer = 0;
  }

  get state() {
    return this.store.state;
  }

  /** `hit`: the span is a search hit (the verdict then says it marks the hit, not its sentence). */
  set(span, how, hit = false) {
    linkNotes.clear();
    this.state.span = span && { ...span, doc: span.doc ?? selectedId(this.state) };
    this.state.spanHit = hit;
    const part = hit && span && partOfSentence(textOfDoc(this.state, this.state.span.doc), span);
    this.info(part ? `${how.slice(0, -1)}: only the hit, ${(span.end - span.start).toLocaleString("en-US")} characters, not its sentence (“Extend to the sentence” marks that).` : how);
    this.show();
    this.changed();
  }

  /** "Extend to the sentence": the mark grows to the sentence (or sentences) around it. */
  extend() {
    const s = this.state, span = s.span;
    const around = span && sentenceAround(textOfDoc(s, span.doc), span.start, span.end);
    if (around) this.set({ ...around, doc: span.doc }, "Extended the mark to its sentence.");
  }

  clear() {
    this.state.fact = null;
    this.set(null, "Mark cleared.");
  }

  /** What is marked, unless a note is showing. */
  show() {
    const info = $("mark-info"), state = this.state;
    $("extend-mark").hidden = !(state.span && partOfSentence(textOfDoc(state, state.span.doc), state.span));
    if (info.dataset.note) return;
    if (!state.span) { info.textContent = state.fact ? "" : "No answer marked."; return; }
    const doc = state.docs.find((d) => d.id === state.span.doc) || state.docs[state.sel];
    const text = (doc === state.docs[state.sel] ? state.doc : doc.text).slice(state.span.start, state.span.end);
    const where = doc === state.docs[state.sel] ? "" : ` (in “${doc.title}”)`;
    info.textContent = `Marked: “${text.length > 90 ? text.slice(0, 87) + "…" : text}”${where}`;
  }

  /** A note in the mark line for a few seconds, spoken to screen readers. */
  info(note) {
    const info = $("mark-info");
    if (!note) return;
    announce(note);
    info.textContent = note;
    info.dataset.note = "1";
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { delete info.dataset.note; this.show(); }, NOTE_MS);
  }

  /** The Document box's selection, trimmed, or null. */
  selection() {
    const ta = this.docInput;
    return trimSpan(ta.value, ta.selectionStart, ta.selectionEnd);
  }

  markSelection() {
    const span = this.selection();
    if (!span) {
      this.info("Select the answer in the document first, then press the button.");
      return;
    }
    this.set(span, "Marked the selection as the answer.");
  }

  /** A sentence clicked in the picture, which shows the text `doc`: marked only if it is still the current text. */
  markSentence(span, doc) {
    if (doc !== this.state.doc) return;
    const text = doc.slice(span.start, span.end);
    this.set(span, `Marked “${text.length > 90 ? text.slice(0, 87) + "…" : text}” as the answer.`);
  }

  markFactPart(part) {
    const span = this.selection();
    const other = part === "name" ? "value" : "name";
    if (!span) { this.info(`Select the fact's ${part} in the document first, then press the button.`); return; }
    const state = this.state, id = selectedId(state), f = state.fact;
    if (f && f[other] && f.doc !== id) {
      this.info(`The ${other} is marked in “${titleOf(state, f.doc)}”, and a fact's name and value must be in one document: ` +
        `select the ${part} there, or press “Clear mark” and start again here.`);
      return;
    }
    if (f && f[other] && span.start < f[other].end && f[other].start < span.end) {
      this.info(`The ${part} overlaps the marked ${other}: mark them as two separate pieces of text.`);
      return;
    }
    state.fact = { doc: id, name: null, value: null, ...(f && f.doc === id ? f : {}), [part]: span };
    linkNotes.clear();
    this.info(`Marked the selection as the fact's ${part}.`);
    this.changed();
  }

  /** Keep the marks on their text while the selected document is edited from `old` to `neu`;
   * drop a mark an edit hits. */
  followEdit(old, neu, caret) {
    const state = this.state, selId = selectedId(state);
    if (state.span && (state.span.doc ?? selId) === selId) {
      const moved = followSpan(old, neu, state.span, caret);
      if (!moved) this.info("Mark cleared: your edit changed the marked answer. Select it again to mark it.");
      state.span = moved && { ...moved, doc: selId };
    }
    const f = state.fact;
    if (!f || f.doc !== selId) return;
    const name = f.name && followSpan(old, neu, f.name, caret), value = f.value && followSpan(old, neu, f.value, caret);
    if ((f.name && !name) || (f.value && !value)) {
      state.fact = null;
      this.info("Fact cleared: your edit changed its name or value. Mark them again.");
    } else {
      state.fact = { ...f, name, value };
    }
  }

  /** From the audit's list: select the fact's document, mark its name and value, show it in the picture. */
  followFact(f) {
    const state = this.state;
    const i = state.docs.findIndex((d) => d.id === f.doc);
    if (i < 0) { this.info("That document is no longer in the collection: run the audit again."); return; }
    const text = textOfDoc(state, f.doc), map = offsetMap(text);
    const u = ([a, b]) => ({ start: map.toU16(a), end: map.toU16(b) });
    const name = u(f.name), value = u(f.value);
    if (text.slice(name.start, name.end) !== f.name_text || text.slice(value.start, value.end) !== f.value_text) {
      this.info("The document changed since the audit, so the fact is not where it was: run the audit again.");
      return;
    }
    if (i !== state.sel) {
      selectIndex(state, i);
      this.sync({ withDoc: true });
    }
    state.fact = { doc: f.doc, name, value };
    state.span = null;
    this.focusAfterRender(f.doc, f.name[0]);
    linkNotes.clear();
    this.info(`Marked the fact “${f.name_text}” … “${f.value_text}” from the audit.`);
    this.syncList();
    this.changed();
    $("picture-wrap").scrollIntoView({ block: "center" });
    this.docInput.setSelectionRange(Math.min(name.start, value.start), Math.max(name.end, value.end));
  }
}
