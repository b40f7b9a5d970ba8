// Run the ragsim core inside real Pyodide under Node, from a built dist/, the way the worker does:
// Pyodide from dist/pyodide-<version>/, micropip from its rewritten lock (integrity checked), the
// core wheel installed with micropip from Pyodide's in-memory file system.
//
//   node tests/pyodide/run_core.mjs DIST_DIR [REQUEST_JSON]    (without REQUEST_JSON: read stdin)
//
// Prints the response JSON of ragsim.api.simulate_json on stdout. Exit 1 on any failure.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [distArg, requestArg] = process.argv.slice(2);
if (!distArg) {
  console.error("usage: node run_core.mjs DIST_DIR [REQUEST_JSON]");
  process.exit(1);
}
const dist = path.resolve(distArg);
const build = JSON.parse(readFileSync(path.join(dist, "build.json"), "utf8"));
const request = requestArg ?? readFileSync(0, "utf8");

const indexURL = path.join(dist, build.pyodide.dir) + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(indexURL, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL, packages: ["micropip"], stdout: (s) => console.error(s) });
const wheelPath = path.join(dist, build.wheels.ragsim);
const emfsPath = `/tmp/${path.basename(wheelPath)}`;
pyodide.FS.writeFile(emfsPath, readFileSync(wheelPath));
const micropip = pyodide.pyimport("micropip");
await micropip.install(`emfs:${emfsPath}`);
micropip.destroy();
// Tokens: the verified rank files from dist/, handed to the core as the worker does.
for (const [name, rel] of Object.entries(build.tiktoken ?? {})) {
  const emfs = `/tmp/${name}.tiktoken`;
  pyodide.FS.writeFile(emfs, readFileSync(path.join(dist, rel)));
  pyodide.runPython(`from ragsim.text import tokens\ntokens.provide(${JSON.stringify(name)}, open(${JSON.stringify(emfs)}, "rb").read())`);
}

// RAGSIM_PACKAGES (tests only): packages from the site's lock loaded first, comma-separated, as the
// worker loads one on demand (pypdf with the first PDF): Pyodide's loader, integrity checked.
for (const name of (process.env.RAGSIM_PACKAGES ?? "").split(",").filter(Boolean)) {
  const [loaded] = await pyodide.loadPackage(name, { checkIntegrity: true, messageCallback: (m) => console.error(m) });
  if (!loaded && !pyodide.loadedPackages[name]) throw new Error(`${name} could not be loaded from the site's lock`);
}

pyodide.globals.set("request_json", request);
// RAGSIM_PYTHON (tests only): run that Python instead and print the value of its last expression.
const response = process.env.RAGSIM_PYTHON ? String(pyodide.runPython(process.env.RAGSIM_PYTHON)) : pyodide.runPython(`
import sys
from ragsim.wire import api
assert sys.version_info[:2] >= (3, 14), sys.version
api.simulate_json(request_json, api.Session())
`);
process.stdout.write(response);
