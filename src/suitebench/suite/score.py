"""Suite mode's evaluation protocol (TestSuiteBench, Section 2.6 and Appendix C).

The pipeline, each stage reading and writing records:

1. **build** the reference and every mutant (:mod:`suitebench.suite.build`; a patch that does
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
import os
import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import suitebench
from suitebench.metrics.mutation import (
    mutation_score,
    per_section_mutation_score,
    reference_pass_rate,
    validity,
)
from suitebench.model.instance import Instance, MutantSpec
from suitebench.run import sandbox
from suitebench.run.executor import Executor, run_cached
from suitebench.run.outcome import Backend
from suitebench.run.store import Store, job_key
from suitebench.suite.build import Builder, BuiltProgram, build_all, tree_hash
from suitebench.suite.records import RunStatus, SuiteRun, TestStatus, test_file
from suitebench.suite.result import (
    Counts,
    ImplementationResult,
    MutantResult,
    MutantStatus,
    SuiteResult,
    TestInfo,
)
from suitebench.suite.runner import (
    Engine,
    SuiteLimits,
    Target,
    run_batched,
    run_plain,
)

Progress = Callable[[int, int], None]
_JOB_VERSION = "suite-run/1"
DEFAULT_BATCH = 32


# -- jobs (top-level, plain data in and out: they run on a local pool or on Dask workers) ------


def plain_job(payload: dict[str, Any]) -> dict[str, Any]:
    """One suite run on one program, by the plain engine."""
    run = run_plain(
        Path(payload["suite"]),
        Target.from_dict(payload["target"]),
        limits=SuiteLimits.from_dict(payload["limits"]),
        backend=Backend(payload["backend"]) if payload.get("backend") else None,
    )
    return run.to_dict()


def batch_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Suite runs on a batch of programs in one sandbox, by the batched engine."""
    runs = run_batched(
        Path(payload["suite"]),
        [Target.from_dict(t) for t in payload["targets"]],
        collect_once=bool(payload["collect_once"]),
        limits=SuiteLimits.from_dict(payload["limits"]),
        backend=Backend(payload["backend"]) if payload.get("backend") else None,
    )
    return {"runs": [r.to_dict() for r in runs]}


