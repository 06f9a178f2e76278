"""The pytest plugin suitebench loads into every suite it runs
(``-p suitebench.suite.inside.plugin``).

Plugin autoload is off when suitebench runs a suite (a suite's results must not depend on what
happens to be installed), so everything suitebench needs inside the pytest process lives here:

* **per-test timeouts** (``--suitebench-timeout``, and per test ``--suitebench-timeouts``):
  each phase of a test gets a budget (:mod:`.budget`); a hanging test fails alone with
  :class:`.budget.SuiteTestTimeout` and the rest of its row (the other tests on the same
  program) is kept.  A test that timed out leaving threads it started running ends the run
  (the rest goes on in a fresh one).
* **an event log** (``--suitebench-events``): one JSON line per test start and per phase report
  (a teardown's names the test's seconds from its start); a test's reports go to disk with the
  next test's start (one write a test), so a pytest process that dies mid-run still tells
  what it ran and in which test it died; the session's end is its last line.  It is the
  host's one record of the run (no JUnit XML is written).
* **test selection**: ``--suitebench-order`` (``--fast``: only these tests, in this order, stop
  at the first failure) and ``--suitebench-select`` (only these tests, in collected order: the
  tests that reach a mutant);
* **per-test line coverage** (``--suitebench-coverage``): which lines of the program under test
  each test executes, for coverage-guided test selection
  (:mod:`suitebench.suite.inside.probe.tracer`).
* **the host's rewritten asserts** (``--suitebench-rewrite-cache``): pytest's pyc lookup answers
  from the test modules the launching worker rewrote once per suite (:mod:`.rewrite`).
* **the package's doctests** (``--suitebench-doctests``, with ``--doctest-modules``): the
  package under test collected where it lies (:mod:`.doctests`).

The batch driver (:mod:`suitebench.suite.inside.batch.forkserver`) stands on top of this module and
hands its own hooks to pytest as a plugin object; this module never imports it.

This module must stay importable with nothing but pytest: it runs inside the sandbox.  It holds no
assert statements to rewrite (PYTEST_DONT_REWRITE), so importing it before pytest starts, as the
fork server does, changes nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Generator
from typing import Any, TextIO

import pytest

from suitebench.suite.inside import budget, doctests, leftovers, positions, tracebacks, wire
from suitebench.suite.inside.probe import choosing, importtime
from suitebench.suite.inside.wire import TIMEOUT_MARKER, short_message

# The process's time budget (one a process: the alarm and the watchdog are the process's; a
# batch's forked children inherit it).  The batch modules reach it here.
BUDGET = budget.Budget()


class RunState:
    """What the plugin's hooks share in this pytest process (a batch's forked children
    inherit it, each then opening its own event log)."""

    __slots__ = (
        "collect_errors",
        "events",
        "exitfirst",
        "gcov",
        "positions",
        "selected_names",
        "session",
        "started",
        "threads",
        "tracer",
    )

    def __init__(self) -> None:
        self.started = 0.0  # monotonic time the running test started
        self.threads: frozenset[int] = frozenset()  # the threads that ran when it started
        self.events: TextIO | None = None  # the event log (--suitebench-events)
        self.exitfirst = False  # --fast: the first failing test decides the mutant
        self.session: pytest.Session | None = None
        self.tracer: Any = None  # --suitebench-coverage: the per-test function recorder
        self.gcov: Gcov | None = None  # --suitebench-gcov-dir: where the running test is named
        # this session's files that did not collect, as logged (a batch's child logs them again)
        self.collect_errors: list[wire.CollectError] = []
        # --suitebench-select read: its path, per test file its selected module-level tests
        self.selected_names: tuple[str, dict[str, set[str]]] | None = None
        # --suitebench-positions read: its path and the reference's names by position
        self.positions: tuple[str, dict[str, str]] | None = None


class Gcov:
    """A coverage build's run (``--suitebench-gcov-dir``): the directory the launcher reads the
    running test's name from, and the tests in the order they ran."""

    __slots__ = ("dir", "tests")

    def __init__(self, directory: str) -> None:
        self.dir = directory
        self.tests: list[str] = []


RUN = RunState()


