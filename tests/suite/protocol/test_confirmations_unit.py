"""The confirmation of waits and the floor, on records written by hand (no sandbox).

A fake runner stands in for ``SuiteRuns``: it records what it is asked to run and answers each
confirmation with the outcome this file gives it, so what ``confirm_timeouts`` and
``EarlyConfirmations`` ask for, and what they make of the answers, is checked cell by cell.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from suitebench.suite.execute.programs import BuildStatus, BuiltProgram
from suitebench.suite.protocol.floor import run_floors
from suitebench.suite.protocol.timeouts import EarlyConfirmations, confirm_timeouts
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus
from suitebench.suite.result import TestInfo

P, F, T, N = TestStatus.PASSED, TestStatus.FAILED, TestStatus.TIMEOUT, TestStatus.NOT_RUN


@dataclass
class FakeRunner:
    """Answers a confirmation of (program, test) with ``alone[(program, test)]``."""

    alone: dict[tuple[str, str], TestStatus]
    asked: list[list[str]] = field(default_factory=list)
    overlap: int = 8
    workers: int = 2
    waits_overlap: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)

    def key(
        self,
        program_id: str,
        mode: str,
        order: tuple[str, ...] | None,
        *,
        timeouts: Any = (),
        positions: Any = (),
    ) -> str:
        return f"{program_id}|{mode}|{','.join(order or ())}"

    in_store: set[str] = field(default_factory=set)

    def stored(self, keys: list[str]) -> set[str]:
        return self.in_store & set(keys)

    def run(
        self, requests: list[tuple[str, Any]], on_run: Any = None, **_: Any
    ) -> dict[str, SuiteRun]:
        out = {}
        with self.lock:
            self.asked.append([k for k, _ in requests if k not in self.in_store])
        for key, target in requests:
            program = key.split("|")[0]
            (test,) = target.select
            out[key] = SuiteRun.from_maps(RunStatus.OK, tests={test: self.alone[(program, test)]})
            if on_run is not None:
                on_run(key, out[key])
        return out


def program(name: str) -> BuiltProgram:
    return BuiltProgram(name, BuildStatus.OK, pythonpath=f"/src/{name}")


def info(test: str, valid: bool = True, seconds: float = 0.1) -> TestInfo:
    status = P if valid else F
    return TestInfo(
        id=test, file="t.py", valid=valid, flaky=False, reference=[status] * 3,
        seconds=[seconds, seconds * 2, seconds * 3],
    )  # fmt: skip


TESTS = [info("a"), info("b"), info("c"), info("broken", valid=False)]


def row(tests: dict[str, TestStatus], seconds: dict[str, float], on_cpu: tuple[str, ...] = ()):
    return SuiteRun.from_maps(RunStatus.OK, tests=tests, seconds=seconds, on_cpu=on_cpu)


def test_only_waits_of_valid_tests_are_confirmed_and_a_pass_alone_is_taken() -> None:
    runner = FakeRunner({("m1", "a"): T, ("m1", "b"): P, ("m2", "a"): P})
    built = {"m1": program("m1"), "m2": program("m2")}
    runs = {
        # a and b waited; c timed out on the CPU (no confirmation); broken is not valid
        "m1": row({"a": T, "b": T, "c": T, "broken": T}, {}, on_cpu=("c",)),
        "m2": row({"a": T, "b": P, "c": P, "broken": F}, {}),
        "m3": None,
    }
    out = confirm_timeouts(runner, built, runs, TESTS)  # type: ignore[arg-type]
    assert sorted(k for batch in runner.asked for k in batch) == [
        "m1|confirm-timeout|a", "m1|confirm-timeout|b", "m2|confirm-timeout|a",
    ]  # fmt: skip
    m1, m2 = out["m1"], out["m2"]
    assert m1 is not None and m2 is not None and out["m3"] is None
    assert (m1.statuses()["a"], m1.statuses()["b"], m1.statuses()["c"]) == (T, P, T)
    assert m1.to_dict()["messages"]["b"] == "timed out in the full run, passed when run alone"
    assert m2.statuses()["a"] is P


def test_fast_leaves_the_waits_of_a_mutant_another_test_kills_unconfirmed() -> None:
    runner = FakeRunner({("m2", "a"): T})
    built = {"m1": program("m1"), "m2": program("m2")}
    runs = {
        "m1": row({"a": T, "b": F}, {}),  # b kills it: a's wait needs no confirmation
        "m2": row({"a": T, "b": P}, {}),  # nothing else kills it: a is confirmed
    }
    out = confirm_timeouts(runner, built, runs, TESTS, fast=True)  # type: ignore[arg-type]
    assert [k for batch in runner.asked for k in batch] == ["m2|confirm-timeout|a"]
    m1 = out["m1"]
    assert m1 is not None and m1.statuses()["a"] is N and m1.statuses()["b"] is F
    assert "not confirmed" in m1.to_dict()["messages"]["a"]
    # Without --fast the full matrix confirms every wait.
    runner = FakeRunner({("m1", "a"): P, ("m2", "a"): T})
    out = confirm_timeouts(runner, built, runs, TESTS)  # type: ignore[arg-type]
    assert sorted(k for batch in runner.asked for k in batch) == [
        "m1|confirm-timeout|a", "m2|confirm-timeout|a",
    ]  # fmt: skip


def asked(runner: FakeRunner) -> list[list[str]]:
    """The confirmations that waited, round by round (a round of stored ones only is left out)."""
    return [batch for batch in runner.asked if batch]


def test_fast_confirms_a_mutants_waits_until_one_decides_it() -> None:
    # m1 hangs three tests and the first confirmed decides it; m2's first wait passes alone,
    # so its other two are confirmed together and one times out again; m3's waits all pass
    # alone (a loaded machine): it survives, every wait tried.
    runner = FakeRunner(
        {
            ("m1", "a"): T, ("m1", "b"): T, ("m1", "c"): T,
            ("m2", "a"): P, ("m2", "b"): P, ("m2", "c"): T,
            ("m3", "a"): P, ("m3", "b"): P,
        }
    )  # fmt: skip
    built = {m: program(m) for m in ("m1", "m2", "m3")}
    runs = {
        "m1": row({"a": T, "b": T, "c": T}, {}),
        "m2": row({"a": T, "b": T, "c": T}, {}),
        "m3": row({"a": T, "b": T, "c": P}, {}),
    }
    out = confirm_timeouts(runner, built, runs, TESTS, fast=True)  # type: ignore[arg-type]
    assert [sorted(b) for b in asked(runner)] == [
        ["m1|confirm-timeout|a", "m2|confirm-timeout|a", "m3|confirm-timeout|a"],
        ["m2|confirm-timeout|b", "m2|confirm-timeout|c", "m3|confirm-timeout|b"],
    ]
    m1, m2, m3 = out["m1"], out["m2"], out["m3"]
    assert m1 is not None and m2 is not None and m3 is not None
    assert [m1.statuses()[t] for t in "abc"] == [T, N, N]
    assert "not confirmed" in m1.to_dict()["messages"]["b"]
    assert [m2.statuses()[t] for t in "abc"] == [P, P, T]
    assert [m3.statuses()[t] for t in "abc"] == [P, P, P]
    # The full matrix would confirm all eight: the mutants detected are the same two.
    full = confirm_timeouts(FakeRunner(runner.alone), built, runs, TESTS)  # type: ignore[arg-type]
    detected = {m for m, r in full.items() if r is not None and T in r.statuses().values()}
    assert detected == {"m1", "m2"}


def test_fast_takes_a_stored_confirmation_before_waiting_for_another() -> None:
    # The early lane confirmed m1's second wait; m2's first wait fails alone: a kill, no more.
    runner = FakeRunner(
        {("m1", "a"): T, ("m1", "b"): T, ("m2", "a"): F, ("m2", "b"): T},
        in_store={"m1|confirm-timeout|b"},
    )
    built = {"m1": program("m1"), "m2": program("m2")}
    runs = {"m1": row({"a": T, "b": T}, {}), "m2": row({"a": T, "b": T}, {})}
    out = confirm_timeouts(runner, built, runs, TESTS, fast=True)  # type: ignore[arg-type]
    assert asked(runner) == [["m2|confirm-timeout|a"]]
    m1, m2 = out["m1"], out["m2"]
    assert m1 is not None and m2 is not None
    assert (m1.statuses()["a"], m1.statuses()["b"]) == (N, T)
    assert (m2.statuses()["a"], m2.statuses()["b"]) == (F, N)


def test_fast_early_confirmations_go_one_at_a_time_and_settle_the_mutant() -> None:
    runner = FakeRunner({("m1", "a"): P, ("m1", "b"): T, ("m1", "c"): T})
    lane = EarlyConfirmations(runner, ["a", "b", "c"], fast=True, width=4)  # type: ignore[arg-type]
    lane.watch({"key-m1": program("m1")})
    hung = row({"a": T, "b": T, "c": T}, {})
    assert not lane.settled("key-m1", hung)
    lane.offer("key-m1", hung)
    # a passed alone, so b is asked (by the lane's thread, after a's answer); at join what is
    # not yet asked is left to confirm_timeouts, so wait for b's answer first
    deadline = time.monotonic() + 60
    while not lane.settled("key-m1", hung) and time.monotonic() < deadline:
        time.sleep(0.01)
    lane.join()
    # b timed out again: c is not needed
    assert asked(runner) == [["m1|confirm-timeout|a"], ["m1|confirm-timeout|b"]]
    assert lane.asked == 2
    assert lane.settled("key-m1", hung)
    assert not lane.settled("key-m1", row({"a": T, "b": P}, {}))  # b did not wait in this run
    assert not lane.settled("key-other", hung)  # not a watched run


def test_early_confirmations_ask_for_what_a_watched_run_shows_and_only_that() -> None:
    runner = FakeRunner({("m1", "a"): T, ("m1", "b"): T})
    lane = EarlyConfirmations(runner, ["a", "b", "c"], fast=False, width=4)  # type: ignore[arg-type]
    lane.watch({"key-m1": program("m1")})
    lane.offer("key-ref", row({"a": T}, {}))  # not a watched run: nothing
    lane.offer("key-m1", row({"a": T, "b": T, "c": T, "broken": T}, {}, on_cpu=("c",)))
    lane.join()
    assert sorted(k for batch in runner.asked for k in batch) == [
        "m1|confirm-timeout|a", "m1|confirm-timeout|b",
    ]  # fmt: skip
    assert lane.asked == 2
    lane.offer("key-m1", row({"a": T}, {}))  # after join: not taken
    assert lane.asked == 2


def test_the_floor_is_the_cells_time_over_the_workers_plus_the_longest_chain() -> None:
    # Reference runs: 3 runs of a, b, c at 0.1, 0.2, 0.3 s each -> 3 x 0.6 = 1.8 s of cells.
    refs = [row({"a": P, "b": P, "c": P}, {"a": 0.1, "b": 0.2, "c": 0.3})] * 3
    tests = [info("a", seconds=0.1), info("b", seconds=0.2), info("c", seconds=0.3)]
    rows = {
        # a ran at 0.5 s on the mutant: counted at its quickest reference time, 0.1 s;
        # b timed out on the CPU at its limit 1.2 s: 1.2 s of CPU; c waited 1.4 s.
        "m1": row({"a": P, "b": T, "c": T}, {"a": 0.5, "b": 1.2, "c": 1.4}, on_cpu=("b",)),
        # a waited 1.1 s and passes alone (0.1 s at reference speed); b and c not run
        "m2": row({"a": T, "b": N, "c": N}, {"a": 1.1}),
    }
    confirmed = {
        "m1": row({"a": P, "b": T, "c": T}, {}),  # c timed out again alone: a 10 s wait
        "m2": row({"a": P, "b": N, "c": N}, {}),
    }
    floor = run_floors(
        workers=2, per_test=10.0, reference_runs=refs, tests=tests, rows=rows,
        confirmed=confirmed,
    )  # fmt: skip
    assert floor["reference_runs"] == pytest.approx(1.8 / 2)
    # cells 0.1 + 1.2 = 1.3 s over 2 workers, plus the longest wait in the runs, 1.4 s
    assert floor["mutant_runs"] == pytest.approx(1.3 / 2 + 1.4)
    # m2's a alone: 0.1 s over 2, plus m1's c waiting 10 s alone
    assert floor["confirm_timeouts"] == pytest.approx(0.1 / 2 + 10.0)
    # together: (1.8 + 1.3 + 0.1) / 2 + the chain of c, 1.4 s then 10 s
    assert floor["runs"] == pytest.approx(3.2 / 2 + 11.4)
