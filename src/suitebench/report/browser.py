"""Open a page in headless Chromium and say what a reader would see: a small DevTools client.

The report promises a page that renders with no network and no console error; the only honest
check is to open it in a real browser. :class:`Chromium` starts Debian's ``chromium`` headless
with ``--remote-debugging-pipe`` (the DevTools protocol over two pipes: no port, no socket),
loads a page, collects every console message, uncaught exception and browser log entry (a
blocked request or a Content-Security-Policy violation lands there), evaluates JavaScript in
the page, and takes screenshots. It is used by the tests and by ``scripts/report_screenshot.py``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BrowserError", "Chromium", "ConsoleEntry", "find_chromium"]

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """Chromium is missing, died, or did not answer in time."""


def find_chromium() -> str | None:
    """The path of a Chromium binary on PATH (``SUITEBENCH_CHROMIUM`` overrides), or None."""
    env = os.environ.get("SUITEBENCH_CHROMIUM")
    if env:
        return env
    for name in _CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass(frozen=True)
class ConsoleEntry:
    """One message the page or the browser logged."""

    source: str  # console, exception or log
    level: str
    text: str


@dataclass
class Chromium:
    """A headless Chromium driven over the DevTools pipe; use as a context manager."""

    binary: str | None = None
    width: int = 1400
    height: int = 1000
    timeout: float = 60.0
    scripts: bool = True
    entries: list[ConsoleEntry] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._profile: tempfile.TemporaryDirectory[str] | None = None
        self._next = 0
        self._buf = b""
        self._events: list[dict[str, Any]] = []
        self._session = ""

    # -- process and protocol -----------------------------------------------------------

    def __enter__(self) -> Chromium:
        binary = self.binary or find_chromium()
        if binary is None:
            raise BrowserError("no chromium on PATH (Debian: apt-get install chromium)")
        self._profile = tempfile.TemporaryDirectory(prefix="suitebench-chromium-")
        to_r, to_w = os.pipe()  # we write commands, chromium reads them on fd 3
        from_r, from_w = os.pipe()  # chromium writes answers on fd 4

        def wire() -> None:
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        args = [
            binary,
            "--headless",
            "--remote-debugging-pipe",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--mute-audio",
            f"--user-data-dir={self._profile.name}",
            f"--window-size={self.width},{self.height}",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=wire,  # the pipes must sit at fds 3 and 4 in the child
        )
        os.close(to_r)
        os.close(from_w)
        self._w = to_w
        self._r = from_r
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self._session = attached["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )
        if not self.scripts:
            self.call("Emulation.setScriptExecutionDisabled", {"value": True}, session=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc is not None:
            try:
                self.call("Browser.close", timeout=5)
            except (BrowserError, OSError):
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            for fd in (self._w, self._r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._proc = None
        if self._profile is not None:
            self._profile.cleanup()
            self._profile = None

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise BrowserError("chromium closed the DevTools pipe (did it crash?)")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        msg: dict[str, Any] = json.loads(raw)
        return msg

    def _record(self, msg: dict[str, Any]) -> None:
        method = msg.get("method", "")
        params = msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
            )
            self.entries.append(ConsoleEntry("console", params.get("type", ""), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.entries.append(ConsoleEntry("exception", "error", str(text)))
        elif method == "Log.entryAdded":
            e = params.get("entry", {})
            self.entries.append(ConsoleEntry("log", e.get("level", ""), e.get("text", "")))
        self._events.append(msg)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one DevTools command and return its result (events seen meanwhile are kept)."""
        self._next += 1
        ident = self._next
        msg: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self._session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == ident:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self._record(answer)

    def _wait_event(self, method: str, deadline: float) -> None:
        if any(e.get("method") == method for e in self._events):
            return
        while True:
            msg = self._read_message(deadline)
            self._record(msg)
            if msg.get("method") == method:
                return

    # -- what a test or a docs script asks ----------------------------------------------

    def open(self, url: str, settle: float = 0.3) -> None:
        """Load ``url`` and wait for its load event (then ``settle`` seconds for scripts)."""
        self._events = [e for e in self._events if e.get("method") != "Page.loadEventFired"]
        nav = self.call("Page.navigate", {"url": url}, session=True)
        if nav.get("errorText"):
            raise BrowserError(f"cannot open {url}: {nav['errorText']}")
        self._wait_event("Page.loadEventFired", time.monotonic() + self.timeout)
        end = time.monotonic() + settle
        while time.monotonic() < end:
            self.evaluate("1")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited if it is a promise)."""
        r = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in r:
            raise BrowserError(f"evaluation failed: {r['exceptionDetails'].get('text')}")
        return r.get("result", {}).get("value")

    def errors(self) -> list[ConsoleEntry]:
        """Every error or warning the page or the browser logged so far."""
        return [e for e in self.entries if e.level in ("error", "warning", "assert")]

    def screenshot(self, path: Path, *, full_page: bool = False, max_height: int = 6000) -> Path:
        """A PNG of the viewport (or of the whole page, up to ``max_height`` pixels)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            height = int(self.evaluate("document.documentElement.scrollHeight") or self.height)
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": self.width,
                "height": min(height, max_height),
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
