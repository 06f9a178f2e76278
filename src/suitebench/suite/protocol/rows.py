"""A mutant's row of the kill matrix, and what it makes of the mutant.

A mutant's run may have run only the tests its selection names (:mod:`.selection`): its row
then has those tests' outcomes from the run and every other test's reference outcome (such a
test does not reach the mutant).  The row decides the mutant: killed when a valid test fails
on it (failed, error or timeout), a timeout when only timeouts kill it, survived when none
does and the run finished, crashed when none does and it did not.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from suitebench.model.instance import MutantSpec
from suitebench.suite.execute.programs import BuiltProgram
from suitebench.suite.execute.runspec import Target
from suitebench.suite.inside.wire import ImpactSpec
from suitebench.suite.records import RunStatus, SuiteRun, TestOutcome, TestStatus
from suitebench.suite.result import MutantResult, MutantStatus, TestInfo
from suitebench.suite.select.selection import Selection


def merged(run: SuiteRun | None, selection: Selection, tests: list[TestInfo]) -> SuiteRun:
    """A mutant's row: the selected tests' outcomes from its run, every other test's reference
    outcome (it does not reach the mutant)."""
    chosen = set(selection.tests or ())
    outcomes: dict[str, TestOutcome] = {}
    for t in tests:
        if t.id in chosen:
            status = run.status_of(t.id) if run is not None else TestStatus.NOT_RUN
        else:
            status = t.reference[0]
        # what the run said of the test stays, whichever outcome the row takes
        said = None if run is None else run.outcomes.get(t.id)
        outcomes[t.id] = TestOutcome(status) if said is None else replace(said, status=status)
    if run is None:  # no test reaches the mutant: nothing to run
        return SuiteRun(status=RunStatus.OK, outcomes=outcomes)
    return replace(run, outcomes=outcomes, collect_errors=())


def row(run: SuiteRun | None, selection: Selection, tests: list[TestInfo]) -> SuiteRun:
    """A mutant's row: its run as is when every test ran, else merged (:func:`merged`)."""
    if selection.tests is None and run is not None:
        return run
    return merged(run, selection, tests)


_FAILS = frozenset(s for s in TestStatus if s.fails)  # the outcomes that kill


def classify(
    mutant: MutantSpec,
    built: BuiltProgram,
    run: SuiteRun | None,
    tests: list[TestInfo],
    selection: Selection | None = None,
    reference_finished: bool = True,
) -> MutantResult:
    """The mutant's result from its row (``run``; None: it did not build): its status, its
    killers with their messages, every test's outcome and how many of them really ran.

    Only a mutant that does not build leaves the denominator of M -- and every mutant when the
    harness failed (``run`` a sandbox error, or the reference's runs did not finish, so that
    no test is known valid): such a mutant is ``crashed``, and the command says so loudly."""
    common: dict[str, Any] = {
        "id": mutant.id,
        "section": mutant.section,
        "target": mutant.target,
        "description": mutant.description,
        "operator": mutant.operator,
        "patch": str(mutant.patch),
        "program_id": built.program_id,
    }
    if not built.ok or run is None:
        return MutantResult(status=MutantStatus.BUILD_ERROR, message=built.message, **common)
    outcomes = {t.id: run.status_of(t.id) for t in tests}
    messages = {k: m for k in outcomes if (m := run.message_of(k))}
    if run.status is RunStatus.CRASHED and reference_finished:
        # The mutant's runs ended before these tests, again in a fresh run (the continuation),
        # outside any test, where the reference's finished: its doing, as a file that does not
        # collect is -- each such test errors on it.
        for t in tests:
            if outcomes[t.id] is TestStatus.NOT_RUN:
                outcomes[t.id] = TestStatus.ERROR
                messages[t.id] = f"the run ended before this test: {run.message}"
    killers = [t.id for t in tests if t.valid and outcomes[t.id] in _FAILS]
    if killers:
        only_timeouts = all(outcomes[k] is TestStatus.TIMEOUT for k in killers)
        status = MutantStatus.TIMEOUT if only_timeouts else MutantStatus.KILLED
    elif run.status is RunStatus.SANDBOX_ERROR or not reference_finished:
        # The harness failed (or the reference's own runs did not finish): nothing measured.
        status = MutantStatus.CRASHED
    else:
        # "Crashed" is no way out of the count: a run that ended early had its remaining tests
        # run afresh, and no valid test failed.
        status = MutantStatus.SURVIVED
    covered = None if selection is None or selection.tests is None else list(selection.tests)
    ran_ids = covered if covered is not None else outcomes
    ran = sum(1 for t in ran_ids if run.reached(t))
    return MutantResult(
        status=status,
        killed_by=killers,
        kill_messages={k: messages[k] for k in killers if k in messages},
        tests_run=ran,
        outcomes=outcomes,
        covered_by=covered,
        test_selection="all" if covered is None else "coverage",
        selection_reason="" if selection is None else selection.reason,
        run_status=run.status,
        wall_time=run.wall_time,
        tests_seconds=round(sum(run.seconds_of(t) or 0.0 for t in ran_ids), 4),
        message=run.message,
        log=run.log if run.status is not RunStatus.OK else "",
        **common,
    )


def patchable(
    built: BuiltProgram, selection: Selection | None, impact: ImpactSpec | None = None
) -> Target:
    """A mutant's target, naming the files it changes when they can be carried into a batch's
    one collection (:attr:`Selection.files`; an import-time change needs its ``impact``)."""
    target = built.target()
    if built.pythonpath is None or selection is None or not selection.files:
        return target
    if selection.import_time is not None and impact is None:
        return target
    return replace(target, patched_files=selection.files, impact=impact)
