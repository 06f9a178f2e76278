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
* it **waited, but also waited for a CPU**: its threads, or those of the processes it started
  (the program a command-line test runs), were ready to run and not given a core (the
  kernel's run-queue delay, ``/proc/<tid>/schedstat``) for part of the phase.  That time is
  the machine's, not the test's: the test runs on until its wall time less that delay reaches
  its limit (again up to :data:`wire.SHARED_WALL_LIMITS` limits), so a test that sleeps and
  computes a little does not time out because others load the machine (the host runs waiting
  confirmations side by side, more of them than cores: :mod:`suitebench.suite.protocol.timeouts`).

A phase that has timed out and still runs -- its ``finally`` waits on what the test hung, as a
test's ``actor.stop()`` waits for an actor that never answers -- has its timeout raised again each
limit, so that it ends within a few limits and the run goes on (or, if the test left threads
running, ends cleanly after it: :func:`.plugin._end_if_timeout_left_threads`).  Its verdict was
given at the first alarm; raising it again changes nothing but when the phase ends.

A faulthandler watchdog, three budgets plus grace after a test starts (pushed on as a phase
runs on), ends a process stuck where the alarm cannot reach: a crash the event log attributes
to the running test.

A process has one :class:`Budget` (the alarm and the watchdog are the process's): the plugin's
(:data:`.plugin.BUDGET`), which a batch's forked children inherit.

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
from typing import Any, NoReturn, TextIO

from suitebench.suite.inside import wire

_HARD_GRACE = 5.0
_REARM_SLACK = 1.0

try:
    from _signal import getsignal as _handler
except ImportError:  # another implementation: the public one
    _handler = signal.getsignal


class SuiteTestTimeout(Exception):
    """A test phase ran past the per-test time limit."""


def _threads_delay(pid: str, skip: int | None = None) -> int:
    """The run-queue delay of every live thread of process ``pid`` (``self``: this one), in
    nanoseconds, but thread ``skip``'s."""
    total = 0
    try:
        tids = _listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        if tid.isdigit() and int(tid) != skip:
            try:
                fd = _os_open(f"/proc/{pid}/task/{tid}/schedstat", O_RDONLY | O_CLOEXEC)
            except OSError:
                continue
            try:
                total += int(_pread(fd, 128, 0).split()[1])
            except (OSError, IndexError, ValueError):
                pass
            finally:
                _close(fd)
    return total


def _descendants(most: int = 256) -> list[int]:
    """The live processes this one started, and theirs (at most ``most``), by each thread's
    ``children`` list; read only when a phase's limit is reached."""
    found: list[int] = []
    queue = ["self"]
    while queue and len(found) < most:
        pid = queue.pop()
        try:
            tids = _listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                fd = _os_open(f"/proc/{pid}/task/{tid}/children", O_RDONLY | O_CLOEXEC)
            except OSError:
                continue
            try:
                kids = _pread(fd, 1 << 16, 0).split()
            except OSError:
                kids = []
            finally:
                _close(fd)
            for kid in kids:
                if kid.isdigit() and len(found) < most:
                    found.append(int(kid))
                    queue.append(kid.decode())
    return found


class Budget:
    """The running test's time budget in this process, its phase's alarm and the watchdog."""

    __slots__ = (
        "_alarm",
        "cap",
        "fault_file",
        "on_cpu",
        "phase_cpu",
        "phase_delay",
        "phase_timeout",
        "phase_wall",
        "schedstat",
        "timed_out",
        "timeout",
        "timeouts",
        "watchdog_deadline",
    )

    def __init__(self) -> None:
        self.fault_file: TextIO | None = None  # where the watchdog's traceback goes (None: stderr)
        self.timeout = 0.0  # the running test's limit
        self.cap = 0.0  # --suitebench-timeout: every test's limit where none of its own is given
        # the --suitebench-timeouts file read (its path, node id -> seconds)
        self.timeouts: tuple[str, dict[str, float]] | None = None
        self.phase_cpu = 0.0  # the main thread's CPU time when the running phase was armed
        self.phase_wall = 0.0  # ... and the monotonic time
        self.phase_delay = 0  # ... and the main thread's run-queue delay (ns)
        self.phase_timeout = ""  # the running phase's timeout, once it has had one
        self.timed_out = False  # the running test has timed out
        self.on_cpu = False  # ... having used its limit of CPU time (not waiting for the machine)
        self.watchdog_deadline = 0.0  # monotonic time the armed watchdog fires (0: not armed)
        # (pid, tid, fd of /proc/thread-self/schedstat), opened once a process
        self.schedstat: tuple[int, int, int] | None = None
        # The alarm's handler, bound once: the installed one is told apart by identity.
        self._alarm = self._on_alarm

    def configure(self, cap: float) -> None:
        """``--suitebench-timeout``: every test's limit where none of its own is given."""
        self.timeout = self.cap = cap

    def start_test(self, item: Any) -> None:
        """A test starts: its limit, no timeout yet, the watchdog far enough away."""
        self.timeout = self.limit_of(item)
        self.timed_out = self.on_cpu = False
        limit = self.timeout
        if limit > 0:
            self._push_watchdog(3 * limit + _HARD_GRACE)

    def limit_of(self, item: Any) -> float:
        """The running test's limit: its own where the run names one (read when the first test
        starts, since a batch's child is handed its options after configuration), else the
        cap."""
        cap = float(self.cap)
        path = getattr(item.config.option, "suitebench_timeouts", None)
        known = self.timeouts
        if path and (known is None or known[0] != path):
            with open(path, encoding="utf-8") as handle:
                known = self.timeouts = (path, json.load(handle))
        if known is None or cap <= 0:
            return cap
        return min(cap, float(known[1].get(item.nodeid, cap)))

    def use_timeouts(self, pairs: list[list[Any]] | None) -> None:
        """A child of a batch collected once: its program's limits below the cap (none: the
        cap for every test)."""
        self.timeouts = ("", {str(t): float(s) for t, s in pairs or ()})

    def _on_alarm(self, signum: int, frame: Any) -> None:
        # A handler runs in the main thread, the test's: its CPU time since the phase began
        # tells a test that computed for its whole budget from one that waited.
        limit = self.timeout
        if self.phase_timeout:
            # The phase had its timeout and still runs: a ``finally`` or a context manager's
            # exit waits on what the test hung (``actor.stop()`` on an actor that never
            # answers).  Raised again each limit, it ends there, not at the watchdog, which
            # would end the whole run and have the test run again first in a fresh one.
            self._timeout(self.phase_timeout, limit)
        cpu = _thread_time() - self.phase_cpu
        wall = _monotonic() - self.phase_wall
        if cpu >= wire.ON_CPU_SHARE * limit:
            self.on_cpu = True
            self._timeout(f"test phase used the per-test limit of {limit:g} s of CPU time", limit)
        share = cpu / wall if wall > 0 else 0.0
        left = wire.SHARED_WALL_LIMITS * limit - wall
        if share >= wire.SHARED_CPU_SHARE and left > 0:
            more = min(left, (wire.ON_CPU_SHARE * limit - cpu) / share + 0.01)
            self._run_on(more, limit)
            return
        waited = wall - self.run_queue_delay()
        if waited < limit and left > 0:  # part of the wall time went waiting for a CPU
            self._run_on(min(left, limit - waited + 0.01), limit)
            return
        self._timeout(f"test phase exceeded the per-test limit of {limit:g} s", limit)

    def _timeout(self, message: str, limit: float) -> NoReturn:
        """The phase times out: raised now, and again a limit later while it still runs."""
        self.timed_out = True
        self.phase_timeout = message
        signal.setitimer(signal.ITIMER_REAL, limit)
        raise SuiteTestTimeout(message)

    def phase_ended(self) -> None:
        """A phase has ended: a timeout it had is not raised again (in whatever runs next)."""
        if self.phase_timeout:
            self.phase_timeout = ""
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _run_on(self, more: float, limit: float) -> None:
        """The running phase goes on ``more`` seconds before its budget is looked at again."""
        self._push_watchdog(more + 3 * limit + _HARD_GRACE)
        signal.setitimer(signal.ITIMER_REAL, more)

    def _main_thread_delay(self) -> int:
        """The main thread's run-queue delay so far, in nanoseconds (0 where the kernel does
        not say).  The file is opened once a process (a batch's child is a new process, with a
        new main thread) and read with ``pread``: ~2 us, three times a test."""
        known = self.schedstat
        pid = _getpid()
        if known is None or known[0] != pid:
            try:
                fd = _os_open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
            except OSError:
                fd = -1
            known = self.schedstat = (pid, _native_id(), fd)
        if known[2] < 0:
            return 0
        try:
            return int(_pread(known[2], 128, 0).split()[1])
        except (OSError, IndexError, ValueError):
            return 0

    def run_queue_delay(self) -> float:
        """Seconds the test's threads spent ready to run without a CPU since the phase was
        armed: the main thread's since then, every other live thread's since it began (a
        thread older than the phase counts whole: more time given, never less; a thread that
        has ended is no longer counted) -- and every live thread of the processes the test
        started, and theirs: a test that waits for a program it ran waits for that program's
        CPU (a command-line suite's every test), so the program's delay is the machine's too."""
        total = self._main_thread_delay() - int(self.phase_delay)
        known = self.schedstat
        main = known[1] if known is not None else None
        total += _threads_delay("self", skip=main)
        for pid in _descendants():
            total += _threads_delay(str(pid))
        return max(0, total) / 1e9

    def arm(self) -> None:
        """A phase starts: its budget."""
        limit = self.timeout
        if limit > 0:
            # A test may have replaced the handler.  ``_signal.getsignal``: ``signal.getsignal``
            # would build an enum member for every answer (~5 us, three times a test).
            if _handler(signal.SIGALRM) is not self._alarm:
                signal.signal(signal.SIGALRM, self._alarm)
            self.phase_timeout = ""
            self.phase_cpu = _thread_time()
            self.phase_delay = self._main_thread_delay()
            self.phase_wall = _monotonic()
            signal.setitimer(signal.ITIMER_REAL, limit)

    def disarm(self) -> None:
        """No budget left running (a test's teardown is reported, or the run ends)."""
        if self.timeout > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _push_watchdog(self, seconds: float) -> None:
        """The watchdog fires no earlier than ``seconds`` from now.

        Re-arming faulthandler wakes its watchdog thread (~35 us a time), so it is re-armed
        only when the current deadline would come too early, with a second of slack."""
        now = _monotonic()
        if self.watchdog_deadline < now + seconds:
            fault_file = self.fault_file or sys.stderr
            faulthandler.dump_traceback_later(seconds + _REARM_SLACK, exit=True, file=fault_file)
            self.watchdog_deadline = now + seconds + _REARM_SLACK

    def watchdog_cancelled(self) -> None:
        """Someone cancelled faulthandler's watchdog (pytest's faulthandler plugin does on
        every failure, for a debugger): arm it again for the running test, or no hang that the
        alarm cannot reach would end before the run's own wall-clock limit.  Only one that was
        armed (a test ran): a collection error outside any test leaves none armed, and a
        batch's parent, which collects and then waits for its children, must not be ended by
        one."""
        if self.watchdog_deadline <= 0:
            return
        self.watchdog_deadline = 0.0
        limit = self.timeout
        if limit > 0:
            self._push_watchdog(3 * limit + _HARD_GRACE)

    def disarm_watchdog(self) -> None:
        """Cancel the last resort: the last test has ended, or the session has."""
        if self.watchdog_deadline > 0:
            faulthandler.cancel_dump_traceback_later()
            self.watchdog_deadline = 0.0
