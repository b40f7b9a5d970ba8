// The collection on the page (items 1 and 2): the list of documents (select, rename,
// remove), adding them by pasting, by choosing files or by dropping them, and loading the built-in
// collection. Reading files and the built-in collection is collection.js; this module changes the
// state's documents and asks for a recompute. All titles and texts reach the DOM through
// textContent or input values, never as HTML.

import { $ } from "./dom.js";
import { plural } from "./format.js";
import { EXAMPLE } from "./examples.js";
import { MAX_DOCUMENTS, loadCollection, readFiles, uniqueId } from "./collection.js";
import { QUESTION_WENT, dropExampleQuestion, hasOwnText, selectIndex, stashSelected, useCollection } from "./state.js";
import { linkNotes } from "./render/messages.js";
import { BIG_CHARS, megabytes, progress } from "./big-text.js";

export class Documents {
  /** store: {state, memo}; sync({withDoc}): show the state in the controls; changed(): recompute;
   * info(note): a note in the mark line; onList(): after the list was redrawn. */
  constructor({ store, sync, changed, info, onList, docInput }) {
    Object.assign(this, { store, sync, changed, info, onList, docInput });
    $("add-doc").addEventListener("click", () => this.addEmpty());
    $("add-files").addEventListener("change", async (e) => { await this.addFiles(e.target.files); e.target.value = ""; });
    $("load-collection").addEventListener("click", () => this.loadExample());
    // Files dropped anywhere on the page join the collection.
    const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes("Files");
    document.addEventListener("dragover", (e) => { if (hasFiles(e)) { e.preventDefault(); document.body.classList.add("dropping"); } });
    document.addEventListener("dragleave", (e) => { if (!e.relatedTarget) document.body.classList.remove("dropping"); });
    document.addEventListener("drop", (e) => {
      document.body.classList.remove("dropping");
      if (!hasFiles(e)) return;
      e.preventDefault();
      this.addFiles(e.dataTransfer.files);
    });
  }

  get state() {
    return this.store.state;
  }

  /** The list and the caption, after the state was replaced or restructured. */
  syncList() {
    const state = this.state;
    renderList($("doc-list"), state.docs, state.sel, () => "",
      { select: (i) => this.select(i), rename: (i, title) => this.rename(i, title), remove: (i) => this.remove(i) });
    const caption = $("doc-caption");
    caption.hidden = state.docs.length < 2;
    caption.textContent = `The Document box below shows document ${state.sel + 1} of ${state.docs.length}: “${state.docs[state.sel].title}”.`;
    this.onList();
  }

  /** The state restructured: show it everywhere and recompute. */
  restructured() {
    this.sync({ withDoc: true });
    this.syncList();
    this.changed();
  }

  select(i) {
    const state = this.state;
    if (i === state.sel || i < 0 || i >= state.docs.length) return;
    selectIndex(state, i);
    this.restructured();
  }

  rename(i, title) {
    const state = this.state;
    state.docs[i] = { ...state.docs[i], title: title.trim().slice(0, 200) || `Document ${i + 1}` };
    state.example = null;
    this.syncList();
    this.changed();
  }

  remove(i) {
    const state = this.state;
    if (state.docs.length < 2) return;
    stashSelected(state);
    const [gone] = state.docs.splice(i, 1);
    const notes = [];
    if (state.span && state.span.doc === gone.id) { state.span = null; notes.push("the answer mark"); }
    if (state.fact && state.fact.doc === gone.id) { state.fact = null; notes.push("the fact"); }
    if (i < state.sel) state.sel--;
    state.sel = Math.min(state.sel, state.docs.length - 1);
    state.doc = state.docs[state.sel].text;
    state.example = null;
    this.info(`Removed “${gone.title}”${notes.length ? `, and with it ${notes.join(" and ")}` : ""}.`);
    this.restructured();
    // The button pressed is gone: focus the next row's Remove (or the last row's, or "Add document").
    const rows = $("doc-list").children;
    const next = state.docs.length > 1 ? rows[Math.min(i, rows.length - 1)].querySelector(".doc-remove") : $("add-doc");
    next.focus();
  }

  /** True while the page holds only the example it opened with (or one empty document): files replace it. */
  onlyTheExample() {
    const state = this.state;
    return state.docs.length === 1 && (state.doc === EXAMPLE.text || !state.doc.trim());
  }

  add(added, problems = []) {
    const list = $("doc-problems");
    list.replaceChildren(...problems.map((p) => { const li = document.createElement("li"); li.textContent = p; return li; }));
    list.hidden = problems.length === 0;
    if (!added.length) return;
    const state = this.state;
    const replace = this.onlyTheExample();
    if (replace) { state.docs = []; state.span = null; state.fact = null; }
    else stashSelected(state);
    const first = state.docs.length;
    for (const d of added) state.docs.push({ id: uniqueId(state.docs, d.name || "doc"), title: d.title, text: d.text });
    state.sel = first;
    state.doc = state.docs[first].text;
    state.example = null;
    const went = replace && dropExampleQuestion(state) ? `; ${QUESTION_WENT}` : "";
    this.info(`Added ${added.length} ${plural(added.length, "document", "documents")}${replace ? " in place of the example" : ""}${went}.`);
    this.restructured();
  }

