"""Per-test outcomes from pytest's JUnit XML, with node ids recovered from our event log.

JUnit XML names a test by ``classname`` (the file path with dots, plus classes) and ``name``,
which does not map back to a pytest node id unambiguously (a directory may contain dots).  Our
plugin's event log lists every node id that started and every file that failed to collect, so
each ``<testcase>`` is matched to the node id pytest itself would mangle into it.  If a pytest
process died before writing the XML, the event log alone gives the rows it reached: the test
it was in when it died is an ``error`` (``timeout`` if the faulthandler watchdog fired), the
rest ``not_run``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from suitebench.suite.inside import wire
from suitebench.suite.inside.wire import MESSAGE_CHARS, TIMEOUT_MARKER, error_line
from suitebench.suite.records import TestStatus


def mangle(nodeid: str) -> tuple[str, str]:
    """The (classname, name) pytest's junitxml writes for a node id (its own algorithm)."""
    from _pytest.junitxml import mangle_test_address

    names = mangle_test_address(nodeid)
    return ".".join(names[:-1]), names[-1]


def read_events(path: Path) -> list[dict[str, Any]]:
    """The plugin's JSON lines; a torn last line (the process died writing it) is ignored."""
    if not path.is_file():
        return []
    events: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def _element_status(case: ET.Element) -> TestStatus:
    children = {child.tag: child for child in case}
    for tag in ("failure", "error"):
        child = children.get(tag)
        if child is not None:
            text = (child.get("message") or "") + (child.text or "")
            if TIMEOUT_MARKER in text:
                return TestStatus.TIMEOUT
    if "failure" in children:
        return TestStatus.FAILED
    if "error" in children:
        return TestStatus.ERROR
    if "skipped" in children:
        return TestStatus.SKIPPED
    return TestStatus.PASSED


_RANK = {
    TestStatus.PASSED: 0,
    TestStatus.SKIPPED: 1,
    TestStatus.ERROR: 2,
    TestStatus.FAILED: 3,
    TestStatus.TIMEOUT: 4,
}


def _worse(a: TestStatus | None, b: TestStatus) -> TestStatus:
    return b if a is None or _RANK.get(b, 0) >= _RANK.get(a, 0) else a


def parse_junit(
    xml_path: Path, events: list[dict[str, Any]], *, direct: bool = False
) -> tuple[dict[str, TestStatus], list[str], dict[str, str]]:
    """(node id -> status, files that failed to collect, why each file did not collect) from
    a JUnit XML file.  ``direct``: the run logged every test's status in its events
    (:func:`direct_statuses`), so only the collection errors are read from the XML.

    Raises ``ET.ParseError`` or ``OSError`` if the file is missing or torn (a crashed run).
    """
    root = ET.parse(xml_path).getroot()
    broken = [e["nodeid"] for e in events if e.get("event") == wire.EVENT_COLLECT_ERROR]
    file_by_address: dict[str, str] = {}
    for nodeid in broken:
        address = mangle(nodeid)
        file_by_address[address[1]] = nodeid
        file_by_address[".".join(address)] = nodeid
    by_address: dict[tuple[str, str], str] | None = None
    tests: dict[str, TestStatus] = {}
    collect_errors: list[str] = []
    messages: dict[str, str] = {}
    for case in root.iter("testcase"):
        classname = case.get("classname") or ""
        name = case.get("name") or ""
        status = _element_status(case)
        if not classname and status is TestStatus.ERROR:
            # A collection error: the testcase is named after the module it broke.
            nodeid = file_by_address.get(name) or name.replace(".", "/") + ".py"
            if nodeid not in collect_errors:
                collect_errors.append(nodeid)
            error = case.find("error")
            text = "" if error is None else error.text or ""
            # (a batch that collected once logged no event for it in the child)
            messages[nodeid] = error_line(text)[:MESSAGE_CHARS]
            continue
        if direct:
            continue
        if by_address is None:  # mangled once per run, when a test case names a test
            started = [e["nodeid"] for e in events if e.get("event") == wire.EVENT_START]
            by_address = {mangle(n): n for n in started}
        nodeid = by_address.get((classname, name)) or _guess_nodeid(classname, name)
        tests[nodeid] = _worse(tests.get(nodeid), status)
    if direct:
        tests = direct_statuses(events)
    elif any(e.get("subtest") for e in events):
        # The XML writes a skipped subtest as the test's own <skipped>: only the event log
        # tells a test whose subtests partly skip from a skipped test.
        logged, _, _ = statuses_from_events(events, died_of_timeout=False)
        subtested = {str(e.get("nodeid")) for e in events if e.get("subtest")}
        tests.update({n: logged[n] for n in subtested if n in logged})
    return tests, collect_errors, messages


