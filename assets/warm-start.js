// Python's start in the worker: from this browser's memory snapshot of the same build
// when there is a good one, else from the files. Imported by worker.js only.
//
// From the files ("cold"): Pyodide loads from this site while the core wheel is fetched; the wheel
// is unpacked into site-packages (a pure-Python wheel needs nothing more, so micropip is not
// loaded); the worker's prelude runs (ragsim imported, the session made); then Pyodide's
// makeMemorySnapshot copies Python's whole memory (the WebAssembly heap, about 30 MB) and, once the
// worker is ready, the copy is kept in Cache Storage ("ragsim-python", one entry), under a key that
// names this build (Pyodide's version, the core wheel's path, which carries its content hash, and
// the worker's own content-hashed file name), with its sha256; its long runs of zeros are left out.
// From the snapshot ("warm"): the entry of exactly this key is read and its sha256 checked, Pyodide
// starts from it (`_loadSnapshot`; Pyodide itself refuses a snapshot of another runtime build), the
// wheel is unpacked again when a module ragsim imports lazily is first needed (the file system is
// not part of the snapshot), and Python must answer with the key it was stored under and compute a
// small simulation. Anything that fails deletes the entry and starts cold: a snapshot can make the start
// faster, never make it fail.

const SNAPSHOTS = "ragsim-python"; // the Cache Storage cache of the snapshot (sw.js leaves it alone)

// The core wheel is unpacked into site-packages: what an installer does for a pure-Python wheel.
// From the files, at once; after a restore (the file system is not part of the snapshot) only when
// Python first imports a ragsim module the snapshot does not hold, so the warm start skips it.
const UNPACK = `
import importlib, os, sysconfig, zipfile

def _ragsim_unpack(path):
    with zipfile.ZipFile(path) as wheel:
        wheel.extractall(sysconfig.get_paths()["purelib"])
    os.unlink(path)
    importlib.invalidate_caches()

class _RagsimWheel:
    """First on sys.meta_path after a restore: unpacks the wheel at the first import of a ragsim
    module that is not loaded yet, then lets the usual finders find it on disk."""
    def __init__(self, path):
        self.path = path

    def find_spec(self, name, path=None, target=None):
        if self.path and name.partition(".")[0] == "ragsim":
            wheel, self.path = self.path, None
            _ragsim_unpack(wheel)
        return None
`;

