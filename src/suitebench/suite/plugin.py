"""The pytest plugin suitebench loads into every suite it runs (``-p suitebench.suite.plugin``).

Plugin autoload is off when suitebench runs a suite (a suite's results must not depend on what
happens to be installed), so everything suitebench needs inside the pytest process lives here:

* **per-test timeouts** (``--suitebench-timeout``): each phase of a test (setup, call, teardown)
  gets a SIGALRM-based budget; a hanging test fails alone with :class:`SuiteTestTimeout` and the
  rest of its row (the other tests on the same program) is kept.  A faulthandler watchdog a few
  seconds later kills a process stuck where the alarm cannot reach, so the run ends as a crash
  instead of hanging; the event log tells which test was running.
* **an event log** (``--suitebench-events``): one JSON line per test start and per phase report,
  flushed as it happens, so a pytest process that dies mid-run still tells what it ran.
* **the batched run loop** (``--suitebench-batch``): collect the suite once, then fork one child
  per program under test; see :mod:`suitebench.suite.forkserver`.

This module must stay importable with nothing but pytest: it runs inside the sandbox.  It holds no
assert statements to rewrite (PYTEST_DONT_REWRITE), so importing it before pytest starts, as the
fork server does, changes nothing.
"""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
import time
from collections.abc import Generator
from typing import Any, TextIO

import pytest

TIMEOUT_MARKER = "SuiteTestTimeout"
_HARD_GRACE = 5.0
_REARM_SLACK = 1.0


class SuiteTestTimeout(Exception):
    """A test phase ran past the per-test time limit."""


_state: dict[str, Any] = {
    "fault_file": None,  # where the watchdog's traceback goes (default: stderr)
    "timeout": 0.0,
    "events": None,
    "exitfirst": False,
    "session": None,
    "watchdog_deadline": 0.0,  # monotonic time the armed watchdog fires (0: not armed)
    "batch_child": False,  # a forked child of a configure-once batch: runs like pytest.main
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("suitebench")
    group.addoption("--suitebench-timeout", type=float, default=0.0, help="per-test seconds")
    group.addoption("--suitebench-events", default=None, help="JSON-lines event log path")
    group.addoption("--suitebench-batch", default=None, help="batch spec (JSON) to fork over")
    group.addoption(
        "--suitebench-collect-per-program",
        action="store_true",
        help="with --suitebench-batch: fork before collection, collect in every child",
    )
    group.addoption("--suitebench-order", default=None, help="JSON list: run these, in order")
    group.addoption("--suitebench-faultlog", default=None, help="file for the watchdog's report")


def pytest_configure(config: pytest.Config) -> None:
    _state["timeout"] = float(config.getoption("--suitebench-timeout") or 0.0)
    path = config.getoption("--suitebench-events")
    if path:
        open_events(path)
    faultlog = config.getoption("--suitebench-faultlog")
    if faultlog:
        # Not stderr: pytest captures it during a test, and a process the watchdog ends never
        # hands the capture back.
        _state["fault_file"] = open(faultlog, "a")  # noqa: SIM115 - lives for the run


def open_events(path: str) -> None:
    """(Re)open the event log; a forked child calls this with its own path."""
    old: TextIO | None = _state.get("events")
    if old is not None:
        try:
            old.close()
        except OSError:
            pass
    _state["events"] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives for the run


def _emit(record: dict[str, Any]) -> None:
    stream: TextIO | None = _state.get("events")
    if stream is None:
        return
    stream.write(json.dumps(record) + "\n")
    stream.flush()


def _on_alarm(signum: int, frame: Any) -> None:
    raise SuiteTestTimeout(f"test phase exceeded the per-test limit of {_state['timeout']:g} s")


def _arm() -> None:
    limit = _state["timeout"]
    if limit > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)


def _disarm() -> None:
    if _state["timeout"] > 0:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _keep_watchdog_armed() -> None:
    """The last resort: three phases' budgets plus grace after a test starts, the process dies
    with a traceback (a crash the event log attributes to that test).

    Re-arming faulthandler wakes its watchdog thread (~35 us a time), so it is re-armed only
    when the current deadline would come too early for the test now starting, with a second
    of slack: the deadline stays between 3 x limit + grace and that plus one second after the
    start of the running test."""
    limit = _state["timeout"]
    if limit <= 0:
        return
    budget = 3 * limit + _HARD_GRACE
    now = time.monotonic()
    if _state["watchdog_deadline"] < now + budget:
        fault_file = _state.get("fault_file") or sys.stderr
        faulthandler.dump_traceback_later(budget + _REARM_SLACK, exit=True, file=fault_file)
        _state["watchdog_deadline"] = now + budget + _REARM_SLACK


def disarm_watchdog() -> None:
    """Cancel the last resort: the last test has ended, or the session has."""
    if _state["watchdog_deadline"] > 0:
        faulthandler.cancel_dump_traceback_later()
        _state["watchdog_deadline"] = 0.0


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[Any]:
    _emit({"event": "start", "nodeid": item.nodeid})
    _keep_watchdog_armed()
    try:
        return (yield)
    finally:
        if nextitem is None:
            disarm_watchdog()


def _phase() -> Generator[Any, Any, Any]:
    _arm()
    try:
        return (yield)
    finally:
        _disarm()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[Any]:
    return (yield from _phase())


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[Any]:
    return (yield from _phase())


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[Any]:
    return (yield from _phase())


def pytest_sessionstart(session: pytest.Session) -> None:
    _state["session"] = session


def pytest_sessionfinish(session: pytest.Session) -> None:
    disarm_watchdog()  # a run stopped early (``--fast``) leaves it armed


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _state["exitfirst"] and report.failed and _state["session"] is not None:
        # ``--fast``: the first failing (valid) test decides the mutant.  Not pytest's ``-x``,
        # which would also stop at a collection error before any test ran.
        _state["session"].shouldfail = "suitebench --fast: first kill"
    _emit(
        {
            "event": "report",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "timeout": bool(report.failed and TIMEOUT_MARKER in str(report.longrepr)),
        }
    )


def emit_collected(items: list[pytest.Item]) -> None:
    """Every test this run will attempt, so a crash leaves the rest marked not_run."""
    _emit({"event": "collected", "nodeids": [item.nodeid for item in items]})


def pytest_collection_finish(session: pytest.Session) -> None:
    emit_collected(session.items)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _emit({"event": "collect_error", "nodeid": report.nodeid})


def order_items(items: list[pytest.Item], order: list[str]) -> list[pytest.Item]:
    """Only the listed node ids, in the listed order (``--fast``: likely killers first)."""
    by_id = {item.nodeid: item for item in items}
    return [by_id[nodeid] for nodeid in order if nodeid in by_id]


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    path = config.getoption("--suitebench-order")
    if path:
        with open(path, encoding="utf-8") as fh:
            items[:] = order_items(items, json.load(fh))
        _state["exitfirst"] = True


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    config = session.config
    spec = config.getoption("--suitebench-batch")
    if not spec or not config.getoption("--suitebench-collect-per-program"):
        return None
    from suitebench.suite.forkserver import fork_before_collection

    if fork_before_collection(session, spec):
        session.items = []  # the parent: every program ran in its own child
        session.testscollected = 0
        return True
    return None  # a child: collect for its program, as pytest does


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    config = session.config
    spec = config.getoption("--suitebench-batch")
    if not spec or _state["batch_child"]:
        return None
    if config.getoption("--suitebench-collect-per-program"):
        return True  # the parent of a configure-once batch: nothing to run here
    from suitebench.suite.forkserver import run_collected_batch

    run_collected_batch(session, spec)
    return True
