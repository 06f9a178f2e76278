"""Decoys: the reference, run as a mutant is run, so that no test can tell a mutant by its run.

A mutant's run differs from the reference runs in more than its program: the tests chosen for
it, its per-test limits (derived from the reference's times), the options its pytest starts
with, the batch it shares.  A test may read any of these -- its own ``sys.argv``, pytest's
session, the limits it runs under -- and, knowing nothing of the program, fail on every mutant
while it passes the three reference runs: M = 100% from a suite that checks no behaviour.

So for a suite from elsewhere (not the instance's own:
:func:`~suitebench.suite.execute.runspec.own_suite`) a **decoy** runs too: the reference program run
exactly as one mutant is -- that mutant's tests, limits and options, and, batched, one decoy
last in every batch of mutants.  A test that passed the reference runs but fails a decoy
(failed, error or timeout) tells the runs apart by something other than the program -- or is
flaky, which the three runs did not show: either way it is not valid, and kills nothing.  A
decoy runs as one mutant of each set of tests the mutants' runs take (first mutant first): every
session a mutant's run holds, the reference runs too.  The fewest mutants whose tests together
were every test (a greedy cover, as decoys first ran) let through a test that fails only when
a test it names is left out of its session and the cover's few sessions all held that test;
one decoy per set costs, on python-slugify 9.2.0, 136 runs for 546 selected mutants (4,144
cells against their 14,980), and leaves no session to a mutant alone.

A decoy cannot catch a test that tells programs apart by what they are made of (comparing
the bytes it reads with the reference's, which it must then know): that a mutant's tree says
no more than its bytes is the build's work (:func:`suitebench.run.tree.seal`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from suitebench.run.store import job_key
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.programs import BuiltProgram
from suitebench.suite.execute.runspec import Target, Timeouts
from suitebench.suite.inside.wire import ImpactSpec
from suitebench.suite.protocol.scoreplan import ScorePlan
from suitebench.suite.protocol.tally import test_infos
from suitebench.suite.protocol.timeouts import confirm_timeouts
from suitebench.suite.records import SuiteRun, TestStatus
from suitebench.suite.select.selection import Selection

__all__ = ["Decoy", "as_decoy", "cover", "failing", "replicate", "session", "verdict"]


@dataclass(frozen=True)
class Decoy:
    """One decoy run: the reference run as mutant ``mutant`` is, under job key ``key``."""

    mutant: str
    key: str
    target: Target


def as_decoy(
    runner: SuiteRuns, reference: BuiltProgram, mutant: str, key: str, target: Target
) -> Decoy:
    """The decoy of mutant ``mutant``'s run (job key ``key``, ``target``): the same target with
    the reference in the mutant's place, every other field (tests, order, limits, patched
    files) the mutant's."""
    ref = reference.target()
    decoy = replace(target, executable=ref.executable, pythonpath=ref.pythonpath, binds=ref.binds)
    decoy_key = runner.key(reference.program_id, "decoy", (key,), timeouts=target.timeouts)
    return Decoy(mutant, decoy_key, decoy)


def session(
    selection: Selection, impact: ImpactSpec | None
) -> tuple[tuple[str, ...] | None, str] | None:
    """The session a mutant's run holds, for :func:`cover`: its tests (None: every test) and how
    its run chooses them (``impact``: inside, once the mutant is imported, under options of its
    own: the tests known before the run, :attr:`Selection.final`); None for a run that chooses
    the readers of what its import changed, whose session no decoy can hold.  ``impact``: the
    mutant's impact spec, where its run takes that path."""
    if impact is None or selection.tests is not None:
        return selection.tests, ""
    return (selection.import_time, "impact") if impact.get("final") else None


def cover(
    chosen: Iterable[tuple[str, tuple[str, ...] | None] | tuple[str, tuple[str, ...] | None, str]],
    *,
    ordered: bool = False,
) -> list[str]:
    """The mutants a decoy runs as: ``chosen`` pairs each mutant with the tests its run takes
    (None: every test), in the order they run, and optionally how its run chooses them
    (``impact``: inside, once the program is imported, under options of its own); the first
    mutant of each session (every test being a set of its own), so that every session a
    mutant's run holds, a decoy holds.  ``ordered``: of each sequence of tests (``--fast`` runs
    a mutant's tests in an order of its own, and stops at the first failure: the order is part
    of the session)."""
    seen: set[object] = set()
    picked = []
    for mid, tests, *how in chosen:
        held = None if tests is None else (tuple(tests) if ordered else frozenset(tests))
        key = (held, *how)
        if key not in seen:
            seen.add(key)
            picked.append(mid)
    return picked


def replicate(decoys: list[Decoy], count: int) -> list[Decoy]:
    """``decoys`` and copies of them (the same runs under keys of their own) until there are
    ``count``: a batched run puts one last in each of its batches (``SuiteRuns.run``'s
    ``spread``), so that whatever a batch shows its tests -- how many programs it holds, how
    many ran before -- a decoy sees too."""
    out = list(decoys)
    while decoys and len(out) < count:
        d = decoys[len(out) % len(decoys)]
        out.append(Decoy(d.mutant, job_key(d.key, len(out)), d.target))
    return out


def verdict(
    decoys: list[Decoy], runs: Mapping[str, SuiteRun]
) -> dict[str, tuple[TestStatus, str, str]]:
    """The tests that failed a decoy: test -> (its outcome, the mutant the decoy ran as, the
    run's message for it), the first decoy that failed it."""
    failed: dict[str, tuple[TestStatus, str, str]] = {}
    for decoy in decoys:
        run = runs.get(decoy.key)
        if run is None:
            continue
        for test, outcome in run.outcomes.items():
            status = outcome.status
            if status.fails and test not in failed:
                failed[test] = (status, decoy.mutant, run.message_of(test))
    return failed


def failing(
    plan: ScorePlan,
    all_runs: Mapping[str, SuiteRun],
    decoys: list[Decoy],
    excluded: dict[str, list[str]],
    timeouts: Timeouts,
) -> dict[str, tuple[TestStatus, str, str]]:
    """The tests that fail a decoy (:func:`verdict`), a timeout spent waiting confirmed alone
    as a mutant's is (:func:`~suitebench.suite.protocol.timeouts.confirm_timeouts`;
    ``timeouts``: the mutants' derived limits, which the decoys ran at)."""
    if not decoys:
        return {}
    ref_runs = [all_runs[k] for k in plan.ref_keys]
    ref = replace(plan.reference, timeouts=timeouts)
    runs = {d.key: all_runs[d.key] for d in decoys if d.key in all_runs}
    tests = test_infos(plan, ref_runs, excluded, timeouts=timeouts)
    confirmed = confirm_timeouts(plan.runner, dict.fromkeys(runs, ref), runs, tests)
    return verdict(decoys, {k: r for k, r in confirmed.items() if r is not None})
