"""Runs admitted by CPU, not by process: a run that waits does not hold one of ``--jobs``' cores.

:class:`CpuGate` lets at most ``bound`` runs go side by side (what the memory holds at their
memory limit), and of them at most ``cores`` that compute: a run is let in while fewer than
``cores`` of the runs in are computing.  A run computes while it starts (its first
:data:`WARMUP` seconds, and until its sandbox is up), and after that while its sandboxes used more
than :data:`BUSY` of a core over the last :data:`WINDOW` seconds (:mod:`suitebench.run.cpuload`).
A run whose tests wait on a lock, a sleep or another thread then makes room for another; when
it computes again, no run is let in until as few compute as there are cores.  Nothing is
stopped or moved: for the while more runs compute than cores, each test's time is told apart
from the machine's by its run-queue delay (:mod:`suitebench.suite.inside.budget`), as for any
run on a loaded machine, so no verdict depends on the admission.

Runs that are expected to wait (timeouts confirmed alone) are let in whatever computes
(``waits=True``), within ``bound``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator

from suitebench.run import cpuload

# A run computes while it starts: its sandbox, the interpreter and the collection.
WARMUP = 1.0
# It computes after that while it used more than this share of a core ...
BUSY = 0.25
# ... over the last this many seconds.
WINDOW = 0.5
# How often a run waiting to be let in looks again.
POLL = 0.05


class _Admitted:
    """One run let in: its meter and a few recent readings of it."""

    def __init__(self, meter: cpuload.CpuMeter, now: float) -> None:
        self.meter = meter
        self.since = now
        self.readings: deque[tuple[float, float]] = deque()
        self._told: bool = True

    def computing(self, now: float) -> bool:
        """Whether the run computes (read at most every :data:`POLL` seconds, however many
        runs wait to be let in)."""
        if now - self.since < WARMUP or not self.meter.started:
            return True
        if self.readings and now - self.readings[-1][0] < POLL:
            return self._told
        self._told = self._read(now)
        return self._told

    def _read(self, now: float) -> bool:
        self.readings.append((now, self.meter.seconds()))
        while len(self.readings) > 1 and now - self.readings[1][0] >= WINDOW:
            self.readings.popleft()
        first_time, first_cpu = self.readings[0]
        last_time, last_cpu = self.readings[-1]
        if last_time - first_time < WINDOW / 2:
            return True  # too short a look to tell
        return (last_cpu - first_cpu) / (last_time - first_time) > BUSY


class CpuGate:
    """At most ``bound`` runs in, of which at most ``cores`` computing (above)."""

    def __init__(
        self,
        cores: int,
        bound: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        meter: Callable[[], cpuload.CpuMeter] = cpuload.CpuMeter,
    ) -> None:
        self.cores = max(1, cores)
        self.bound = max(self.cores, bound)
        self._clock = clock
        self._meter = meter
        self._in: list[_Admitted] = []
        self._changed = threading.Condition()
        # The most runs that were in at once.
        self.most = 0

    @contextlib.contextmanager
    def held(self, *, waits: bool = False) -> Iterator[None]:
        """Wait to be let in, then hold a place for the block; the job's sandboxes started in
        the block are metered for the gate (:func:`.cpuload.metering`)."""
        meter = self._meter()
        with self._changed:
            while not self._admits(waits):
                self._changed.wait(POLL)
            admitted = _Admitted(meter, self._clock())
            self._in.append(admitted)
            self.most = max(self.most, len(self._in))
        try:
            with cpuload.metering(meter):
                yield
        finally:
            with self._changed:
                self._in.remove(admitted)
                self._changed.notify_all()

    def computing(self) -> int:
        """How many of the runs in are computing now."""
        with self._changed:
            now = self._clock()
            return sum(a.computing(now) for a in self._in)

    def _admits(self, waits: bool) -> bool:
        if len(self._in) >= self.bound:
            return False
        if waits:
            return True
        now = self._clock()
        return sum(a.computing(now) for a in self._in) < self.cores
