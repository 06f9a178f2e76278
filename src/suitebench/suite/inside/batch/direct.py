"""The direct protocol: a batch's child runs a test's phases itself, as pytest's own plugins do.

pytest runs a test through about twenty hook calls: setup, call and teardown each pass through
the capture, logging, skipping, unraisable-exception and thread-exception plugins, and each is
made into a report that the terminal, the cache, the session and the event log are told about.
For a small test that is ~0.45 ms, most of a test run in a mutant's child, and the kill matrix
is made of tens of thousands of them.  Where nothing but pytest's own plugins and suitebench's
take part in a test's phases, a batch's child
(:meth:`suitebench.suite.inside.batch.collector.Collector. run_items`) runs them here instead, doing
what those plugins' hooks do for a test that passes, in one place:

* per test (not per phase): the global capture resumed and what the test wrote read and
  dropped, pytest's log handlers attached to the root logger;
* per phase: ``PYTEST_CURRENT_TEST``, the setup state's collectors and fixtures (a test that
  uses only direct parametrization gets its arguments without the fixture machinery: pytest's
  pseudo-fixtures only hand back ``callspec.params``), ``item.runtest()`` (pytest's own
  ``pytest_pyfunc_call``), the unraisable and thread exceptions collected after the phase, the
  ``tmp_path`` retention bookkeeping, the xfail marks a test may add while it runs;
* the protocol's own wrappers (assertion comparisons, warnings filters, faulthandler, the
  per-test timeouts and event log) still wrap each test: only the runner's protocol is replaced.

A phase that raises (or a test that gained an xfail mark) is reported by pytest itself: its
``pytest_runtest_makereport`` and ``pytest_runtest_logreport`` hooks, so a failure's outcome,
message and ``--fast`` stop are pytest's.  A passing phase is not made into a report; the event
log gets the test's start and one passed teardown line (what its status is read from).

When a run is left to pytest (:func:`why_not`): a hook of these phases implemented by anything
else (a conftest, a third-party plugin), a test protocol of its own (a rerun plugin), options
that show or plan fixtures, a pytest outside the range this knows or lacking a private name it
uses (:mod:`.internals`: the host checks that before the run, and says so); per test
(:func:`direct_item`):
an item that is not a plain ``pytest.Function`` (unittest, doctest, custom items),
skip/skipif/xfail marks, or the fixtures that pytest's plugins serve phase by phase
(``capsys``, ``capfd``, ``caplog``, ``subtests``, ``pytester``...).  ``score --protocol
pytest`` runs every test through pytest's hooks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from suitebench.suite.inside import leftovers, plugin
from suitebench.suite.inside.batch import internals
from suitebench.suite.inside.wire import BatchSpec

# pytest's internals this stands in for (every one listed in internals.NAMES, which a test
# checks): a pytest without them has its tests run by pytest's protocol (why_not says why).
try:
    from _pytest import timing
    from _pytest._code import ExceptionInfo
    from _pytest.logging import catching_logs
    from _pytest.python import DirectParamFixtureDef
    from _pytest.runner import (
        TEST_OUTCOME,
        CallInfo,
        _update_current_test_var,
        check_interactive_exception,
        get_reraise_exceptions,
    )
    from _pytest.skipping import evaluate_xfail_marks, xfailed_key
    from _pytest.threadexception import collect_thread_exception, thread_exceptions
    from _pytest.tmpdir import tmppath_result_key
    from _pytest.unraisableexception import collect_unraisable, unraisable_exceptions

    _IMPORTED = True
except ImportError:  # pragma: no cover - only under another pytest
    _IMPORTED = False

# The implementations a phase may have for the direct protocol to stand in for it: pytest's
# built-in plugins (module name, or class for plugin objects) and suitebench's own.
_PHASES = frozenset(
    {
        "suitebench.suite.inside.plugin",
        "_pytest.threadexception",
        "_pytest.unraisableexception",
        "_pytest.runner",
        "_pytest.skipping",
        "_pytest.capture.CaptureManager",
        "_pytest.logging.LoggingPlugin",
    }
)
_KNOWN: dict[str, frozenset[str]] = {
    "pytest_runtest_setup": _PHASES,
    "pytest_runtest_call": _PHASES,
    "pytest_runtest_teardown": _PHASES - {"_pytest.skipping"},
    "pytest_runtest_makereport": frozenset(
        {
            "_pytest.runner",
            "_pytest.unittest",
            "_pytest.skipping",
            "_pytest.tmpdir",
            "suitebench.suite.inside.plugin",
        }
    ),
    "pytest_runtest_logstart": frozenset(
        {"_pytest.terminal.TerminalReporter", "_pytest.logging.LoggingPlugin"}
    ),
    "pytest_runtest_logfinish": frozenset({"_pytest.logging.LoggingPlugin"}),
    "pytest_runtest_logreport": frozenset(
        {
            "_pytest.terminal.TerminalReporter",
            "_pytest.logging.LoggingPlugin",
            "_pytest.main.Session",
            "_pytest.cacheprovider.LFPlugin",
            "suitebench.suite.inside.plugin",
        }
    ),
    "pytest_fixture_setup": frozenset(
        {"_pytest.fixtures", "_pytest.setupplan", "_pytest.setuponly"}
    ),
    "pytest_fixture_post_finalizer": frozenset({"_pytest.setuponly"}),
}

# Fixtures that pytest's capture, logging, subtests and pytester plugins serve phase by phase.
_PHASE_FIXTURES = frozenset(
    {
        "capsys",
        "capsysbinary",
        "capfd",
        "capfdbinary",
        "capteesys",
        "caplog",
        "subtests",
        "pytester",
        "testdir",
    }
)
_MARKS = frozenset({"skip", "skipif", "xfail"})
# What pytest's faulthandler plugin and suitebench's do on a failure (cancel the watchdog, arm
# it again) is nothing to a run: with no one else implementing the hook, it is not called.
_INTERACT_OWN = frozenset({"_pytest.faulthandler", "suitebench.suite.inside.plugin"})


def _owner(impl: Any) -> str:
    obj = impl.plugin
    if isinstance(obj, type(sys)):
        return str(obj.__name__)
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def why_not(config: pytest.Config) -> str | None:
    """Why this session's tests cannot run by the direct protocol (None: they can)."""
    off = _pytest_why_off()
    if off is not None:
        return off
    for name in ("capturemanager", "logging-plugin"):
        if config.pluginmanager.get_plugin(name) is None:
            return f"pytest's {name} is off"
    for option in ("setupshow", "setuponly", "setupplan", "usepdb", "runxfail"):
        if config.getoption(option, False):
            return f"--{option} is on"
    for name, known in _KNOWN.items():
        for impl in getattr(config.hook, name).get_hookimpls():
            owner = _owner(impl)
            if owner not in known:
                return f"{owner} implements {name}"
    # Wrappers of the whole protocol wrap the direct one too; a protocol of its own (a plugin
    # that reruns tests, say) is not to be stood in for.
    for impl in config.hook.pytest_runtest_protocol.get_hookimpls():
        owner = _owner(impl)
        if not (impl.wrapper or impl.hookwrapper) and owner != "_pytest.runner":
            return f"{owner} implements pytest_runtest_protocol"
    return None


