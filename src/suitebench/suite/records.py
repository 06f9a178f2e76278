"""Records of suite mode: one test's outcome on one program, one run of a suite on a program.

A *run* is one pytest session of a suite against one program under test.  Its per-test rows
come from the event log suitebench's plugin writes (:mod:`suitebench.suite.execute.eventlog`); a
pytest that died before its session's end is a run with ``status = crashed`` and the log kept, never
a row of zeros.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class TestStatus(StrEnum):
    """One test on one program, as the event log says (JUnit's semantics: a failure outside
    the test's call is an error)."""

    __test__ = False  # not a pytest test class

    PASSED = "passed"
    FAILED = "failed"  # the test body failed (an assertion, an exception)
    ERROR = "error"  # setup/teardown failed, the file did not collect, or the run died in it
    SKIPPED = "skipped"
    TIMEOUT = "timeout"  # a phase ran past the per-test limit (a failure of that test only)
    NOT_RUN = "not_run"  # pytest never reached it (the run crashed before it)

    @property
    def fails(self) -> bool:
        """Whether this outcome kills the program (failed, error or timeout)."""
        return self in (TestStatus.FAILED, TestStatus.ERROR, TestStatus.TIMEOUT)


class RunStatus(StrEnum):
    """How one pytest session ended, apart from its tests' outcomes."""

    OK = "ok"  # pytest's session ran to its end (the event log says so)
    CRASHED = "crashed"  # pytest died or was killed before its end; the rows it reached
    SANDBOX_ERROR = "sandbox_error"  # the harness failed, not the suite


@dataclass(frozen=True)
class SuiteRun:
    """One suite run against one program: per-test outcomes keyed by pytest node id.

    ``collect_errors`` lists the files (node ids such as ``tests/test_x.py``) that did not
    collect: every test of such a file counts as ``error`` on this program.
    """

    status: RunStatus
    tests: dict[str, TestStatus] = field(default_factory=dict)
    collect_errors: tuple[str, ...] = ()
    exit_code: int | None = None
    wall_time: float = 0.0
    log: str = ""
    message: str = ""
    # pytest's one-line reason per failed, errored or skipped test (and per file that did
    # not collect): the exception and its message, or the skip's reason.
    messages: dict[str, str] = field(default_factory=dict)
    coverage: dict[str, Any] | None = None  # per-test coverage, when this run recorded it
    # The fingerprint of the program's globals after collection (a reference run, for
    # import-time impact: ``{"fingerprint": {...} | None, "reason", "collected"}``).
    fingerprint: dict[str, Any] | None = None
    # An import-time mutant's run chose its tests itself: which (None: all) and why.
    selected: tuple[str, ...] | None = None
    selection_reason: str = ""
    # The test this run ended in (the output or memory limit, the wall clock, the
    # interpreter's death) and the cause, as the run saw it: a suspect until a fresh run ends
    # in it again (a test may only have been running when an earlier one's damage struck).
    ended_in: tuple[str, str] | None = None
    # Tests confirmed to end the runs they run in, with the cause: their fault alone; the tests
    # after them ran in fresh runs (:mod:`suitebench.suite.execute.continuation`).
    culprits: dict[str, str] = field(default_factory=dict)
    # Each finished test's seconds, setup to teardown (the reference's: per-test limits).
    seconds: dict[str, float] = field(default_factory=dict)
    # Tests that timed out having used their limit of CPU time: no confirmation needed.
    on_cpu: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "coverage": self.coverage,
            "fingerprint": self.fingerprint,
            "selected": None if self.selected is None else list(self.selected),
            "selection_reason": self.selection_reason,
            "ended_in": None if self.ended_in is None else list(self.ended_in),
            "culprits": self.culprits,
            "seconds": self.seconds,
            "on_cpu": list(self.on_cpu),
            "status": str(self.status),
            "tests": {k: str(v) for k, v in self.tests.items()},
            "collect_errors": list(self.collect_errors),
            "exit_code": self.exit_code,
            "wall_time": round(self.wall_time, 4),
            "log": self.log,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SuiteRun:
        return cls(
            status=RunStatus(d["status"]),
            tests={k: TestStatus(v) for k, v in d.get("tests", {}).items()},
            collect_errors=tuple(d.get("collect_errors", ())),
            exit_code=d.get("exit_code"),
            wall_time=float(d.get("wall_time", 0.0)),
            log=d.get("log", ""),
            message=d.get("message", ""),
            messages=dict(d.get("messages") or {}),
            coverage=d.get("coverage"),
            fingerprint=d.get("fingerprint"),
            selected=None if d.get("selected") is None else tuple(d["selected"]),
            selection_reason=d.get("selection_reason", ""),
            ended_in=None if not d.get("ended_in") else (d["ended_in"][0], d["ended_in"][1]),
            culprits=dict(d.get("culprits") or {}),
            seconds={k: float(v) for k, v in (d.get("seconds") or {}).items()},
            on_cpu=tuple(d.get("on_cpu") or ()),
        )

    def status_of(self, test_id: str) -> TestStatus:
        """This run's outcome for a test, attributing collection errors to their file (or to
        the directory holding it: a ``conftest.py`` that did not import)."""
        status = self.tests.get(test_id)
        if status is not None:
            return status
        if self.broken_container(test_id) is not None:
            return TestStatus.ERROR
        return TestStatus.NOT_RUN

    def broken_container(self, test_id: str) -> str | None:
        """The file or directory of ``test_id`` that did not collect in this run, if any."""
        file = test_file(test_id)
        for broken in self.collect_errors:
            if file == broken or file.startswith(broken.rstrip("/") + "/"):
                return broken
        return None

    def message_of(self, test_id: str) -> str:
        """Why a test failed, errored or was skipped in this run ('' if nothing says): its own
        message, else its file's (or directory's) collection error (a mutant that broke the
        import)."""
        own = self.messages.get(test_id)
        if own:
            return own
        broken = self.broken_container(test_id) if test_id not in self.tests else None
        return self.messages.get(broken or test_file(test_id)) or ""


def test_file(test_id: str) -> str:
    """The file part of a pytest node id (``tests/test_a.py::test_b[1]`` -> ``tests/test_a.py``)."""
    return test_id.split("::", 1)[0]


test_file.__test__ = False  # type: ignore[attr-defined]
