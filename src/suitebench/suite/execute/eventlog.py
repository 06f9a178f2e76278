"""Per-test outcomes from the event log the plugin writes inside the sandbox: the one record.

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
from pathlib import Path
from typing import cast

from suitebench.suite.inside import wire
from suitebench.suite.records import TestStatus


def read_events(path: Path) -> list[wire.Event]:
    """The plugin's JSON lines (:data:`.wire.Event`); a torn last line (the process died
    writing it), or one that is no event at all, is ignored."""
    if not path.is_file():
        return []
    events: list[wire.Event] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
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


def _rows(
    events: list[wire.Event],
) -> tuple[dict[str, TestStatus], list[str], str | None, set[str]]:
    """(node id -> status by its reports, files that did not collect, the last test started,
    the tests whose teardown reported)."""
    tests: dict[str, TestStatus] = {}
    finished: set[str] = set()
    current: str | None = None
    collect_errors: list[str] = []
    subtests: dict[str, set[TestStatus]] = {}  # node id -> its subtests' statuses
    for event in events:
        if event["event"] == wire.EVENT_COLLECTED:
            for collected in event.get("nodeids", []):
                tests.setdefault(str(collected), TestStatus.NOT_RUN)
        elif event["event"] == wire.EVENT_COLLECT_ERROR:
            nodeid = str(event.get("nodeid", ""))
            if nodeid not in collect_errors:
                collect_errors.append(nodeid)
        elif event["event"] == wire.EVENT_START:
            current = nodeid = str(event.get("nodeid", ""))
            tests[nodeid] = TestStatus.PASSED
        elif event["event"] == wire.EVENT_REPORT:
            nodeid = str(event.get("nodeid", ""))
            status = _report_status(event)
            if event.get("subtest"):
                subtests.setdefault(nodeid, set()).add(status)
                if status is TestStatus.SKIPPED:
                    continue
            tests[nodeid] = _worse(tests.get(nodeid), status)
            if event.get("when") == "teardown":
                finished.add(nodeid)
    for nodeid, statuses in subtests.items():
        if statuses == {TestStatus.SKIPPED} and tests.get(nodeid) is TestStatus.PASSED:
            tests[nodeid] = TestStatus.SKIPPED
    return tests, collect_errors, current, finished


def statuses_from_events(
    events: list[wire.Event], *, died_of_timeout: bool
) -> tuple[dict[str, TestStatus], list[str], str | None]:
    """Rows a crashed run reached, from its event log alone (JUnit semantics per phase), and
    the test it ended in (None: it ended outside any test).

    Subtests (pytest's ``subtests`` fixture) count as plain pytest counts them: one that fails
    fails its test, one that skips or passes leaves the test's own outcome (so a test whose
    subtests partly skip passes and is valid), and a test whose every subtest skipped is
    skipped."""
    tests, collect_errors, current, finished = _rows(events)
    culprit = current if current is not None and current not in finished else None
    if culprit is not None:
        tests[culprit] = TestStatus.TIMEOUT if died_of_timeout else TestStatus.ERROR
    return tests, collect_errors, culprit


def session_ended(events: list[wire.Event]) -> bool:
    """Whether the run's session ended (its log's last word; a crash leaves it out)."""
    return any(e["event"] == wire.EVENT_FINISHED for e in events)


def finished_statuses(events: list[wire.Event]) -> tuple[dict[str, TestStatus], list[str]]:
    """The rows of a run that finished, and the files that did not collect: every test that
    reported anything but a passing setup (what pytest's JUnit XML would list), with the outcome
    its reports add up to.  A run by the direct protocol (:func:`direct_statuses`) keeps
    every test it reached."""
    if any(e["event"] == wire.EVENT_DIRECT for e in events):
        _, collect_errors, _ = statuses_from_events(events, died_of_timeout=False)
        return direct_statuses(events), collect_errors
    tests, collect_errors, _, _ = _rows(events)
    reported = {
        str(e.get("nodeid", ""))
        for e in _reports(events)
        if not (e.get("when") == "setup" and e.get("outcome") == "passed")
    }
    return {k: v for k, v in tests.items() if k in reported}, collect_errors


def direct_statuses(events: list[wire.Event]) -> dict[str, TestStatus]:
    """The tests a finished run reached, from its event log (a run whose passing tests are
    logged only there: :mod:`suitebench.suite.inside.batch.direct`); those it did not reach are left
    out, as pytest's JUnit XML would leave them."""
    tests, _, _ = statuses_from_events(events, died_of_timeout=False)
    return {k: v for k, v in tests.items() if v is not TestStatus.NOT_RUN}


def _reports(events: list[wire.Event]) -> list[wire.Report]:
    return [e for e in events if e["event"] == wire.EVENT_REPORT]


def seconds_from_events(events: list[wire.Event]) -> dict[str, float]:
    """Each finished test's seconds from its start to the end of its teardown, as the plugin
    logged them (what per-test limits of a mutant's run are derived from)."""
    return {
        str(e["nodeid"]): float(e["seconds"])
        for e in _reports(events)
        if e.get("when") == "teardown" and "seconds" in e
    }


def on_cpu_from_events(events: list[wire.Event]) -> tuple[str, ...]:
    """The tests that timed out having used their limit of CPU time, as the plugin found
    (their timeouts are the program's doing, not a loaded machine's)."""
    return tuple(
        dict.fromkeys(
            str(e.get("nodeid", ""))
            for e in _reports(events)
            if e.get("timeout") and e.get("on_cpu")
        )
    )


def ended_reason(events: list[wire.Event]) -> str | None:
    """Why the plugin ended the run early (None: it did not)."""
    for event in events:
        if event["event"] == wire.EVENT_ENDED:
            return str(event.get("reason", "the plugin ended the run"))
    return None


def messages_from_events(events: list[wire.Event]) -> dict[str, str]:
    """The first failure reason the plugin logged per test (else its skip reason), and per
    file that did not collect: what pytest's one-line summary would say."""
    failures: dict[str, str] = {}
    skips: dict[str, str] = {}
    for event in events:
        message: str | None
        if event["event"] == wire.EVENT_COLLECT_ERROR:
            message, outcome = event.get("message"), "failed"
        elif event["event"] == wire.EVENT_REPORT:
            message, outcome = event.get("message"), str(event.get("outcome"))
        else:
            continue
        if message is None:
            continue
        nodeid = str(event.get("nodeid", ""))
        if outcome == "failed":
            failures.setdefault(nodeid, str(message))
        elif outcome == "skipped":
            skips.setdefault(nodeid, str(message))
    return {**skips, **failures}
