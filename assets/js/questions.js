// The question set on the page: the state `state.questions` and what a person does with
// it. "Add to question set" makes the marked answer and the Question box a question; "Add another
// span to this answer" adds the marked answer as one more place the last question needs. Each
// question in the list can be clicked (its query loaded and all its spans marked), edited (its
// query) and removed. Import reads our JSON or Chroma's CSV (ragsim.question_io in the worker: bad
// rows are named and skipped, the rest kept); export writes either.
//
// This module changes the state and draws the list; the verdicts, the table and the summary are
// drawn from each response by render/question-set.js. References are kept in UTF-16 like the
// marked answer and follow their document through edits.

import { $, cell } from "./dom.js";
import { workerMessage } from "./worker-client.js";
import { plural } from "./format.js";
import { followSpan, trimSpan } from "./spans.js";
import { selectIndex, selectedId, titleOf } from "./state.js";
import { questionsForRequest, questionsFromWire, refFits, textsOf } from "./question-wire.js";

const SHOW_CHARS = 70; // a span is quoted this long in the list
const MAX_FILE = 20_000_000; // bytes of a question-set file

const quote = (t) => `“${t.length > SHOW_CHARS ? `${t.slice(0, SHOW_CHARS - 1)}…` : t}”`;

/** The next free id: "1", "2", ... */
function nextId(questions) {
  const used = new Set(questions.map((q) => q.id));
  let n = questions.length + 1;
  while (used.has(String(n))) n++;
  return String(n);
}

export class QuestionSet {
  /** store: {state}; changed(): recompute and write the URL; sync({withDoc}), syncList(): show a
   * restructured state; info(note): the mark line; send(message): the worker (import, export). */
  constructor({ store, changed, sync, syncList, info, send }) {
    Object.assign(this, { store, changed, sync, syncList, info, send });
    this.active = null; // the id of the question "Add another span" adds to
    $("add-question").addEventListener("click", () => this.add());
    $("add-span").addEventListener("click", () => this.addSpan());
    $("import-questions").addEventListener("change", (e) => { const f = e.target.files[0]; e.target.value = ""; if (f) this.importFile(f); });
    $("export-json").addEventListener("click", () => this.exportAs("json"));
    $("export-csv").addEventListener("click", () => this.exportAs("csv"));
    $("clear-questions").addEventListener("click", () => this.clearAll());
    $("map-on").addEventListener("change", (e) => { this.state.map = e.target.checked; this.changed(); });
  }

  get state() {
    return this.store.state;
  }

  /** The marked answer and the Question box as a new question. */
  add() {
    const s = this.state;
    if (!s.span) { this.info("Mark the answer in the document first, then add it to the question set."); return; }
    if (!s.q.trim()) { this.info("Type the question first: a question set scores each answer against its question."); return; }
    const ref = { doc: s.span.doc ?? selectedId(s), start: s.span.start, end: s.span.end };
    const same = s.questions.find((q) => q.query === s.q && q.refs.length === 1 && sameRef(q.refs[0], ref));
    if (same) { this.info(`That question and answer are already question ${same.id}.`); return; }
    const q = { id: nextId(s.questions), query: s.q, refs: [ref] };
    s.questions = [...s.questions, q];
    this.active = q.id;
    this.info(`Added question ${q.id}. If its answer needs a second place, mark it and press “Add another span to this answer”.`);
    this.draw();
    this.changed();
  }

  /** The marked answer as one more span of the last question added or clicked. */
  addSpan() {
    const s = this.state;
    const q = s.questions.find((x) => x.id === this.active) || s.questions.at(-1);
    if (!q) { this.info("Add a question first; then mark the second place its answer needs and press this button."); return; }
    if (!s.span) { this.info(`Mark the other place question ${q.id}'s answer needs, then press the button.`); return; }
    const ref = { doc: s.span.doc ?? selectedId(s), start: s.span.start, end: s.span.end };
    if (q.refs.some((r) => sameRef(r, ref))) { this.info(`Question ${q.id} already has that span.`); return; }
    s.questions = s.questions.map((x) => (x === q ? { ...x, refs: [...x.refs, ref] } : x));
    this.active = q.id;
    this.info(`Question ${q.id}'s answer now needs ${q.refs.length + 1} places; it is intact only when every one reaches the model whole.`);
    this.draw();
    this.changed();
  }

