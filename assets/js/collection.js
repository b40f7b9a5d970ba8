// The documents the page simulates over (items 1 and 2), as data: reading chosen or
// dropped files into documents, and loading the built-in collection (assets/collection). BM25
// spans all of them: the request carries every document. The list on the page and its buttons
// are in documents.js.
//
//   state.docs   [{id, title, text}]   every document; the selected one's text lives in state.doc
//   state.sel    index of the selected document (the one the "Document" box edits)
//
// Files are read as UTF-8 text: a file with NUL bytes, or bytes that are not UTF-8, is refused with
// a sentence saying so, and the rest of the collection is kept. A .pdf goes to the reader the page
// sets with readPdfsWith (the worker's ragsim.pdf, as LangChain's PyPDFLoader reads it). All titles and texts
// reach the DOM through textContent or input values, never as HTML.

export const MAX_FILES = 100; // files taken from one choice or drop; the rest are refused with a message
export const MAX_DOCUMENTS = 300; // documents in the collection at once
export const MAX_FILE_BYTES = 10_000_000; // one file; a longer text belongs in a real pipeline
const TEXT_NAME = /\.(txt|md|markdown|text)$/i;
export const MAX_PDF_BYTES = 50_000_000; // one PDF: its pages are read in the worker
const isPdf = (file, name) => /\.pdf$/i.test(name) || file.type === "application/pdf";

// reader(name, bytes: ArrayBuffer, mode) -> {docs: [{title, text, page?}]} or {problem: sentence}
let pdfReader = null;
/** How PDFs are read (the page's worker, once started); mode() is PyPDFLoader's "page" or "single". */
export function readPdfsWith(reader, mode) {
  pdfReader = { read: reader, mode };
}

/** An id not used by any document yet: `base`, else `base-2`, `base-3`, ... */
export function uniqueId(docs, base) {
  const used = new Set(docs.map((d) => d.id));
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** The title a Markdown text gives itself ("# Title" on its first line), or null. */
export function markdownTitle(text) {
  const m = /^\uFEFF?#[ \t]+(.+)/.exec(text);
  return m ? m[1].trim().slice(0, 200) : null;
}

/** Why `bytes` are not a usable text document, or null; and the text when they are. */
export function decodeText(bytes) {
  if (bytes.length === 0) return { problem: "is empty" };
  if (bytes.includes(0)) return { problem: "is not a text file (it contains NUL bytes, as binary files do)" };
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { problem: "is not UTF-8 text (save it as UTF-8 and add it again)" };
  }
  text = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  if (!text.trim()) return { problem: "holds only spaces and line breaks" };
  return { text };
}

/** Read chosen or dropped files into documents: {added: [{name, title, text}], problems: [sentence]}. */
export async function readFiles(fileList, room = MAX_DOCUMENTS) {
  const files = [...fileList];
  const problems = [];
  const limit = Math.min(MAX_FILES, Math.max(0, room));
  if (files.length > limit) {
    problems.push(limit < MAX_FILES
      ? `The collection holds at most ${MAX_DOCUMENTS} documents, so only the first ${limit} of the ${files.length} files were read.`
      : `At most ${MAX_FILES} files are read at once, so the last ${files.length - limit} of the ${files.length} were left out.`);
  }
  const added = [];
  for (const file of files.slice(0, limit)) {
    const name = file.name || "untitled";
    if (isPdf(file, name)) {
      const { docs, problem } = await readPdf(file, name, room - added.length);
      if (problem) problems.push(problem);
      else added.push(...docs);
      continue;
    }
    if (!TEXT_NAME.test(name) && !/^text\//.test(file.type || "")) {
      problems.push(`“${name}” was not added: only .txt and .md text files and .pdf files can be read.`);
      continue;
    }
    if (file.size > MAX_FILE_BYTES) {
      problems.push(`“${name}” was not added: it is larger than ${MAX_FILE_BYTES / 1_000_000} MB.`);
      continue;
    }
    const { text, problem } = decodeText(new Uint8Array(await file.arrayBuffer()));
    if (problem) {
      problems.push(`“${name}” was not added: it ${problem}.`);
      continue;
    }
    added.push({ name, title: markdownTitle(text) || name.replace(/\.[^.]*$/, ""), text });
  }
  return { added, problems };
}

/** One PDF's documents ({name, title, text} each; one per page in mode "page"), or {problem}. */
async function readPdf(file, name, room) {
  if (!pdfReader) return { problem: `“${name}” was not added: PDFs are read by Python, which could not start.` };
  if (file.size > MAX_PDF_BYTES) return { problem: `“${name}” was not added: it is larger than ${MAX_PDF_BYTES / 1_000_000} MB.` };
  const mode = pdfReader.mode();
  const { docs, problem } = await pdfReader.read(name, await file.arrayBuffer(), mode);
  if (problem) return { problem };
  if (docs.length > room) {
    return { problem: `“${name}” was not added: its ${docs.length} pages would be ${docs.length} documents, more than the ${room} the collection has room for; choose mode “single (one per file)” under “PDFs: PyPDFLoader mode” and add it again.` };
  }
  // The textarea keeps line breaks as \n only: a \r from the PDF would shift every offset after an edit.
  return { docs: docs.map((d) => ({ name: d.page == null ? name : `${name}/p${d.page + 1}`, title: d.title, text: d.text.replace(/\r\n?/g, "\n") })) };
}

// ---------------------------------------------------------------------------------------------
// The built-in collection: assets/collection/index.json names the articles and the settings.

const COLLECTION = new URL("../collection/", import.meta.url);

/** {index, docs}: index.json and every article it lists, each titled by its "# " line. */
export async function loadCollection() {
  const get = async (name) => {
    const response = await fetch(new URL(name, COLLECTION));
    if (!response.ok) throw new Error(`could not fetch ${name} (HTTP ${response.status})`);
    return response;
  };
  const index = await (await get("index.json")).json();
  const docs = await Promise.all(index.documents.map(async (name) => {
    const text = (await (await get(name)).text()).replace(/\r\n?/g, "\n");
    return { id: name, title: markdownTitle(text) || name, text };
  }));
  return { index, docs };
}

/** The fact index.json names, as UTF-16 spans of its document (first occurrences), or null. */
export function collectionFact(index, docs) {
  const f = index.fact;
  const doc = f && docs.find((d) => d.id === f.doc);
  if (!doc) return null;
  const n = doc.text.indexOf(f.name), v = doc.text.indexOf(f.value);
  if (n < 0 || v < 0) return null;
  return { doc: doc.id, name: { start: n, end: n + f.name.length }, value: { start: v, end: v + f.value.length } };
}
