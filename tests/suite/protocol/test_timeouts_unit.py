"""Which timeouts kill, on records written by hand (no sandbox): a mutant's per-test limits
derived from the reference's times (:func:`suitebench.suite.execute.runspec.derive_timeouts`),
and the reference's waits confirmed alone (:func:`~suitebench.suite.protocol.timeouts.
confirm_reference_timeouts`).  The mutants' confirmations are in test_confirmations_unit.py,
whose fake runner these tests use too."""

from __future__ import annotations

from suitebench.suite.execute.runspec import SuiteLimits, derive_timeouts
from suitebench.suite.protocol.timeouts import confirm_reference_timeouts, confirm_timeouts
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus

from .test_confirmations_unit import TESTS, FakeRunner, info, program

P, F, T, N = TestStatus.PASSED, TestStatus.FAILED, TestStatus.TIMEOUT, TestStatus.NOT_RUN


def test_a_mutant_limit_is_factor_times_the_longest_reference_time_plus_a_constant() -> None:
    # PIT's defaults: 1.25 x the longest of the reference runs + 1.0 s, rounded UP to a tenth,
    # kept only where it is below the user's per-test limit (10 s).
    seconds = [
        {"a": 0.4, "b": 2.0, "c": 7.3, "d": 0.08, "invalid": 0.1},
        {"a": 0.8, "b": 1.5, "c": 7.0, "d": 0.10, "invalid": 0.1},
        {"a": 0.6, "c": 7.1, "d": 0.09, "invalid": 0.1},  # b has no time in this run
    ]
    got = derive_timeouts(seconds, ["d", "c", "b", "a"], SuiteLimits(per_test=10.0))
    # a: 1.25 x 0.8 + 1 = 2.0 exactly.
    # b: no time in every run -> the user's limit (not listed).
    # c: 1.25 x 7.3 + 1 = 10.125 -> 10.2, not below 10 -> the user's limit (not listed).
    # d: 1.25 x 0.10 + 1 = 1.125 -> rounded up to 1.2 (never down to 1.1: too tight).
    # invalid: not a valid test: not asked for.  Sorted by test id.
    assert got == (("a", 2.0), ("d", 1.2))
    # Another factor and constant move every limit: 2 x 0.8 + 0.5 = 2.1, 2 x 0.10 + 0.5
    # = 0.7, and c's 2 x 7.3 + 0.5 = 15.1 is still over the limit.
    tight = SuiteLimits(per_test=10.0, timeout_factor=2.0, timeout_constant=0.5)
    assert derive_timeouts(seconds, ["a", "c", "d"], tight) == (("a", 2.1), ("d", 0.7))
    assert derive_timeouts([], ["a"], SuiteLimits()) == ()  # no reference times at all


def test_a_reference_wait_is_run_alone_once_and_its_outcome_taken_in_every_run() -> None:
    # Three reference runs.  a waited past its limit in runs 1 and 2 (not on the CPU): it is
    # confirmed ONCE, alone on the reference, and passes -> both runs take "passed" (the
    # machine was busy; V must not move with the load).  b timed out on the CPU in run 1: it
    # computed all along, no confirmation, it stays a timeout.  c failed: nothing to confirm.
    runs = {
        "r1": SuiteRun.from_maps(RunStatus.OK, tests={"a": T, "b": T, "c": F}, on_cpu=("b",)),
        "r2": SuiteRun.from_maps(RunStatus.OK, tests={"a": T, "b": P, "c": F}),
        "r3": SuiteRun.from_maps(RunStatus.OK, tests={"a": P, "b": P, "c": F}),
    }
    runner = FakeRunner({("ref", "a"): P})
    out = confirm_reference_timeouts(runner, program("ref"), runs)  # type: ignore[arg-type]
    assert runner.asked == [["ref|confirm-timeout|a"]]
    assert {k: r.statuses() for k, r in out.items()} == {
        "r1": {"a": P, "b": T, "c": F},
        "r2": {"a": P, "b": P, "c": F},
        "r3": {"a": P, "b": P, "c": F},
    }
    note = "timed out in the full run, passed when run alone"
    assert out["r1"].to_dict()["messages"] == {"a": note} and out["r2"].to_dict()["messages"] == {
        "a": note
    }
    assert out["r3"] is runs["r3"]  # no wait in it: untouched


def test_a_wait_that_times_out_again_alone_or_tells_nothing_stays_a_timeout() -> None:
    # a hangs alone too (a real hang: a timeout of the test's own doing); b's confirmation did
    # not reach b (not_run: it tells nothing) -> both stay timeouts, with no note.
    runs = {"r1": SuiteRun.from_maps(RunStatus.OK, tests={"a": T, "b": T})}
    runner = FakeRunner({("ref", "a"): T, ("ref", "b"): N})
    out = confirm_reference_timeouts(runner, program("ref"), runs)  # type: ignore[arg-type]
    assert sorted(runner.asked[0]) == ["ref|confirm-timeout|a", "ref|confirm-timeout|b"]
    assert out["r1"].statuses() == {"a": T, "b": T} and out["r1"].to_dict()["messages"] == {}


def test_a_mutant_wait_that_fails_alone_kills_as_a_failure() -> None:
    # On m1, a waited; alone it FAILS (the mutant broke it; the full run only hid that behind
    # the wait): the cell becomes "failed", a kill that needs no timeout at all.  b timed out
    # alone again: it stays "timeout".  The mutant is then killed by a (failed) and b
    # (timeout), so it is "killed", not "timeout" (rows.classify: timeout only if every killer
    # timed out).
    runner = FakeRunner({("m1", "a"): F, ("m1", "b"): T})
    runs = {"m1": SuiteRun.from_maps(RunStatus.OK, tests={"a": T, "b": T, "c": P})}
    out = confirm_timeouts(runner, {"m1": program("m1")}, runs, TESTS)  # type: ignore[arg-type]
    row = out["m1"]
    assert row is not None
    assert row.statuses() == {"a": F, "b": T, "c": P}
    assert row.to_dict()["messages"] == {"a": "timed out in the full run, failed when run alone"}


def test_no_valid_test_no_confirmation() -> None:
    # A wait of a test that is not valid kills nothing: nothing is asked for.
    runner = FakeRunner({})
    runs = {"m1": SuiteRun.from_maps(RunStatus.OK, tests={"x": T})}
    tests = [info("x", valid=False)]
    out = confirm_timeouts(runner, {"m1": program("m1")}, runs, tests)  # type: ignore[arg-type]
    assert runner.asked == [] and out == runs
