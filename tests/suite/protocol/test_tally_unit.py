"""The verdict of one score from runs written by hand (no sandbox): which tests are valid (V),
each mutant's row of the kill matrix and its status (:mod:`suitebench.suite.protocol.rows`),
and the figures the tally makes of them (:mod:`suitebench.suite.protocol.tally`).

The suite below is a ``stats`` tool's (sum with overflow detection, max, clamp), run three
times on the reference:

    test                               ref 1    ref 2    ref 3    valid?
    tests/test_sum.py::test_small      passed   passed   passed   yes
    tests/test_sum.py::test_overflow   passed   passed   passed   yes
    tests/test_max.py::test_net        passed   failed   passed   no (flaky: the runs disagree)
    tests/test_clamp.py::test_clamp    failed   failed   failed   no (a wrong expectation)
    tests/test_broken.py               does not collect          no (one unit: its tests unknown)

so V = 2 valid / 5 units = 0.4.  The five mutants, each worked out in its test:

    m_overflow  (sum)    test_overflow fails                   -> killed
    m_loop      (sum)    test_small times out, nothing fails   -> timeout (a kill by timeouts only)
    m_max       (max)    only test_net and test_clamp fail     -> survived (neither is valid)
    m_crash     (max)    its run crashed before test_overflow  -> killed (not_run becomes error)
    m_clamp     (clamp)  its patch does not build              -> build_error (not scored)

M = detected / scored = (m_overflow, m_loop, m_crash) / (those and m_max) = 3/4 = 0.75; per
section: sum 2/2 = 1.0, max 1/2 = 0.5, clamp none scored (no entry).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from suitebench.model.instance import MutantSpec
from suitebench.suite.execute.programs import BuildStatus, BuiltProgram
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.protocol import tally as verdict
from suitebench.suite.protocol.rows import classify, row
from suitebench.suite.protocol.tally import (
    counts_of,
    harness_errors_of,
    selection_used,
    tally,
    withheld_figures,
)
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus
from suitebench.suite.result import CoverageNote, MutantStatus, TestInfo
from suitebench.suite.select.selection import Selection

P, F, E = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR
T, N = TestStatus.TIMEOUT, TestStatus.NOT_RUN

SMALL = "tests/test_sum.py::test_small"
OVERFLOW = "tests/test_sum.py::test_overflow"
NET = "tests/test_max.py::test_net"
CLAMP = "tests/test_clamp.py::test_clamp"
BROKEN = "tests/test_broken.py"


def ref_run(net: TestStatus) -> SuiteRun:
    return SuiteRun.from_maps(
        RunStatus.OK,
        tests={SMALL: P, OVERFLOW: P, NET: net, CLAMP: F},
        collect_errors=(BROKEN,),
        messages={CLAMP: "AssertionError: assert 5 == 10", BROKEN: "SyntaxError: invalid"},
        seconds={SMALL: 0.1, OVERFLOW: 0.2, NET: 0.3, CLAMP: 0.1},
    )


REF_RUNS = [ref_run(P), ref_run(F), ref_run(P)]


# the mutants' derived per-test limits: test_small's alone is known (1.2 s)
TIMEOUTS = {SMALL: 1.2}


def plan(**over: Any) -> Any:
    """The parts of a ``ScorePlan`` the tally reads."""
    instance = SimpleNamespace(
        name="stats",
        root=Path("/instances/stats"),
        sections_map={SMALL: ["sum"], OVERFLOW: ["sum"]},
        mutants=[],
        expected_tests=(),
    )
    runner = SimpleNamespace(
        suite_hash="h",
        engine="batched",
        limits=SuiteLimits(),
        backend_name="local",
    )
    fields: dict[str, Any] = {
        "instance": instance,
        "runner": runner,
        "decoys": True,
        "suite_dir": Path("/suite"),
        "fast": False,
        "all_tests": False,
        "ref_keys": ["r1", "r2", "r3"],
        "reference": SimpleNamespace(program_id="ref"),
        "carried": None,
        "python": None,
        "protocol_note": None,  # the direct protocol ran (no note on pytest's version)
    }
    return SimpleNamespace(**{**fields, **over})


def spec(mid: str, section: str) -> MutantSpec:
    return MutantSpec(id=mid, patch=Path(f"/instances/stats/mutants/{mid}.diff"), section=section)


def built(mid: str, ok: bool = True) -> BuiltProgram:
    status = BuildStatus.OK if ok else BuildStatus.BUILD_ERROR
    return BuiltProgram(mid, status, executable=f"/b/{mid}/executable", message="" if ok else "x")


def test_the_universe_is_every_test_seen_plus_one_unit_per_file_that_never_collected() -> None:
    # Four test ids from the runs (in first-seen order), then the broken file: it holds no
    # test of those, so it is one unit (nothing says how many tests it holds).
    assert verdict.test_universe(REF_RUNS) == [SMALL, OVERFLOW, NET, CLAMP, BROKEN]
    # A listed test (tests.json) that no run saw is a unit too, first; a directory whose
    # conftest.py did not import is no unit of its own when a listed test lies under it.
    listed = ("tests/sub/test_x.py::test_y",)
    broken_dir = SuiteRun.from_maps(RunStatus.OK, tests={SMALL: P}, collect_errors=("tests/sub",))
    assert verdict.test_universe([broken_dir], listed) == [listed[0], SMALL]


def test_a_test_is_valid_only_when_it_passed_every_reference_run() -> None:
    tests = verdict.test_infos(plan(), REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    by_id = {t.id: t for t in tests}
    assert [t.id for t in tests] == [SMALL, OVERFLOW, NET, CLAMP, BROKEN]
    assert [t.id for t in tests if t.valid] == [SMALL, OVERFLOW]
    assert [t.id for t in tests if t.flaky] == [NET]  # P, F, P: the runs disagree
    assert by_id[NET].reference == [P, F, P]
    assert by_id[BROKEN].reference == [E, E, E]  # a file that does not collect: error
    assert by_id[BROKEN].message == "SyntaxError: invalid"
    assert by_id[CLAMP].message == "AssertionError: assert 5 == 10"
    assert by_id[SMALL].sections == ["sum"]
    assert by_id[SMALL].mutant_time_limit == 1.2  # the runner's derived limit, read back
    assert by_id[OVERFLOW].mutant_time_limit is None  # none derived: the user's limit
    assert by_id[OVERFLOW].seconds == [0.2, 0.2, 0.2]
    counts = counts_of(tests, [])
    assert (counts.tests, counts.valid, counts.flaky) == (5, 2, 1)  # V = 2/5


def test_an_excluded_test_is_no_unit_and_a_decoy_failure_makes_a_test_invalid() -> None:
    # test_small passed all three reference runs but failed the decoy run as m_loop (the
    # reference in a mutant's place): it tells the harness, not the program, so not valid.
    decoys = {SMALL: (F, "m_loop", "saw the mutant's options")}
    tests = verdict.test_infos(
        plan(), REF_RUNS, excluded={NET: ["gold_flaky"]}, decoys=decoys, timeouts=TIMEOUTS
    )
    assert [t.id for t in tests] == [SMALL, OVERFLOW, CLAMP, BROKEN]
    small = tests[0]
    assert not small.valid and small.decoy is F and small.reference == [P, P, P]
    assert small.message == (
        "failed on a decoy (the reference, run as mutant m_loop is): it fails the reference "
        "in a mutant's place: saw the mutant's options"
    )
    assert [t.id for t in tests if t.valid] == [OVERFLOW]  # V = 1/4


def test_a_listed_test_never_collected_is_a_unit_that_is_not_valid() -> None:
    # A ProgramBench task lists its tests: one that pytest never collects counts against V.
    # (With decoys on -- a suite from elsewhere -- the instance's list does not apply.)
    ghost = "tests/test_ghost.py::test_gone"
    own = plan(decoys=False)
    own.instance.expected_tests = (ghost,)
    tests = verdict.test_infos(own, REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    assert tests[0].id == ghost and not tests[0].valid
    assert tests[0].reference == [N, N, N]
    assert tests[0].message == "listed in tests.json, never collected"
    assert len(tests) == 6  # the ghost and the five units above: V = 2/6
    plain = verdict.test_infos(plan(), REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    assert ghost not in {t.id for t in plain}


# Each mutant's run (None: it did not build) and its selection (None: every test ran).
MUTANT_RUNS: dict[str, tuple[SuiteRun | None, Selection | None]] = {
    # every test ran; test_overflow (valid) fails: killed by it alone (test_net's and
    # test_clamp's failures do not count: neither is valid)
    "m_overflow": (
        SuiteRun.from_maps(
            RunStatus.OK,
            tests={SMALL: P, OVERFLOW: F, NET: F, CLAMP: F},
            collect_errors=(BROKEN,),
            messages={OVERFLOW: "AssertionError: 'overflow' not printed"},
        ),
        None,
    ),
    # test_small times out (confirmed), nothing valid fails: a kill by timeouts only
    "m_loop": (
        SuiteRun.from_maps(RunStatus.OK, tests={SMALL: T, OVERFLOW: P, NET: P, CLAMP: F}),
        None,
    ),
    # only test_net reaches it (a selection); it fails, but test_net is not valid; every
    # other test takes its first reference outcome: survived
    "m_max": (SuiteRun.from_maps(RunStatus.OK, tests={NET: F}), Selection((NET,), "coverage")),
    # its run died after test_small; the continuation reached nothing more, the reference's
    # runs finished: the rest is the mutant's doing, each not_run test errors -> killed by
    # test_overflow (the invalid ones error too, but do not count)
    "m_crash": (
        SuiteRun.from_maps(RunStatus.CRASHED, tests={SMALL: P}, message="the interpreter died"),
        None,
    ),
    "m_clamp": (None, None),
}
SECTIONS = {"m_overflow": "sum", "m_loop": "sum", "m_max": "max", "m_crash": "max"}


def results() -> list[Any]:
    tests = verdict.test_infos(plan(), REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    out = []
    for mid, (run, selection) in MUTANT_RUNS.items():
        section = SECTIONS.get(mid, "clamp")
        program = built(mid, ok=run is not None)
        cells = None if run is None else row(run, selection or Selection(None, "all"), tests)
        out.append(classify(spec(mid, section), program, cells, tests, selection))
    return out


def test_each_mutant_status_and_killers_from_its_row() -> None:
    got = {r.id: r for r in results()}
    assert {mid: (r.status, r.killed_by) for mid, r in got.items()} == {
        "m_overflow": (MutantStatus.KILLED, [OVERFLOW]),
        "m_loop": (MutantStatus.TIMEOUT, [SMALL]),
        "m_max": (MutantStatus.SURVIVED, []),
        "m_crash": (MutantStatus.KILLED, [OVERFLOW]),
        "m_clamp": (MutantStatus.BUILD_ERROR, []),
    }
    assert got["m_overflow"].kill_messages == {OVERFLOW: "AssertionError: 'overflow' not printed"}
    assert got["m_crash"].kill_messages == {
        OVERFLOW: "the run ended before this test: the interpreter died"
    }
    # m_max's row: its one selected test from its run, the others' first reference outcome
    assert got["m_max"].outcomes == {SMALL: P, OVERFLOW: P, NET: F, CLAMP: F, BROKEN: E}
    assert (got["m_max"].tests_run, got["m_max"].covered_by) == (1, [NET])
    assert got["m_overflow"].tests_run == 4  # the broken file's unit never ran
    assert got["m_crash"].outcomes == {SMALL: P, OVERFLOW: E, NET: E, CLAMP: E, BROKEN: E}


def test_a_crash_where_the_reference_did_not_finish_is_a_harness_error_not_a_kill() -> None:
    run, _ = MUTANT_RUNS["m_crash"]
    tests = verdict.test_infos(plan(), REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    got = classify(spec("m_crash", "max"), built("m_crash"), run, tests, None, False)
    # nothing is known valid to have failed: test_overflow stays not_run, the mutant crashed
    assert (got.status, got.killed_by, got.outcomes[OVERFLOW]) == (MutantStatus.CRASHED, [], N)
    sandbox = SuiteRun(RunStatus.SANDBOX_ERROR, message="bwrap: cannot mount")
    lost = classify(spec("m_lost", "max"), built("m_lost"), sandbox, tests)
    assert lost.status is MutantStatus.CRASHED


def test_the_tally_gives_v_m_per_section_and_the_kill_matrix() -> None:
    tests = verdict.test_infos(plan(), REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    rows = results()
    result = tally(
        plan(),
        REF_RUNS,
        tests,
        rows,
        selections={"m_max": Selection((NET,), "coverage")},
        coverage=CoverageNote(status="ok"),
        excluded={},
        phases={},
        wall_time=1.0,
    )
    assert result.validity == pytest.approx(2 / 5)
    assert result.mutation_score == pytest.approx(3 / 4)
    assert result.per_section == {"sum": 1.0, "max": 0.5}
    c = result.counts
    assert (c.mutants, c.scored, c.killed, c.survived, c.build_errors) == (5, 4, 3, 1, 1)
    assert result.withheld == {} and result.harness_errors == []
    assert result.test_selection == "coverage"  # the one mutant with a selection had one
    matrix = result.kill_matrix()
    assert len(matrix) == 4 * 5  # four mutants ran (m_clamp did not build) x five units
    assert matrix[(OVERFLOW, "m_overflow")] is F and matrix[(SMALL, "m_loop")] is T
    assert matrix[(OVERFLOW, "m_crash")] is E and (SMALL, "m_clamp") not in matrix


def test_a_figure_resting_on_a_harness_error_is_withheld() -> None:
    # one of three reference runs crashed: V and M are both withheld (no test known valid)
    crashed = SuiteRun.from_maps(RunStatus.CRASHED, tests={SMALL: P}, message="killed by signal 9")
    errors = harness_errors_of([REF_RUNS[0], crashed, crashed], [])
    assert [(e.stage, e.count, e.message) for e in errors] == [
        ("reference", 2, "killed by signal 9")
    ]
    why = "the reference's runs did not finish (2 run(s)): killed by signal 9"
    assert withheld_figures(errors, []) == {"validity": why, "mutation_score": why}
    # a mutant run the sandbox lost: only M is withheld, naming it
    tests = verdict.test_infos(plan(), REF_RUNS, excluded={}, timeouts=TIMEOUTS)
    sandbox = SuiteRun(RunStatus.SANDBOX_ERROR, message="bwrap: cannot mount")
    lost = classify(spec("m_lost", "max"), built("m_lost"), sandbox, tests)
    errors = harness_errors_of(REF_RUNS, [lost])
    assert [(e.stage, e.program) for e in errors] == [("mutant", "m_lost")]
    assert withheld_figures(errors, [lost]) == {
        "mutation_score": "1 mutant run(s) lost to a harness error: m_lost"
    }


def test_the_selection_used_is_named_by_what_the_mutants_ran() -> None:
    guided, every = Selection((SMALL,), "coverage"), Selection(None, "import time")
    assert selection_used({"a": guided, "b": guided}, all_tests=False) == "coverage"
    assert selection_used({"a": guided, "b": every}, all_tests=False) == "mixed"
    assert selection_used({"a": every}, all_tests=False) == "all"
    assert selection_used({"a": guided}, all_tests=True) == "all"  # --all-tests
    assert selection_used({}, all_tests=False) == "all"


def test_skipped_tests_are_counted_apart_and_are_not_valid() -> None:
    skip = SuiteRun.from_maps(RunStatus.OK, tests={SMALL: TestStatus.SKIPPED, OVERFLOW: P})
    tests = verdict.test_infos(plan(), [skip, skip], excluded={}, timeouts=TIMEOUTS)
    counts = counts_of(tests, [])
    assert (counts.tests, counts.valid, counts.skipped) == (2, 1, 1)
    assert isinstance(tests[0], TestInfo) and not tests[0].valid
