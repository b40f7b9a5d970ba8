"""axe-core for the browser tests: fetched once with `npm pack` into .cache/npm, checked against the
sha512 integrity npm publishes for that exact version, and run in a page or frame through
Playwright's evaluate (the DevTools protocol, which the page's Content-Security-Policy does not
govern; add_script_tag would add an inline script, which that policy refuses). It is never served
from dist/ nor fetched from a CDN.

    axe_script()                 the verified axe.min.js on disk
    axe_violations(target, ...)  run axe in a Page or Frame; a list of short descriptions
                                 ("color-contrast: #x, #y"), empty when the page passes
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_VERSION = "4.11.0"
# `npm view axe-core@4.11.0 dist.integrity`: the registry's sha512 of the tarball.
AXE_INTEGRITY = "sha512-ilYanEU8vxxBexpJd8cWM4ElSQq4QctCLKih0TSfjIfCQTeyH/6zVrmIJfLPrKTKJRbiG+cfnZbQIjAlJmF1jQ=="
CACHE = ROOT / ".cache" / "npm"

# WCAG 2.1 A and AA plus axe's best practices (landmarks, one h1, headings not empty, ...).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def axe_script(cache: Path = CACHE) -> Path:
    """axe.min.js of AXE_VERSION, extracted from the npm tarball after its integrity is checked."""
    target = cache / f"axe-core-{AXE_VERSION}.min.js"
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"axe-core-{AXE_VERSION}.tgz"
    if not tarball.is_file():
        subprocess.run(["npm", "pack", f"axe-core@{AXE_VERSION}", "--silent"], cwd=cache, check=True,
                       stdout=subprocess.DEVNULL)
    got = _integrity(tarball)
    if got != AXE_INTEGRITY:
        tarball.unlink()
        raise RuntimeError(f"axe-core {AXE_VERSION} tarball has integrity {got}, expected {AXE_INTEGRITY}")
    with tarfile.open(tarball) as tar:
        data = tar.extractfile("package/axe.min.js").read()
    partial = target.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def axe_violations(target, *, include: str | None = None) -> list[str]:
    """Run axe-core in `target` (a Playwright Page or Frame); one line per violation with the
    selectors of (at most four of) its nodes."""
    if not target.evaluate("typeof window.axe === 'object'"):
        target.evaluate(axe_script().read_text(encoding="utf-8"))
    result = target.evaluate(
        """async ([tags, include]) => {
             const r = await axe.run(include ? {include: [include]} : document,
                                     {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
             return r.violations.map((v) => `${v.id} (${v.impact}): ` +
               v.nodes.slice(0, 4).map((n) => n.target.join(' ') + (n.failureSummary ? ' [' +
                 n.failureSummary.split('\\n').slice(1, 2).join('').trim() + ']' : '')).join('; ') +
               (v.nodes.length > 4 ? ` (+${v.nodes.length - 4} more)` : ''));
           }""",
        [AXE_TAGS, include])
    return result


# ---------------------------------------------------------------------------------------------
# Waiting for the page, and where things are on screen

SETTLED = """() => {
  const r = window.ragsim;
  return document.body.dataset.state === "ready" && r.shownRequest() !== null
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""


def settle(page):
    """Wait until the page shows the result of the request its controls describe."""
    page.wait_for_function(SETTLED, polling=100)
    return page


FRAME = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"  # two frames drawn


def announcer_idle(page):
    """Wait until the announcer has nothing waiting to be said: it speaks the verdict once the results
    rest (render/announce.js, 700 ms) and says so in its `data-pending`."""
    page.wait_for_function("() => document.getElementById('announcer').dataset.pending !== 'true'")
    return page


def quiet(page):
    """Wait until the page rests with no work at rest queued or running (asks.js): whatever the last
    move set going is done, so nothing sent after this was caused by it."""
    page.evaluate("() => window.ragsim.quiet()")
    return page


def restore(page, fragment: str):
    """The page at `fragment` (from a fresh hash change), settled. (The page rewrites its own hash
    300 ms after a change, so the wait is for the state the fragment sets, not for the hash.)"""
    size = re.search(r"(?:^|&)size=(\d+)", fragment)
    page.evaluate("(f) => { location.hash = 'size=25'; location.hash = f; }", fragment)
    if size:
        page.wait_for_function("(n) => window.ragsim.request().chunking.size === n", arg=int(size.group(1)))
    settle(page)
    page.evaluate(FRAME)


def at_laptop_size(booted_page, path: str = "index.html"):
    """`path` booted (the booted_page fixture) in a 1366x768 viewport, a common laptop's."""
    page = booted_page(path)
    page.set_viewport_size({"width": 1366, "height": 768})
    return page


def load_collection(page):
    """The example collection, from the example page (as a person clicking the button)."""
    page.evaluate("() => { location.hash = 'size=25'; location.hash = ''; }")
    settle(page)
    page.once("dialog", lambda dialog: dialog.accept())  # over text of one's own, the page asks first: yes
    page.get_by_role("button", name="Load example collection").click()
    page.wait_for_function("() => window.ragsim.request().documents.length === 6")
    return settle(page)


def boxes(page, selectors: list[str]) -> dict[str, dict]:
    """{selector: {top, bottom, left, right}} of the first visible match, in viewport pixels."""
    return page.evaluate("""(sels) => Object.fromEntries(sels.map((s) => {
        const el = [...document.querySelectorAll(s)].find((e) => e.getClientRects().length);
        if (!el) return [s, null];
        const r = el.getBoundingClientRect();
        return [s, {top: r.top, bottom: r.bottom, left: r.left, right: r.right}];
      }))""", selectors)


def off_screen(page, selectors: list[str]) -> dict[str, dict]:
    """The selectors whose box is not wholly inside the viewport (missing ones included)."""
    size = page.viewport_size
    return {s: b for s, b in boxes(page, selectors).items()
            if b is None or b["top"] < -0.5 or b["left"] < -0.5
            or b["bottom"] > size["height"] + 0.5 or b["right"] > size["width"] + 0.5}
