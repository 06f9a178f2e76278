"""What a score runs, and in which order (:mod:`suitebench.suite.protocol.scoreplan`), on plans
written by hand (no sandbox): the reference runs that go before the mutants' (the early ones
and the coverage run), those that go beside them, and the three ways mutants choose their
tests (a selection from the coverage run, every test, or --fast)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from suitebench.suite.execute.programs import BuildStatus, BuiltProgram
from suitebench.suite.execute.runspec import Engine, Target
from suitebench.suite.protocol.scoreplan import ScorePlan, coverage_request_of
from suitebench.suite.select.infection import Probes

FIRST = Target(executable="/b/ref/executable", fingerprint=True)  # the first run records more
REF = Target(executable="/b/ref/executable")
COVERAGE = ("cov", Target(executable="/b/ref-gcov/executable", coverage_root="/b/ref-gcov"))


def plan(*, early: int, coverage: bool, fast: bool = False) -> ScorePlan:
    """A plan with three reference runs; the parts these tests do not read are left empty."""
    unread: Any = None
    return ScorePlan(
        instance=unread, suite_dir=Path("/suite"), python=None, builder=unread, mutants=[],
        reference=unread, built={}, beside=False, wait_builds=dict, carried=None,
        runner=unread, ref_keys=["r1", "r2", "r3"], ref_target=REF, first_target=FIRST,
        coverage_request=COVERAGE if coverage else None, probes=Probes(), fast=fast,
        all_tests=not coverage, early=early,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("early", "first", "later"),
    [
        # One reference run first (with the coverage run), two beside the mutants': the first
        # run's target is its own (it records the fingerprint), the others share one.
        (1, [("r1", FIRST), COVERAGE], [("r2", REF), ("r3", REF)]),
        # All three first (--fast needs every test's validity before its order; a batched
        # Python coverage run rides along with the reference runs).
        (3, [("r1", FIRST), ("r2", REF), ("r3", REF), COVERAGE], []),
        # None first: only the coverage run precedes the mutants'.
        (0, [COVERAGE], [("r1", REF), ("r2", REF), ("r3", REF)]),
    ],
)
def test_the_reference_runs_split_into_those_before_the_mutants_and_those_beside(
    early: int, first: list[Any], later: list[Any]
) -> None:
    p = plan(early=early, coverage=True)
    assert p.first_requests() == first
    assert p.later_requests() == later
    # every reference run is asked for exactly once, whatever the split
    asked = [k for k, _ in p.first_requests() + p.later_requests() if k != "cov"]
    assert asked == ["r1", "r2", "r3"]


def test_without_a_coverage_run_nothing_but_reference_runs_go_first() -> None:
    assert plan(early=2, coverage=False).first_requests() == [("r1", FIRST), ("r2", REF)]


def test_staged_full_and_fast_are_three_exclusive_ways() -> None:
    # staged: mutants run a selection from the coverage run; full: every test (--all-tests,
    # or no coverage run); --fast: neither (its own order, stopped at the first kill)
    staged, full = plan(early=1, coverage=True), plan(early=1, coverage=False)
    fast = plan(early=1, coverage=True, fast=True)
    assert (staged.staged, staged.full) == (True, False)
    assert (full.staged, full.full) == (False, True)
    assert (fast.staged, fast.full) == (False, False)
    assert (plan(early=1, coverage=False, fast=True).full) is False


@dataclass
class KeyRunner:
    """Keys a job by what ``SuiteRuns.key`` is given, so the mode chosen can be read back."""

    asked: list[tuple[Any, ...]] = field(default_factory=list)

    def key(self, program_id: str, mode: str, order: Any, engine: Engine | None = None) -> str:
        self.asked.append((program_id, mode, order, engine))
        return f"{program_id}|{mode}"


@dataclass
class Builder:
    gcov: BuiltProgram | None

    def coverage(self) -> BuiltProgram | None:
        return self.gcov


def test_the_coverage_run_traces_a_package_in_place_and_a_c_program_in_a_gcov_build() -> None:
    runner = KeyRunner()
    package = BuiltProgram("ref", BuildStatus.OK, directory="/b/ref", pythonpath="/b/ref/src")
    key, target = coverage_request_of(runner, Builder(None), package)  # type: ignore[arg-type,misc]
    assert key == "ref|coverage" and target.coverage_root == "/b/ref/src"
    assert target.pythonpath == "/b/ref/src" and target.probes == ()
    # with weak-mutation probes compiled in, the mode names their digest (another job)
    probes = Probes(probes=(("units/conv.py", 3, 4, 3, 9, "Add", "binop"),))
    key, target = coverage_request_of(runner, Builder(None), package, probes)  # type: ignore[arg-type,misc]
    assert key == f"ref|coverage-probed-{probes.digest()}" and target.probes == probes.probes
    # a command-line program: its gcc --coverage build, run on the plain engine
    cli = BuiltProgram("ref", BuildStatus.OK, directory="/b/ref", executable="/b/ref/executable")
    gcov = BuiltProgram(
        "ref-gcov", BuildStatus.OK, directory="/b/gcov", executable="/b/gcov/executable"
    )
    key, target = coverage_request_of(runner, Builder(gcov), cli)  # type: ignore[arg-type,misc]
    assert key == "ref-gcov|coverage" and target.coverage_root == "/b/gcov"
    assert runner.asked[-1] == ("ref-gcov", "coverage", None, Engine.PLAIN)
    # no gcc build (not C, or it did not build): no coverage run, every test runs everywhere
    assert coverage_request_of(runner, Builder(None), cli) is None  # type: ignore[arg-type]