def _guess_nodeid(classname: str, name: str) -> str:
    """Fallback when the event log lacks a node id: pytest's mangling, reversed naively."""
    parts = classname.split(".")
    return "/".join(parts) + ".py::" + name


def _report_status(event: dict[str, Any]) -> TestStatus:
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


def statuses_from_events(
    events: list[dict[str, Any]], *, died_of_timeout: bool
) -> tuple[dict[str, TestStatus], list[str], str | None]:
    """Rows a crashed run reached, from its event log alone (JUnit semantics per phase), and
    the test it ended in (None: it ended outside any test).

    Subtests (pytest's ``subtests`` fixture) count as plain pytest counts them: one that fails
    fails its test, one that skips or passes leaves the test's own outcome (so a test whose
    subtests partly skip passes and is valid), and a test whose every subtest skipped is
    skipped."""
    tests: dict[str, TestStatus] = {}
    finished: set[str] = set()
    current: str | None = None
    collect_errors: list[str] = []
    subtests: dict[str, set[TestStatus]] = {}  # node id -> its subtests' statuses
    for event in events:
        kind = event.get("event")
        nodeid = str(event.get("nodeid", ""))
        if kind == wire.EVENT_COLLECTED:
            for collected in event.get("nodeids", []):
                tests.setdefault(str(collected), TestStatus.NOT_RUN)
        elif kind == wire.EVENT_COLLECT_ERROR:
            if nodeid not in collect_errors:
                collect_errors.append(nodeid)
        elif kind == wire.EVENT_START:
            current = nodeid
            tests[nodeid] = TestStatus.PASSED
        elif kind == wire.EVENT_REPORT:
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
    culprit = current if current is not None and current not in finished else None
    if culprit is not None:
        tests[culprit] = TestStatus.TIMEOUT if died_of_timeout else TestStatus.ERROR
    return tests, collect_errors, culprit


def direct_statuses(events: list[dict[str, Any]]) -> dict[str, TestStatus]:
    """The tests a finished run reached, from its event log (a run whose passing tests are
    logged only there: :mod:`suitebench.suite.inside.direct`); those it did not reach are left out,
    as its XML would leave them."""
    tests, _, _ = statuses_from_events(events, died_of_timeout=False)
    return {k: v for k, v in tests.items() if v is not TestStatus.NOT_RUN}


def seconds_from_events(events: list[dict[str, Any]]) -> dict[str, float]:
    """Each finished test's seconds from its start to the end of its teardown, as the plugin
    logged them (what per-test limits of a mutant's run are derived from)."""
    return {
        str(e["nodeid"]): float(e["seconds"])
        for e in events
        if e.get("event") == wire.EVENT_REPORT and e.get("when") == "teardown" and "seconds" in e
    }


def messages_from_events(events: list[dict[str, Any]]) -> dict[str, str]:
    """The first failure reason the plugin logged per test (else its skip reason), and per
    file that did not collect: what pytest's one-line summary would say."""
    failures: dict[str, str] = {}
    skips: dict[str, str] = {}
    for event in events:
        message = event.get("message")
        if message is None:
            continue
        nodeid = str(event.get("nodeid", ""))
        if event.get("event") == wire.EVENT_COLLECT_ERROR or event.get("outcome") == "failed":
            failures.setdefault(nodeid, str(message))
        elif event.get("outcome") == "skipped":
            skips.setdefault(nodeid, str(message))
    return {**skips, **failures}
