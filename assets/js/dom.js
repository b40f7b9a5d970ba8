// Small DOM helpers shared by the page's modules. User text only ever goes in as text.

export const $ = (id) => document.getElementById(id);

/** A `tag` element holding `text` as text, with the given attributes. */
export function cell(tag, text, attrs = {}) {
  const el = document.createElement(tag);
  el.textContent = text;
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

/** Save `blob` as a file named `name` (the browser's download). */
export function downloadFile(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}
