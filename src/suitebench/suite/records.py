"""Records of suite mode: one test's outcome on one program, one run of a suite on a program.

A *run* is one pytest session of a suite against one program under test.  Its per-test rows
come from the event log suitebench's plugin writes (:mod:`suitebench.suite.execute.eventlog`); a
pytest that died before its session's end is a run with ``status = crashed`` and the log kept, never
a row of zeros.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


@dataclass(frozen=True, slots=True)
class TestOutcome:
    """One test's outcome in one run: its status and what the run says about it."""

    __test__ = False  # not a pytest test class

    status: TestStatus
    # pytest's one-line reason when the test failed, errored or was skipped: the exception and
    # its message, or the skip's reason (None: the run gave none).
    message: str | None = None
    # The test's seconds, setup to teardown, when it finished (the reference's: per-test limits).
    seconds: float | None = None
    # It timed out having used its limit of CPU time: no confirmation needed.
    on_cpu: bool = False
    # Confirmed to end the runs it runs in, with the cause: its fault alone; the tests after it
    # ran in fresh runs (:mod:`suitebench.suite.execute.continuation`).
    culprit: str | None = None


@dataclass(frozen=True)
class SuiteRun:
    """One suite run against one program: per-test outcomes keyed by pytest node id.

    ``collect_errors`` lists the files (node ids such as ``tests/test_x.py``) that did not
    collect: every test of such a file counts as ``error`` on this program.
    """

    status: RunStatus
    outcomes: dict[str, TestOutcome] = field(default_factory=dict)
    collect_errors: tuple[str, ...] = ()
    exit_code: int | None = None
    wall_time: float = 0.0
    log: str = ""
    message: str = ""
    # The one-line reason per node id that has no outcome here: a file (or directory) that did
    # not collect.
    collect_messages: dict[str, str] = field(default_factory=dict)
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

    @classmethod
    def from_maps(
        cls,
        status: RunStatus,
        tests: Mapping[str, TestStatus] | None = None,
        *,
        messages: Mapping[str, str] | None = None,
        seconds: Mapping[str, float] | None = None,
        on_cpu: Iterable[str] = (),
        culprits: Mapping[str, str] | None = None,
        **rest: Any,
    ) -> SuiteRun:
        """A run from its facts per node id as the event log and the store give them: the
        statuses, the messages (a node id without a status: a file that did not collect), the
        finished tests' seconds, the tests that timed out on the CPU and the confirmed culprits.
        A fact about a node id with no status other than a message has no place and is left
        out (no run writes one)."""
        messages = messages or {}
        seconds = seconds or {}
        culprits = culprits or {}
        cpu = set(on_cpu)
        outcomes = {
            test: TestOutcome(
                TestStatus(test_status),
                messages.get(test),
                None if (took := seconds.get(test)) is None else float(took),
                test in cpu,
                culprits.get(test),
            )
            for test, test_status in (tests or {}).items()
        }
        others = {k: v for k, v in messages.items() if k not in outcomes}
        return cls(status=status, outcomes=outcomes, collect_messages=others, **rest)

    def to_dict(self) -> dict[str, Any]:
        """The stored form: one map per fact (the shape every store so far holds)."""
        items = self.outcomes.items()
        return {
            "messages": {
                **self.collect_messages,
                **{t: o.message for t, o in items if o.message is not None},
            },
            "coverage": self.coverage,
            "fingerprint": self.fingerprint,
            "selected": None if self.selected is None else list(self.selected),
            "selection_reason": self.selection_reason,
            "ended_in": None if self.ended_in is None else list(self.ended_in),
            "culprits": {t: o.culprit for t, o in items if o.culprit is not None},
            "seconds": {t: o.seconds for t, o in items if o.seconds is not None},
            "on_cpu": [t for t, o in items if o.on_cpu],
            "status": str(self.status),
            "tests": {t: str(o.status) for t, o in items},
            "collect_errors": list(self.collect_errors),
            "exit_code": self.exit_code,
            "wall_time": round(self.wall_time, 4),
            "log": self.log,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SuiteRun:
        return cls.from_maps(
            RunStatus(d["status"]),
            d.get("tests", {}),
            messages=d.get("messages") or {},
            seconds=d.get("seconds") or {},
            on_cpu=d.get("on_cpu") or (),
            culprits=d.get("culprits") or {},
            collect_errors=tuple(d.get("collect_errors", ())),
            exit_code=d.get("exit_code"),
            wall_time=float(d.get("wall_time", 0.0)),
            log=d.get("log", ""),
            message=d.get("message", ""),
            coverage=d.get("coverage"),
            fingerprint=d.get("fingerprint"),
            selected=None if d.get("selected") is None else tuple(d["selected"]),
            selection_reason=d.get("selection_reason", ""),
            ended_in=None if not d.get("ended_in") else (d["ended_in"][0], d["ended_in"][1]),
        )

    def statuses(self) -> dict[str, TestStatus]:
        """Each test's status in this run, in the run's order."""
        return {t: o.status for t, o in self.outcomes.items()}

    def reached(self, test_id: str) -> bool:
        """Whether this run gave a test an outcome (any status but not_run)."""
        outcome = self.outcomes.get(test_id)
        return outcome is not None and outcome.status is not TestStatus.NOT_RUN

    def seconds_of(self, test_id: str) -> float | None:
        """A test's seconds in this run (None: it did not finish)."""
        outcome = self.outcomes.get(test_id)
        return None if outcome is None else outcome.seconds

    def on_cpu(self, test_id: str) -> bool:
        """Whether a test timed out in this run having used its limit of CPU time."""
        outcome = self.outcomes.get(test_id)
        return outcome is not None and outcome.on_cpu

    def own_message(self, test_id: str) -> str | None:
        """The message this run gave a node id itself (None: it gave none)."""
        outcome = self.outcomes.get(test_id)
        return self.collect_messages.get(test_id) if outcome is None else outcome.message

    def status_of(self, test_id: str) -> TestStatus:
        """This run's outcome for a test, attributing collection errors to their file (or to
        the directory holding it: a ``conftest.py`` that did not import)."""
        outcome = self.outcomes.get(test_id)
        if outcome is not None:
            return outcome.status
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
        own = self.own_message(test_id)
        if own:
            return own
        broken = self.broken_container(test_id) if test_id not in self.outcomes else None
        return self.collect_messages.get(broken or test_file(test_id)) or ""


def test_file(test_id: str) -> str:
    """The file part of a pytest node id (``tests/test_a.py::test_b[1]`` -> ``tests/test_a.py``)."""
    return test_id.split("::", 1)[0]


test_file.__test__ = False  # type: ignore[attr-defined]