_OFF: list[str | None] = []


def _pytest_why_off() -> str | None:
    """Why this pytest cannot run the direct protocol (its version, or a private name it
    lacks: :mod:`.internals`), asked once per process."""
    if not _OFF:
        off = internals.own_why_off()
        if off is None and not _IMPORTED:
            off = internals.why_off(pytest.__version__, ["an import of direct.py's"])
        _OFF.append(off)
    return _OFF[0]


def why_not_live(session: pytest.Session) -> str | None:
    """Why the direct protocol cannot run on this session's objects: an attribute pytest
    sets on them while configuring and collecting (:data:`.internals.LIVE`) is not there
    (None: every one is)."""
    owners: dict[str, Any] = {
        "session": session,
        "logging-plugin": session.config.pluginmanager.get_plugin("logging-plugin"),
        "item": next((i for i in session.items if type(i) is pytest.Function), None),
    }
    gone = [
        f"{owner}.{path}"
        for owner, path in internals.LIVE
        if owners[owner] is not None and not internals.has(owners[owner], path)
    ]
    if not gone:
        return None
    return internals.why_off(pytest.__version__, gone)


def direct_item(item: pytest.Item) -> bool:
    """A test the direct protocol runs: a plain function with none of the per-phase fixtures
    and marks."""
    if type(item) is not pytest.Function:
        return False
    if _PHASE_FIXTURES.intersection(item.fixturenames):
        return False
    return not any(mark.name in _MARKS for mark in item.iter_markers())


