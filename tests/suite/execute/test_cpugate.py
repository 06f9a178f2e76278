"""Runs let in by CPU, not by process (:class:`CpuGate`), on a clock and meters the test turns.

With one core and room for three: a run that is starting counts as computing; once it has
waited (its meter still) for half a second after its warm-up, another is let in; while it
computes (its meter rising at a core), none is; runs expected to wait go in whatever computes,
never past the bound.
"""

from __future__ import annotations

import threading
import time

from suitebench.suite.execute import cpugate
from suitebench.suite.execute.cpugate import CpuGate


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Meter:
    """A run's CPU seconds as the test sets them."""

    def __init__(self) -> None:
        self.started = True
        self.cpu = 0.0

    def seconds(self) -> float:
        return self.cpu


def _enter(gate: CpuGate, entered: threading.Event, leave: threading.Event, waits: bool) -> None:
    with gate.held(waits=waits):
        entered.set()
        leave.wait(30)


class Run:
    def __init__(self, gate: CpuGate, *, waits: bool = False) -> None:
        self.entered = threading.Event()
        self.leave = threading.Event()
        self.thread = threading.Thread(
            target=_enter, args=(gate, self.entered, self.leave, waits), daemon=True
        )
        self.thread.start()

    def is_in(self, within: float = 0.5) -> bool:
        return self.entered.wait(within)

    def end(self) -> None:
        self.leave.set()
        self.thread.join(10)


def _gate() -> tuple[CpuGate, Clock, list[Meter]]:
    clock = Clock()
    meters: list[Meter] = []

    def meter() -> Meter:
        meters.append(Meter())
        return meters[-1]

    return CpuGate(1, 3, clock=clock, meter=meter), clock, meters  # type: ignore[arg-type]


def _pass(clock: Clock, meters: list[Meter], seconds: float, rate: float, step: float) -> None:
    """``seconds`` of the test's clock in ``step``s, the first meter rising at ``rate``."""
    for _ in range(round(seconds / step)):
        clock.now += step
        meters[0].cpu += rate * step
        time.sleep(cpugate.POLL * 1.5)  # a waiting run looks again meanwhile


def test_a_run_that_waits_lets_another_in_and_one_that_computes_does_not() -> None:
    gate, clock, meters = _gate()
    first = Run(gate)
    assert first.is_in()
    second = Run(gate)
    # Starting, the first counts as computing: the one core is taken.
    assert not second.is_in(0.3)
    # Past its warm-up it computes at a whole core: still taken.
    _pass(clock, meters, cpugate.WARMUP + cpugate.WINDOW, 1.0, 0.1)
    assert not second.is_in(0.3)
    # It waits (its meter still) for a window: the second goes in.
    _pass(clock, meters, cpugate.WINDOW + 0.2, 0.0, 0.1)
    assert second.is_in(5)
    assert gate.most == 2
    for run in (first, second):
        run.end()


def test_a_run_computing_again_holds_the_next_back() -> None:
    gate, clock, meters = _gate()
    first = Run(gate)
    assert first.is_in()
    second = Run(gate)
    # The gate looks while a run waits to go in: past the warm-up, a window of its meter.
    _pass(clock, meters, cpugate.WARMUP + cpugate.WINDOW, 0.0, 0.1)
    assert second.is_in(5)
    # The second is starting (computing); the first computes again: two on one core.
    _pass(clock, meters, cpugate.WINDOW + 0.2, 1.0, 0.1)
    third = Run(gate)
    assert not third.is_in(0.5)
    first.end()
    second.end()
    assert third.is_in(5)
    third.end()


def test_waits_go_in_whatever_computes_but_never_past_the_bound() -> None:
    gate, clock, meters = _gate()
    computing = Run(gate)
    assert computing.is_in()
    waits = [Run(gate, waits=True) for _ in range(2)]
    assert all(w.is_in(5) for w in waits)
    over = Run(gate, waits=True)
    assert not over.is_in(0.5)  # three in: the bound
    waits[0].end()
    assert over.is_in(5)
    assert gate.most == 3
    for run in (computing, waits[1], over):
        run.end()


def test_a_run_whose_sandbox_has_not_started_computes() -> None:
    gate, clock, meters = _gate()
    first = Run(gate)
    assert first.is_in()
    meters[0].started = False
    second = Run(gate)
    _pass(clock, meters, cpugate.WARMUP + 2 * cpugate.WINDOW, 0.0, 0.1)
    assert not second.is_in(0.5)
    meters[0].started = True
    _pass(clock, meters, cpugate.WINDOW + 0.2, 0.0, 0.1)
    assert second.is_in(5)
    first.end()
    second.end()