// A restored interpreter must know the key it was stored under and compute a small simulation.
const CHECK = `
def _ragsim_check():
    import json
    from ragsim.wire import api
    request = {"documents": [{"id": "d", "title": "d", "text": "one two three"}], "query": "two",
               "chunking": {"unit": "words", "size": 2, "overlap": 0}, "retrieval": {"k": 1},
               "span": None, "fact": None, "price_per_million": 0}
    first = json.loads(api.simulate_json(json.dumps(request)))["chunks"][0]
    return _ragsim_snapshot_key if first["rank"] == 1 and first["score"] > 0 else ""
_ragsim_check()
`;

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not fetch ${url} (HTTP ${response.status})`);
  return new Uint8Array(await response.arrayBuffer());
}

// Python's heap is two-thirds zeros, most of them in a few long runs: those runs are left out of the
// stored copy (listed as holes: [start, length]), which halves what a warm start reads and checks.
const PAGE = 4096; // holes are whole pages of zeros...
const MIN_HOLE = 16 * PAGE; // ...and at least this long

/** The runs of zero pages in `bytes` at least MIN_HOLE long: [[start, length], ...]. */
function zeroRuns(bytes) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  const pageZero = (p) => {
    for (let i = p * (PAGE >> 2), end = Math.min(i + (PAGE >> 2), words.length); i < end; i++) if (words[i]) return false;
    return true;
  };
  const holes = [];
  const pages = Math.floor(bytes.byteLength / PAGE);
  for (let p = 0; p < pages;) {
    let q = p;
    while (q < pages && pageZero(q)) q++;
    if ((q - p) * PAGE >= MIN_HOLE) holes.push([p * PAGE, (q - p) * PAGE]);
    p = q + 1;
  }
  return holes;
}

/** `bytes` without its holes. */
function withoutHoles(bytes, holes) {
  const out = new Uint8Array(bytes.byteLength - holes.reduce((n, [, length]) => n + length, 0));
  let at = 0, from = 0;
  for (const [start, length] of [...holes, [bytes.byteLength, 0]]) {
    out.set(bytes.subarray(from, start), at);
    at += start - from;
    from = start + length;
  }
  return out;
}

/** The `size` bytes whose copy without `holes` is `body`. */
function withHoles(body, holes, size) {
  const out = new Uint8Array(size); // zeros
  let at = 0, from = 0;
  for (const [start, length] of [...holes, [size, 0]]) {
    if (start < from || start - from > body.byteLength - at) throw new Error("the stored snapshot does not fit its holes");
    out.set(body.subarray(at, at + start - from), from);
    at += start - from;
    from = start + length;
  }
  if (at !== body.byteLength) throw new Error("the stored snapshot does not fit its holes");
  return out;
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The snapshot store: Cache Storage in this origin; absent where there is none (a page opened from
 * disk, a browser that refuses storage). */
class Snapshots {
  constructor(key, base) {
    this.key = key;
    this.url = new URL(`ragsim-python-snapshot?key=${encodeURIComponent(key)}`, base).href;
    this.available = typeof caches !== "undefined" && typeof crypto !== "undefined" && Boolean(crypto.subtle);
  }

  /** The stored snapshot of this key (a Response, its body not read yet); null when there is none. */
  async find() {
    if (!this.available) return null;
    return (await (await caches.open(SNAPSHOTS)).match(this.url)) || null;
  }

  /** The bytes of a found snapshot, checked against its sha256, its holes filled. */
  static async bytes(response) {
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.headers.get("x-ragsim-sha256") !== await sha256(body)) {
      throw new Error("the stored snapshot is damaged (its sha256 differs)");
    }
    return withHoles(body, JSON.parse(response.headers.get("x-ragsim-holes")), Number(response.headers.get("x-ragsim-size")));
  }

  /** Keep `bytes` as the only snapshot. */
  async write(bytes) {
    const holes = zeroRuns(bytes);
    const body = withoutHoles(bytes, holes);
    const cache = await caches.open(SNAPSHOTS);
    for (const old of await cache.keys()) await cache.delete(old);
    await cache.put(this.url, new Response(body, {
      headers: {
        "content-type": "application/octet-stream", "x-ragsim-sha256": await sha256(body),
        "x-ragsim-size": String(bytes.byteLength), "x-ragsim-holes": JSON.stringify(holes),
      },
    }));
  }

  async drop() {
    if (this.available) await caches.delete(SNAPSHOTS);
  }
}

/** Pyodide with the core installed and `prelude` run: {pyodide, boot, save}. boot is {path:
 * "snapshot" | "files", ms, snapshotBytes}; save, when a snapshot was made, stores it and resolves
 * to its size (the worker calls it once it has said it is ready). `status(stage)` reports "runtime",
 * the runtime's steps ("runtime-lock", "runtime-script", "runtime-stdlib": its files arrived;
 * "runtime-wasm": its WebAssembly compiled), "snapshot" (a snapshot is being restored) and "core"
 * (the wheel unpacked, the prelude run). */
export async function startPython({ pyodideURL, coreWheelURL, key, prelude, status }) {
  const started = performance.now();
  status("runtime");
  const unwatch = watchRuntimeFiles(status);
  try {
    return await start({ pyodideURL, coreWheelURL, key, prelude, status, started });
  } finally {
    unwatch();
  }
}

// The steps of the runtime's load as they happen: each of its files arriving (resource timing, where
// the browser reports it in a worker) and its WebAssembly compiled (its instantiation done;
// Chromium gives no resource timing for a module compiled as it streams in), so the boot bar moves
// while Pyodide loads instead of waiting at one value for the whole download.
const RUNTIME_FILES = { "pyodide.asm.mjs": "runtime-script", "python_stdlib.zip": "runtime-stdlib",
  "pyodide-lock.json": "runtime-lock" };

/** Report the runtime's steps as status stages, once each; returns the function that stops it. */
function watchRuntimeFiles(status) {
  const seen = new Set();
  const report = (stage) => { if (stage && !seen.has(stage)) { seen.add(stage); status(stage); } };
  const wasm = globalThis.WebAssembly, originals = {};
  for (const name of ["instantiateStreaming", "instantiate"]) {
    if (!wasm || typeof wasm[name] !== "function") continue;
    const original = originals[name] = wasm[name];
    wasm[name] = function (...args) {
      const made = original.apply(this, args);
      // the runtime's module: streamed, or as bytes where it cannot stream (not a feature test's few bytes)
      if (name === "instantiateStreaming" || (args[0] && args[0].byteLength > 1e6)) made.then(() => report("runtime-wasm"), () => {});
      return made;
    };
  }
  const unwrap = () => { if (wasm) Object.assign(wasm, originals); };
  if (typeof PerformanceObserver === "undefined") return unwrap;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) report(RUNTIME_FILES[entry.name.split("?")[0].split("/").pop()]);
  });
  try {
    observer.observe({ type: "resource", buffered: true });
  } catch {
    return unwrap; // no resource timing here: the compiled runtime and the stages around it still move the bar
  }
  return () => { observer.disconnect(); unwrap(); };
}

async function start({ pyodideURL, coreWheelURL, key, prelude, status, started }) {
  // Started first so the download overlaps the runtime's own start-up.
  const coreWheel = fetchBytes(coreWheelURL);
  coreWheel.catch(() => {}); // reported when awaited below, not as an unhandled rejection
  const snapshots = new Snapshots(key, pyodideURL);
  const found = snapshots.find();
  found.catch(() => {}); // a refused storage is reported below
  const { loadPyodide } = await import(new URL("pyodide.mjs", pyodideURL).href);
  const wheelPath = `/tmp/${coreWheelURL.split("/").pop()}`;

  try {
    const response = await found;
    if (response) {
      status("snapshot");
      // Read and checked while Pyodide loads its runtime script (loadPyodide awaits it after that).
      const stored = Snapshots.bytes(response);
      stored.catch(() => {}); // loadPyodide awaits it and fails with it
      const pyodide = await loadPyodide({ indexURL: pyodideURL, _loadSnapshot: stored });
      pyodide.FS.writeFile(wheelPath, await coreWheel);
      pyodide.runPython(`import sys; sys.meta_path.insert(0, _RagsimWheel(${JSON.stringify(wheelPath)}))`);
      if (pyodide.runPython(CHECK) !== key) throw new Error("the restored Python does not compute as it should");
      pyodide.runPython("del _ragsim_check");
      const snapshotBytes = (await stored).length;
      return { pyodide, boot: { path: "snapshot", ms: performance.now() - started, snapshotBytes }, save: null };
    }
  } catch (err) {
    console.warn(`ragsim: starting Python from the files: ${(err && err.message) || err}`);
    await snapshots.drop().catch(() => {});
  }

  const pyodide = await loadPyodide({ indexURL: pyodideURL, _makeSnapshot: snapshots.available });
  status("core");
  pyodide.FS.writeFile(wheelPath, await coreWheel);
  pyodide.runPython(UNPACK);
  pyodide.runPython(`_ragsim_unpack(${JSON.stringify(wheelPath)})`);
  pyodide.runPython(prelude);
  let save = null;
  if (snapshots.available) {
    pyodide.globals.set("_ragsim_snapshot_key", key);
    // What the first requests import is imported now, so a restore has it without the wheel.
    pyodide.runPython(`${CHECK}\nimport ragsim.wire.codegen`);
    // Taken now, before any request reaches the session; stored when the worker says it is ready.
    const bytes = pyodide.makeMemorySnapshot();
    save = () => snapshots.write(bytes).then(() => bytes.length);
  }
  return { pyodide, boot: { path: "files", ms: performance.now() - started, snapshotBytes: 0 }, save };
}
