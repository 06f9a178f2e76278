"""Suite mode's evaluation protocol (TestSuiteBench, Section 2.6 and Appendix C).

The pipeline, each stage reading and writing records:

1. **build** the reference and every mutant (:mod:`suitebench.suite.programs`; a patch that does
   not apply or a build that fails is a ``build_error`` and leaves the denominator of M);
2. **reference runs**: the suite runs ``reference_runs`` (3) times on the reference; a test is
   *valid* iff it passed every run, *flaky* iff the runs disagree; validity V = valid / all;
3. **mutant runs**: the suite runs once on every mutant (the full kill matrix by default;
   ``fast`` runs only valid tests, likely killers first, and stops at the first kill);
4. **scores**: a mutant is killed iff some *valid* test fails (failed, error or timeout) on it;
   mutation_score M = killed / scored mutants, also per spec section.

Every run is a job in the store keyed by what determines it (suite contents, program id,
limits, backend, engine, mode and, for the reference, the repetition), so a killed run resumes
and a re-run with one more mutant runs only that mutant.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from suitebench.metrics.mutation import (
    mutation_score,
    per_section_mutation_score,
    validity,
)
from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run.executor import Executor, LocalExecutor
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.suite.interpreter import suite_interpreter, versions
from suitebench.suite.jobs import SuiteRuns
from suitebench.suite.programs import Builder, BuiltProgram, build_reference_first
from suitebench.suite.projectconfig import WARNS_REASON, stage_beside, warns_on_compile
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus, test_file
from suitebench.suite.result import (
    Counts,
    CoverageNote,
    HarnessError,
    MutantStatus,
    SuiteResult,
    TestInfo,
)
from suitebench.suite.rows import classify, merged, row
from suitebench.suite.runner import spec_digest
from suitebench.suite.runspec import Engine, SuiteLimits, Target, derive_timeouts
from suitebench.suite.selection import (
    Coverage,
    Selection,
    impact_readers,
    impact_spec,
    select_tests,
)
from suitebench.suite.timeouts import confirm_timeouts

Progress = Callable[[int, int], None]
DEFAULT_BATCH = 128


class ReferenceBuildError(RuntimeError):
    """The instance's reference does not build: a harness error, nothing can be scored."""


# -- the protocol -------------------------------------------------------------------------------


def refined_out(instance: Instance, scoring_reference_suite: bool) -> dict[str, list[str]]:
    """Tests the instance's own refinement dropped (ProgramBench ``ignored_tests``: gold_fail,
    gold_flaky, slow_or_hang, ...), with reasons; they apply to the reference suite only."""
    ignored = getattr(instance, "ignored_tests", None) if scoring_reference_suite else None
    return {str(k): list(v) for k, v in (ignored or {}).items()}


def test_universe(runs: list[SuiteRun]) -> list[str]:
    """Every test id any reference run saw, plus files that never collected (one unit each)."""
    ids: list[str] = []
    seen: set[str] = set()
    for run in runs:
        for test in run.tests:
            if test not in seen:
                seen.add(test)
                ids.append(test)
    files_with_tests = {test_file(t) for t in ids}
    for run in runs:
        for broken in run.collect_errors:
            if broken not in seen and broken not in files_with_tests:
                seen.add(broken)
                ids.append(broken)
    return ids


def _first_message(runs: list[SuiteRun], test: str) -> str:
    """Why a test failed, errored or was skipped on the reference (the first run that says)."""
    return next((m for run in runs if (m := run.message_of(test))), "")


def _coverage_request(
    runner: SuiteRuns, builder: Builder, reference: BuiltProgram
) -> tuple[str, Target] | None:
    """The extra reference run that records per-test coverage, where the program can be
    traced: a Python package (``kind = "python"``; batched with the first reference run by the
    batched engine), or a program whose build compiles with gcc, rebuilt with ``--coverage``
    (plain engine)."""
    if reference.pythonpath is not None:
        target = replace(reference.target(), coverage_root=reference.pythonpath)
        return runner.key(reference.program_id, "coverage", None), target
    built = builder.coverage()
    if built is None or built.executable is None:
        return None
    target = replace(built.target(), coverage_root=built.directory)
    return runner.key(built.program_id, "coverage", None, engine=Engine.PLAIN), target