  remove(id) {
    const s = this.state;
    s.questions = s.questions.filter((q) => q.id !== id);
    if (this.active === id) this.active = null;
    this.info(`Removed question ${id}.`);
    this.draw();
    this.changed();
  }

  clearAll() {
    if (!this.state.questions.length) return;
    this.state.questions = [];
    this.active = null;
    this.info("The question set is empty.");
    this.draw();
    this.changed();
  }

  edit(id, query) {
    const s = this.state;
    s.questions = s.questions.map((q) => (q.id === id ? { ...q, query } : q));
    this.changed();
  }

  /** A question clicked: its query into the Question box and every span of its answer marked
   * (`state.spans`; the picture draws a band for each, and the verdict is the core's question
   * verdict: intact only when every span is); the first span's document selected and that span
   * selected in the Document box. */
  load(id) {
    const s = this.state;
    const q = s.questions.find((x) => x.id === id);
    if (!q) return;
    const texts = textsOf(s);
    const refs = q.refs.filter((r) => refFits(texts, r));
    const ref = refs[0];
    this.active = id;
    s.q = q.query;
    if (ref) {
      const i = s.docs.findIndex((d) => d.id === ref.doc);
      if (i !== s.sel) selectIndex(s, i);
      s.span = { ...ref };
      s.spans = refs.length > 1 ? refs.map((r) => ({ ...r })) : [];
    }
    this.sync({ withDoc: true });
    this.syncList();
    const more = refs.length > 1 ? ` (all ${refs.length} spans of its answer marked)` : "";
    this.info(ref ? `Loaded question ${id}${more}.` : `Loaded question ${id}; none of its spans fits its document any more.`);
    this.draw();
    this.changed();
    if (ref) {
      const area = $("param-doc");
      if (area) area.setSelectionRange(ref.start, ref.end);
    }
  }

  /** Keep the references in the selected document on their text while it is edited; a reference an
   * edit hits is dropped (a question left without any is kept, unscored, until removed). */
  followEdit(old, neu, caret) {
    const s = this.state, id = selectedId(s);
    let hit = 0;
    s.questions = s.questions.map((q) => {
      if (!q.refs.some((r) => r.doc === id)) return q;
      const refs = q.refs.flatMap((r) => {
        if (r.doc !== id) return [r];
        const moved = followSpan(old, neu, r, caret);
        const trimmed = moved && trimSpan(neu, moved.start, moved.end);
        if (!trimmed) hit++;
        return trimmed ? [{ doc: id, ...trimmed }] : [];
      });
      return { ...q, refs };
    });
    // The spans of a loaded multi-span answer follow too; one an edit hits leaves the marked span alone.
    const spans = (s.spans || []).map((r) => {
      if (r.doc !== id) return r;
      const moved = followSpan(old, neu, r, caret);
      return moved && { doc: id, ...moved };
    });
    s.spans = spans.every(Boolean) ? spans : [];
    if (hit) {
      this.info(`Your edit changed ${hit} ${plural(hit, "span", "spans")} of the question set, so ${plural(hit, "it was", "they were")} dropped.`);
      this.draw();
    }
  }

