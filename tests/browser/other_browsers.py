"""Firefox and WebKit for the browser tests, driven without Playwright (whose own builds of them are
a download): Debian's firefox-esr over WebDriver BiDi (a WebSocket), and WebKitGTK's MiniBrowser
through WebKitWebDriver (classic WebDriver, JSON over HTTP) under Xvfb.

    open_browser(name)      a Tab for "firefox" or "webkit", or pytest.fail/skip with the reason
    Tab.goto(url)           navigate and wait for the load
    Tab.evaluate(js)        the JSON value of a JavaScript expression (a promise is awaited)
    Tab.wait_for(js, s)     poll the expression until it is truthy, failing after s seconds
    Tab.click(selector)     a person's click on an element (trusted: it carries the user's activation)
    Tab.close()             end the session and every process this module started

Each engine is found at its Debian path; `python3 build.py test` installs the packages as root
(firefox-esr, webkit2gtk-driver, xvfb). Where they are missing the tests fail with the command to run
when this machine should have them (root with apt-get, as in CI), and are skipped with it elsewhere.
Standard library only, plus websocket-client (the test extras) for BiDi."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

FIREFOX = Path("/usr/bin/firefox-esr")
WEBKIT_DRIVER = Path("/usr/bin/WebKitWebDriver")
XVFB = Path("/usr/bin/Xvfb")
# WebKitGTK's own small browser, the one WebKitWebDriver starts (its folder names the architecture)
MINIBROWSER = next(iter(sorted(Path("/usr/lib").glob("*/webkit2gtk-4.1/MiniBrowser"))), Path("/usr/lib/MiniBrowser"))
PACKAGES = {"firefox": ["firefox-esr"], "webkit": ["webkit2gtk-driver", "xvfb"]}
NEEDS = {"firefox": [FIREFOX], "webkit": [WEBKIT_DRIVER, MINIBROWSER, XVFB]}
# A profile that makes no background requests: no updates, telemetry, remote settings or first-run pages.
FIREFOX_PREFS = {
    "app.update.disabledForTesting": True, "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore", "browser.startup.page": 0,
    "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.reportingpolicy.firstRun": False,
    "services.settings.server": "http://127.0.0.1:9/", "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False, "browser.safebrowsing.update.enabled": False,
    "extensions.update.enabled": False, "app.normandy.enabled": False, "browser.ping-centre.telemetry": False,
    "remote.active-protocols": 1,
}


def missing(name: str) -> None:
    """Fail (where the packages belong: root with apt-get) or skip, naming the command, when `name`'s engine is absent."""
    absent = [str(p) for p in NEEDS[name] if not p.exists()]
    if not absent:
        return
    command = f"apt-get install -y {' '.join(PACKAGES[name])}"
    reason = f"{name} is not installed ({', '.join(absent)} missing): run `{command}` as root"
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        pytest.fail(reason + " (python3 build.py test does)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen(argv, start_new_session=True, **kw)


def stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, signal.SIGKILL)