def _coverage(
    run: SuiteRun, target: Target, ref0: SuiteRun, tests: list[str]
) -> tuple[Coverage | None, CoverageNote]:
    """The coverage run read into a :class:`Coverage`, or None (all tests) and why."""
    if run.status is not RunStatus.OK or run.coverage is None:
        why = run.message or f"run status {run.status}"
        return None, CoverageNote(status="unknown", reason=f"the coverage run failed: {why}")
    if run.coverage.get("preloaded"):
        names = ", ".join(run.coverage["preloaded"])
        why = f"the program was imported before coverage could start ({names})"
        return None, CoverageNote(status="unknown", reason=why)
    # A test whose outcome under tracing differs from the first reference run's: what it
    # runs is not known well enough to leave it out.
    unknown = {t for t in tests if run.status_of(t) is not ref0.status_of(t)}
    coverage = Coverage.from_record(run.coverage, Path(target.coverage_root or ""), unknown)
    how = "instrumented import" if target.pythonpath else "gcc --coverage build, gcov"
    note = CoverageNote(
        status="ok",
        reason=f"per-test function coverage of the reference ({how})",
        unknown_tests=sorted(coverage.unknown),
    )
    return coverage, note


def _run_selected(
    runner: SuiteRuns,
    runnable: list[MutantSpec],
    built: dict[str, BuiltProgram],
    selections: dict[str, Selection],
    extra: list[tuple[str, Target]],
    impacts: dict[str, dict[str, Any]],
) -> tuple[dict[str, SuiteRun | None], dict[str, SuiteRun]]:
    """Each mutant runs the tests its selection names (all where it names none; nothing where
    it names no test), together with ``extra`` runs (the later reference runs, kept apart).
    A mutant with an import-time change and an entry in ``impacts`` chooses its tests in its
    own run, once its import shows which globals changed (:mod:`suitebench.suite.inside.impact`)."""
    requests: list[tuple[str, Target]] = list(extra)
    keys: dict[str, str] = {}
    for m in runnable:
        chosen = selections[m.id].tests
        program_id = built[m.id].program_id
        impact = impacts.get(m.id)
        if chosen is None and impact is not None:
            keys[m.id] = runner.key(program_id, "impact", (spec_digest(impact),))
            requests.append((keys[m.id], _patchable(built[m.id], selections[m.id], impact)))
        elif chosen is None:
            keys[m.id] = runner.key(program_id, "full", None)
            requests.append((keys[m.id], built[m.id].target()))
        elif chosen:
            keys[m.id] = runner.key(program_id, "selected", chosen)
            target = _patchable(built[m.id], selections[m.id])
            requests.append((keys[m.id], replace(target, select=chosen)))
    got = runner.run(requests, apart={k for k, _ in extra})
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
            again[m.id] = runner.key(built[m.id].program_id, "full", None)
            selections[m.id] = Selection(None, "the selected run did not finish: every test ran")
    if again:
        rerun = runner.run([(again[mid], built[mid].target()) for mid in again])
        runs.update({mid: rerun[key] for mid, key in again.items()})
    return runs, {k: got[k] for k, _ in extra}


