"""R: how much of the reference suite a candidate implementation passes (TestSuiteBench's
reference pass rate, Section 2.6): the suite's valid tests -- those that pass every reference
run -- run once on the candidate's build, and the failing ones are listed.

The candidate is a directory or a submission archive as ProgramBench publishes them
(``submission.zip``, ``.tar.gz``: unpacked safely, :mod:`suitebench.run.unpack`), built by the
instance's recipe or its own ``build.sh`` / ``compile.sh``; the suite runs as score runs it (a
task's workspaces, the files carried beside the suite)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from suitebench.metrics.mutation import reference_pass_rate
from suitebench.model.instance import Instance
from suitebench.run.executor import Executor
from suitebench.run.outcome import Backend
from suitebench.run.store import Store
from suitebench.run.unpack import is_archive, unpack_root
from suitebench.suite.execute.interpreter import protocol_for, suite_interpreter, versions
from suitebench.suite.execute.jobs import SuiteRuns
from suitebench.suite.execute.programs import Builder
from suitebench.suite.execute.projectconfig import stage_beside
from suitebench.suite.execute.runspec import Engine, SuiteLimits, reference_positions
from suitebench.suite.execute.workspaces import suite_to_run
from suitebench.suite.protocol.tally import listed_tests, nan_to_none, refined_out, test_universe
from suitebench.suite.records import TestStatus
from suitebench.suite.result import ImplementationResult
from suitebench.suite.score import DEFAULT_BATCH, Progress

__all__ = ["score_implementation"]


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
    python = suite_interpreter(instance, backend)
    limits, protocol_note = protocol_for(limits, python)
    builder = Builder(
        instance, cache_dir or store.path.parent / "builds", backend=backend, python=python
    )
    reference = builder.reference()
    if not reference.ok:
        raise RuntimeError(f"the reference of {instance.name} does not build:\n{reference.message}")
    implementation = Path(implementation)
    if is_archive(implementation):  # submission.zip, .tar.gz: unpacked safely, then built
        with unpack_root(implementation, builder.cache_dir / "submissions") as root:
            candidate = builder.implementation(root)
    else:
        candidate = builder.implementation(implementation)
    if progress is not None:
        progress(1, 3)
    suite_dir = suite_to_run(instance, None, builder.cache_dir)
    runner = SuiteRuns(
        suite_dir,
        python=python,
        # as score runs it, the modules' doctests the reference's examples (not the
        # candidate's own docstrings) in each module's namespace
        beside=stage_beside(instance, builder.cache_dir, reference_examples=True),
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
    if reference.pythonpath is not None:  # as score's first: the tests' positions recorded
        requests[0] = (ref_keys[0], replace(requests[0][1], fingerprint=True))
    # each reference run its own process, as in score: flakiness shows, no build is shared
    runs = runner.run(requests, apart=set(ref_keys))
    ref_runs = [runs[k] for k in ref_keys]
    # The candidate's tests by the reference's names (a value the suite parametrizes with
    # may be another in the candidate: :mod:`suitebench.suite.inside.positions`).
    positions = reference_positions(ref_runs)
    cand_key = runner.key(candidate.program_id, "full", None, positions=positions)
    if candidate.ok:
        target = replace(candidate.target(), positions=positions)
        runs.update(runner.run([(cand_key, target)]))
    if progress is not None:
        progress(3, 3)
    excluded = refined_out(instance, True)
    test_ids = [t for t in test_universe(ref_runs, listed_tests(instance)) if t not in excluded]
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
        reference_pass_rate=nan_to_none(reference_pass_rate(passed, len(valid))),
        passed=passed,
        total=len(valid),
        failing=failing,
        excluded_invalid=invalid,
        excluded_tests=excluded,
        run_status=run.status if run is not None else None,
        limits={
            **limits.to_dict(),
            "reference_runs": reference_runs,
            **({"protocol_note": protocol_note} if protocol_note else {}),
        },
        backend=runner.backend_name,
        versions=versions(python),
    )