def _params_only(item: pytest.Function) -> dict[str, Any] | None:
    """The arguments of a test whose fixtures are all direct parametrization (function scope),
    as pytest's pseudo-fixtures would hand them over; None if it uses any other fixture."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    defs = item._fixtureinfo.name2fixturedefs
    for name in item.fixturenames:
        found = defs.get(name)
        if name not in params or not found:
            return None
        last = found[-1]
        if not isinstance(last, DirectParamFixtureDef) or last.scope != "function":
            return None
    return {name: params[name] for name in item.fixturenames}


class DirectProtocol:
    """The batch child's ``pytest_runtest_protocol`` (tryfirst: it stands in for the
    runner's own, inside the protocol's wrappers) for the tests :func:`direct_item` admits."""

    def __init__(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        self.config = config
        self.reraise = get_reraise_exceptions(config)
        # Both are there: why_not() checked.
        self.capture: Any = config.pluginmanager.get_plugin("capturemanager")
        self.logging: Any = config.pluginmanager.get_plugin("logging-plugin")
        # Per test, worked out once in the collector for every child: whether it runs
        # directly, its arguments when they are all direct parametrization, and its node id
        # as the event log writes it.
        self.plan: dict[str, tuple[dict[str, Any] | None, str]] = {}
        self.interact = any(
            _owner(impl) not in _INTERACT_OWN
            for impl in config.hook.pytest_exception_interact.get_hookimpls()
        )
        for item in items:
            if direct_item(item):
                assert isinstance(item, pytest.Function)
                self.plan[item.nodeid] = (_params_only(item), json.dumps(item.nodeid))

    def announce(self, items: list[pytest.Item]) -> None:
        """Tell the event log that these tests' passing phases are logged only there, when
        any of them runs directly (else every test's phases are reported as pytest's runner
        reports them)."""
        count = sum(item.nodeid in self.plan for item in items)
        if count:
            plugin.emit_direct(count)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        planned = self.plan.get(item.nodeid)
        if planned is None:
            return None  # pytest's runner
        self.run(item, nextitem, *planned)
        return True

    def run(
        self,
        item: Any,
        nextitem: pytest.Item | None,
        params: dict[str, Any] | None,
        encoded: str,
    ) -> None:
        if not item._request:  # a re-run, as runtestprotocol does
            item._initrequest()
        capture, logs = self.capture, self.logging
        level = logs.log_level
        capture.resume_global_capture()
        try:
            with (
                catching_logs(logs.caplog_handler, level=level) as caplog_handler,
                catching_logs(logs.report_handler, level=level) as report_handler,
            ):
                caplog_handler.reset()
                report_handler.reset()
                item.stash[xfailed_key] = None
                if self.phase(item, "setup", lambda: self.setup(item, params), encoded):
                    self.phase(item, "call", lambda: self.call(item), encoded)
                if item.session.shouldfail or item.session.shouldstop:
                    nextitem = None
                self.phase(item, "teardown", lambda: self.teardown(item, nextitem), encoded)
        finally:
            leftovers.test_ended()
            item._request = False
            item.funcargs = None
            capture.suspend_global_capture(in_=False)
            capture.read_global_capture()

    def phase(self, item: Any, when: str, run: Any, encoded: str) -> bool:
        """One phase: passed (True), or reported by pytest's own hooks with the ``CallInfo``
        pytest's runner would have made of it."""
        if when == "call":
            leftovers.call_starts()
        plugin.BUDGET.arm()
        instant = timing.Instant()
        excinfo = None
        try:
            run()
        except BaseException:
            excinfo = ExceptionInfo.from_current()
            if isinstance(excinfo.value, self.reraise):
                raise
        if excinfo is None and not (when == "call" and item.stash[xfailed_key]):
            item.stash.setdefault(tmppath_result_key, {})[when] = True
            plugin.phase_passed(when, encoded)
            return True
        duration = instant.elapsed()
        call: CallInfo[None] = CallInfo(
            start=duration.start.time,
            stop=duration.stop.time,
            duration=duration.seconds,
            when=when,  # type: ignore[arg-type]
            result=None,
            excinfo=excinfo,
            _ispytest=True,
        )
        ihook = item.ihook
        report = ihook.pytest_runtest_makereport(item=item, call=call)
        ihook.pytest_runtest_logreport(report=report)
        if self.interact and check_interactive_exception(call, report):
            ihook.pytest_exception_interact(node=item, call=call, report=report)
        return False

    def setup(self, item: Any, params: dict[str, Any] | None) -> None:
        _update_current_test_var(item, "setup")
        if params is None:
            item.session._setupstate.setup(item)
        else:
            _setup_chain(item, params)
        self.after_phase()

    def call(self, item: Any) -> None:
        _update_current_test_var(item, "call")
        for name in ("last_type", "last_value", "last_traceback", "last_exc"):
            sys.__dict__.pop(name, None)
        try:
            item.runtest()
        except Exception as exc:  # for post-mortem debugging, as pytest's runner keeps it
            sys.last_type, sys.last_value = type(exc), exc
            sys.last_traceback = exc.__traceback__.tb_next if exc.__traceback__ else None
            if sys.version_info >= (3, 12):
                sys.last_exc = exc
            raise
        finally:
            # The test run may have added an xfail mark (pytest's skipping plugin).
            if item.stash[xfailed_key] is None:
                item.stash[xfailed_key] = evaluate_xfail_marks(item)
        self.after_phase()

    def teardown(self, item: Any, nextitem: pytest.Item | None) -> None:
        _update_current_test_var(item, "teardown")
        item.session._setupstate.teardown_exact(nextitem)
        _update_current_test_var(item, None)
        self.after_phase()

    def after_phase(self) -> None:
        """What pytest's unraisable- and thread-exception plugins do after a phase that
        returned: an exception they caught meanwhile fails the phase (asked only when one
        was caught)."""
        stash = self.config.stash
        if stash.get(unraisable_exceptions, None):
            collect_unraisable(self.config)
        if stash.get(thread_exceptions, None):
            collect_thread_exception(self.config)