def _leave_out_failed(
    selections: dict[str, Selection],
    impacts: dict[str, dict[str, Any]],
    known: list[str],
    ref0: SuiteRun,
) -> None:
    """A test that failed the first reference run (failed, error, timeout) is not valid, so it
    can kill no mutant: it runs on none (its cells keep its reference outcome).  A hostile or
    slow broken test then costs one run per reference run, not one per mutant.  A skipped test
    still runs (cheap, and its cell may differ on a mutant)."""
    failed = {t for t in known if ref0.status_of(t).fails}
    if not failed:
        return
    why = f"{len(failed)} test(s) that failed on the reference left out"
    for mid, sel in selections.items():
        if sel.tests is None and mid in impacts:
            continue  # an import-time mutant's run chooses its tests itself
        pool = known if sel.tests is None else sel.tests
        kept = tuple(t for t in pool if t not in failed)
        selections[mid] = replace(sel, tests=kept, reason=f"{sel.reason}; {why}")


def _patchable(
    built: BuiltProgram, selection: Selection | None, impact: dict[str, Any] | None = None
) -> Target:
    """A mutant's target, naming the files it changes when they can be carried into a batch's
    one collection (:attr:`Selection.files`; an import-time change needs its ``impact``)."""
    target = built.target()
    if built.pythonpath is None or selection is None or not selection.files:
        return target
    if selection.import_time is not None and impact is None:
        return target
    return replace(target, patched_files=selection.files, impact=impact)


def _selection_used(selections: dict[str, Selection], all_tests: bool) -> str:
    """``coverage`` when every mutant ran a coverage-guided selection, ``all`` when none did
    (``--all-tests``, or coverage unknown), ``mixed`` otherwise."""
    if all_tests or not selections:
        return "all"
    guided = [s.tests is not None for s in selections.values()]
    return "coverage" if all(guided) else "all" if not any(guided) else "mixed"


def nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def _fast_order(
    mutant: MutantSpec,
    tests: list[TestInfo],
    section_kills: dict[str | None, dict[str, int]],
) -> tuple[str, ...]:
    """Valid tests only, likely killers first: tests that killed mutants of the same section
    (most kills first), then the mutant's target, then tests mapped to its section; among
    equals the fastest on the reference first (as mutmut orders), so a kill costs little."""
    kills = section_kills.get(mutant.section, {})
    valid = [t for t in tests if t.valid]

    def rank(pair: tuple[int, TestInfo]) -> tuple[int, int, int, float, int]:
        index, test = pair
        in_section = mutant.section is not None and mutant.section in test.sections
        seconds = max((s for s in test.seconds if s is not None), default=0.0)
        return (-kills.get(test.id, 0), test.id != mutant.target, not in_section, seconds, index)

    return tuple(t.id for _, t in sorted(enumerate(valid), key=rank))


