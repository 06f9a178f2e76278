"""Suite mode's evaluation protocol (TestSuiteBench, Section 2.6 and Appendix C).

The pipeline, each stage reading and writing records:

1. **build** the reference and every mutant (:mod:`suitebench.suite.execute.programs`; a patch that
does
   not apply or a build that fails is a ``build_error`` and leaves the denominator of M);
2. **reference runs**: the suite runs ``reference_runs`` (3) times on the reference; a test is
   *valid* iff it passed every run, *flaky* iff the runs disagree; validity V = valid / all;
3. **mutant runs**: the suite runs once on every mutant (the full kill matrix by default;
   ``fast`` runs only valid tests, likely killers first, and stops at the first kill);
4. **scores**: a mutant is killed iff some *valid* test fails (failed, error or timeout) on it;
   mutation_score M = killed / scored mutants, also per spec section; an equivalent mutant
   (:mod:`suitebench.suite.protocol.equivalence`) is not run and leaves the denominator.

Every run is a job in the store keyed by what determines it (suite contents, program id,
limits, backend, engine, mode and, for the reference, the repetition), so a killed run resumes
and a re-run with one more mutant runs only that mutant.

A score goes in three parts: the plan (:mod:`suitebench.suite.protocol.scoreplan`: which programs,
which runs, keyed how), the runs (here: the reference runs, the selection, the mutants' runs)
and the tally (:mod:`suitebench.suite.protocol.tally`: V, M, the matrix, results.json).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from suitebench.model.instance import Instance, MutantSpec
from suitebench.run.executor import Executor
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.programs import BuiltProgram
from suitebench.suite.execute.runner import spec_digest
from suitebench.suite.execute.runspec import (
    Engine,
    Patterns,
    SuiteLimits,
    Target,
    Timeouts,
    derive_timeouts,
    engine_for,
    reference_positions,
)
from suitebench.suite.inside.wire import ImpactSpec
from suitebench.suite.protocol.choosing import choose_tests
from suitebench.suite.protocol.decoys import Decoy, as_decoy, cover, failing, replicate, session
from suitebench.suite.protocol.equivalence import with_equivalents
from suitebench.suite.protocol.fast import fast_rows
from suitebench.suite.protocol.floor import run_floors
from suitebench.suite.protocol.rows import classify, patchable, row
from suitebench.suite.protocol.scoreplan import (
    ReferenceBuildError,
    ScorePlan,
    SuiteInputError,
    plan_score,
)
from suitebench.suite.protocol.tally import (
    nan_to_none,
    refined_out,
    tally,
    test_infos,
    test_universe,
)
from suitebench.suite.protocol.timeouts import (
    EarlyConfirmations,
    confirm_reference_timeouts,
    confirm_timeouts,
    early_confirmations,
)
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus
from suitebench.suite.result import SuiteResult, TestInfo
from suitebench.suite.select.reuse import Reuse
from suitebench.suite.select.selection import Selection
from suitebench.suite.select.since import since_choice

__all__ = [
    "DEFAULT_BATCH",
    "Progress",
    "ReferenceBuildError",
    "SuiteInputError",
    "nan_to_none",
    "refined_out",
    "score_suite",
    "test_universe",
]

Progress = Callable[[int, int], None]
DEFAULT_BATCH = 128


# -- the runs -----------------------------------------------------------------------------------


def score_suite(
    instance: Instance,
    suite: Path | None = None,
    *,
    store: Store,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    engine: Engine | None = None,
    reference_runs: int = 3,
    fast: bool = False,
    limits: SuiteLimits = SuiteLimits(),
    backend: Backend | None = None,
    batch_size: int = DEFAULT_BATCH,
    mutant_ids: Iterable[str] | None = None,
    all_tests: bool = False,
    progress: Progress | None = None,
    overlap: int | None = None,
    since: str | None = None,
    incremental: bool = False,
) -> SuiteResult:
    """Validity V, mutation_score M and the kill matrix of ``suite`` (default: the instance's
    reference suite) against the instance's reference and mutants.

    Each mutant runs only the tests that reach the code it changes, the others keeping their
    reference outcome (:mod:`suitebench.suite.select.selection`; the matrix is the full run's);
    ``all_tests`` runs every test on every mutant.  ``cache_dir`` holds built programs (default:
    ``builds/`` next to the store).  Progress is reported as (done, total) over builds plus runs.
    The score goes in three parts: the plan
    (:func:`~suitebench.suite.protocol.scoreplan.plan_score`), the runs (here) and the tally
    (:func:`~suitebench.suite.protocol.tally.tally`); ``phases`` in the result says how long each
    stage took.  ``engine`` None: batched for the instance's own suite, plain for any other
    (:func:`~suitebench.suite.execute.runspec.engine_for`). ``since`` (a git revision): only the
    mutants on lines changed since it (:mod:`~suitebench.suite.select.since`); ``incremental``:
    reuse the stored rows of the last incremental score where nothing they depend on changed
    (:mod:`~suitebench.suite.select.reuse`).
    """
    clock = _Clock()
    engine = engine_for(instance.tests, suite, engine)
    chosen = None if mutant_ids is None else set(mutant_ids)
    narrowed = None if since is None else since_choice(instance, since, chosen)
    chosen = chosen if narrowed is None else set(narrowed.chosen)
    count = sum(1 for m in instance.mutants if chosen is None or m.id in chosen)
    total = 1 + count + reference_runs + count  # builds, then runs
    report = _reporter(progress, total)
    plan = plan_score(
        instance,
        suite,
        store=store,
        cache_dir=cache_dir,
        executor=executor,
        engine=engine,
        reference_runs=reference_runs,
        fast=fast,
        limits=limits,
        backend=backend,
        batch_size=batch_size,
        mutant_ids=chosen,
        all_tests=all_tests,
        report=report,
        overlap=overlap,
    )
    clock.mark("build_reference")
    reuse = None
    if incremental:
        reuse = Reuse(instance, plan.suite_dir, store, plan.runner, own_suite=not plan.decoys)
    if reuse is not None:
        reuse.carry_reference(plan.ref_keys)
    with _builds_waited(plan) as builds:
        all_runs = _reference_runs(plan, report)
        _confirm_reference(plan, all_runs, plan.ref_keys[: plan.early])
        _refuse_an_empty_suite(plan, [all_runs[k] for k in plan.ref_keys[: plan.early]])
        clock.mark("reference_runs")
        excluded = refined_out(instance, suite is None)
        selections, impacts, coverage_note, patterns, built, runnable = choose_tests(
            plan, all_runs, builds, excluded
        )
    clock.mark("selection")
    early_runs = [all_runs[k] for k in plan.ref_keys[: plan.early]]
    # The mutants' per-test limits: their programs carry them, into their runs and keys.
    timeouts = _derive_timeouts(plan.runner.limits, early_runs)
    positions = reference_positions(early_runs)
    built = {mid: replace(b, timeouts=timeouts, positions=positions) for mid, b in built.items()}
    reused = _reused(plan, reuse, all_runs, runnable, selections, impacts, timeouts)
    fresh = [m for m in runnable if m.id not in reused]
    lane = early_confirmations(plan.runner, _passing(early_runs), fast=plan.fast)

    # The mutants' runs (and the later reference runs) move the rest of the runs' part, from
    # the early reference runs to its end, as they end (a batch's children one by one).
    def runs_progress(done: int, of: int) -> None:
        report("runs", plan.early + done * (reference_runs + count - plan.early) // max(1, of))

    selected_runs, decoys = _mutant_runs(
        plan, all_runs, built, fresh, selections, impacts, runs_progress, lane, patterns
    )
    selected_runs.update(reused)
    _confirm_reference(plan, all_runs, plan.ref_keys[plan.early :], timeouts)
    ref_runs = [all_runs[k] for k in plan.ref_keys]
    if plan.fast:
        tests, mutant_runs = fast_rows(
            plan,
            all_runs,
            built,
            runnable,
            selections,
            impacts,
            excluded,
            lane,
            timeouts=timeouts,
            patterns=patterns,
            progress=runs_progress,
        )
    else:
        decoyed = failing(plan, all_runs, decoys, excluded, timeouts)
        tests = test_infos(plan, ref_runs, excluded, decoyed, timeouts=timeouts)
        mutant_runs = _rows(plan, built, runnable, tests, selections, all_runs, selected_runs)
    clock.mark("mutant_runs")
    if lane is not None:
        lane.join()
    confirmed = confirm_timeouts(plan.runner, built, mutant_runs, tests, fast=plan.fast)
    clock.mark("confirm_timeouts")
    floor = run_floors(
        workers=plan.runner.workers,
        per_test=plan.runner.limits.per_test,
        reference_runs=ref_runs,
        tests=tests,
        rows=mutant_runs,
        confirmed=confirmed,
    )
    if progress is not None:
        progress(total, total)
    finished = all(r.status is RunStatus.OK for r in ref_runs)
    results = [
        classify(m, built[m.id], confirmed.get(m.id), tests, selections.get(m.id), finished)
        for m in plan.mutants
    ]
    results = with_equivalents(instance, results, plan.equivalent)
    if reuse is not None:
        results = [r.model_copy(update={"reused_from": reuse.reused.get(r.id)}) for r in results]
        reuse.keep(runnable, selected_runs, selections, impacts)
    clock.mark("tally")
    result = tally(
        plan,
        ref_runs,
        tests,
        results,
        selections=selections,
        coverage=coverage_note,
        excluded=excluded,
        phases=clock.phases,
        floor=floor,
        wall_time=round(clock.elapsed(), 3),
    )
    if narrowed is not None:
        result.since = narrowed.to_dict()
    if reuse is not None:
        result.incremental = reuse.summary()
    return result


def _reused(
    plan: ScorePlan,
    reuse: Reuse | None,
    all_runs: dict[str, SuiteRun],
    runnable: list[MutantSpec],
    selections: dict[str, Selection],
    impacts: dict[str, ImpactSpec],
    timeouts: Timeouts,
) -> dict[str, SuiteRun]:
    """The rows ``--incremental`` reuses (:mod:`.reuse`): none without a coverage selection."""
    if reuse is None or not plan.staged or plan.coverage_request is None:
        if reuse is not None:
            reuse.why_not = reuse.why_not or "no coverage-guided selection in this run"
            reuse.rerun.update({m.id: reuse.why_not for m in runnable})
        return {}
    coverage = all_runs[plan.coverage_request[0]].coverage
    ref0 = all_runs[plan.ref_keys[0]]
    return reuse.rows(runnable, selections, impacts, ref0, coverage, timeouts=timeouts)


def _passing(runs: list[SuiteRun]) -> list[str]:
    """The tests that passed every one of ``runs`` (valid so far)."""
    passed = TestStatus.PASSED
    return [t for t in test_universe(runs) if all(r.status_of(t) is passed for r in runs)]


def _refuse_an_empty_suite(plan: ScorePlan, ref_runs: list[SuiteRun]) -> None:
    """A suite whose finished reference runs collected nothing (no test, no file that failed
    to collect) is bad input, not a suite of V = n/a and M = 0: :class:`SuiteInputError`."""
    if ref_runs and all(r.status is RunStatus.OK for r in ref_runs) and not test_universe(ref_runs):
        raise SuiteInputError(
            f"{plan.suite_dir}: pytest collects no test from the suite (no file that fails to "
            "collect either): nothing to score"
        )


def _reporter(progress: Progress | None, total: int) -> Callable[[str, int], None]:
    """Progress over builds plus runs: each part counts up, and the mutants' builds may go on
    while the reference runs, so together they never go back."""
    shown = {"builds": 0, "runs": 0}

    def report(part: str, done: int) -> None:
        shown[part] = max(shown[part], done)
        if progress is not None:
            progress(shown["builds"] + shown["runs"], total)

    return report


def _rows(
    plan: ScorePlan,
    built: dict[str, BuiltProgram],
    runnable: list[MutantSpec],
    tests: list[TestInfo],
    selections: dict[str, Selection],
    all_runs: dict[str, SuiteRun],
    selected_runs: dict[str, SuiteRun | None],
) -> dict[str, SuiteRun]:
    """Each runnable mutant's row of the matrix: its full run, or its selected run with the
    other tests at their reference outcome (``--fast``'s: :func:`.fast.fast_rows`)."""
    if plan.full:
        return {m.id: all_runs[_full_key(plan.runner, built[m.id])] for m in runnable}
    return {m.id: row(selected_runs.get(m.id), selections[m.id], tests) for m in runnable}


class _Clock:
    """Wall seconds per stage of a score, each mark ending the stage since the last."""

    def __init__(self) -> None:
        self.started = self.last = time.monotonic()
        self.phases: dict[str, float] = {}

    def mark(self, stage: str) -> None:
        now = time.monotonic()
        self.phases[stage] = round(now - self.last, 3)
        self.last = now

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def _reference_runs(plan: ScorePlan, report: Callable[[str, int], None]) -> dict[str, SuiteRun]:
    """The runs before any mutant's (:meth:`ScorePlan.first_requests`); the mutants' builds go
    on beside them (:func:`_builds_waited`)."""
    return plan.runner.run(
        plan.first_requests(),
        progress=lambda d, _: report("runs", d),
        apart=set(plan.ref_keys),
    )


@contextlib.contextmanager
def _builds_waited(plan: ScorePlan) -> Iterator[Callable[[], dict[str, BuiltProgram]]]:
    """A call giving the mutants' builds (waiting for those going on beside the reference's
    runs and the selection), and waiting for them on leaving, even when a run failed: no build
    is left running."""
    builds = functools.cache(lambda: plan.wait_builds() if plan.beside else plan.built)
    try:
        yield builds
    finally:
        builds()


def _confirm_reference(
    plan: ScorePlan, all_runs: dict[str, SuiteRun], keys: list[str], timeouts: Timeouts = ()
) -> None:
    """The reference runs ``keys`` of ``all_runs`` with their timeouts confirmed alone
    (:func:`~suitebench.suite.protocol.timeouts.confirm_reference_timeouts`), in place.
    ``timeouts``: the mutants' derived limits, once known (the later reference runs'
    confirmations are keyed by them, as the mutants' are; a confirmation runs at the user's
    limit all the same)."""
    runs = {k: all_runs[k] for k in keys if k in all_runs}
    reference = replace(plan.reference, timeouts=timeouts)
    all_runs.update(confirm_reference_timeouts(plan.runner, reference, runs))


def _full_key(runner: SuiteRuns, program: BuiltProgram) -> str:
    return _program_key(runner, program, "full", None)


def _program_key(
    runner: SuiteRuns, program: BuiltProgram, mode: str, order: tuple[str, ...] | None
) -> str:
    """The job key of a run of a mutant's ``program``, with what its reference runs derived
    for it (its limits, its tests' names)."""
    timeouts, positions = program.timeouts, program.positions
    return runner.key(program.program_id, mode, order, timeouts=timeouts, positions=positions)


def _mutant_runs(
    plan: ScorePlan,
    all_runs: dict[str, SuiteRun],
    built: dict[str, BuiltProgram],
    runnable: list[MutantSpec],
    selections: dict[str, Selection],
    impacts: dict[str, ImpactSpec],
    progress: Progress,
    lane: EarlyConfirmations | None = None,
    patterns: Patterns = (),
) -> tuple[dict[str, SuiteRun | None], list[Decoy]]:
    """The mutants' runs (``--fast`` aside: :mod:`.fast` makes those) with the later
    reference runs and the decoys (:mod:`.decoys`), added to ``all_runs``; a selected run per
    mutant, when selected, and the decoys asked for.  ``lane`` confirms waits as the runs
    show them; ``patterns``: the coverage run's regular expressions, for the batches;
    ``progress(done, total)``: the runs as they end."""
    later = plan.later_requests()
    if plan.staged:
        reference = plan.reference if plan.decoys else None
        selected, more, decoys = _run_selected(
            plan.runner,
            reference,
            runnable,
            built,
            selections,
            later,
            impacts,
            lane,
            patterns,
            progress,
        )
        all_runs.update(more)
        return selected, decoys
    decoys = []
    if plan.full and runnable and plan.decoys:
        first = runnable[0]
        full = _full_key(plan.runner, built[first.id])
        decoy = as_decoy(plan.runner, plan.reference, first.id, full, built[first.id].target())
        decoys = replicate([decoy], plan.runner.batch_count(len(runnable)))
    if plan.full:
        mutants = [(_full_key(plan.runner, built[m.id]), built[m.id].target()) for m in runnable]
        asked = [*later, *((d.key, d.target) for d in decoys), *mutants]
        if lane is not None:
            lane.watch({_full_key(plan.runner, built[m.id]): built[m.id] for m in runnable})
        # The decoys are runs beyond the total shown (builds, reference runs, one run a
        # mutant): the part moves in step with the runs done, and ends at its share.
        done = plan.runner.run(
            asked,
            progress=progress,
            apart={k for k, _ in later},
            spread=[d.key for d in decoys],
            on_run=None if lane is None else lane.offer,
            patterns=patterns,
        )
        all_runs.update(done)
    return {}, decoys


def _run_selected(
    runner: SuiteRuns,
    reference: BuiltProgram | None,
    runnable: list[MutantSpec],
    built: dict[str, BuiltProgram],
    selections: dict[str, Selection],
    extra: list[tuple[str, Target]],
    impacts: dict[str, ImpactSpec],
    lane: EarlyConfirmations | None = None,
    patterns: Patterns = (),
    progress: Progress | None = None,
) -> tuple[dict[str, SuiteRun | None], dict[str, SuiteRun], list[Decoy]]:
    """Each mutant runs the tests its selection names (all where it names none; nothing where
    it names no test), together with ``extra`` runs (the later reference runs, kept apart) and
    the decoys of ``reference`` (:mod:`.decoys`; None: none).
    A mutant with an import-time change and an entry in ``impacts`` chooses its tests in its
    own run, once its import shows which globals changed
    (:mod:`suitebench.suite.inside.probe.impact`)."""
    requests: list[tuple[str, Target]] = list(extra)
    keys: dict[str, str] = {}
    decoys: list[Decoy] = []
    held = ((m.id, session(selections[m.id], impacts.get(m.id))) for m in runnable)
    sessions = [(mid, *s) for mid, s in held if s is not None and s[0] != ()]
    as_mutants = set() if reference is None else set(cover(sessions))
    for m in runnable:
        chosen = selections[m.id].tests
        program = built[m.id]
        impact = impacts.get(m.id)
        if chosen is None and impact is not None:
            keys[m.id] = _program_key(runner, program, "impact", (spec_digest(impact),))
            requests.append((keys[m.id], patchable(built[m.id], selections[m.id], impact)))
        elif chosen is None:
            keys[m.id] = _full_key(runner, program)
            requests.append((keys[m.id], built[m.id].target()))
        elif chosen:
            keys[m.id] = _program_key(runner, program, "selected", chosen)
            target = patchable(built[m.id], selections[m.id])
            requests.append((keys[m.id], replace(target, select=chosen)))
        if reference is not None and m.id in as_mutants:
            decoys.append(as_decoy(runner, reference, m.id, keys[m.id], requests[-1][1]))
    decoys = replicate(decoys, runner.batch_count(len(keys)))
    requests += [(d.key, d.target) for d in decoys]
    if lane is not None:
        lane.watch({keys[m.id]: built[m.id] for m in runnable if m.id in keys})
    got = runner.run(
        requests,
        progress=progress,
        apart={k for k, _ in extra},
        spread=[d.key for d in decoys],
        on_run=None if lane is None else lane.offer,
        patterns=patterns,
    )
    runs = {m.id: got.get(keys[m.id]) if m.id in keys else None for m in runnable}
    for m in runnable:
        run = runs[m.id]
        if m.id in impacts and run is not None:
            # What the run chose: the tests reading a changed global, or every test.
            selections[m.id] = Selection(run.selected, run.selection_reason or "import-time")
    # A run that crashed never reached the tests after the crash: the full matrix has them
    # not_run, not at their reference outcome.  Such a mutant runs every test, as it would.
    again: dict[str, str] = {}
    for m in runnable:
        run = runs[m.id]
        if (
            selections[m.id].tests is not None
            and run is not None
            and run.status is not RunStatus.OK
        ):
            again[m.id] = _full_key(runner, built[m.id])
            selections[m.id] = Selection(None, "the selected run did not finish: every test ran")
    if again:
        rerun = runner.run([(again[mid], built[mid].target()) for mid in again], patterns=patterns)
        runs.update({mid: rerun[key] for mid, key in again.items()})
    return runs, {k: got[k] for k, _ in [*extra, *((d.key, d.target) for d in decoys)]}, decoys


def _derive_timeouts(limits: SuiteLimits, ref_runs: list[SuiteRun]) -> Timeouts:
    """The mutants' per-test limits from the reference runs done before them (PIT's factor x
    time + constant, capped by the per-test limit): their programs carry them, and the runs
    asked for from now on are keyed by them."""
    valid = [
        t
        for t in test_universe(ref_runs)
        if all(r.status_of(t) is TestStatus.PASSED for r in ref_runs)
    ]
    seconds = [
        {t: o.seconds for t, o in r.outcomes.items() if o.seconds is not None} for r in ref_runs
    ]
    return derive_timeouts(seconds, valid, limits)