def start_xvfb() -> tuple[subprocess.Popen, str]:
    """An X server on a free display: (its process, the display's number)."""
    read, write = os.pipe()
    xvfb = start([str(XVFB), "-displayfd", str(write), "-screen", "0", "1366x900x24", "-nolisten", "tcp"],
                 pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        return xvfb, f.readline().strip()


def webkit_console(url: str, until) -> str:
    """WebKit's console while MiniBrowser shows `url` (started directly: under WebDriver it does not
    write its console out), up to the moment `until()` is true (60 s at most)."""
    missing("webkit")
    xvfb, display = start_xvfb()
    with tempfile.TemporaryFile() as log:
        browser = start([str(MINIBROWSER), "--enable-write-console-messages-to-stdout=true", url],
                        env={**os.environ, "DISPLAY": f":{display}"}, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while not until() and time.monotonic() < deadline and browser.poll() is None:
                time.sleep(0.2)
        finally:
            stop(browser)
            stop(xvfb)
        log.seek(0)
        return log.read().decode(errors="replace")


def wrapped(expression: str) -> str:
    """A function body returning the expression's value as JSON text (promises awaited)."""
    return f"return (async () => JSON.stringify(await ({expression})))()"


class Tab:
    """One page of one engine (see the module's docstring)."""

    processes: list[subprocess.Popen]
    log: object  # a temporary file: the browser's or its driver's output

    def wait_for(self, expression: str, seconds: float = 60, what: str = "") -> object:
        deadline = time.monotonic() + seconds
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f"{self.name}: waited {seconds} s for {what or expression}")
            time.sleep(0.2)

    def close(self) -> None:
        for process in reversed(self.processes):
            stop(process)


class FirefoxTab(Tab):
    name = "firefox"

    def __init__(self) -> None:
        import websocket  # websocket-client, in the test extras

        self.profile = tempfile.TemporaryDirectory(prefix="ragsim-firefox-")
        prefs = "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in FIREFOX_PREFS.items())
        Path(self.profile.name, "user.js").write_text(prefs, encoding="utf-8")
        self.log = tempfile.TemporaryFile()
        self.processes = [start([str(FIREFOX), "--headless", "--no-remote", "--profile", self.profile.name,
                                 "--remote-debugging-port=0", "about:blank"], stdout=self.log, stderr=subprocess.STDOUT)]
        url = self._listening()
        self.ws = websocket.create_connection(f"{url}/session", timeout=300, suppress_origin=True)
        self.next_id = 0
        self.call("session.new", {"capabilities": {}})
        self.context = self.call("browsingContext.getTree", {})["contexts"][0]["context"]

    def _listening(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.log.seek(0)
            found = re.search(rb"WebDriver BiDi listening on (ws://[\d.:]+)", self.log.read())
            if found:
                return found.group(1).decode()
            if self.processes[0].poll() is not None:
                break
            time.sleep(0.2)
        self.log.seek(0)
        self.close()
        pytest.fail(f"firefox-esr did not open WebDriver BiDi: {self.log.read()[-800:].decode(errors='replace')}")

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") != self.next_id:
                continue  # an event
            if message.get("type") == "error":
                raise AssertionError(f"firefox {method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def goto(self, url: str) -> None:
        self.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def evaluate(self, expression: str) -> object:
        result = self.call("script.callFunction", {
            "functionDeclaration": f"function () {{ {wrapped(expression)} }}", "awaitPromise": True,
            "target": {"context": self.context}})
        if result.get("type") == "exception":
            raise AssertionError(f"firefox: {result['exceptionDetails'].get('text')} in {expression[:200]}")
        value = result["result"]
        return json.loads(value["value"]) if value.get("type") == "string" else None

    def click(self, selector: str) -> None:
        """A person's click (trusted, with the user's activation) on the first match of `selector`."""
        found = self.call("script.evaluate", {
            "expression": f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                          "e.scrollIntoView({block: 'center'}); return e; })()",
            "awaitPromise": False, "target": {"context": self.context}})
        if found.get("type") != "success":
            raise AssertionError(f"firefox: no {selector} to click: {found.get('exceptionDetails')}")
        found = found["result"]
        at = {"type": "element", "element": {"sharedId": found["sharedId"]}}
        self.call("input.performActions", {"context": self.context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "x": 0, "y": 0, "origin": at},
                        {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    def close(self) -> None:
        try:
            self.call("session.end", {})
        except Exception:  # noqa: BLE001 - the browser may be gone already
            pass
        super().close()
        self.log.close()
        self.profile.cleanup()


class WebKitTab(Tab):
    name = "webkit"

    def __init__(self) -> None:
        xvfb, display = start_xvfb()
        self.processes = [xvfb]
        port = free_port()
        env = {**os.environ, "DISPLAY": f":{display}"}
        self.log = tempfile.TemporaryFile()
        self.processes.append(start([str(WEBKIT_DRIVER), f"--port={port}"], env=env,
                                    stdout=self.log, stderr=subprocess.STDOUT))
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                caps = {"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {"args": ["--automation"]}}}}
                self.session = self.call("POST", "/session", caps)["sessionId"]
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.close()
                    pytest.fail("WebKitWebDriver did not answer within 30 s")
                time.sleep(0.3)
        self.call("POST", f"/session/{self.session}/timeouts", {"script": 300_000})

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=330) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as exc:
            value = json.loads(exc.read() or b"{}").get("value", {})
            raise AssertionError(f"webkit {path}: {value.get('error')}: {value.get('message')}") from None

    def goto(self, url: str) -> None:
        self.call("POST", f"/session/{self.session}/url", {"url": url})

    def click(self, selector: str) -> None:
        """A person's click (trusted, with the user's activation) on the first match of `selector`."""
        found = self.call("POST", f"/session/{self.session}/element", {"using": "css selector", "value": selector})
        self.call("POST", f"/session/{self.session}/element/{next(iter(found.values()))}/click")

    def evaluate(self, expression: str) -> object:
        value = self.call("POST", f"/session/{self.session}/execute/sync", {"script": wrapped(expression), "args": []})
        return json.loads(value) if isinstance(value, str) else None

    def close(self) -> None:
        if getattr(self, "session", None):
            try:
                self.call("DELETE", f"/session/{self.session}")
            except (OSError, AssertionError):
                pass
        super().close()
        self.log.close()


def open_browser(name: str) -> Tab:
    missing(name)
    return FirefoxTab() if name == "firefox" else WebKitTab()