def score_suite(
    instance: Instance,
    suite: Path | None = None,
    *,
    store: Store,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    engine: Engine = Engine.BATCHED,
    reference_runs: int = 3,
    fast: bool = False,
    limits: SuiteLimits = SuiteLimits(),
    backend: Backend | None = None,
    batch_size: int = DEFAULT_BATCH,
    mutant_ids: Iterable[str] | None = None,
    all_tests: bool = False,
    progress: Progress | None = None,
) -> SuiteResult:
    """Validity V, mutation_score M and the kill matrix of ``suite`` (default: the instance's
    reference suite) against the instance's reference and mutants.

    Each mutant runs only the tests that reach the code it changes, the others keeping their
    reference outcome (:mod:`suitebench.suite.selection`; the matrix is the full run's);
    ``all_tests`` runs every test on every mutant.  ``cache_dir`` holds built programs (default:
    ``builds/`` next to the store).  Progress is reported as (done, total) over builds plus runs.
    """
    started = time.monotonic()
    suite_dir = Path(suite if suite is not None else instance.tests).resolve()
    if not suite_dir.is_dir():
        raise FileNotFoundError(f"{suite_dir}: the suite to score is not a directory")
    python = suite_interpreter(instance, backend)
    builder = Builder(
        instance, cache_dir or store.path.parent / "builds", backend=backend, python=python
    )
    chosen = set(mutant_ids) if mutant_ids is not None else None
    mutants = [m for m in instance.mutants if chosen is None or m.id in chosen]
    total = 1 + len(mutants) + reference_runs + len(mutants)  # builds, then runs
    shown = {"builds": 0, "runs": 0}  # the mutants' builds may go on while the reference runs

    def report(part: str, done: int) -> None:
        shown[part] = max(shown[part], done)  # each part counts up; together they never go back
        if progress is not None:
            progress(shown["builds"] + shown["runs"], total)

    # A Python package's mutants (light builds: copy, patch, compile) build while the
    # reference's suite runs, when their selection waits for its coverage run anyway.
    local = executor is None or (isinstance(executor, LocalExecutor) and not executor.processes)
    beside = instance.kind is InstanceKind.PYTHON and not (fast or all_tests) and local
    reference, wait_builds = build_reference_first(
        builder,
        mutants,
        beside=beside,
        progress=lambda d, _: report("builds", d),
        executor=executor,
    )
    built = {} if beside else wait_builds()
    if not reference.ok:
        raise ReferenceBuildError(
            f"the reference of {instance.name} does not build:\n{reference.message}"
        )

    carried = stage_beside(instance, builder.cache_dir)  # the project's files and pytest config
    runner = SuiteRuns(
        suite_dir,
        kind=str(instance.kind),
        store=store,
        executor=executor,
        engine=engine,
        limits=limits,
        backend=backend,
        batch_size=batch_size,
        beside=carried,
        python=python,
    )
    ref_target = reference.target()
    # The first reference run records the fingerprint import-time impact compares with.
    first_target = ref_target
    if reference.pythonpath is not None and not all_tests:
        first_target = replace(ref_target, fingerprint=True)
    ref_keys = runner.reference_keys(reference.program_id, reference_runs)
    runnable = list(mutants) if beside else [m for m in mutants if built[m.id].ok]
    coverage_request = (
        None if all_tests or not runnable else _coverage_request(runner, builder, reference)
    )
    if beside and coverage_request is None:  # nothing to run beside: wait for them now
        built, beside = wait_builds(), False
        runnable = [m for m in mutants if built[m.id].ok]
    # The mutants' runs take per-test limits from the reference runs done before them
    # (:func:`_derive_timeouts`): the first (with the coverage run, for selection), or, with
    # ``--fast``, which needs validity first, all of them.  The other reference runs go with
    # the mutants' runs, so the batched engine fills every worker's batch.
    staged = coverage_request is not None and not fast
    full = coverage_request is None and not fast
    requests = [(k, ref_target if i else first_target) for i, k in enumerate(ref_keys)]
    # A Python coverage run shares the first reference run's batch (batched engine): then the
    # other reference runs fill the other workers meanwhile.
    rides = (
        coverage_request is not None
        and coverage_request[1].pythonpath is not None
        and engine is Engine.BATCHED
    )
    early = len(requests) if rides or fast else 1
    requests = requests[:early]
    if coverage_request is not None:
        requests.append(coverage_request)
    try:
        all_runs = runner.run(
            requests, progress=lambda d, _: report("runs", d), apart=set(ref_keys)
        )
    finally:
        if beside:  # waited for even when the runs failed: no build left running
            built = wait_builds()
    runnable = [m for m in mutants if built[m.id].ok]
    excluded = refined_out(instance, suite is None)

    selections: dict[str, Selection] = {}
    impacts: dict[str, dict[str, Any]] = {}
    coverage_note = CoverageNote(status="off", reason="--all-tests: every test on every mutant")
    if coverage_request is not None:
        ref0 = all_runs[ref_keys[0]]
        known = [t for t in test_universe([ref0]) if t not in excluded]
        coverage, coverage_note = _coverage(
            all_runs[coverage_request[0]], coverage_request[1], ref0, known
        )
        shared = None if coverage is None else impact_readers(coverage, ref0.fingerprint, known)
        if coverage is not None:  # compiled once per mutants' batch (warm.warm_patterns)
            runner.patterns = coverage.patterns
        for m in runnable:
            if coverage is None:
                selections[m.id] = Selection(None, coverage_note.reason)
            else:
                patch = m.patch.read_text(encoding="utf-8", errors="replace")
                selections[m.id] = select_tests(coverage, patch, known)
                if warns_on_compile(carried, built[m.id].pythonpath, patch):
                    selections[m.id] = Selection(None, WARNS_REASON)
                spec = impact_spec(shared, selections[m.id])
                if spec is not None:
                    impacts[m.id] = spec
        _leave_out_failed(selections, impacts, known, ref0)
    elif not all_tests and runnable:
        coverage_note = CoverageNote(
            status="unknown",
            reason="no per-test coverage: not a Python package, nor a gcc build; every test runs",
        )
        selections = {m.id: Selection(None, coverage_note.reason) for m in runnable}
    elif not all_tests:
        coverage_note = CoverageNote(status="off", reason="no mutant to run")
    selected_runs: dict[str, SuiteRun | None] = {}
    built = _derive_timeouts(runner, built, [all_runs[k] for k in ref_keys[:early]])
    later = [(k, ref_target) for k in ref_keys[early:]]
    full_keys = {m.id: runner.key(built[m.id].program_id, "full", None) for m in runnable}
    if staged:
        selected_runs, more = _run_selected(runner, runnable, built, selections, later, impacts)
        all_runs.update(more)
    elif full:
        asked = [*later, *((full_keys[m.id], built[m.id].target()) for m in runnable)]
        done = runner.run(
            asked, progress=lambda d, _: report("runs", early + d), apart={k for k, _ in later}
        )
        all_runs.update(done)
    ref_runs = [all_runs[k] for k in ref_keys]

    test_ids = [t for t in test_universe(ref_runs) if t not in excluded]
    tests: list[TestInfo] = []
    for test in test_ids:
        statuses = [run.status_of(test) for run in ref_runs]
        tests.append(
            TestInfo(
                id=test,
                file=test_file(test),
                valid=all(s is TestStatus.PASSED for s in statuses),
                flaky=len(set(statuses)) > 1,
                reference=statuses,
                sections=instance.sections_map.get(test, []),
                message=_first_message(ref_runs, test),
                seconds=[run.seconds.get(test) for run in ref_runs],
                mutant_time_limit=dict(runner.timeouts).get(test),
            )
        )

    if fast:
        mutant_runs = _fast_runs(runner, runnable, built, tests, selections, impacts)
    elif full:
        mutant_runs = {m.id: all_runs[full_keys[m.id]] for m in runnable}
    else:
        mutant_runs = {
            m.id: row(selected_runs.get(m.id), selections[m.id], tests) for m in runnable
        }
    confirmed = confirm_timeouts(runner, built, mutant_runs, tests)
    if progress is not None:
        progress(total, total)

    finished = all(r.status is RunStatus.OK for r in ref_runs)
    results = [
        classify(m, built[m.id], confirmed.get(m.id), tests, selections.get(m.id), finished)
        for m in mutants
    ]
    counts = Counts(
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
    )
    scored = [r for r in results if r.status.scored]
    broken = [r for r in ref_runs if r.status is not RunStatus.OK]
    harness_errors = [
        HarnessError(stage="reference", program="reference", message=r.message, count=len(broken))
        for r in broken[:1]
    ] + [
        HarnessError(stage="mutant", program=m.id, message=m.message, count=1)
        for m in results
        if m.run_status is RunStatus.SANDBOX_ERROR
    ]
    per_section = per_section_mutation_score(
        {r.id: r.status.detected for r in scored}, {r.id: r.section or "" for r in scored}
    )
    return SuiteResult(
        instance=instance.name,
        suite=str(suite_dir),
        suite_hash=runner.suite_hash,
        engine=str(engine),
        mode="fast" if fast else "full",
        test_selection=_selection_used(selections, all_tests),
        coverage=coverage_note,
        reference_runs=reference_runs,
        validity=nan_to_none(validity(counts.valid, counts.tests)),
        mutation_score=nan_to_none(mutation_score(counts.killed, counts.scored)),
        per_section={s: nan_to_none(v) for s, v in per_section.items()},
        counts=counts,
        reference_program=reference.program_id,
        reference_run_status=[r.status for r in ref_runs],
        tests=tests,
        excluded_tests=excluded,
        mutants=results,
        harness_errors=harness_errors,
        pytest_config=None
        if carried is None or carried.config is None
        else carried.config.to_dict(),
        limits={**limits.to_dict(), "reference_runs": reference_runs},
        backend=runner.backend_name,
        versions=versions(python),
        wall_time=round(time.monotonic() - started, 3),
    )


