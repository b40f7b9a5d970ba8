// Opened from disk (file://), browsers refuse the page's module scripts: show #from-disk, which says
// to serve the page. A classic script, which the browser does run from disk, so that the page needs
// no inline script (its Content-Security-Policy allows none).
if (location.protocol === "file:") document.documentElement.classList.add("from-disk");