_OPTIONS = {  # --suitebench-NAME: help (each takes a value)
    "timeouts": "JSON: node id -> seconds (below the cap)",
    "events": "JSON-lines event log path",
    "order": "JSON list: run these, in order",
    "select": "JSON list: run only these",
    "coverage": "write per-test lines here",
    "coverage-root": "trace only files under this root",
    "probes": "JSON: weak-mutation probes to compile in",
    "gcov-dir": "name the running test here (gcov runs)",
    "faultlog": "file for the watchdog's report",
    "fingerprint": "write the program's globals' fingerprint",
    "impact": "JSON: the tests an import-time change reaches",
    "positions": "JSON: a parametrized test's position -> the reference's name for it",
    "rewrite-cache": "the host's rewritten test modules",
    "doctests": "the package whose modules' doctests run (with --doctest-modules)",
    "doctest-files": "comma-separated text files of doctests in the rootdir",
    "doctests-from": "JSON of the reference's docstring examples, run instead of the modules'",
    "doctest-files-after": "the same, collected after the suite (testpaths = tests docs)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("suitebench")
    group.addoption("--suitebench-timeout", type=float, default=0.0, help="per-test seconds")
    for name, text in _OPTIONS.items():
        group.addoption(f"--suitebench-{name}", default=None, help=text)
    group.addoption(
        "--suitebench-end-lingering",
        action="store_true",
        default=False,
        help="end the process once pytest is done (no exit handler or thread waited for)",
    )


_SHARED_FIXTURES = "suitebench-shared-fixtures"
_WORKSPACES = "suitebench-workspaces"  # ProgramBench's workspace per test (:mod:`.workspaces`)


def start_tracer(
    path: str | None, root: str | None, config: pytest.Config, probes: str | None = None
) -> None:
    if path and RUN.tracer is None:
        from suitebench.suite.inside.probe.tracer import LineTracer

        RUN.tracer = LineTracer(root or "", path, probes)
        RUN.tracer.start(subprocesses=True)
        if not config.pluginmanager.has_plugin(_SHARED_FIXTURES):
            config.pluginmanager.register(SharedFixtures(), _SHARED_FIXTURES)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Record coverage from before the suite's conftest files are imported (they may import
    the program under test), and serve the host's rewritten modules from the first conftest
    file on (:mod:`suitebench.suite.inside.batch.rewrite`)."""
    namespace = early_config.known_args_namespace
    _use_rewrite_cache(early_config, getattr(namespace, "suitebench_rewrite_cache", None))
    start_tracer(
        getattr(namespace, "suitebench_coverage", None),
        getattr(namespace, "suitebench_coverage_root", None),
        early_config,
        getattr(namespace, "suitebench_probes", None),
    )


def _use_rewrite_cache(config: pytest.Config, path: str | None) -> None:
    """The host's code holds pytest's rewriting with ``enable_assertion_pass_hook`` false:
    a suite that sets it true has pytest rewrite every module itself."""
    if not path:
        return
    from suitebench.suite.inside.batch.rewrite import use_host_cache

    try:
        pass_hook = bool(config.getini("enable_assertion_pass_hook"))
    except (ValueError, KeyError):
        return
    use_host_cache(path, assertion_pass_hook=pass_hook)


def pytest_configure(config: pytest.Config) -> None:
    tracebacks.share_statement_trees()
    if not config.pluginmanager.has_plugin(_WORKSPACES):
        from suitebench.suite.inside import workspaces

        config.pluginmanager.register(workspaces, _WORKSPACES)
    BUDGET.configure(float(config.getoption("--suitebench-timeout") or 0.0))
    path = config.getoption("--suitebench-events")
    if path:
        open_events(path)
    faultlog = config.getoption("--suitebench-faultlog")
    if faultlog:
        # Not stderr: pytest captures it during a test, and a process the watchdog ends never
        # hands the capture back.
        BUDGET.fault_file = open(faultlog, "a")  # noqa: SIM115 - lives for the run
    start_tracer(
        config.getoption("--suitebench-coverage"),
        config.getoption("--suitebench-coverage-root"),
        config,
        config.getoption("--suitebench-probes"),
    )

    gcov_dir = config.getoption("--suitebench-gcov-dir")
    if gcov_dir:
        RUN.gcov = Gcov(gcov_dir)
        _gcov_current("outside")


def _gcov_current(name: str) -> None:
    """Which test is running, for the coverage build's launcher: it sends the program's
    coverage counters to a directory of that name (``GCOV_PREFIX``)."""
    gcov = RUN.gcov
    if gcov is not None:
        with open(f"{gcov.dir}/current", "w", encoding="utf-8") as fh:
            fh.write(name)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    gcov = RUN.gcov
    if gcov is not None:
        with open(f"{gcov.dir}/tests.json", "w", encoding="utf-8") as fh:
            json.dump(gcov.tests, fh)
    tracer = RUN.tracer
    if tracer is not None:
        tracer.stop()
        tracer.write()
        RUN.tracer = None
    _end_once_done(config)


def _end_once_done(config: pytest.Config) -> None:
    """A plain run (``--suitebench-end-lingering``) ends here, with pytest's exit status, as
    a batch's child always did: every outcome is written, and the interpreter's exit has
    nothing left to tell but could wait until the run's wall limit -- for threads the tests
    left running (a mutant whose worker threads never finish, after its test timed out), or
    in an exit handler (a thread that never takes its stop marker; a ``multiprocessing``
    pool whose workers, killed with a timed-out test, left its exit handler waiting for a
    lock one of them held: fasteners 0.20)."""
    if not config.getoption("--suitebench-end-lingering", False):
        return
    session = RUN.session
    _end_now(int(getattr(session, "exitstatus", 1) if session is not None else 1))


def _end_now(status: int) -> None:
    """End the process at once, every event and output on disk first."""
    flush_events()
    fault = BUDGET.fault_file
    if fault is not None:
        fault.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def open_events(path: str) -> None:
    """(Re)open the event log; a forked child calls this with its own path."""
    old = RUN.events
    if old is not None:
        try:
            old.close()
        except OSError:
            pass
    RUN.events = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives for the run


def _emit(record: wire.Event, *, hold: bool = False) -> None:
    """Append an event to the log, on disk at once -- or, ``hold``, with the next event that
    is not held (a test's phase reports go out with the next test's start: one write a test,
    and whatever a crash interrupts is still attributed to the test that was running)."""
    stream = RUN.events
    if stream is None:
        return
    stream.write(json.dumps(record) + "\n")
    if not hold:
        stream.flush()


def flush_events() -> None:
    """Put the held events on disk (the run, or a forked child's loop, is ending)."""
    stream = RUN.events
    if stream is not None:
        stream.flush()


def phase_passed(when: str, encoded_nodeid: str) -> None:
    """A phase the direct protocol ran has passed: after the teardown, no budget left and the
    line the test's status is read from (held, as reports are): a :class:`.wire.Report`,
    written by hand (``encoded_nodeid``: the node id already JSON-encoded, once a test)."""
    BUDGET.phase_ended()  # a test that caught its timeout and passed
    if when != "teardown":
        return
    BUDGET.disarm()
    stream = RUN.events
    if stream is not None:
        seconds = round(time.monotonic() - RUN.started, 4)
        stream.write(
            f'{{"event": "{wire.EVENT_REPORT}", "nodeid": {encoded_nodeid}, "when": "teardown", '
            f'"outcome": "passed", "timeout": false, "seconds": {seconds}}}\n'
        )


def emit_direct(tests: int) -> None:
    """This child runs ``tests`` of its tests by the direct protocol: its passing tests are in
    the event log as one passed teardown line each (no report of their phases is made)."""
    _emit({"event": wire.EVENT_DIRECT, "tests": tests})


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[Any]:
    _emit({"event": wire.EVENT_START, "nodeid": item.nodeid})
    RUN.started = time.monotonic()
    RUN.threads = leftovers.thread_idents()
    BUDGET.start_test(item)
    tracer = RUN.tracer
    if tracer is not None:
        tracer.enter_test(item.nodeid, list(getattr(item, "fixturenames", ())))
    gcov = RUN.gcov
    if gcov is not None:
        gcov.tests.append(item.nodeid)
        _gcov_current(str(len(gcov.tests) - 1))
    try:
        return (yield)
    finally:
        leftovers.test_ended()
        if tracer is not None:
            tracer.leave_test()
        if gcov is not None:
            _gcov_current("outside")
        if nextitem is None:
            BUDGET.disarm_watchdog()
            BUDGET.disarm()
            flush_events()
        elif BUDGET.timed_out and not item.session.shouldfail:
            _end_if_timeout_left_threads(item)


def _end_if_timeout_left_threads(item: pytest.Item) -> None:
    """A test that timed out leaving threads it started still running (a mutant's loop that
    never ends, run by the test's workers) ends the run here: those threads would take the CPU
    and the interpreter's lock from every test after it, which would then time out in turn.
    The tests after it go on in a fresh run (:mod:`suitebench.suite.execute.continuation`)."""
    left = leftovers.new_threads(RUN.threads)
    if not left:
        return
    BUDGET.disarm_watchdog()
    BUDGET.disarm()
    reason = f"{item.nodeid} timed out and left {left} thread(s) it started running"
    _emit({"event": wire.EVENT_ENDED, "reason": reason}, hold=True)
    _end_now(3)


class SharedFixtures:
    """Registered while coverage is recorded: lines run while setting up a fixture shared
    beyond one test belong to every test that uses it, not to the test that happened to set
    it up first."""

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> Generator[Any]:
        tracer = RUN.tracer
        if tracer is None or fixturedef.scope == "function":
            return (yield)
        tracer.enter_fixture(str(fixturedef.argname))
        try:
            return (yield)
        finally:
            tracer.leave_fixture()


def pytest_sessionstart(session: pytest.Session) -> None:
    RUN.session = session
    RUN.collect_errors = []  # this session's, as logged (a batch's child logs them again)


def pytest_sessionfinish(session: pytest.Session) -> None:
    BUDGET.disarm_watchdog()  # a run stopped early (``--fast``) leaves it armed
    BUDGET.disarm()
    emit_finished(int(session.exitstatus))


def emit_finished(exitstatus: int) -> None:
    """The session has ended: the event log is whole (a log without this line is a crash's)."""
    _emit({"event": wire.EVENT_FINISHED, "exitstatus": exitstatus})


# Each phase's budget is armed as the phase starts (not as the one before is reported: a
# plugin that reruns a test runs its phases again without reporting them), and none is left
# after the teardown is made into a report.
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    BUDGET.arm()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    leftovers.call_starts()
    BUDGET.arm()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    BUDGET.arm()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    BUDGET.phase_ended()
    if call.when == "teardown":
        BUDGET.disarm()


@pytest.hookimpl(trylast=True)
def pytest_exception_interact() -> None:
    # pytest's faulthandler plugin (tryfirst) has just cancelled the watchdog
    BUDGET.watchdog_cancelled()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # A timeout is the budget's alarm, and its exception in the report (a test may catch it
    # and fail otherwise; one raising an exception of that name has not timed out).  The
    # report's text is made only then: formatting every failure's report cost each failing
    # cell its traceback once more.
    timed_out = bool(report.failed and BUDGET.timed_out and TIMEOUT_MARKER in str(report.longrepr))
    waited = timed_out and not BUDGET.on_cpu
    if RUN.exitfirst and report.failed and not waited and RUN.session is not None:
        # ``--fast``: the first failing (valid) test decides the mutant.  Not pytest's ``-x``,
        # which would also stop at a collection error before any test ran.  A timeout spent
        # waiting decides nothing yet (it is confirmed alone, at a wait's cost): the run goes
        # on, so that a test failing after it kills the mutant without that wait.
        RUN.session.shouldfail = "suitebench --fast: first kill"
    record: wire.Report = {
        "event": wire.EVENT_REPORT,
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "timeout": timed_out,
    }
    if timed_out and BUDGET.on_cpu:
        record["on_cpu"] = True  # the plugin's own finding, whatever the report says
    if report.when == "teardown":
        record["seconds"] = round(time.monotonic() - RUN.started, 4)
    if hasattr(report, "context"):  # a subtest's (pytest's or pytest-subtests' report type)
        record["subtest"] = True
    if report.failed or report.skipped:
        record["message"] = short_message(report)
    _emit(record, hold=True)


def emit_collected(items: list[pytest.Item]) -> None:
    """Every test this run will attempt, so a crash leaves the rest marked not_run."""
    _emit({"event": wire.EVENT_COLLECTED, "nodeids": [item.nodeid for item in items]})


def pytest_collection_finish(session: pytest.Session) -> None:
    # Failure reports are read for their outcome and pytest's one-line reason (the crash
    # line), which every traceback style carries; nobody reads the long traceback with source
    # that pytest formats by default -- tens of milliseconds a failing test on a large test
    # module (it re-parses the module for every entry).  Collection errors keep their style
    # but in a mutant batch's runs (:mod:`suitebench.suite.inside.batch.forkserver`).
    session.config.option.tbstyle = "line"
    for item in session.items:
        if isinstance(item, pytest.Function):
            item.repr_failure = tracebacks.crash_only(item.repr_failure)  # type: ignore[method-assign]
    emit_collected(session.items)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        message = short_message(report)
        record: wire.CollectError = {
            "event": wire.EVENT_COLLECT_ERROR,
            "nodeid": report.nodeid,
            "message": message,
        }
        RUN.collect_errors.append(record)
        _emit(record)


def emit_collect_errors() -> None:
    """A batch's child of a suite collected once: the files that did not collect, logged in
    its own event log (the collecting process had none open)."""
    for record in RUN.collect_errors:
        _emit(record)


def emit_selected(chosen: list[str] | None, reason: str) -> None:
    """The tests an import-time change reaches (None: all) and why, for the host."""
    _emit({"event": wire.EVENT_SELECTED, "nodeids": chosen, "reason": reason})


def _selected_names(config: pytest.Config) -> dict[str, set[str]] | None:
    """``--suitebench-select``: per test file, its selected module-level tests, read once."""
    path = config.getoption("--suitebench-select", None)
    if not path:
        return None
    cached = RUN.selected_names
    if cached is None or cached[0] != path:
        cached = RUN.selected_names = (path, choosing.selected_names(path))
    return cached[1]


def pytest_collection(session: pytest.Session) -> None:
    """The package's doctests (``--suitebench-doctests``) among the paths collected.  Not
    ``tryfirst``: a batch's hooks fork per program first, and each child collects its own."""
    doctests.add_package(session)


def pytest_ignore_collect(collection_path: Any, config: pytest.Config) -> bool | None:
    return True if doctests.ignored(collection_path) else None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: Any) -> list[Any] | None:
    """A selected run does not build the tests it will not run: a module's other test
    functions and classes are not collected at all (pytest's fixture closure and
    parametrization cost about a millisecond a function; ``choosing.select_items`` would drop them
    anyway).  Their collection cannot differ from the reference's: anything a mutant could
    change while the suite is collected ran outside any test in the coverage run, and such a
    mutant runs every test, collecting everything."""
    if not isinstance(collector, pytest.Module):
        return None
    names = _selected_names(collector.config)
    if names is None:
        return None
    wanted = names.get(collector.nodeid)
    if wanted is None or name in wanted:
        return None
    return []