  async importFile(file) {
    if (file.size > MAX_FILE) { this.problems([`“${file.name}” is larger than 20 MB; split the question set.`]); return; }
    const s = this.state;
    const docs = s.docs.map((d, i) => ({ id: d.id, title: d.title, text: i === s.sel ? s.doc : d.text }));
    const format = /\.csv$/i.test(file.name) ? "csv" : /\.json$/i.test(file.name) ? "json" : "auto";
    this.info(`Reading “${file.name}”…`);
    const reply = await this.send(workerMessage({ text: await file.text(), format, documents: docs }, { fn: "questions.import" }));
    if (!reply.ok) {
      this.problems([`“${file.name}” was not imported: ${(reply.error && reply.error.message) || "the worker gave no reason."}`]);
      return;
    }
    const result = JSON.parse(reply.result);
    const imported = questionsFromWire(result.questions, textsOf(this.state));
    const taken = new Set(this.state.questions.map((q) => q.id));
    for (const q of imported) { // ids stay unique: an imported "2" beside our own "2" becomes "2b", ...
      let id = q.id, n = 1;
      while (taken.has(id)) id = `${q.id}${String.fromCharCode(97 + n++)}`;
      q.id = id;
      taken.add(id);
    }
    this.state.questions = [...this.state.questions, ...imported];
    const skipped = result.skipped || [];
    this.problems(skipped.map((p) => p.message));
    this.info(`Imported ${imported.length} ${plural(imported.length, "question", "questions")} from “${file.name}”` +
      (skipped.length ? `; ${skipped.length} ${plural(skipped.length, "row was", "rows were")} skipped (listed below the set).` : "."));
    this.draw();
    this.changed();
  }

  async exportAs(format) {
    const s = this.state;
    const questions = questionsForRequest(s);
    if (!questions.length) { this.info("There is no question to export: add one first."); return; }
    const docs = s.docs.map((d, i) => ({ id: d.id, title: d.title, text: i === s.sel ? s.doc : d.text }));
    const reply = await this.send(workerMessage({ questions, documents: docs, format }, { fn: "questions.export" }));
    if (!reply.ok) { this.problems([`The set was not exported: ${(reply.error && reply.error.message) || "the worker gave no reason."}`]); return; }
    const text = JSON.parse(reply.result).text;
    const url = URL.createObjectURL(new Blob([text], { type: format === "csv" ? "text/csv" : "application/json" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `questions.${format}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    this.info(`Exported ${questions.length} ${plural(questions.length, "question", "questions")} as questions.${format}.`);
  }

  /** The rows an import skipped (or why nothing was), each a sentence; [] hides the list. */
  problems(messages) {
    const list = $("qs-problems");
    list.replaceChildren(...messages.map((m) => cell("li", m)));
    list.hidden = messages.length === 0;
  }

  /** The list, from the state: each question a row with its verdict (filled by the renderer), its
   * query (editable), its spans quoted, and Remove. */
  draw() {
    const s = this.state, texts = textsOf(s);
    const list = $("qs-list");
    const items = s.questions.map((q) => {
      const li = document.createElement("li");
      li.dataset.id = q.id;
      if (q.id === this.active) li.classList.add("active");
      const head = document.createElement("div");
      head.className = "qs-head";
      const load = cell("button", `Question ${q.id}`, { type: "button", class: "link qs-load", "aria-label": `Load question ${q.id}: its query and its answer's spans` });
      load.addEventListener("click", () => this.load(q.id));
      const verdict = cell("span", "", { class: "qs-verdict", "data-verdict": "" });
      const query = document.createElement("input");
      query.type = "text";
      query.className = "qs-query";
      query.value = q.query;
      query.setAttribute("aria-label", `Question ${q.id}'s query`);
      query.addEventListener("change", () => this.edit(q.id, query.value));
      const remove = cell("button", "Remove", { type: "button", class: "quiet qs-remove", "aria-label": `Remove question ${q.id}` });
      remove.addEventListener("click", () => this.remove(q.id));
      head.append(load, verdict, remove);
      const spans = document.createElement("ul");
      spans.className = "qs-spans";
      for (const r of q.refs) {
        const fits = refFits(texts, r);
        const where = s.docs.length > 1 ? ` · ${titleOf(s, r.doc)}` : "";
        spans.append(cell("li", fits ? `${quote(texts.get(r.doc).slice(r.start, r.end))}${where}` : "a span that no longer fits its document"));
      }
      if (!q.refs.length) spans.append(cell("li", "no span left: this question is not scored; mark its answer again or remove it"));
      li.append(head, query, spans);
      return li;
    });
    list.replaceChildren(...items);
    $("qs-empty").hidden = s.questions.length > 0;
    for (const id of ["export-json", "export-csv", "clear-questions"]) $(id).disabled = s.questions.length === 0;
    $("map-on").checked = s.map;
  }
}

const sameRef = (a, b) => a.doc === b.doc && a.start === b.start && a.end === b.end;
