"""Per-test time budgets inside the pytest process (the plugin's, :mod:`.plugin`).

Each phase of a test (setup, call, teardown) gets a SIGALRM-based budget, armed as the phase
starts: the running test's own limit where the run names one (``--suitebench-timeouts``, the
limits a mutant's run derives from the reference's times), else the cap
(``--suitebench-timeout``).  A phase past its budget fails with :class:`SuiteTestTimeout`, and
the handler tells which kind of timeout it is:

* the test's thread **used its limit of CPU time** (a loop: the program's doing, a kill the host
  counts without running the test again);
* it **waited** (for a lock, a thread, a sleep -- or a machine others load): the host runs it
  again alone at the user's limit before counting it;
* it **computed, but shared the machine** (at least :data:`wire.SHARED_CPU_SHARE` of the CPU,
  less than its limit of CPU time): it runs on, up to :data:`wire.SHARED_WALL_LIMITS` limits of
  wall time, until its CPU time decides -- so the verdict does not depend on the load;
* it **waited, but also waited for a CPU**: its threads were ready to run and not given a core
  (the kernel's run-queue delay, ``/proc/<tid>/schedstat``) for part of the phase.  That time is
  the machine's, not the test's: the test runs on until its wall time less that delay reaches
  its limit (again up to :data:`wire.SHARED_WALL_LIMITS` limits), so a test that sleeps and
  computes a little does not time out because others load the machine (the host runs waiting
  confirmations side by side, more of them than cores: :mod:`suitebench.suite.protocol.timeouts`).

A faulthandler watchdog, three budgets plus grace after a test starts (pushed on as a phase
runs on), ends a process stuck where the alarm cannot reach: a crash the event log attributes
to the running test.

The clocks (and the calls that read the run-queue delay) are bound at import: a test that
replaces ``time.thread_time`` (to have its waits counted as loops, never run again alone)
changes nothing here.  Importable with nothing but
the standard library: it runs inside the sandbox.
"""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
from os import O_CLOEXEC, O_RDONLY
from os import close as _close
from os import getpid as _getpid
from os import listdir as _listdir
from os import open as _os_open
from os import pread as _pread
from threading import get_native_id as _native_id
from time import monotonic as _monotonic
from time import thread_time as _thread_time
from typing import Any

from suitebench.suite.inside import wire

_HARD_GRACE = 5.0
_REARM_SLACK = 1.0

try:
    from _signal import getsignal as _handler
except ImportError:  # another implementation: the public one
    _handler = signal.getsignal


class SuiteTestTimeout(Exception):
    """A test phase ran past the per-test time limit."""


state: dict[str, Any] = {
    "fault_file": None,  # where the watchdog's traceback goes (default: stderr)
    "timeout": 0.0,  # the running test's limit
    "cap": 0.0,  # --suitebench-timeout: every test's limit where no limit of its own is given
    "timeouts": None,  # (the --suitebench-timeouts file read, its node id -> seconds)
    "phase_cpu": 0.0,  # the main thread's CPU time when the running phase's budget was armed
    "phase_wall": 0.0,  # ... and the monotonic time
    "timed_out": False,  # the running test has timed out
    "on_cpu": False,  # ... having used its limit of CPU time (not waiting for the machine)
    "watchdog_deadline": 0.0,  # monotonic time the armed watchdog fires (0: not armed)
    "phase_delay": 0,  # the main thread's run-queue delay (ns) when the phase was armed
    "schedstat": None,  # (pid, tid, fd of /proc/thread-self/schedstat), opened once a process
}


def start_test(item: Any) -> None:
    """A test starts: its limit, no timeout yet, the watchdog far enough away."""
    state["timeout"] = limit_of(item)
    state["timed_out"] = state["on_cpu"] = False
    limit = state["timeout"]
    if limit > 0:
        _push_watchdog(3 * limit + _HARD_GRACE)


def limit_of(item: Any) -> float:
    """The running test's limit: its own where the run names one (read when the first test
    starts, since a batch's child is handed its options after configuration), else the cap."""
    cap = float(state["cap"])
    path = getattr(item.config.option, "suitebench_timeouts", None)
    known = state["timeouts"]
    if path and (known is None or known[0] != path):
        with open(path, encoding="utf-8") as handle:
            known = state["timeouts"] = (path, json.load(handle))
    if known is None or cap <= 0:
        return cap
    return min(cap, float(known[1].get(item.nodeid, cap)))


def use_timeouts(pairs: list[list[Any]] | None) -> None:
    """A child of a batch collected once: its program's limits below the cap (none: the cap
    for every test)."""
    state["timeouts"] = ("", {str(t): float(s) for t, s in pairs or ()})


