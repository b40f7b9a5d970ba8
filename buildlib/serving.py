"""build.py's static server: the MIME types Pyodide needs and cache headers that suit hashed names."""

from __future__ import annotations

import functools
import http.server
import re
import socketserver
from pathlib import Path

from buildlib.base import HASH_LEN, PYODIDE_DIR


# ---------------------------------------------------------------------------------------------
# Serving


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs and cache headers that suit hashed names.

    `mounts` maps a URL prefix (e.g. "/__tests__/") to another directory; tests use it to serve
    pages that are not shipped in dist/."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".whl": "application/zip",
        ".zip": "application/zip",
        ".css": "text/css",
        ".html": "text/html; charset=utf-8",
        ".svg": "image/svg+xml",
    }
    mounts: dict[str, str] = {}
    quiet = False

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, directory in self.mounts.items():
            if clean.startswith(prefix):
                saved, self.directory = self.directory, directory
                try:
                    return super().translate_path("/" + clean[len(prefix):])
                finally:
                    self.directory = saved
        return super().translate_path(path)

    def end_headers(self) -> None:
        path = self.path.split("?", 1)[0]
        immutable = re.search(r"\.[0-9a-f]{%d}\.(js|css)$" % HASH_LEN, path) or \
            path.startswith(("/py/", f"/{PYODIDE_DIR}/", "/tiktoken/", "/models/", "/transformers-",
                             "/onnxruntime-web-"))
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if immutable else "no-cache")
        # Cross-origin isolated: SharedArrayBuffer, so the embedding model runs on several
        # threads. Every file is this origin's, so nothing the page loads is refused for it.
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        # Anyone may load these files, the page in a frame included: a host page that is itself
        # cross-origin isolated (COEP require-corp) shows the embed only with this header.
        self.send_header("Cross-Origin-Resource-Policy", "cross-origin")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            super().log_message(format, *args)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(directory: Path, port: int = 0, mounts: dict[str, Path] | None = None,
                quiet: bool = False) -> Server:
    """An HTTP server for directory on 127.0.0.1 (port 0 = a free one); call serve_forever()."""
    handler = type("BoundHandler", (Handler,), {
        "mounts": {k: str(v) for k, v in (mounts or {}).items()}, "quiet": quiet})
    return Server(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))
