"""A run from the event log the plugin writes inside the sandbox: the one record.

Every test's outcome, message and seconds come from the log's lines
(:mod:`suitebench.suite.inside.wire` names them): the tests that started, each phase's report,
the files that did not collect, and the session's end (no JUnit XML is written beside it).  A
run whose log ends with the session's end finished: its rows are the tests that reported (the
tests pytest's JUnit XML would list).  A log without that end is a crashed
run's: the rows it reached, the test it was in when it died an ``error`` (``timeout`` if the
faulthandler watchdog fired), the rest ``not_run``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from suitebench.suite.inside import untrusted, wire
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus


def read_events(path: Path) -> list[wire.Event]:
    """The plugin's JSON lines (:data:`.wire.Event`); a torn last line (the process died
    writing it), or one that is no event at all, is ignored."""
    written = untrusted.read_text(path)  # left by the program under test: no link followed
    if written is None:
        return []
    events: list[wire.Event] = []
    for line in written.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and isinstance(event.get("event"), str):
            events.append(cast(wire.Event, event))
    return events


_RANK = {
    TestStatus.PASSED: 0,
    TestStatus.SKIPPED: 1,
    TestStatus.ERROR: 2,
    TestStatus.FAILED: 3,
    TestStatus.TIMEOUT: 4,
}


def _worse(a: TestStatus | None, b: TestStatus) -> TestStatus:
    return b if a is None or _RANK.get(b, 0) >= _RANK.get(a, 0) else a


def _report_status(event: wire.Report) -> TestStatus:
    """One phase's (or subtest's) report as a status, with JUnit's semantics: a failure
    outside the call is an error."""
    outcome = event.get("outcome")
    if event.get("timeout"):
        return TestStatus.TIMEOUT
    if outcome == "failed":
        return TestStatus.FAILED if event.get("when") == "call" else TestStatus.ERROR
    if outcome == "skipped":
        return TestStatus.SKIPPED
    return TestStatus.PASSED


@dataclass
class RunLog:
    """What one run's event log says, read in one pass: each test's status by its reports
    (JUnit semantics per phase; a test collected but never started ``not_run``), the files
    that did not collect, the last test started, the tests whose teardown reported, those
    that reported anything but a passing setup, and the run's own words: whether it ran by
    the direct protocol, whether its session ended, why the plugin ended it, each finished
    test's seconds, the tests that timed out on the CPU, the messages, and what an
    import-time mutant's run chose."""

    statuses: dict[str, TestStatus] = field(default_factory=dict)
    collect_errors: list[str] = field(default_factory=list)
    current: str | None = None
    finished: set[str] = field(default_factory=set)
    reported: set[str] = field(default_factory=set)
    direct: bool = False
    session_ended: bool = False
    ended_reason: str | None = None
    # each finished test's seconds from its start to the end of its teardown (what per-test
    # limits of a mutant's run are derived from)
    seconds: dict[str, float] = field(default_factory=dict)
    # the tests that timed out having used their limit of CPU time (their timeouts are the
    # program's doing, not a loaded machine's), in the order they did
    on_cpu: tuple[str, ...] = ()
    # the first failure reason per test (else its skip reason), and per file that did not
    # collect: what pytest's one-line summary would say
    messages: dict[str, str] = field(default_factory=dict)
    # an import-time mutant's run chose its tests: (which, None for all; why)
    selected: tuple[tuple[str, ...] | None, str] | None = None

    def finished_rows(self) -> tuple[dict[str, TestStatus], list[str]]:
        """The rows of a run that finished, and the files that did not collect: every test
        that reported anything but a passing setup (what pytest's JUnit XML would list), with
        the outcome its reports add up to.  A run by the direct protocol
        (:mod:`suitebench.suite.inside.batch.direct`, whose passing tests are logged only
        here) keeps every test it reached."""
        if self.direct:
            tests, broken, _ = self.crashed_rows(died_of_timeout=False)
            return {k: v for k, v in tests.items() if v is not TestStatus.NOT_RUN}, broken
        rows = {k: v for k, v in self.statuses.items() if k in self.reported}
        return rows, list(self.collect_errors)

    def crashed_rows(
        self, *, died_of_timeout: bool
    ) -> tuple[dict[str, TestStatus], list[str], str | None]:
        """The rows a crashed run reached, and the test it ended in (None: it ended outside
        any test), an ``error`` (``timeout`` if it ``died_of_timeout``).

        Subtests (pytest's ``subtests`` fixture) count as plain pytest counts them: one that
        fails fails its test, one that skips or passes leaves the test's own outcome (so a test
        whose subtests partly skip passes and is valid), and a test whose every subtest
        skipped is skipped."""
        tests = dict(self.statuses)
        culprit = (
            self.current if self.current is not None and self.current not in self.finished else None
        )
        if culprit is not None:
            tests[culprit] = TestStatus.TIMEOUT if died_of_timeout else TestStatus.ERROR
        return tests, list(self.collect_errors), culprit


