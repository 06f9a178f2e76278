"""A run that ended early goes on in a fresh run (:mod:`suitebench.suite.execute.continuation`),
on records written by hand (no sandbox): which tests a run still owes, the fresh run's target,
and how the two runs' rows are merged -- the test a run ended in is its culprit only when a
fresh run ends in it too.

The suite throughout: four tests a, b, c, d, run in that order.  The first run passed a, was
killed by the memory limit while b ran, and never reached c or d."""

from __future__ import annotations

from pathlib import Path

from suitebench.suite.execute.continuation import (
    continuation,
    ended_waiting,
    merge_continued,
    needs_continuation,
    owed,
)
from suitebench.suite.execute.runspec import Target
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus

from ..conftest import plain_runner

P, F, E, N = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.NOT_RUN

FIRST = SuiteRun.from_maps(
    RunStatus.CRASHED,
    tests={"a": P, "b": E, "c": N, "d": N},
    message="killed by the memory limit",
    messages={"b": "the run ended in this test: memory limit"},
    ended_in=("b", "memory limit"),
    wall_time=3.0,
    seconds={"a": 0.5},
)
PLAIN = Target(executable="/b/m1/executable")


def test_a_run_owes_the_test_it_ended_in_first_then_those_it_never_reached() -> None:
    # a passed: not owed.  b is the suspect (it may only have been running when the damage
    # struck): owed again, first.  c and d never ran: owed.
    assert owed(FIRST, PLAIN) == ("b", "c", "d")
    # a selection (coverage) runs only its tests: of select = (b, d), both are owed
    assert owed(FIRST, Target(select=("b", "d"))) == ("b", "d")
    # --fast's order is kept as given: d before c
    assert owed(FIRST, Target(order=("d", "c", "a"))) == ("d", "c")
    # an import-time mutant's run chose (a, d) itself: only d is owed (b and c were not
    # chosen, so b is no suspect of this run's tests either)
    chose = SuiteRun.from_maps(
        RunStatus.CRASHED, tests=FIRST.statuses(), ended_in=FIRST.ended_in, selected=("a", "d")
    )
    assert owed(chose, PLAIN) == ("d",)
    # a run that ended before collecting anything owes every test (None), or its selection
    nothing = SuiteRun(RunStatus.CRASHED)
    assert owed(nothing, PLAIN) is None
    assert owed(nothing, Target(select=("c",))) == ("c",)


def test_only_a_crashed_run_that_owes_tests_and_is_no_coverage_run_goes_on() -> None:
    assert needs_continuation(FIRST, PLAIN)
    assert not needs_continuation(SuiteRun.from_maps(RunStatus.OK, tests={"a": P}), PLAIN)
    # a coverage run's record would be partial: its tests run everywhere instead
    assert not needs_continuation(FIRST, Target(coverage_root="/src"))
    # crashed after reaching every test, with no suspect left: nothing owed
    reached = SuiteRun.from_maps(RunStatus.CRASHED, tests={"a": P, "b": F})
    assert not needs_continuation(reached, PLAIN)
    assert needs_continuation(SuiteRun(RunStatus.CRASHED), PLAIN)  # owes every test


def test_the_fresh_run_selects_exactly_the_owed_tests_and_chooses_nothing_again() -> None:
    start = Target(
        pythonpath="/src/m1", impact={"base": [0]}, patched_files=("m.py",), fingerprint=True
    )
    key, fresh = continuation("k1", FIRST, start)
    assert fresh.select == ("b", "c", "d") and fresh.order is None
    # the tests are named: no import-time choice, no hot patch, no fingerprint
    assert (fresh.impact, fresh.patched_files, fresh.fingerprint) == (None, None, False)
    assert fresh.pythonpath == "/src/m1"
    # --fast ran d, then b (where it died), c never: the order goes on from the suspect
    fast = SuiteRun.from_maps(
        RunStatus.CRASHED, tests={"d": P, "b": E, "c": N}, ended_in=FIRST.ended_in
    )
    _, ordered = continuation("k1", fast, Target(order=("d", "b", "c")))
    assert ordered.order == ("b", "c") and ordered.select is None
    # the key depends on the first run's key and the tests owed, so a resumed score finds it
    assert key == continuation("k1", FIRST, start)[0]
    assert key != continuation("k2", FIRST, start)[0]
    assert key != continuation("k1", FIRST, Target(select=("b", "d")))[0]
    _, everything = continuation("k1", SuiteRun(RunStatus.CRASHED), PLAIN)
    assert everything.select is None and everything.order is None  # the whole suite again


def test_a_suspect_that_passes_alone_was_only_running_when_the_damage_struck() -> None:
    fresh = SuiteRun.from_maps(
        RunStatus.OK,
        tests={"b": P, "c": F, "d": P},
        wall_time=2.0,
        messages={"c": "assert 3 == 4"},
        seconds={"b": 0.2, "c": 0.1, "d": 0.1},
    )
    merged = merge_continued(FIRST, fresh)
    # b takes its own outcome (its error message goes with it); c, d the fresh run's
    assert merged.statuses() == {"a": P, "b": P, "c": F, "d": P}
    assert merged.to_dict()["messages"] == {"c": "assert 3 == 4"}
    assert (
        merged.status is RunStatus.OK
        and merged.to_dict()["culprits"] == {}
        and merged.ended_in is None
    )
    assert merged.message == "killed by the memory limit; the tests after it ran in a fresh run"
    assert merged.wall_time == 5.0  # 3.0 + 2.0
    assert merged.to_dict()["seconds"] == {"a": 0.5, "b": 0.2, "c": 0.1, "d": 0.1}


