"""The tally of one score: V, M and the kill matrix from its runs (the last of score's parts).

Reads only what the runs returned (:mod:`suitebench.suite.score`) and the plan
(:mod:`suitebench.suite.protocol.scoreplan`): a test is *valid* iff it passed every reference run,
*flaky* iff the runs disagree (validity V = valid / all); a mutant is killed iff some valid test
fails on it (mutation_score M = killed / scored mutants, also per spec section); a reference run
that did not finish and a mutant run the sandbox failed are harness errors, and a figure that
rests on one is written as null with the reason (``withheld``), whatever ``--keep-going`` says.
"""

from __future__ import annotations

import math

from suitebench.metrics.mutation import mutation_score, per_section_mutation_score, validity
from suitebench.model.instance import Instance
from suitebench.suite.execute.interpreter import versions
from suitebench.suite.execute.runspec import Timeouts
from suitebench.suite.protocol.scoreplan import ScorePlan
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus, test_file
from suitebench.suite.result import (
    Counts,
    CoverageNote,
    HarnessError,
    MutantResult,
    MutantStatus,
    SuiteResult,
    TestInfo,
)
from suitebench.suite.select.locate import locate_mutants
from suitebench.suite.select.selection import Selection


def refined_out(instance: Instance, scoring_reference_suite: bool) -> dict[str, list[str]]:
    """Tests the instance's own refinement dropped (ProgramBench ``ignored_tests``: gold_fail,
    gold_flaky, slow_or_hang, ...), with reasons; they apply to the reference suite only."""
    ignored = getattr(instance, "ignored_tests", None) if scoring_reference_suite else None
    return {str(k): list(v) for k, v in (ignored or {}).items()}


def listed_tests(instance: Instance) -> tuple[str, ...]:
    """The tests the instance's own list names (a ProgramBench task's ``tests.json``): each is
    a unit of V whether or not pytest collects it, as ProgramBench counts them."""
    return tuple(getattr(instance, "expected_tests", ()) or ())


def test_universe(runs: list[SuiteRun], listed: tuple[str, ...] = ()) -> list[str]:
    """Every test id ``listed`` names (a test ``tests.json`` lists but no run saw is a unit:
    not valid, with its file's collection error when its file did not collect) and any
    reference run saw, plus files that never collected and hold no test of those (one unit
    each: nothing says how many tests they hold)."""
    ids: list[str] = list(dict.fromkeys(listed))
    seen: set[str] = set(ids)
    for run in runs:
        for test in run.outcomes:
            if test not in seen:
                seen.add(test)
                ids.append(test)
    files_with_tests = {test_file(t) for t in ids}
    for run in runs:
        for broken in run.collect_errors:
            holds = broken.rstrip("/") + "/"  # a directory (its conftest.py did not import)
            if any(f.startswith(holds) for f in files_with_tests):
                continue
            if broken not in seen and broken not in files_with_tests:
                seen.add(broken)
                ids.append(broken)
    return ids


def test_infos(
    plan: ScorePlan,
    ref_runs: list[SuiteRun],
    excluded: dict[str, list[str]],
    decoys: dict[str, tuple[TestStatus, str, str]] | None = None,
    *,
    timeouts: Timeouts,
) -> list[TestInfo]:
    """Each test's reference outcomes, validity, flakiness and times (``excluded`` left out).
    ``decoys``: the tests that failed a decoy (:func:`suitebench.suite.protocol.decoys.failing`):
    not valid, whatever the reference runs say.  ``timeouts``: the mutants' per-test limits
    (:func:`~suitebench.suite.execute.runspec.derive_timeouts`), each test's
    ``mutant_time_limit``."""
    limits = dict(timeouts)
    tests: list[TestInfo] = []
    listed = () if plan.decoys else listed_tests(plan.instance)  # decoys: a suite from elsewhere
    for test in (t for t in test_universe(ref_runs, listed) if t not in excluded):
        statuses = [run.status_of(test) for run in ref_runs]
        message = next((m for run in ref_runs if (m := run.message_of(test))), "")
        if not message and test in listed and all(s is TestStatus.NOT_RUN for s in statuses):
            message = "listed in tests.json, never collected"
        decoy = (decoys or {}).get(test)
        if decoy is not None and all(s is TestStatus.PASSED for s in statuses):
            status, mutant, why = decoy
            message = (
                f"{status} on a decoy (the reference, run as mutant {mutant} is): it fails the "
                f"reference in a mutant's place" + (f": {why}" if why else "")
            )
        tests.append(
            TestInfo(
                id=test,
                file=test_file(test),
                valid=decoy is None and all(s is TestStatus.PASSED for s in statuses),
                flaky=len(set(statuses)) > 1,
                reference=statuses,
                decoy=None if decoy is None else decoy[0],
                sections=plan.instance.sections_map.get(test, []),
                message=message,
                seconds=[run.seconds_of(test) for run in ref_runs],
                mutant_time_limit=limits.get(test),
            )
        )
    return tests