def read_log(path: Path) -> RunLog:
    """A run's event log, read once (:func:`summarize`)."""
    return summarize(read_events(path))


def summarize(events: list[wire.Event]) -> RunLog:
    """Everything :class:`RunLog` holds, in one pass over the events."""
    log = RunLog()
    tests = log.statuses
    subtests: dict[str, set[TestStatus]] = {}  # node id -> its subtests' statuses
    failures: dict[str, str] = {}
    skips: dict[str, str] = {}
    on_cpu: dict[str, None] = {}
    for event in events:
        if event["event"] == wire.EVENT_COLLECTED:
            for collected in event.get("nodeids", []):
                tests.setdefault(str(collected), TestStatus.NOT_RUN)
        elif event["event"] == wire.EVENT_COLLECT_ERROR:
            nodeid = str(event.get("nodeid", ""))
            if nodeid not in log.collect_errors:
                log.collect_errors.append(nodeid)
            message = event.get("message")
            if message is not None:
                failures.setdefault(nodeid, str(message))
        elif event["event"] == wire.EVENT_START:
            log.current = nodeid = str(event.get("nodeid", ""))
            tests[nodeid] = TestStatus.PASSED
        elif event["event"] == wire.EVENT_REPORT:
            _report(log, event, subtests, failures, skips, on_cpu)
        elif event["event"] == wire.EVENT_DIRECT:
            log.direct = True
        elif event["event"] == wire.EVENT_FINISHED:
            log.session_ended = True
        elif event["event"] == wire.EVENT_ENDED:
            if log.ended_reason is None:
                log.ended_reason = str(event.get("reason", "the plugin ended the run"))
        elif event["event"] == wire.EVENT_SELECTED:
            chosen = event.get("nodeids")
            log.selected = (None if chosen is None else tuple(chosen), str(event.get("reason", "")))
    for nodeid, statuses in subtests.items():
        if statuses == {TestStatus.SKIPPED} and tests.get(nodeid) is TestStatus.PASSED:
            tests[nodeid] = TestStatus.SKIPPED
    log.on_cpu = tuple(on_cpu)
    log.messages = {**skips, **failures}
    return log


def _report(
    log: RunLog,
    event: wire.Report,
    subtests: dict[str, set[TestStatus]],
    failures: dict[str, str],
    skips: dict[str, str],
    on_cpu: dict[str, None],
) -> None:
    nodeid = str(event.get("nodeid", ""))
    when, outcome = event.get("when"), str(event.get("outcome"))
    message = event.get("message")
    if message is not None:
        if outcome == "failed":
            failures.setdefault(nodeid, str(message))
        elif outcome == "skipped":
            skips.setdefault(nodeid, str(message))
    if not (when == "setup" and outcome == "passed"):
        log.reported.add(nodeid)
    if event.get("timeout") and event.get("on_cpu"):
        on_cpu[nodeid] = None
    if when == "teardown" and "seconds" in event:
        log.seconds[str(event["nodeid"])] = float(event["seconds"])
    status = _report_status(event)
    if event.get("subtest"):
        subtests.setdefault(nodeid, set()).add(status)
        if status is TestStatus.SKIPPED:
            return
    log.statuses[nodeid] = _worse(log.statuses.get(nodeid), status)
    if when == "teardown":
        log.finished.add(nodeid)


