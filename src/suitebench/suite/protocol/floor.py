"""How fast a score could be: the floor of each of its run phases.

No harness runs a cell faster than the test itself runs, and a wait costs wall time however
the waits are spread.  So each phase that runs tests has a floor, which ``results.json`` gives
beside the wall time the phase took (``phases``):

* every cell's **own time at reference speed** -- the test's quickest time on the reference
  for a cell that finished, its limit for one that timed out on the CPU -- summed and spread
  perfectly over the workers;
* plus the **waits that cannot overlap**: a cell that timed out waiting holds no core and
  could wait beside every other, but the phase cannot end before its longest wait does (for a
  confirmation, the user's ``--per-test-timeout``).

The phases overlap (a wait is confirmed while other mutants still run), so each phase's floor
is that phase's as if alone, and ``runs`` is the floor of all of them together: every cell's
own time over the workers, plus the longest chain of waits -- a cell's wait in its mutant's run
followed by its confirmation.

Pytest's start-up, collection, builds and the store are the harness's and are not in it: the
floor is what a perfect scheduler with a free harness would take.  Cells not run (a test
selection's, ``--fast`` after the first kill) cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from suitebench.suite.records import SuiteRun, TestStatus
from suitebench.suite.result import TestInfo


def run_floors(
    *,
    workers: int,
    per_test: float,
    reference_runs: list[SuiteRun],
    tests: list[TestInfo],
    rows: Mapping[str, SuiteRun | None],
    confirmed: Mapping[str, SuiteRun | None],
) -> dict[str, float]:
    """Seconds per phase (``reference_runs``, ``mutant_runs``, ``confirm_timeouts``) and for
    them together (``runs``): ``rows`` are the mutants' rows before their timeouts were
    confirmed, ``confirmed`` after."""
    workers = max(1, workers)
    quickest = {t.id: min((s for s in t.seconds if s is not None), default=None) for t in tests}
    reference_cpu = sum(
        o.seconds for run in reference_runs for o in run.outcomes.values() if o.seconds is not None
    )
    mutant_cpu = 0.0
    mutant_wait = 0.0
    confirm_cpu = 0.0
    confirm_wait = 0.0
    chain = 0.0  # the longest wait and, after it, its confirmation
    for mid, row in rows.items():
        if row is None:
            continue
        after = confirmed.get(mid) or row
        for test, outcome in row.outcomes.items():
            seconds = outcome.seconds
            if seconds is None:
                continue
            status = outcome.status
            if status is TestStatus.NOT_RUN:
                continue
            if status is TestStatus.TIMEOUT and not outcome.on_cpu:
                mutant_wait = max(mutant_wait, seconds)
                again = after.status_of(test)
                then = 0.0
                if again is TestStatus.TIMEOUT:
                    confirm_wait = then = per_test
                elif again is not TestStatus.NOT_RUN:
                    then = quickest.get(test) or 0.0
                    confirm_cpu += then
                chain = max(chain, seconds + then)
                continue
            if status is TestStatus.TIMEOUT:
                mutant_cpu += seconds
            else:
                own = quickest.get(test)
                mutant_cpu += seconds if own is None else min(own, seconds)
    phases = {
        "reference_runs": reference_cpu / workers,
        "mutant_runs": mutant_cpu / workers + mutant_wait,
        "confirm_timeouts": confirm_cpu / workers + confirm_wait,
    }
    phases["runs"] = (reference_cpu + mutant_cpu + confirm_cpu) / workers + chain
    return {k: round(v, 3) for k, v in phases.items()}
