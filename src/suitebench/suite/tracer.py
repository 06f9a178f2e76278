"""Per-test coverage of the program under test, recorded inside the pytest process.

Coverage-guided test selection (what mutmut, Stryker and PIT call per-test coverage) runs on a
mutant only the tests that reach the code it changes.  This recorder says, for one run of the
suite on the reference, which functions of the program each test entered (by the first line of
their code object: ``co_firstlineno``, the ``def`` line or the first decorator's; module code
is 0).  Function granularity is what selection uses (a changed line counts as
reached whenever its function runs), and it is cheap: one trace call per function entered,
none per line.  Lines executed outside
any test -- while pytest configures and collects (module-level code of the package, a test
module calling it at import) or between tests -- belong to the context ``OUTSIDE``; lines run
while setting up a fixture shared beyond one test belong to ``fixture:<name>``, and so to every
test that uses that fixture.  A test that starts a process or forks is listed in ``spawned``:
what that process ran is not seen here, so its coverage is unknown.

Python 3.11 has no ``sys.monitoring``; this is ``sys.settrace`` (and ``threading.settrace``)
with a global trace function that notes the frame's code and never asks for line events.
Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from types import FrameType
from typing import Any

OUTSIDE = "<outside tests>"
FIXTURE_PREFIX = "fixture:"
_SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}
)


class LineTracer:
    """Records ``{context: {file relative to root: {co_firstlineno, ...}}}`` while started."""

    def __init__(self, root: str, path: str) -> None:
        self.root = os.path.realpath(root).rstrip("/") + "/"
        self.path = path
        self.contexts: dict[str, dict[str, set[int]]] = {}
        self.name = OUTSIDE
        self.current = self._context(OUTSIDE)
        self.stack: list[tuple[str, dict[str, set[int]]]] = []
        self.fixtures: dict[str, list[str]] = {}
        self.spawned: set[str] = set()
        self._traced: dict[str, str | None] = {}  # co_filename -> path relative to root
        self.active = False

    def _context(self, name: str) -> dict[str, set[int]]:
        return self.contexts.setdefault(name, {})

    def _relative(self, filename: str) -> str | None:
        rel = self._traced.get(filename, "")
        if rel == "":
            rel = None
            if filename and not filename.startswith("<"):
                real = os.path.realpath(filename)
                if real.startswith(self.root):
                    rel = real[len(self.root) :]
            self._traced[filename] = rel
        return rel

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        rel = self._relative(code.co_filename)
        if rel is not None:
            functions = self.current.get(rel)
            if functions is None:
                functions = self.current[rel] = set()
            # Module code is 0: its first line may be a function's ``def``.
            functions.add(0 if code.co_name == "<module>" else code.co_firstlineno)
        return None

    def _audit(self, event: str, args: Any) -> None:
        if self.active and event in _SPAWN_EVENTS:
            self.spawned.add(self.name)

    def start(self) -> None:
        self.active = True
        sys.addaudithook(self._audit)
        threading.settrace(self._global)
        sys.settrace(self._global)

    def stop(self) -> None:
        self.active = False
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type,unused-ignore]

    def _switch(self, name: str) -> None:
        self.name = name
        self.current = self._context(name)

    def enter_test(self, nodeid: str, fixturenames: list[str]) -> None:
        self.fixtures[nodeid] = fixturenames
        self.stack.clear()
        self._switch(nodeid)

    def leave_test(self) -> None:
        self._switch(OUTSIDE)

    def enter_fixture(self, argname: str) -> None:
        self.stack.append((self.name, self.current))
        self._switch(FIXTURE_PREFIX + argname)

    def leave_fixture(self) -> None:
        if self.stack:
            self.name, self.current = self.stack.pop()

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "granularity": "function",
            "contexts": {
                ctx: {f: sorted(lines) for f, lines in files.items()}
                for ctx, files in self.contexts.items()
            },
            "fixtures": self.fixtures,
            "spawned": sorted(self.spawned),
        }

    def write(self) -> None:
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh)
