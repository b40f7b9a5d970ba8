// The offline copy: once Python is ready (the page's <body data-state="ready">), register
// the site's service worker, sw.js at the site's root (written by build.py from buildlib/sw.js). It
// keeps the page, its files, the Python runtime and the core wheel in this browser, so the next
// visit reads them from here and the page opens without a network. Registered only after the first
// start, so its downloads never compete with it (and mostly come from the HTTP cache by then).
// Imported for its effect by app.js; nothing to call.

const container = typeof navigator !== "undefined" ? navigator.serviceWorker : undefined;

function register() {
  container.register(new URL("../../sw.js", import.meta.url)).catch((err) => {
    // Refused (a browser setting, a frame whose storage is blocked): the page works as before.
    console.info(`ragsim: the page is not kept for offline use (${err.message})`);
  });
}

if (container && ["http:", "https:"].includes(location.protocol)) {
  const ready = () => document.body.dataset.state === "ready";
  if (ready()) {
    register();
  } else {
    const watch = new MutationObserver(() => {
      if (ready()) {
        watch.disconnect();
        register();
      }
    });
    watch.observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
  }
}