def test_a_fresh_run_that_ends_in_another_test_has_a_new_suspect_not_a_culprit() -> None:
    # b passes alone; the fresh run then hits the wall clock in c: c is the suspect now (it
    # may be b's leftovers that struck), to run first in the next fresh run; no culprit yet.
    fresh = SuiteRun.from_maps(
        RunStatus.CRASHED,
        tests={"b": P, "c": E, "d": N},
        message="wall clock",
        ended_in=("c", "wall clock"),
    )
    merged = merge_continued(FIRST, fresh)
    assert merged.statuses() == {"a": P, "b": P, "c": E, "d": N}
    assert merged.to_dict()["culprits"] == {} and merged.ended_in == ("c", "wall clock")
    assert merged.status is RunStatus.CRASHED
    assert owed(merged, PLAIN) == ("c", "d")


def test_a_suspect_that_ends_the_fresh_run_too_is_the_culprit() -> None:
    # The fresh run runs b first and dies in it again: b is the culprit (its fault, an error
    # on this program); c and d are still owed, the chain goes on without a suspect.
    again = SuiteRun.from_maps(
        RunStatus.CRASHED,
        tests={"b": E, "c": N, "d": N},
        message="killed by the memory limit",
        ended_in=("b", "memory limit"),
    )
    merged = merge_continued(FIRST, again)
    assert merged.statuses() == {"a": P, "b": E, "c": N, "d": N}
    assert merged.to_dict()["culprits"] == {"b": "memory limit"} and merged.ended_in is None
    assert merged.status is RunStatus.CRASHED
    assert merged.message == (
        "killed by the memory limit; the tests after it ran in a fresh run, which ended early "
        "too: killed by the memory limit"
    )
    assert owed(merged, PLAIN) == ("c", "d")  # no suspect left: b is not run a third time
    last = merge_continued(merged, SuiteRun.from_maps(RunStatus.OK, tests={"c": P, "d": F}))
    assert last.statuses() == {"a": P, "b": E, "c": P, "d": F}
    assert last.status is RunStatus.OK and last.to_dict()["culprits"] == {"b": "memory limit"}


def test_a_culprit_that_runs_last_leaves_a_finished_run() -> None:
    # The suite's last test printed past the output limit: its fresh run ends in it alone,
    # with every owed test reached -> the run is finished (status ok), b's fault recorded.
    # (Left crashed, one hostile last test would make the reference's runs a harness error.)
    first = SuiteRun.from_maps(RunStatus.CRASHED, tests={"a": P, "b": N}, message="output limit",
                     ended_in=("b", "output limit"))  # fmt: skip
    fresh = SuiteRun.from_maps(RunStatus.CRASHED, tests={"b": E}, message="output limit",
                     ended_in=("b", "output limit"))  # fmt: skip
    merged = merge_continued(first, fresh)
    assert merged.status is RunStatus.OK
    assert merged.statuses() == {"a": P, "b": E} and merged.to_dict()["culprits"] == {
        "b": "output limit"
    }
    assert merged.message.endswith("; every test has its outcome")


def test_a_fresh_run_that_reaches_nothing_ends_the_chain_as_the_first_run_ended() -> None:
    dead = SuiteRun.from_maps(RunStatus.CRASHED, tests={}, message="the interpreter did not start")
    assert merge_continued(FIRST, dead) is FIRST


def test_a_run_ended_in_a_timeout_goes_on_as_a_wait_one_ended_by_a_crash_on_a_core(
    tmp_path: Path,
) -> None:
    # Two mutants' first runs: m1's watchdog ended it in b (a timeout its limit could not
    # stop: the fresh run, b first, likely waits as long), m2's was killed by the memory
    # limit in b (it computes).  The first is scheduled as a wait, beside the --jobs slots;
    # the second on a slot, as before.
    hung = SuiteRun.from_maps(
        RunStatus.CRASHED,
        tests={"a": P, "b": TestStatus.TIMEOUT, "c": N, "d": N},
        ended_in=("b", "the per-test watchdog ended it (a test the time limit could not stop)"),
    )
    assert ended_waiting(hung) and not ended_waiting(FIRST)
    runner = plain_runner(tmp_path, None, overlap=4)
    calls: list[tuple[list[str], bool]] = []
    finished = SuiteRun.from_maps(RunStatus.OK, tests={"b": P, "c": P, "d": P})

    def run_once(
        requests: list[tuple[str, Target]],
        progress: object,
        apart: object,
        plain: bool = False,
        waits: bool = False,
        **_: object,
    ) -> dict[str, SuiteRun]:
        calls.append(([k for k, _ in requests], waits))
        if len(calls) == 1:
            return {"m1": hung, "m2": FIRST}
        return {key: finished for key, _ in requests}

    runner._run_once = run_once  # type: ignore[method-assign]
    runs = runner.run([("m1", PLAIN), ("m2", PLAIN)])
    m1_next, m2_next = continuation("m1", hung, PLAIN)[0], continuation("m2", FIRST, PLAIN)[0]
    # each chain at its own pace, so in either order after the first runs
    assert runner.waits_overlap
    assert calls[0] == (["m1", "m2"], False)
    assert sorted(calls[1:]) == sorted([([m1_next], True), ([m2_next], False)])
    assert runs["m1"].status is RunStatus.OK and runs["m1"].status_of("a") is P