  async addFiles(files) {
    if (!files || !files.length) return;
    const room = MAX_DOCUMENTS - (this.onlyTheExample() ? 0 : this.state.docs.length);
    const bytes = [...files].reduce((n, f) => n + f.size, 0);
    if (bytes > BIG_CHARS) progress.say(`Reading ${files.length} ${plural(files.length, "file", "files")} (${megabytes(bytes)})…`);
    const { added, problems } = await readFiles(files, room);
    this.add(added, problems);
    // Sent and indexed next: the bar follows the computation (and goes when the result is shown).
    const chars = added.reduce((n, d) => n + d.text.length, 0);
    if (chars > BIG_CHARS) progress.follow(chars);
    else if (bytes > BIG_CHARS) progress.done();
  }

  addEmpty() {
    const state = this.state;
    if (state.docs.length >= MAX_DOCUMENTS) {
      this.add([], [`The collection holds at most ${MAX_DOCUMENTS} documents; remove one first.`]);
      return;
    }
    stashSelected(state);
    const n = state.docs.length + 1;
    state.docs.push({ id: uniqueId(state.docs, "doc"), title: `Document ${n}`, text: "" });
    state.sel = state.docs.length - 1;
    state.doc = "";
    state.example = null;
    this.restructured();
    this.docInput.focus();
    this.info("Paste or type the new document into the Document box; give it a title in the list.");
  }

  async loadExample() {
    // nothing the user typed is lost without asking (and a "no" leaves every document as it is)
    if (hasOwnText(this.state) && !window.confirm("Replace your documents with the example collection? Your text "
      + "will be gone from this page (download the state first to keep it).")) {
      this.info("Kept your documents; the example collection was not loaded.");
      return;
    }
    const button = $("load-collection");
    button.disabled = true;
    try {
      const { index, docs } = await loadCollection();
      linkNotes.clear();
      useCollection(this.state, index, docs);
      this.store.memo = {};
      this.info(`Loaded “${index.title}”; the fact about ${index.fact.name} is marked.`);
      this.restructured();
    } catch (err) {
      this.add([], [`The example collection could not be loaded: ${err.message}.`]);
    } finally {
      button.disabled = false;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The list on the page: one row per document (shown from two documents on).

/**
 * Draw the list into `ol`. `docs` are the documents (the selected one's text current), `info`
 * maps a document id to a short line ("3 chunks · #1 retrieved"); handlers: select(i),
 * rename(i, title), remove(i).
 *
 * Rows are kept from one drawing to the next (by document id) and updated in place, so the control
 * that has focus keeps it: tabbing into a title selects its document and the caret stays in the
 * title; clicking a title edits it at once. A handler reads its row's place when it runs.
 */
function renderList(ol, docs, sel, info, handlers) {
  const old = new Map([...ol.children].map((li) => [li.dataset.doc, li]));
  const rows = docs.map((d, i) => {
    const li = old.get(d.id) || makeRow(ol, d.id, handlers);
    const [pick, title, meta, del] = li.children;
    const n = i + 1, current = i === sel;
    if (current) li.setAttribute("aria-current", "true"); else li.removeAttribute("aria-current");
    pick.textContent = String(n);
    pick.setAttribute("aria-label", `Show document ${n} in the Document box`);
    pick.setAttribute("aria-pressed", String(current));
    if (document.activeElement !== title || title.value === d.title) title.value = d.title;
    title.setAttribute("aria-label", `Title of document ${n}`);
    meta.textContent = info(d) || `${d.text.length.toLocaleString("en-US")} characters`;
    del.setAttribute("aria-label", `Remove document ${n}`);
    return li;
  });
  const same = rows.length === ol.children.length && rows.every((li, i) => ol.children[i] === li);
  if (!same) { // keep the focused row in the DOM while the others move around it
    for (const li of [...ol.children]) if (!rows.includes(li)) li.remove();
    rows.forEach((li, i) => { if (ol.children[i] !== li) ol.insertBefore(li, ol.children[i] || null); });
  }
  ol.dataset.sel = String(sel);
  ol.hidden = docs.length < 2;
}

/** One row's controls; their handlers find the row's current place in the list. */
function makeRow(ol, id, { select, rename, remove }) {
  const li = document.createElement("li");
  li.className = "doc-row";
  li.dataset.doc = id;
  const at = () => [...ol.children].indexOf(li);
  const pick = document.createElement("button");
  pick.type = "button";
  pick.className = "doc-pick quiet";
  pick.addEventListener("click", () => select(at()));
  const title = document.createElement("input");
  title.type = "text";
  title.className = "doc-title";
  title.addEventListener("focus", () => { if (String(at()) !== ol.dataset.sel) select(at()); });
  title.addEventListener("change", () => rename(at(), title.value));
  const meta = document.createElement("span");
  meta.className = "doc-meta";
  const del = document.createElement("button");
  del.type = "button";
  del.className = "doc-remove quiet";
  del.textContent = "Remove";
  del.addEventListener("click", () => remove(at()));
  li.append(pick, title, meta, del);
  return li;
}