def _reference_names(config: pytest.Config) -> dict[str, str] | None:
    """``--suitebench-positions``: the reference's names by position, read once."""
    path = config.getoption("--suitebench-positions", None)
    if not path:
        return None
    if RUN.positions is None or RUN.positions[0] != path:
        with open(path, encoding="utf-8") as fh:
            RUN.positions = (path, json.load(fh))
    return RUN.positions[1]


@pytest.hookimpl(tryfirst=True)
def pytest_itemcollected(item: pytest.Item) -> None:
    # A mutant's run: its parametrized tests by the reference's names, as they are collected,
    # before any hook reads them (:mod:`.positions`).
    reference = _reference_names(item.config)
    if reference:
        positions.rename(item, reference)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    reference = _reference_names(config)
    if reference:
        positions.untangle(items, reference)
    tracer = RUN.tracer
    path = config.getoption("--suitebench-fingerprint")
    if path:
        importtime.write_fingerprint(path, items, instrumented=tracer is not None)
    if tracer is not None:
        importtime.record_test_names(tracer, str(config.rootpath), items)
    path = config.getoption("--suitebench-impact")
    if path:
        chosen, reason = importtime.choose_tests(path, items)
        emit_selected(chosen, reason)
        if chosen is not None:
            items[:] = choosing.select_items(items, chosen)
    path = config.getoption("--suitebench-order")
    if path:
        with open(path, encoding="utf-8") as fh:
            items[:] = choosing.order_items(items, json.load(fh))
        RUN.exitfirst = True
    path = config.getoption("--suitebench-select")
    if path:
        with open(path, encoding="utf-8") as fh:
            items[:] = choosing.select_items(items, json.load(fh))