def counts_of(tests: list[TestInfo], results: list[MutantResult]) -> Counts:
    """The counts results.json reports."""
    return Counts(
        tests=len(tests),
        valid=sum(t.valid for t in tests),
        flaky=sum(t.flaky for t in tests),
        skipped=sum(t.skipped for t in tests),
        mutants=len(results),
        scored=sum(r.status.scored for r in results),
        killed=sum(r.status.detected for r in results),
        survived=sum(r.status is MutantStatus.SURVIVED for r in results),
        build_errors=sum(r.status is MutantStatus.BUILD_ERROR for r in results),
        crashed=sum(r.status is MutantStatus.CRASHED for r in results),
        equivalent=sum(r.status is MutantStatus.EQUIVALENT for r in results),
    )


def harness_errors_of(ref_runs: list[SuiteRun], results: list[MutantResult]) -> list[HarnessError]:
    """A reference run that did not finish (once, with how many), and every mutant run the
    sandbox failed."""
    broken = [r for r in ref_runs if r.status is not RunStatus.OK]
    return [
        HarnessError(stage="reference", program="reference", message=r.message, count=len(broken))
        for r in broken[:1]
    ] + [
        HarnessError(stage="mutant", program=m.id, message=m.message, count=1)
        for m in results
        if m.run_status is RunStatus.SANDBOX_ERROR
    ]


def withheld_figures(
    harness_errors: list[HarnessError], results: list[MutantResult]
) -> dict[str, str]:
    """The figures that rest on a harness error, each with the reason it is written as null:
    V and M when the reference's runs did not finish (no test is known valid), M when a
    mutant's run was lost (it is missing from the count, whichever way it would have gone)."""
    withheld: dict[str, str] = {}
    for e in harness_errors:
        if e.stage == "reference":
            why = f"the reference's runs did not finish ({e.count} run(s)): {e.message}"
            withheld.setdefault("validity", why)
            withheld.setdefault("mutation_score", why)
    lost = [m.id for m in results if m.status is MutantStatus.CRASHED]
    if lost:
        names = ", ".join(lost[:5]) + (" ..." if len(lost) > 5 else "")
        withheld.setdefault(
            "mutation_score", f"{len(lost)} mutant run(s) lost to a harness error: {names}"
        )
    return withheld


def selection_used(selections: dict[str, Selection], all_tests: bool) -> str:
    """``coverage`` when every mutant ran a coverage-guided selection, ``all`` when none did
    (``--all-tests``, or coverage unknown), ``mixed`` otherwise."""
    if all_tests or not selections:
        return "all"
    guided = [s.tests is not None for s in selections.values()]
    return "coverage" if all(guided) else "all" if not any(guided) else "mixed"


def nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def tally(
    plan: ScorePlan,
    ref_runs: list[SuiteRun],
    tests: list[TestInfo],
    results: list[MutantResult],
    *,
    selections: dict[str, Selection],
    coverage: CoverageNote,
    excluded: dict[str, list[str]],
    phases: dict[str, float],
    wall_time: float,
    floor: dict[str, float] | None = None,
) -> SuiteResult:
    """The score's record (results.json) from its runs' rows."""
    counts = counts_of(tests, results)
    scored = [r for r in results if r.status.scored]
    per_section = per_section_mutation_score(
        {r.id: r.status.detected for r in scored}, {r.id: r.section or "" for r in scored}
    )
    runner, carried = plan.runner, plan.carried
    harness_errors = harness_errors_of(ref_runs, results)
    withheld = withheld_figures(harness_errors, results)
    lost_sections = {r.section or "" for r in results if r.status is MutantStatus.CRASHED}
    if "validity" in withheld:
        lost_sections |= set(per_section)  # no test is known valid: no section is measured
    return SuiteResult(
        instance=plan.instance.name,
        instance_dir=str(plan.instance.root),
        suite=str(plan.suite_dir),
        suite_hash=runner.suite_hash,
        engine=str(runner.engine),
        mode="fast" if plan.fast else "full",
        test_selection=selection_used(selections, plan.all_tests),
        coverage=coverage,
        reference_runs=len(plan.ref_keys),
        validity=None
        if "validity" in withheld
        else nan_to_none(validity(counts.valid, counts.tests)),
        mutation_score=None
        if "mutation_score" in withheld
        else nan_to_none(mutation_score(counts.killed, counts.scored)),
        per_section={
            s: None if s in lost_sections else nan_to_none(v) for s, v in per_section.items()
        },
        withheld=withheld,
        counts=counts,
        reference_program=plan.reference.program_id,
        reference_run_status=[r.status for r in ref_runs],
        tests=tests,
        excluded_tests=excluded,
        mutants=locate_mutants(results, plan.instance),
        harness_errors=harness_errors,
        pytest_config=None
        if carried is None or carried.config is None
        else carried.config.to_dict(),
        limits={
            **runner.limits.to_dict(),
            "reference_runs": len(plan.ref_keys),
            **({"protocol_note": plan.protocol_note} if plan.protocol_note else {}),
        },
        backend=runner.backend_name,
        versions=versions(plan.python),
        phases=phases,
        floor=floor or {},
        wall_time=wall_time,
    )
