// The site's service worker: after one visit the page opens offline, and a second visit
// reads its files from this browser instead of the network. build.py writes it to the site's root
// as sw.js (buildlib/offline.py), with BUILD filled in: this build's version, the files to keep
// (paths relative to this script) and the sha256 of the page, the one file without a hash in its
// name. The page registers it once Python is ready (the offline module of assets/js).
//
// install   every file of BUILD.files (the page, its scripts and styles, the Python runtime, the core
//           wheel) is fetched and kept in the cache "ragsim-sw-<version>"; the page only when its
//           sha256 is this build's, so a kept page always matches the files kept with it.
// activate  the caches of other builds are deleted, and open pages are taken over.
// fetch     a kept file: from the cache, else the network (cache first: every such path carries a
//           content hash or a version, so it never changes). The page itself (a navigation to the
//           site's folder or its page): from the network, so a new build is seen at once; the kept
//           copy when the network fails, errs or is slow (network first). Anything else (the
//           stemmer, the PDF reader, tokenizer rank files, the dense model: fetched only when a
//           feature needs them) is left to the browser and its HTTP cache.
// Nothing is fetched from another origin: every URL here is resolved against this script's own.
// Cross-origin isolation: the page and the files served from here carry COOP and COEP (and CORP),
// as `build.py serve` sends them, so on a static host that cannot send headers the page is still
// isolated from its second load on, and the embedding model runs on several threads.

const BUILD = /*BUILD*/ { version: "unbuilt", page: "index.html", pageSha256: "", files: [] } /*BUILD*/;

const PREFIX = "ragsim-sw-";
const CACHE = PREFIX + BUILD.version;
const NETWORK_TIMEOUT_MS = 4000; // a slower page comes from the cache

const resolve = (path) => new URL(path, self.location.href).href;
const FILES = new Set(BUILD.files.map(resolve));
const PAGE = resolve(BUILD.page);
const FOLDER = resolve("./");

async function sha256(buffer) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Fetch one file of the build and keep it (the page only when it is this build's). */
async function keep(cache, url) {
  const response = await fetch(url, { cache: url === PAGE ? "no-cache" : "default" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  if (url === PAGE && await sha256(await response.clone().arrayBuffer()) !== BUILD.pageSha256) {
    throw new Error(`${url} is not this build's page (a newer build is being served)`);
  }
  await cache.put(url, response);
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const kept = new Set((await cache.keys()).map((r) => r.url));
    await Promise.all([...FILES].filter((url) => !kept.has(url)).map((url) => keep(cache, url)));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

// Cross-Origin-Resource-Policy: the page may be framed by a host page that is itself isolated (an
// embed in a page sent with COEP require-corp shows only with it), as `build.py serve` sends it.
const ISOLATION = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "cross-origin" };

/** `response` with the isolation headers it lacks added (as it is when it cannot be read or has them all). */
function isolated(response) {
  if (!response || response.type === "opaque" || response.type === "opaqueredirect" || response.status === 0) return response;
  const lacking = Object.entries(ISOLATION).filter(([name]) => !response.headers.has(name));
  if (!lacking.length) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of lacking) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** The network's answer within the time limit, else the kept page. */
async function page(request) {
  try {
    const response = await Promise.race([
      fetch(request),
      new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), NETWORK_TIMEOUT_MS)),
    ]);
    if (response.status < 500) return response;
  } catch {
    // offline, refused or slow: the kept page below
  }
  const kept = await (await caches.open(CACHE)).match(PAGE);
  return kept || Response.error();
}

/** A file of the build: the kept copy, else the network (kept for next time). */
async function file(request, url) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(url);
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok && response.type === "basic") await cache.put(url, response.clone());
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = request.url.split("#")[0];
  const bare = url.split("?")[0];
  if (request.mode === "navigate" && (bare === FOLDER || bare === PAGE)) {
    event.respondWith(page(request).then(isolated));
  } else if (FILES.has(url) && url !== PAGE) {
    event.respondWith(file(request, url).then(isolated));
  }
});
