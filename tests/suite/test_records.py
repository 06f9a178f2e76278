"""A run's record in the store: one ``TestOutcome`` per test in memory, the same stored shape
as before it (one map per fact), so that a store scored earlier is read as it was and runs
written now read the same in an older checkout."""

from __future__ import annotations

import json

from suitebench.suite.records import RunStatus, SuiteRun, TestOutcome, TestStatus

A = "tests/test_stats.py::test_mean_of_one"
B = "tests/test_stats.py::test_median_even_count"
C = "tests/test_stats.py::test_mode_tie_takes_smallest"
D = "tests/test_stats.py::test_variance_of_constant"
E = "tests/test_io.py::test_reads_csv_header"
BROKEN = "tests/test_plot.py"

# A run as the store held it before TestOutcome, written out by hand: a crashed run continued
# in a fresh run.  A passed in 0.12 s; B failed (off by one in the median's middle index);
# C ended the first run and the fresh one too (its confirmed culprit, an error); D timed out
# on the CPU after its 2.0 s; E was never reached; tests/test_plot.py did not collect (its
# message has no test of its own); one skip-like message is empty (pytest gave no reason).
OLD_SHAPE: dict[str, object] = {
    "messages": {
        B: "AssertionError: assert 2.5 == 3.0",
        C: "the run ended in this test: memory limit",
        D: "",
        BROKEN: "ModuleNotFoundError: No module named 'matplotlib'",
    },
    "coverage": None,
    "fingerprint": None,
    "selected": None,
    "selection_reason": "",
    "ended_in": None,
    "culprits": {C: "memory limit"},
    "seconds": {A: 0.12, B: 0.05, D: 2.0},
    "on_cpu": [D],
    "status": "crashed",
    "tests": {A: "passed", B: "failed", C: "error", D: "timeout", E: "not_run"},
    "collect_errors": [BROKEN],
    "exit_code": -9,
    "wall_time": 3.4567,
    "log": "Fatal Python error: ...",
    "message": "pytest did not finish: memory limit (exit code -9)",
}


def stored_bytes(value: object) -> bytes:
    """The bytes the store writes for a value (``suitebench.run.store``: sorted keys)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def test_a_run_stored_before_test_outcome_is_written_back_byte_for_byte() -> None:
    run = SuiteRun.from_dict(OLD_SHAPE)
    assert run.to_dict() == OLD_SHAPE
    assert stored_bytes(run.to_dict()) == stored_bytes(OLD_SHAPE)


def test_each_test_s_facts_are_one_record() -> None:
    run = SuiteRun.from_dict(OLD_SHAPE)
    # read off the hand-written maps above, test by test
    assert run.outcomes == {
        A: TestOutcome(TestStatus.PASSED, seconds=0.12),
        B: TestOutcome(TestStatus.FAILED, "AssertionError: assert 2.5 == 3.0", seconds=0.05),
        C: TestOutcome(
            TestStatus.ERROR,
            "the run ended in this test: memory limit",
            culprit="memory limit",
        ),
        D: TestOutcome(TestStatus.TIMEOUT, "", seconds=2.0, on_cpu=True),
        E: TestOutcome(TestStatus.NOT_RUN),
    }
    # the file that did not collect keeps its message apart, and lends it to its tests
    assert run.collect_messages == {BROKEN: "ModuleNotFoundError: No module named 'matplotlib'"}
    plot = "tests/test_plot.py::test_axis_labels"
    assert run.status_of(plot) is TestStatus.ERROR
    assert run.message_of(plot) == "ModuleNotFoundError: No module named 'matplotlib'"
    assert run.message_of(D) == "" and run.own_message(D) == ""
    assert run.seconds_of(C) is None and run.on_cpu(D) and not run.on_cpu(A)
    assert not run.reached(E) and run.reached(C)


def test_a_harness_failure_has_empty_maps_as_before() -> None:
    old = {
        "messages": {},
        "coverage": None,
        "fingerprint": None,
        "selected": None,
        "selection_reason": "",
        "ended_in": None,
        "culprits": {},
        "seconds": {},
        "on_cpu": [],
        "status": "sandbox_error",
        "tests": {},
        "collect_errors": [],
        "exit_code": None,
        "wall_time": 0.0,
        "log": "",
        "message": "bwrap: cannot mount",
    }
    assert stored_bytes(
        SuiteRun(RunStatus.SANDBOX_ERROR, message="bwrap: cannot mount").to_dict()
    ) == (stored_bytes(old))
    assert SuiteRun.from_dict(old).to_dict() == old
