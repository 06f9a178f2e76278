"""Score what an agent left, with the same APIs as ``suitebench score`` and ``suitebench audit``.

* ``suite``: ``score_suite`` on the collected ``tests/`` -> V, M, kill matrix (results.json,
  kills.csv, kills.npz, mutation-report.json);
* ``code``: ``score_implementation`` on the workspace -> R;
* ``inputs``: ``run_audit`` with the agent's ``workspace/final/`` as the arm ``agent`` -> cov@k,
  certified findings, ledger.

Each returns a small summary for ``agent.json`` and the batch table; the full figures are the
files the scoring APIs write.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.audit.arms import ArmSource
from suitebench.audit.pipeline import run_audit
from suitebench.audit.runs import AuditEngine
from suitebench.model.instance import Instance
from suitebench.model.problem import Problem
from suitebench.report.mutation_report import write_mutation_report
from suitebench.run.executor import Executor, LocalExecutor
from suitebench.run.store import Store
from suitebench.run.unpack import is_archive
from suitebench.suite.execute.programs import SUBMISSION_BUILDS
from suitebench.suite.implementation import score_implementation
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import SuiteInputError, score_suite

AGENT_ARM = "agent"


@dataclass
class ScoreContext:
    store: Store
    cache_dir: Path
    executor: Executor | None = None

    def executor_or_local(self) -> Executor:
        return self.executor if self.executor is not None else LocalExecutor()


def suite_summary(result: SuiteResult) -> dict[str, Any]:
    c = result.counts
    return {
        "validity": result.validity,
        "mutation_score": result.mutation_score,
        "tests": c.tests,
        "valid": c.valid,
        "killed": c.killed,
        "scored": c.scored,
        "surviving_sections": surviving_sections(result),
    }


def surviving_sections(result: SuiteResult) -> list[str]:
    """Spec sections of the mutants no valid test killed (the feedback of a round)."""
    sections = [m.section for m in result.mutants if m.status is MutantStatus.SURVIVED]
    return sorted({s for s in sections if s})


def score_suite_task(
    instance: Instance, tests_dir: Path, out: Path, ctx: ScoreContext
) -> tuple[SuiteResult | None, dict[str, Any]]:
    """The agent's suite scored (None with the reason when it cannot be: bad input)."""
    try:
        result = score_suite(
            instance,
            tests_dir,
            store=ctx.store,
            cache_dir=ctx.cache_dir,
            executor=ctx.executor,
        )
    except SuiteInputError as exc:
        # The agent's suite cannot be scored (it collects no test, or a Python file of it is
        # not named in UTF-8): an outcome of the agent's, recorded with its reason; every
        # section is left to cover in the next round.
        sections = sorted({m.section for m in instance.mutants if m.section})
        return None, {
            "validity": None,
            "mutation_score": None,
            "tests": 0,
            "valid": 0,
            "killed": 0,
            "scored": 0,
            "surviving_sections": sections,
            "error": str(exc),
        }
    result.write(out)
    write_mutation_report(out / "mutation-report.json", instance, result)
    return result, suite_summary(result)


def submission_in(directory: Path) -> Path:
    """What an agent's code task left to be built: its directory, or -- where that holds no
    build script but one submission archive, as ProgramBench publishes them -- the archive
    (unpacked safely when scored, :mod:`suitebench.run.unpack`)."""
    if any((directory / name).is_file() for name in SUBMISSION_BUILDS):
        return directory
    archives = [p for p in directory.iterdir() if is_archive(p)] if directory.is_dir() else []
    return archives[0] if len(archives) == 1 else directory


def score_code_task(
    instance: Instance, implementation: Path, out: Path, ctx: ScoreContext
) -> dict[str, Any]:
    result = score_implementation(
        instance,
        submission_in(implementation),
        store=ctx.store,
        cache_dir=ctx.cache_dir,
        executor=ctx.executor,
    )
    result.write(out)
    return {
        "reference_pass_rate": result.reference_pass_rate,
        "passed": result.passed,
        "total": result.total,
        "build_status": result.build_status,
    }


def score_inputs_task(
    problem: Problem, final_dir: Path, out: Path, ctx: ScoreContext
) -> dict[str, Any]:
    inputs = sorted(p for p in final_dir.iterdir() if p.is_file()) if final_dir.is_dir() else []
    executor = ctx.executor_or_local()
    try:
        engine = AuditEngine(ctx.store, executor, ctx.cache_dir)
        result = run_audit(
            [problem], [ArmSource(AGENT_ARM, str(final_dir))], engine, out_dir=out, base=out
        )
    finally:
        if ctx.executor is None:
            executor.close()
    arm = result.results["arms"].get(AGENT_ARM, {})
    return {
        "inputs": len(inputs),
        "cov_at_k": arm.get("cov_at_k", {}),
        "certified": arm.get("certified", 0),
        "new_findings": arm.get("funnel", {}).get("new_findings", 0),
    }
