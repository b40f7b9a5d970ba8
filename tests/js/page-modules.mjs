// The page's modules that import the generated splitter table (`./splitters.js`, which build.py
// writes from ragsim.split.registry_json()) loaded under Node: assets/js copied once into a
// temporary folder with that table generated beside them, as the build does, and imported from there.

import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
let copied = null;

/** The folder holding assets/js and its generated splitters.js (made once per test file). */
function pageFolder() {
  if (copied) return copied;
  const dir = mkdtempSync(join(tmpdir(), "ragsim-js-"));
  cpSync(join(ROOT, "assets", "js"), join(dir, "js"), { recursive: true });
  const python = process.env.PYTHON || "python3";
  const json = execFileSync(python, ["-c", "import ragsim.split as s; print(s.registry_json())"],
    { env: { ...process.env, PYTHONPATH: join(ROOT, "py"), PYTHONDONTWRITEBYTECODE: "1" }, encoding: "utf-8" });
  writeFileSync(join(dir, "js", "splitters.js"), `export const REGISTRY = ${json.trim()};\n`);
  copied = join(dir, "js");
  return copied;
}

/** Import `name` (a path under assets/js, e.g. "requests.js" or "panels/fix-note.js"). */
export const pageModule = (name) => import(pathToFileURL(join(pageFolder(), name)).href);
