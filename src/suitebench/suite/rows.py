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
from suitebench.suite.build import BuiltProgram
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus
from suitebench.suite.result import MutantResult, MutantStatus, TestInfo
from suitebench.suite.selection import Selection


def merged(run: SuiteRun | None, selection: Selection, tests: list[TestInfo]) -> SuiteRun:
    """A mutant's row: the selected tests' outcomes from its run, every other test's reference
    outcome (it does not reach the mutant)."""
    chosen = set(selection.tests or ())
    outcomes: dict[str, TestStatus] = {}
    for t in tests:
        if t.id in chosen:
            outcomes[t.id] = run.status_of(t.id) if run is not None else TestStatus.NOT_RUN
        else:
            outcomes[t.id] = t.reference[0]
    if run is None:  # no test reaches the mutant: nothing to run
        return SuiteRun(status=RunStatus.OK, tests=outcomes)
    return replace(run, tests=outcomes, collect_errors=())


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
) -> MutantResult:
    """The mutant's result from its row (``run``; None: it did not build): its status, its
    killers with their messages, every test's outcome and how many of them really ran."""
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
    killers = [t.id for t in tests if t.valid and outcomes[t.id] in _FAILS]
    if killers:
        only_timeouts = all(outcomes[k] is TestStatus.TIMEOUT for k in killers)
        status = MutantStatus.TIMEOUT if only_timeouts else MutantStatus.KILLED
    elif run.status is RunStatus.OK:
        status = MutantStatus.SURVIVED
    else:
        status = MutantStatus.CRASHED
    covered = None if selection is None or selection.tests is None else list(selection.tests)
    ran_ids = covered if covered is not None else outcomes
    ran = sum(1 for t in ran_ids if run.tests.get(t, TestStatus.NOT_RUN) is not TestStatus.NOT_RUN)
    return MutantResult(
        status=status,
        killed_by=killers,
        kill_messages={k: m for k in killers if (m := run.message_of(k))},
        tests_run=ran,
        outcomes=outcomes,
        covered_by=covered,
        test_selection="all" if covered is None else "coverage",
        selection_reason="" if selection is None else selection.reason,
        run_status=run.status,
        wall_time=run.wall_time,
        message=run.message,
        log=run.log if run.status is not RunStatus.OK else "",
        **common,
    )