# faulthandler's words when the watchdog fires
_WATCHDOG_FIRED = re.compile(r"Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!")
_ERROR_LINE = re.compile(r"^(?:E\s+)?(?:\w+\.)*\w*(?:Error|Exception)\b.*$|^ERROR: .+$", re.M)
LOG_TAIL = 8000  # the characters of a run's log kept


def run_of(
    run_log: RunLog,
    *,
    log: str,
    exit_code: int | None,
    wall: float,
    killed: bool,
    reason: str | None = None,
    cause: str = "",
    fingerprint: dict[str, Any] | None = None,
) -> SuiteRun:
    """A run as its event log tells it: finished when the log ends with the session's end
    (and the sandbox did not kill it), crashed otherwise -- pytest died, or was killed, before
    its end: the rows it reached, the test it ended in its culprit (a ``timeout`` when the
    wall clock or the watchdog ended it, an ``error`` else).

    ``log``: the tail of its output; ``killed``: the sandbox ended it at its wall-clock limit;
    ``reason``: why the harness lost it, in its words; ``cause``: what ended it early, as the
    sandbox saw it (the output or memory limit, the wall clock, a signal); ``fingerprint``: the
    program's globals after collection, as a reference run wrote them."""
    messages = dict(run_log.messages)
    extra: dict[str, Any] = {"seconds": run_log.seconds, "on_cpu": run_log.on_cpu}
    if fingerprint is not None:
        extra["fingerprint"] = fingerprint
    if run_log.selected is not None:
        extra["selected"], extra["selection_reason"] = run_log.selected
    if run_log.session_ended and not killed:
        status, said, ended_in = RunStatus.OK, "", None
        tests, broken = run_log.finished_rows()
    else:
        status = RunStatus.CRASHED
        tests, broken, said, ended_in = _crashed(run_log, log, exit_code, killed, reason, cause)
        if ended_in is not None:
            messages[ended_in[0]] = f"the run ended in this test: {ended_in[1]}"
    return SuiteRun.from_maps(
        status,
        tests,
        collect_errors=tuple(broken),
        exit_code=exit_code,
        wall_time=wall,
        log=log[-LOG_TAIL:],
        message=said,
        messages=messages,
        ended_in=ended_in,
        **extra,
    )


def _crashed(
    run_log: RunLog,
    log: str,
    exit_code: int | None,
    killed: bool,
    reason: str | None,
    cause: str,
) -> tuple[dict[str, TestStatus], list[str], str, tuple[str, str] | None]:
    """A crashed run's rows, files that did not collect, what it says of itself, and the test
    it ended in with what ended it."""
    if killed:
        message = "killed at the per-program wall-clock limit"
    else:
        message = "its event log has no end of the session"
    if reason is not None:
        message = reason
    watchdog = _WATCHDOG_FIRED.search(log) is not None
    died_of_timeout = killed or watchdog
    tests, broken, culprit = run_log.crashed_rows(died_of_timeout=died_of_timeout)
    if watchdog:
        cause = "the per-test watchdog ended it (a test the time limit could not stop)"
    ended = run_log.ended_reason
    if ended is not None and not killed:
        cause = ended
    ended_by = cause or message
    said = f"pytest did not finish: {ended_by}"
    if f"exit code {exit_code}" not in said:
        said += f" (exit code {exit_code})"
    if not tests and not broken and not killed and (error := _last_error(log)):
        said += f": {error}"  # pytest stopped before any test (a conftest, a usage error)
    return tests, broken, said, None if culprit is None else (culprit, ended_by)


def _last_error(log: str) -> str:
    """The last line of a run's log that names an error (``E   ModuleNotFoundError: ...``,
    ``ERROR: usage ...``), stripped, at most 300 characters; empty when none does."""
    found = _ERROR_LINE.findall(log)
    return re.sub(r"^E\s+", "", found[-1]).strip()[:300] if found else ""