def _setup_chain(item: Any, params: dict[str, Any]) -> None:
    """``SetupState.setup`` for a test whose fixtures are all direct parametrization: its
    collectors are set up as pytest's would be, and its arguments are its parameters."""
    stack = item.session._setupstate.stack
    chain = item.listchain()
    for col, (_finalizers, exc) in stack.items():
        assert col in chain, "previous item was not torn down properly"
        if exc:
            raise exc[0].with_traceback(exc[1])
    for col in chain[len(stack) :]:
        stack[col] = ([col.teardown], None)
        try:
            if col is item:
                item.funcargs.update(params)
            else:
                col.setup()
        except TEST_OUTCOME as exc:
            stack[col] = (stack[col][0], (exc, exc.__traceback__))
            raise


def plan(session: pytest.Session, spec: BatchSpec, out_dir: Path) -> DirectProtocol | None:
    """The direct protocol for this process's collected tests, registered with its pytest
    (None: pytest's protocol throughout), planned once: in a collector before its children
    are forked, or in a child that collected for itself.  ``protocol.txt`` gets a line:
    ``direct: <n> of <m> tests`` or ``pytest: <why>``."""
    why = pytest_only(spec)
    if why is None:
        why = _pytest_why_off() or why_not_live(session)
        if why is not None:  # this pytest's doing, not the suite's: said in the run's log too
            print(f"suitebench: the direct protocol is off: {why}", file=sys.stderr)
        else:
            why = why_not(session.config)
    direct = None
    if why is None:
        direct = DirectProtocol(session.config, session.items)
        session.config.pluginmanager.register(direct, "suitebench-direct")
        note = f"direct: {len(direct.plan)} of {len(session.items)} tests"
    else:
        note = f"pytest: {why}"
    with open(out_dir / "protocol.txt", "a", encoding="utf-8") as fh:
        fh.write(note + "\n")
    return direct


class PerProgram:
    """Given to ``pytest.main`` in a child that configures the suite for itself: its tests run
    by the direct protocol where they can."""

    def __init__(self, spec: BatchSpec, out_dir: Path) -> None:
        self.spec, self.out_dir = spec, out_dir

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        direct = plan(session, self.spec, self.out_dir)
        if direct is not None:
            direct.announce(session.items)


def pytest_only(spec: BatchSpec) -> str | None:
    """Why a batch runs its tests by pytest's protocol throughout (None: by the direct one
    where it can): ``score --protocol pytest``, or the batch holds the reference's runs, whose
    outcomes are pytest's own."""
    if spec.get("protocol", "direct") != "direct":
        return "score --protocol pytest"
    if spec.get("reference"):
        return "the reference's runs"
    return None
