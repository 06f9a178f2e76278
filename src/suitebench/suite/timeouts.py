"""A timeout kills a mutant only when it is the mutant's doing.

A valid test that takes 1.2 s on the reference can run past a 2 s limit on a mutant merely
because the machine is loaded (a batch of programs, other jobs), and each such timeout would
count as a kill.  The plugin tells the two apart where it can (:mod:`.inside.budget`): a test
whose thread used (nearly) its whole limit of CPU time computed all along, and a thread's CPU
time never exceeds its wall time, so no machine would have finished it sooner -- that timeout
stands as it is (``SuiteRun.on_cpu``).  Every other cell where a valid test timed out on a
mutant is run again, that test alone on that mutant, in a fresh run at the user's per-test
limit (not the lower limit a mutant's run derives from the reference's times,
:func:`.runspec.derive_timeouts`): the timeout counts (as ``timeout``, not ``failed``) only
if the test times out again; otherwise the cell takes the outcome of the run alone.  Each
confirmation is a job in the store like any run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from suitebench.suite.jobs import SuiteRuns
from suitebench.suite.programs import BuiltProgram
from suitebench.suite.records import SuiteRun, TestStatus
from suitebench.suite.result import TestInfo


def confirm_timeouts(
    runner: SuiteRuns,
    built: dict[str, BuiltProgram],
    runs: Mapping[str, SuiteRun | None],
    tests: list[TestInfo],
) -> dict[str, SuiteRun | None]:
    """``runs`` (a mutant's row each) with every valid test's timeout confirmed alone."""
    valid = [t.id for t in tests if t.valid]
    asked: dict[tuple[str, str], str] = {}
    requests = []
    for mid, run in runs.items():
        if run is None:
            continue
        for test in valid:
            if run.status_of(test) is TestStatus.TIMEOUT and test not in run.on_cpu:
                key = runner.key(built[mid].program_id, "confirm-timeout", (test,))
                asked[(mid, test)] = key
                at_cap = replace(built[mid].target(), select=(test,), timeouts=())
                requests.append((key, at_cap))
    out = dict(runs)
    if not requests:
        return out
    alone = runner.run(requests)
    for (mid, test), key in asked.items():
        again = alone[key].status_of(test)
        if again is TestStatus.TIMEOUT or again is TestStatus.NOT_RUN:
            continue  # confirmed (or the run alone could not tell): the timeout stands
        row = out[mid]
        assert row is not None
        messages = dict(row.messages)
        messages[test] = alone[key].message_of(test) or ""
        note = f"timed out in the full run, {again} when run alone"
        messages[test] = f"{note}: {messages[test]}" if messages[test] else note
        out[mid] = replace(row, tests={**row.tests, test: again}, messages=messages)
    return out