class _Runs:
    """Runs a suite against many targets through the store, by one engine."""

    def __init__(
        self,
        suite: Path,
        *,
        kind: str,
        store: Store,
        executor: Executor | None,
        engine: Engine,
        limits: SuiteLimits,
        backend: Backend | None,
        batch_size: int,
    ) -> None:
        self.suite = suite
        self.kind = kind
        self.suite_hash = tree_hash(suite)
        self.store = store
        self.executor = executor
        self.engine = engine
        self.limits = limits
        self.backend = backend
        self.backend_name = str(backend or sandbox.detect_backend())
        self.batch_size = max(1, batch_size)

    def key(self, program_id: str, mode: str, order: tuple[str, ...] | None) -> str:
        return job_key(
            _JOB_VERSION,
            self.suite_hash,
            program_id,
            self.limits.to_dict(),
            self.backend_name,
            str(self.engine),
            mode,
            list(order) if order is not None else None,
        )

    def reference_keys(self, program_id: str, runs: int) -> list[str]:
        """One key per reference run: the repetitions are separate jobs, so flakiness shows."""
        return [job_key(self.key(program_id, "reference", None), rep) for rep in range(runs)]

    def run(
        self,
        requests: list[tuple[str, Target]],
        progress: Progress | None = None,
    ) -> dict[str, SuiteRun]:
        """``(job key, target)`` pairs -> runs, computing only what the store lacks."""
        wanted: dict[str, Target] = {}
        for key, target in requests:
            wanted.setdefault(key, target)
        base: dict[str, Any] = {
            "suite": str(self.suite),
            "limits": self.limits.to_dict(),
            "backend": str(self.backend) if self.backend else None,
        }
        if self.engine is Engine.PLAIN:
            jobs = [(k, {**base, "target": t.to_dict()}) for k, t in wanted.items()]
            raw = run_cached(
                plain_job,
                jobs,
                store=self.store,
                executor=self.executor,
                progress=progress,
                kind="suite-run",
            )
            return {k: SuiteRun.from_dict(v) for k, v in raw.items()}
        # Batched: look every run up by its own key first, batch only the missing ones.
        found = self.store.get_many(list(wanted))
        missing = [k for k in wanted if k not in found]
        # One batch per worker (pytest's start-up paid once per worker), capped by batch_size.
        workers = max(1, int(getattr(self.executor, "jobs", None) or os.cpu_count() or 1))
        size = max(1, min(self.batch_size, -(-len(missing) // workers)))
        batches = [missing[i : i + size] for i in range(0, len(missing), size)]
        done_before = len(found)

        def batch_progress(done: int, total: int) -> None:
            if progress is not None:
                finished = min(len(missing), done * size)
                progress(done_before + finished, len(wanted))

        jobs2 = [
            (
                job_key(_JOB_VERSION, "batch", keys),
                {
                    **base,
                    "targets": [wanted[k].to_dict() for k in keys],
                    "collect_once": self.kind == "cli",
                },
            )
            for keys in batches
        ]
        raw2 = run_cached(
            batch_job,
            jobs2,
            store=self.store,
            executor=self.executor,
            progress=batch_progress if progress is not None else None,
            kind="suite-batch",
        )
        fresh: list[tuple[str, Any]] = []
        for (batch_key, _), keys in zip(jobs2, batches, strict=True):
            for key, run in zip(keys, raw2[batch_key]["runs"], strict=True):
                found[key] = run
                fresh.append((key, run))
        self.store.put_many(fresh, kind="suite-run")
        if progress is not None:
            progress(len(wanted), len(wanted))
        return {k: SuiteRun.from_dict(found[k]) for k in wanted}


# -- the protocol -------------------------------------------------------------------------------


def _refined_out(instance: Instance, scoring_reference_suite: bool) -> dict[str, list[str]]:
    """Tests the instance's own refinement dropped (ProgramBench ``ignored_tests``: gold_fail,
    gold_flaky, slow_or_hang, ...), with reasons; they apply to the reference suite only."""
    ignored = getattr(instance, "ignored_tests", None) if scoring_reference_suite else None
    return {str(k): list(v) for k, v in (ignored or {}).items()}


def _test_universe(runs: list[SuiteRun]) -> list[str]:
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


def _classify(
    mutant: MutantSpec,
    built: BuiltProgram,
    run: SuiteRun | None,
    tests: list[TestInfo],
) -> MutantResult:
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
    killers = [t.id for t in tests if t.valid and outcomes.get(t.id, TestStatus.NOT_RUN).fails]
    if killers:
        only_timeouts = all(outcomes[k] is TestStatus.TIMEOUT for k in killers)
        status = MutantStatus.TIMEOUT if only_timeouts else MutantStatus.KILLED
    elif run.status is RunStatus.OK:
        status = MutantStatus.SURVIVED
    else:
        status = MutantStatus.CRASHED
    ran = sum(1 for s in outcomes.values() if s is not TestStatus.NOT_RUN)
    return MutantResult(
        status=status,
        killed_by=killers,
        tests_run=ran,
        outcomes=outcomes,
        run_status=run.status,
        wall_time=run.wall_time,
        message=run.message,
        log=run.log if run.status is not RunStatus.OK else "",
        **common,
    )


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def versions() -> dict[str, str]:
    return {
        "suitebench": suitebench.__version__,
        "pytest": pytest.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _fast_order(
    mutant: MutantSpec,
    tests: list[TestInfo],
    section_kills: dict[str | None, dict[str, int]],
) -> tuple[str, ...]:
    """Valid tests only, likely killers first: tests that killed mutants of the same section
    (most kills first), then the mutant's target, then tests mapped to its section."""
    kills = section_kills.get(mutant.section, {})
    valid = [t for t in tests if t.valid]

    def rank(pair: tuple[int, TestInfo]) -> tuple[int, int, int, int]:
        index, test = pair
        in_section = mutant.section is not None and mutant.section in test.sections
        return (-kills.get(test.id, 0), test.id != mutant.target, not in_section, index)

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
    progress: Progress | None = None,
) -> SuiteResult:
    """Validity V, mutation_score M and the kill matrix of ``suite`` (default: the instance's
    reference suite) against the instance's reference and mutants.

    ``cache_dir`` holds built programs (default: ``builds/`` next to the store).  Progress is
    reported as (done, total) over builds plus runs.
    """
    started = time.monotonic()
    suite_dir = Path(suite if suite is not None else instance.tests).resolve()
    if not suite_dir.is_dir():
        raise FileNotFoundError(f"{suite_dir}: the suite to score is not a directory")
    builder = Builder(instance, cache_dir or store.path.parent / "builds", backend=backend)
    chosen = set(mutant_ids) if mutant_ids is not None else None
    mutants = [m for m in instance.mutants if chosen is None or m.id in chosen]
    total = 1 + len(mutants) + reference_runs + len(mutants)  # builds, then runs
    reference, built = build_all(
        builder,
        mutants,
        progress=(lambda done, _: progress(done, total)) if progress else None,
        executor=executor,
    )
    if not reference.ok:
        raise RuntimeError(f"the reference of {instance.name} does not build:\n{reference.message}")

    runner = _Runs(
        suite_dir,
        kind=str(instance.kind),
        store=store,
        executor=executor,
        engine=engine,
        limits=limits,
        backend=backend,
        batch_size=batch_size,
    )
    ref_target = reference.target()
    ref_keys = runner.reference_keys(reference.program_id, reference_runs)
    runnable = [m for m in mutants if built[m.id].ok]
    # The full matrix does not depend on the reference runs: run them all in one go, so the
    # batched engine fills every worker's batch.  ``--fast`` needs validity first.
    full_keys = (
        {} if fast else {m.id: runner.key(built[m.id].program_id, "full", None) for m in runnable}
    )
    requests = [(k, ref_target) for k in ref_keys]
    requests += [(full_keys[m.id], built[m.id].target()) for m in runnable if m.id in full_keys]
    first = 1 + len(mutants)
    all_runs = runner.run(
        requests,
        progress=(lambda d, t: progress(first + d, total)) if progress else None,
    )
    ref_runs = [all_runs[k] for k in ref_keys]

    excluded = _refined_out(instance, suite is None)
    test_ids = [t for t in _test_universe(ref_runs) if t not in excluded]
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
            )
        )

    if fast:
        mutant_runs = _fast_runs(runner, runnable, built, tests)
    else:
        mutant_runs = {m.id: all_runs[full_keys[m.id]] for m in runnable}
    if progress is not None:
        progress(total, total)

    results = [_classify(m, built[m.id], mutant_runs.get(m.id), tests) for m in mutants]
    counts = Counts(
        tests=len(tests),
        valid=sum(t.valid for t in tests),
        flaky=sum(t.flaky for t in tests),
        mutants=len(results),
        scored=sum(r.status.scored for r in results),
        killed=sum(r.status.detected for r in results),
        survived=sum(r.status is MutantStatus.SURVIVED for r in results),
        build_errors=sum(r.status is MutantStatus.BUILD_ERROR for r in results),
        crashed=sum(r.status is MutantStatus.CRASHED for r in results),
    )
    scored = [r for r in results if r.status.scored]
    per_section = per_section_mutation_score(
        {r.id: r.status.detected for r in scored}, {r.id: r.section or "" for r in scored}
    )
    return SuiteResult(
        instance=instance.name,
        suite=str(suite_dir),
        suite_hash=runner.suite_hash,
        engine=str(engine),
        mode="fast" if fast else "full",
        reference_runs=reference_runs,
        validity=_nan_to_none(validity(counts.valid, counts.tests)),
        mutation_score=_nan_to_none(mutation_score(counts.killed, counts.scored)),
        per_section={s: _nan_to_none(v) for s, v in per_section.items()},
        counts=counts,
        reference_program=reference.program_id,
        reference_run_status=[r.status for r in ref_runs],
        tests=tests,
        excluded_tests=excluded,
        mutants=results,
        limits={**limits.to_dict(), "reference_runs": reference_runs},
        backend=runner.backend_name,
        versions=versions(),
        wall_time=round(time.monotonic() - started, 3),
    )


def _fast_runs(
    runner: _Runs,
    runnable: list[MutantSpec],
    built: dict[str, BuiltProgram],
    tests: list[TestInfo],
) -> dict[str, SuiteRun]:
    """``--fast`` in two waves: first one mutant per section, then all the others, ordered by
    what killed the first wave's mutants of their section.  Two waves, not one per mutant: each
    wave is a round of parallel (and, batched, start-up) cost, which is what --fast saves."""
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
            keys[m.id] = runner.key(built[m.id].program_id, "fast", order)
            requests.append((keys[m.id], replace(built[m.id].target(), order=order)))
        got = runner.run(requests)
        for m in members:
            run = got[keys[m.id]]
            runs[m.id] = run
            for test in tests:
                if test.id in valid and run.status_of(test.id).fails:
                    counter = section_kills.setdefault(m.section, {})
                    counter[test.id] = counter.get(test.id, 0) + 1
    return runs


def score_implementation(
    instance: Instance,
    implementation: Path,
    *,
    store: Store,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    engine: Engine = Engine.BATCHED,
    reference_runs: int = 3,
    limits: SuiteLimits = SuiteLimits(),
    backend: Backend | None = None,
    progress: Progress | None = None,
) -> ImplementationResult:
    """R: the fraction of the reference suite's *valid* tests a candidate implementation passes
    (TestSuiteBench's reference pass rate), with the failing tests listed."""
    builder = Builder(instance, cache_dir or store.path.parent / "builds", backend=backend)
    reference = builder.reference()
    if not reference.ok:
        raise RuntimeError(f"the reference of {instance.name} does not build:\n{reference.message}")
    candidate = builder.implementation(Path(implementation))
    if progress is not None:
        progress(1, 3)
    suite_dir = instance.tests.resolve()
    runner = _Runs(
        suite_dir,
        kind=str(instance.kind),
        store=store,
        executor=executor,
        engine=engine,
        limits=limits,
        backend=backend,
        batch_size=DEFAULT_BATCH,
    )
    ref_keys = runner.reference_keys(reference.program_id, reference_runs)
    requests = [(k, reference.target()) for k in ref_keys]
    cand_key = runner.key(candidate.program_id, "full", None)
    if candidate.ok:
        requests.append((cand_key, candidate.target()))
    runs = runner.run(requests)
    if progress is not None:
        progress(3, 3)
    ref_runs = [runs[k] for k in ref_keys]
    excluded = _refined_out(instance, True)
    test_ids = [t for t in _test_universe(ref_runs) if t not in excluded]
    valid = [t for t in test_ids if all(r.status_of(t) is TestStatus.PASSED for r in ref_runs)]
    invalid = [t for t in test_ids if t not in valid]
    run = runs.get(cand_key) if candidate.ok else None
    failing: dict[str, TestStatus] = {}
    for test in valid:
        status = run.status_of(test) if run is not None else TestStatus.NOT_RUN
        if status is not TestStatus.PASSED:
            failing[test] = status
    passed = len(valid) - len(failing)
    return ImplementationResult(
        instance=instance.name,
        implementation=str(Path(implementation).resolve()),
        build_status=str(candidate.status),
        build_message=candidate.message,
        reference_pass_rate=_nan_to_none(reference_pass_rate(passed, len(valid))),
        passed=passed,
        total=len(valid),
        failing=failing,
        excluded_invalid=invalid,
        excluded_tests=excluded,
        run_status=run.status if run is not None else None,
        limits={**limits.to_dict(), "reference_runs": reference_runs},
        backend=runner.backend_name,
        versions=versions(),
    )