def _derive_timeouts(
    runner: SuiteRuns, built: dict[str, BuiltProgram], ref_runs: list[SuiteRun]
) -> dict[str, BuiltProgram]:
    """The mutants' programs with per-test limits from the reference runs done before them
    (PIT's factor x time + constant, capped by the per-test limit); the runner keys the runs
    asked for from now on by them."""
    valid = [
        t
        for t in test_universe(ref_runs)
        if all(r.status_of(t) is TestStatus.PASSED for r in ref_runs)
    ]
    runner.timeouts = derive_timeouts([r.seconds for r in ref_runs], valid, runner.limits)
    return {mid: replace(b, timeouts=runner.timeouts) for mid, b in built.items()}


def _fast_runs(
    runner: SuiteRuns,
    runnable: list[MutantSpec],
    built: dict[str, BuiltProgram],
    tests: list[TestInfo],
    selections: dict[str, Selection],
    impacts: dict[str, dict[str, Any]],
) -> dict[str, SuiteRun]:
    """``--fast`` in two waves: first one mutant per section, then all the others, ordered by
    what killed the first wave's mutants of their section.  Two waves, not one per mutant: each
    wave is a round of parallel (and, batched, start-up) cost, which is what --fast saves.
    An import-time mutant tries, in that order, only the tests that read a global its import
    changed (a survivor need not run every test to survive)."""
    by_section: dict[str | None, list[MutantSpec]] = {}
    for m in runnable:
        by_section.setdefault(m.section, []).append(m)
    waves = [
        [ms[0] for ms in by_section.values()],
        [m for ms in by_section.values() for m in ms[1:]],
    ]
    section_kills: dict[str | None, dict[str, int]] = {}
    valid = {t.id for t in tests if t.valid}
    runs: dict[str, SuiteRun] = {}
    for members in waves:
        requests: list[tuple[str, Target]] = []
        keys: dict[str, str] = {}
        for m in members:
            order = _fast_order(m, tests, section_kills)
            chosen = selections[m.id].tests if m.id in selections else None
            if chosen is not None:  # only tests that reach the mutant can kill it
                reaching = set(chosen)
                order = tuple(t for t in order if t in reaching)
                if not order:
                    continue
            impact = impacts.get(m.id) if chosen is None else None
            mode = "fast" if impact is None else f"fast-impact-{spec_digest(impact)}"
            keys[m.id] = runner.key(built[m.id].program_id, mode, order)
            target = _patchable(built[m.id], selections.get(m.id), impact)
            requests.append((keys[m.id], replace(target, order=order, impact=impact)))
        got = runner.run(requests)
        for m in members:
            selection = selections.get(m.id)
            found = got.get(keys[m.id]) if m.id in keys else None
            if selection is None or selection.tests is None:
                assert found is not None
                run = found
                if m.id in impacts and found.selection_reason:  # what its run chose
                    selections[m.id] = Selection(found.selected, found.selection_reason)
            else:
                run = merged(found, selection, tests)
            runs[m.id] = run
            for test in tests:
                if test.id in valid and run.status_of(test.id).fails:
                    counter = section_kills.setdefault(m.section, {})
                    counter[test.id] = counter.get(test.id, 0) + 1
    return runs
