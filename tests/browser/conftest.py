"""Shared browser fixtures: the built dist/ on a local server, Chromium, and a page that may only
talk to that server.

    server          module: dist/ served on 127.0.0.1 at a free port (built first if stale);
                    tests/browser/fixtures/ is mounted at /__tests__/ (test pages, not shipped)
    offsite         module: every request the module's pages tried beyond the server's origin;
                    all are blocked, tests assert the list is empty
    module_page     module: one Playwright page, so Pyodide boots once per test module
    booted_page     module: booted_page(path="index.html") opens path on the server in
                    module_page and waits until document.body.dataset.state is "ready"
                    (fails at once on "error"); asking again for the open path reuses it
    page_errors     module: uncaught exceptions and console errors seen by module_page

Chromium is Debian's /usr/bin/chromium when present, else Playwright's own. Off-origin traffic
is stopped twice: routed requests are aborted and recorded, and the browser's resolver maps every
host but 127.0.0.1 to nothing, so a request that escapes routing still cannot leave the machine.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).with_name("fixtures")
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
BOOT_TIMEOUT_MS = 120_000

sys.path.insert(0, str(ROOT))
import build  # noqa: E402


class Site:
    """Where the module's server listens."""

    def __init__(self, origin: str, dist: Path):
        self.origin = origin
        self.dist = dist

    def url(self, path: str = "") -> str:
        return f"{self.origin}/{path.lstrip('/')}"

    def owns(self, url: str) -> bool:
        """True for URLs of this origin, and for data:/blob: URLs the page made itself."""
        parts = urlsplit(url)
        if parts.scheme == "data":
            return True
        if parts.scheme == "blob":
            parts = urlsplit(url[len("blob:"):])
        return f"{parts.scheme}://{parts.netloc}" == self.origin


@pytest.fixture(scope="session")
def dist_dir() -> Path:
    return build.ensure_fresh()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright's launch options (--headed, --slowmo, ...) plus ours."""
    options = {**browser_type_launch_args, "args": CHROMIUM_ARGS}
    if CHROMIUM.exists():
        options["executable_path"] = str(CHROMIUM)
    return options


@pytest.fixture(scope="module")
def server(dist_dir: Path):
    httpd = build.make_server(dist_dir, 0, mounts={"/__tests__/": FIXTURES}, quiet=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Site(f"http://127.0.0.1:{httpd.server_address[1]}", dist_dir)
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def offsite() -> list[str]:
    return []


@pytest.fixture(scope="module")
def page_errors() -> list[str]:
    return []


@pytest.fixture(scope="module")
def module_context(browser, server: Site, offsite: list[str]):
    context = browser.new_context()

    # Every request is seen here (recorded) and at the route (stopped), including a worker's.
    context.on("request", lambda request: None if server.owns(request.url) else offsite.append(request.url))
    context.route("**/*", lambda route: route.continue_() if server.owns(route.request.url)
                  else route.abort("blockedbyclient"))
    yield context
    context.close()


@pytest.fixture(scope="module")
def module_page(module_context, page_errors: list[str]):
    page = module_context.new_page()
    page.on("pageerror", lambda exc: page_errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: page_errors.append(f"console.{msg.type}: {msg.text}")
            if msg.type == "error" else None)
    page.set_default_timeout(30_000)
    yield page
    page.close()


@pytest.fixture(scope="module")
def booted_page(module_page, server: Site):
    def open_booted(path: str = "index.html", *, reload: bool = False):
        url = server.url(path)
        if reload or module_page.url != url:
            module_page.goto(url)
        module_page.wait_for_function(
            "() => ['ready', 'error'].includes(document.body && document.body.dataset.state)",
            timeout=BOOT_TIMEOUT_MS)
        state = module_page.evaluate("document.body.dataset.state")
        if state != "ready":
            text = module_page.evaluate("document.body.innerText").strip()[:500]
            pytest.fail(f"{path} reached state {state!r} instead of 'ready': {text}")
        return module_page

    return open_booted
