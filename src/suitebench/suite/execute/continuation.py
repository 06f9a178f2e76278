"""A run that ended early goes on in a fresh run: one test's fault stays that test's fault.

A pytest session can end in the middle of the suite: a test printed past the output limit,
allocated past the memory limit, forked until the process limit, hung where its own time limit
could not reach it, or killed the interpreter.  Before, every test after it was ``not_run`` --
on the reference that made them invalid, on a mutant it made the mutant ``crashed`` and left it
out of M, so one hostile test could move M anywhere.  As pytest-xdist replaces a crashed worker
and PIT restarts its minion, the test the run ended in is recorded as its *culprit* (``error``,
or ``timeout`` for the watchdog, with the cause as its message) and the tests it did not reach
run in a fresh run of the same program (the plain engine, selecting exactly those tests), again
until every test has an outcome or a fresh run reaches no test at all.  The test a run ended in
runs first in the fresh run: a test can merely be running when an earlier test's damage strikes
(a daemon it left filling the memory), so it is the culprit only when a fresh run ends in it
too; otherwise it has the outcome it has on its own.

The continuation is a job of its own in the store, keyed by the first run's key and the tests
it runs, so a resumed score finds it; the first run's record is stored as it was.  Which tests
a run owes: those its target selected (``select`` or ``--fast``'s ``order``) or an import-time
mutant's run chose (``selected``), else all it collected.  A run that ended before any test
was collected owes every test: the fresh run is then a second run of the whole suite.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from suitebench.run.store import job_key
from suitebench.suite.execute.runspec import Target
from suitebench.suite.records import RunStatus, SuiteRun, TestOutcome, TestStatus

# Each continuation reaches at least one more test or ends the chain; this bounds the chain
# for a suite whose every test brings its run down (each then costs a run of its own).
MAX_CONTINUATIONS = 64


def owed(run: SuiteRun, target: Target) -> tuple[str, ...] | None:
    """The tests ``run`` was to run and did not reach, in order, with the test it ended in
    first when that is not yet confirmed (None: every test, when it ended before collecting)."""
    if not run.outcomes:
        return target.order or target.select
    chosen = target.order or target.select
    if run.selected is not None:
        keep = set(run.selected)
        chosen = tuple(t for t in (chosen or run.selected) if t in keep)
    pool = chosen if chosen is not None else tuple(run.outcomes)
    suspect = None if run.ended_in is None else run.ended_in[0]
    return tuple(t for t in pool if t == suspect or not run.reached(t))


def needs_continuation(run: SuiteRun, target: Target) -> bool:
    """Whether ``run`` ended early with tests still owed.  A coverage run is never continued
    (its record would be partial: the tests fall back to running everywhere instead)."""
    if run.status is not RunStatus.CRASHED or target.coverage_root is not None:
        return False
    rest = owed(run, target)
    return rest is None or len(rest) > 0


def ended_waiting(run: SuiteRun) -> bool:
    """Whether ``run`` ended in a test that timed out -- its time limit could not stop it, so
    the watchdog or the wall clock did: its continuation, which runs that test again first, is
    likely to wait as long, and is scheduled as a wait (:meth:`.jobs.SuiteRuns.run`)."""
    return run.ended_in is not None and run.status_of(run.ended_in[0]) is TestStatus.TIMEOUT


def continuation(key: str, run: SuiteRun, target: Target) -> tuple[str, Target]:
    """The fresh run that goes on from ``run`` (stored under ``key``): its key and target."""
    rest = owed(run, target)
    fresh = replace(
        target,
        order=None if target.order is None or rest is None else rest,
        select=None if rest is None or target.order is not None else rest,
        impact=None,  # the tests are named: no choosing again
        patched_files=None,
        fingerprint=False,
    )
    return job_key(key, "continued", None if rest is None else list(rest)), fresh


def settled_run(run: SuiteRun) -> SuiteRun:
    """``run``, which ended early, left there: its row is decided without the tests it did not
    reach (``--fast``: a wait it shows was confirmed a timeout alone), which stay ``not_run``.
    It finished as far as the score goes (left crashed, its tests not reached would be errors
    of the mutant's)."""
    message = "the tests after it were not run: a wait the run showed timed out again alone"
    return replace(run, status=RunStatus.OK, message=f"{run.message}; {message}")


def merge_continued(first: SuiteRun, fresh: SuiteRun) -> SuiteRun:
    """``first``'s outcomes for the tests it reached, ``fresh``'s for the rest and for the test
    ``first`` ended in (run again first: it is confirmed as the culprit when ``fresh`` ends in
    it too, and otherwise has the outcome it has on its own); finished when ``fresh`` is."""
    suspect = None if first.ended_in is None else first.ended_in[0]
    statuses = first.statuses()
    others = dict(first.collect_messages)
    taken = [
        t
        for t, outcome in fresh.outcomes.items()
        if outcome.status is not TestStatus.NOT_RUN
        and (t == suspect or statuses.get(t, TestStatus.NOT_RUN) is TestStatus.NOT_RUN)
    ]
    messages = {t: o.message for t, o in first.outcomes.items()}
    for t in taken:
        statuses[t] = fresh.outcomes[t].status
        others.pop(t, None)
        messages[t] = fresh.outcomes[t].message
    for t, outcome in fresh.outcomes.items():
        if t not in statuses:  # reached by neither: the status only
            statuses[t] = outcome.status
            messages[t] = others.pop(t, None)
    for broken in fresh.collect_errors:
        others.setdefault(broken, fresh.collect_messages.get(broken, ""))
    outcomes = {
        t: TestOutcome(
            status,
            message=messages[t],
            seconds=_fact(first, fresh, t, "seconds"),  # the first run's, else the fresh one's
            on_cpu=status is TestStatus.TIMEOUT and (_on_cpu(first, t) or _on_cpu(fresh, t)),
            culprit=_fact(fresh, first, t, "culprit"),  # the fresh run's, else the first's
        )
        for t, status in statuses.items()
    }
    ended_in = fresh.ended_in
    status = fresh.status
    confirmed = ended_in is not None and ended_in[0] == suspect
    if ended_in is not None and confirmed:
        # it ended a fresh run too: its fault
        outcomes[ended_in[0]] = replace(outcomes[ended_in[0]], culprit=ended_in[1])
        ended_in = None
    if not taken and fresh.status is not RunStatus.OK:
        # The fresh run reached nothing: the chain ends here, as the first run ended.
        return first
    message = f"{first.message}; the tests after it ran in a fresh run"
    if fresh.status is not RunStatus.OK:
        message = f"{message}, which ended early too: {fresh.message}"
    if confirmed and all(o.status is not TestStatus.NOT_RUN for o in fresh.outcomes.values()):
        # The fresh run ended in its culprit alone, every test it owed reached: the suite has
        # run to its end, its culprits' fault recorded on them.  (Left crashed, a hostile test
        # that runs last made the reference's runs a harness error and the mutants crashed.)
        status = RunStatus.OK
        message = f"{message}; every test has its outcome"
    return replace(
        first,
        status=status,
        outcomes=outcomes,
        collect_errors=tuple(dict.fromkeys((*first.collect_errors, *fresh.collect_errors))),
        exit_code=fresh.exit_code,
        wall_time=first.wall_time + fresh.wall_time,
        log=fresh.log if fresh.status is not RunStatus.OK else first.log,
        message=message,
        collect_messages=others,
        ended_in=ended_in,
    )


def _fact(first: SuiteRun, then: SuiteRun, test: str, name: str) -> Any:
    """A fact about ``test`` (an attribute of its outcome): ``first``'s, else ``then``'s."""
    for run in (first, then):
        outcome = run.outcomes.get(test)
        if outcome is not None and getattr(outcome, name) is not None:
            return getattr(outcome, name)
    return None


def _on_cpu(run: SuiteRun, test: str) -> bool:
    outcome = run.outcomes.get(test)
    return outcome is not None and outcome.on_cpu