def _on_alarm(signum: int, frame: Any) -> None:
    # A handler runs in the main thread, the test's: its CPU time since the phase began tells
    # a test that computed for its whole budget from one that waited.
    limit = state["timeout"]
    cpu = _thread_time() - state["phase_cpu"]
    wall = _monotonic() - state["phase_wall"]
    if cpu >= wire.ON_CPU_SHARE * limit:
        state["timed_out"] = state["on_cpu"] = True
        raise SuiteTestTimeout(f"test phase used the per-test limit of {limit:g} s of CPU time")
    share = cpu / wall if wall > 0 else 0.0
    left = wire.SHARED_WALL_LIMITS * limit - wall
    if share >= wire.SHARED_CPU_SHARE and left > 0:
        more = min(left, (wire.ON_CPU_SHARE * limit - cpu) / share + 0.01)
        _run_on(more, limit)
        return
    waited = wall - run_queue_delay()
    if waited < limit and left > 0:  # part of the wall time went waiting for a CPU
        _run_on(min(left, limit - waited + 0.01), limit)
        return
    state["timed_out"] = True
    raise SuiteTestTimeout(f"test phase exceeded the per-test limit of {limit:g} s")


def _run_on(more: float, limit: float) -> None:
    """The running phase goes on ``more`` seconds before its budget is looked at again."""
    _push_watchdog(more + 3 * limit + _HARD_GRACE)
    signal.setitimer(signal.ITIMER_REAL, more)


def _main_thread_delay() -> int:
    """The main thread's run-queue delay so far, in nanoseconds (0 where the kernel does not
    say).  The file is opened once a process (a batch's child is a new process, with a new
    main thread) and read with ``pread``: ~2 us, three times a test."""
    known = state["schedstat"]
    pid = _getpid()
    if known is None or known[0] != pid:
        try:
            fd = _os_open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        except OSError:
            fd = -1
        known = state["schedstat"] = (pid, _native_id(), fd)
    if known[2] < 0:
        return 0
    try:
        return int(_pread(known[2], 128, 0).split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def run_queue_delay() -> float:
    """Seconds the test's threads spent ready to run without a CPU since the phase was armed:
    the main thread's since then, every other live thread's since it began (a thread older
    than the phase counts whole: more time given, never less; a thread that has ended is no
    longer counted)."""
    total = _main_thread_delay() - int(state["phase_delay"])
    known = state["schedstat"]
    main = known[1] if known is not None else None
    try:
        tids = _listdir("/proc/self/task")
    except OSError:
        tids = []
    for tid in tids:
        if tid.isdigit() and int(tid) != main:
            try:
                fd = _os_open(f"/proc/self/task/{tid}/schedstat", O_RDONLY | O_CLOEXEC)
            except OSError:
                continue
            try:
                total += int(_pread(fd, 128, 0).split()[1])
            except (OSError, IndexError, ValueError):
                pass
            finally:
                _close(fd)
    return max(0, total) / 1e9


def arm() -> None:
    """A phase starts: its budget."""
    limit = state["timeout"]
    if limit > 0:
        # A test may have replaced the handler.  ``_signal.getsignal``: ``signal.getsignal``
        # would build an enum member for every answer (~5 us, three times a test).
        if _handler(signal.SIGALRM) is not _on_alarm:
            signal.signal(signal.SIGALRM, _on_alarm)
        state["phase_cpu"] = _thread_time()
        state["phase_delay"] = _main_thread_delay()
        state["phase_wall"] = _monotonic()
        signal.setitimer(signal.ITIMER_REAL, limit)


def disarm() -> None:
    """No budget left running (a test's teardown is reported, or the run ends)."""
    if state["timeout"] > 0:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _push_watchdog(seconds: float) -> None:
    """The watchdog fires no earlier than ``seconds`` from now.

    Re-arming faulthandler wakes its watchdog thread (~35 us a time), so it is re-armed only
    when the current deadline would come too early, with a second of slack."""
    now = _monotonic()
    if state["watchdog_deadline"] < now + seconds:
        fault_file = state["fault_file"] or sys.stderr
        faulthandler.dump_traceback_later(seconds + _REARM_SLACK, exit=True, file=fault_file)
        state["watchdog_deadline"] = now + seconds + _REARM_SLACK


def watchdog_cancelled() -> None:
    """Someone cancelled faulthandler's watchdog (pytest's faulthandler plugin does on every
    failure, for a debugger): arm it again for the running test, or no hang that the alarm
    cannot reach would end before the run's own wall-clock limit.  Only one that was armed
    (a test ran): a collection error outside any test leaves none armed, and a batch's
    parent, which collects and then waits for its children, must not be ended by one."""
    if state["watchdog_deadline"] <= 0:
        return
    state["watchdog_deadline"] = 0.0
    limit = state["timeout"]
    if limit > 0:
        _push_watchdog(3 * limit + _HARD_GRACE)


def disarm_watchdog() -> None:
    """Cancel the last resort: the last test has ended, or the session has."""
    if state["watchdog_deadline"] > 0:
        faulthandler.cancel_dump_traceback_later()
        state["watchdog_deadline"] = 0.0
