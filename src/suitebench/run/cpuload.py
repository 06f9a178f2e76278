"""The CPU a job's sandboxes use, read while they run: what lets runs be scheduled by CPU.

A job (one suite run, or a batch of them) starts its sandboxes in the thread that runs it.
While a :class:`CpuMeter` is current in that thread (:func:`metering`), every sandbox session
started there adds its processes to the meter (:func:`watch`: the session's cgroup, or where no
cgroup is usable its process tree), and :meth:`CpuMeter.seconds` adds up the CPU time of every
process in them -- each one's user and system time, and that of the children it reaped -- from
``/proc/<pid>/stat``.  A session that closes leaves its last reading in the meter, so the total
never goes back.

The reading only schedules (how many runs are computing at once); no verdict is read from it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_CURRENT: ContextVar[CpuMeter | None] = ContextVar("suitebench_cpu_meter", default=None)

Members = Callable[[], list[int]]


class CpuMeter:
    """The CPU time of the sandboxes one job started, so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[int, Members] = {}
        self._last: dict[int, float] = {}
        self._gone = 0.0
        self._next = 0

    @property
    def started(self) -> bool:
        """Whether a sandbox of the job has started (before that, nothing to read)."""
        return bool(self._sources) or self._gone > 0

    def add(self, members: Members) -> int:
        """Count the processes ``members()`` lists from now on; returns a handle for
        :meth:`drop`."""
        with self._lock:
            self._next += 1
            self._sources[self._next] = members
            self._last[self._next] = 0.0
            return self._next

    def drop(self, handle: int) -> None:
        """Stop reading a source (its sandbox is closing), keeping a last reading of it."""
        with self._lock:
            members = self._sources.pop(handle, None)
        last = 0.0 if members is None else sum(_cpu_seconds(pid) for pid in members())
        with self._lock:
            self._gone += max(last, self._last.pop(handle, 0.0))

    def seconds(self) -> float:
        """The CPU seconds of the job's sandboxes so far (each source never below its last
        reading: a process that exited unreaped takes its time with it)."""
        with self._lock:
            sources = list(self._sources.items())
        total = 0.0
        for handle, members in sources:
            now = sum(_cpu_seconds(pid) for pid in members())
            with self._lock:
                if handle in self._last:
                    self._last[handle] = max(self._last[handle], now)
                    total += self._last[handle]
        with self._lock:
            return total + self._gone


@contextlib.contextmanager
def metering(meter: CpuMeter) -> Iterator[CpuMeter]:
    """Make ``meter`` the current one in this thread for the block."""
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def watch(members: Members) -> Callable[[], None]:
    """Add a starting sandbox's processes to the current meter, if any; returns what to call
    when the sandbox closes."""
    meter = _CURRENT.get()
    if meter is None:
        return _nothing
    handle = meter.add(members)
    return lambda: meter.drop(handle)


def _nothing() -> None:
    return None


def cgroup_members(group: Path) -> Members:
    """The processes of a cgroup, as its ``cgroup.procs`` lists them."""

    def members() -> list[int]:
        try:
            return [int(x) for x in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    return members


def tree_members(root: int) -> Members:
    """A process and its descendants, as ``/proc/<pid>/task/<tid>/children`` lists them."""

    def members() -> list[int]:
        seen: list[int] = []
        todo = [root]
        while todo:
            pid = todo.pop()
            seen.append(pid)
            with contextlib.suppress(OSError):
                for task in os.listdir(f"/proc/{pid}/task"):
                    children = f"/proc/{pid}/task/{task}/children"
                    with contextlib.suppress(OSError, ValueError), open(children, "rb") as f:
                        todo.extend(int(c) for c in f.read().split())
        return seen

    return members


def _cpu_seconds(pid: int) -> float:
    """User and system time of ``pid`` (all its threads) and of the children it reaped."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / _TICK
    except (OSError, ValueError, IndexError):
        return 0.0
