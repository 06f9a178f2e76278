"""The audit's ``results.json`` as typed records, built from what the chain found.

The suite's results are a pydantic model (:mod:`suitebench.suite.result`); so are the
audit's: :class:`AuditRecord` is the whole file, :class:`ProblemEntry` one problem's entry,
:class:`ProblemArmEntry` one arm on one problem and :class:`ArmEntry` one arm pooled over every
problem. Every record forbids keys it does not name, except a problem's entry: the audits of
the chain itself (``problem_extras`` of :func:`~suitebench.audit.pipeline.run_audit`, such as
the validator fuzz) add their own keys there, after the chain's. Field order is the file's
key order; :meth:`AuditRecord.to_json` is the file's text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from suitebench.audit.judge import judge_limits
from suitebench.audit.records import Funnel
from suitebench.audit.tables import ArmResult, ProblemAudit

__all__ = [
    "ArmCounts",
    "ArmEntry",
    "AuditRecord",
    "FunnelEntry",
    "GateEntry",
    "HarnessErrorEntry",
    "OracleEntry",
    "ProblemArmEntry",
    "ProblemEntry",
    "ProblemLimits",
    "RejudgedCell",
    "RunCounts",
    "finite",
    "problem_entry",
]

#: Cov@k per budget, keyed by the budget as text; None where it is not defined (NaN).
CovAtK = dict[str, float | None]


def finite(x: float) -> float | None:
    """A figure as results.json holds it: rounded to 6 places, None for NaN."""
    return None if math.isnan(x) else round(x, 6)


class FunnelEntry(BaseModel):
    """The paper's Table 1 for one arm (:class:`~suitebench.audit.records.Funnel`)."""

    model_config = ConfigDict(extra="forbid")

    flagged: int
    official_tle: int
    reproducible: int
    after_corrections: int
    certified: int
    new_findings: int
    withdrawn_by: dict[str, int]
    certified_by: dict[str, int]

    @classmethod
    def of(cls, funnel: Funnel) -> FunnelEntry:
        return cls.model_validate(funnel.to_dict())


class ArmCounts(BaseModel):
    """One arm's inputs on one problem, counted by what became of them."""

    model_config = ConfigDict(extra="forbid")

    inputs: int
    duplicates: int
    failed_seeds: int
    legal: int
    illegal: int
    unmeasured: int
    no_validator: int
    no_gold: int
    scored: int


class ProblemArmEntry(BaseModel):
    """One arm on one problem: its inputs, what it killed, its cov@k and its funnel."""

    model_config = ConfigDict(extra="forbid")

    source: str
    counts: ArmCounts
    killed: int
    killed_submissions: list[str]
    tle_only_submissions: list[str]
    cov_at_k: CovAtK
    funnel: FunnelEntry

    @classmethod
    def of(cls, r: ArmResult) -> ProblemArmEntry:
        return cls(
            source=r.arm.source,
            counts=ArmCounts.model_validate(r.counts),
            killed=len(r.killed),
            killed_submissions=r.killed,
            tle_only_submissions=r.tle_only,
            cov_at_k={str(k): finite(v) for k, v in r.cov_at_k.items()},
            funnel=FunnelEntry.of(r.funnel),
        )


class ProblemLimits(BaseModel):
    """A problem's limits as the judge applied them."""

    model_config = ConfigDict(extra="forbid")

    time_limit: float
    allowance: float
    memory_limit_mb: int
    judge: dict[str, Any]  # the judge's run limits (Limits.to_dict)
    brute_time_limit: float


class OracleEntry(BaseModel):
    """The consensus_oracle's rule and the references that formed it."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    min_success: int
    references: list[str]


class GateEntry(BaseModel):
    """The validator's quality gate: passed, or the reasons it failed."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    reasons: list[str]


class RejudgedCell(BaseModel):
    """A cell whose first run was a wall-clock TLE with little CPU, re-judged (both times)."""

    model_config = ConfigDict(extra="forbid")

    submission_id: str
    input_sha256: str
    verdict: str
    wall_time: float
    cpu_time: float
    first_wall_time: float
    first_cpu_time: float


class ProblemEntry(BaseModel):
    """One problem's entry; audits of the chain itself may add keys after these."""

    model_config = ConfigDict(extra="allow")

    problem: str
    problem_dir: str
    limits: ProblemLimits
    exit_status: str
    compile: dict[str, list[str]]
    checker: str
    tolerance: float
    oracle: OracleEntry
    validator: str | None
    validator_gate: GateEntry | None
    pool: str
    pool_size: int
    submissions: list[str]
    build_errors: dict[str, str]
    official_verdicts: dict[str, str]
    tle_rejudged: list[RejudgedCell]
    no_gold_reasons: dict[str, str]
    arms: dict[str, ProblemArmEntry]
    certified: int


class HarnessErrorEntry(BaseModel):
    """A broken program of the harness (:class:`~suitebench.audit.harness.HarnessError`)."""

    model_config = ConfigDict(extra="forbid")

    problem: str
    stage: str
    role: str
    program: str
    message: str
    count: int


class ArmEntry(BaseModel):
    """One arm over every problem it was run on: micro-pooled and macro figures, its funnel."""

    model_config = ConfigDict(extra="forbid")

    problems: int
    micro_coverage: float | None
    macro_recall: float | None
    cov_at_k: CovAtK
    macro_cov_at_k: CovAtK
    certified: int
    funnel: FunnelEntry


class RunCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executed: int
    cached: int


class AuditRecord(BaseModel):
    """The whole ``results.json`` of an audit."""

    model_config = ConfigDict(extra="forbid")

    suitebench_version: str
    python: str
    backend: str
    unsandboxed: bool
    toolchains: dict[str, str]
    pool: str
    consensus_pool: str | None
    max_candidates: int
    ks: list[int]
    basis: str
    runs: RunCounts
    harness_errors: list[HarnessErrorEntry]
    arms: dict[str, ArmEntry]
    problems: dict[str, ProblemEntry]
    certified: int

    def to_dict(self) -> dict[str, Any]:
        """The file's content as plain JSON values (what readers of the file see)."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"


def _tle_rejudged(a: ProblemAudit) -> list[RejudgedCell]:
    """The judge's cells whose first run was a wall-clock TLE with little CPU, re-judged."""
    return [
        RejudgedCell(
            submission_id=n,
            input_sha256=s,
            verdict=str(j.verdict),
            wall_time=round(j.wall_time, 3),
            cpu_time=round(j.cpu_time, 3),
            first_wall_time=round(j.tle_first[0], 3),
            first_cpu_time=round(j.tle_first[1], 3),
        )
        for (n, s), j in a.cells.items()
        if j.tle_first is not None
    ]


def _chain_entry(a: ProblemAudit) -> dict[str, Any]:
    """The chain's own fields of a problem's entry, in the file's order."""
    p = a.problem
    gate = a.legality.gate
    return {
        "problem": p.id,
        "problem_dir": str(p.root),
        "limits": ProblemLimits(
            time_limit=p.time_limit,
            allowance=p.allowance,
            memory_limit_mb=p.memory_limit,
            judge=judge_limits(p).to_dict(),
            brute_time_limit=p.brute_time_limit,
        ),
        "exit_status": str(p.exit_status),
        "compile": {lang: list(flags) for lang, flags in sorted(p.compile.items())},
        "checker": p.checker.label(),
        "tolerance": p.tolerance,
        "oracle": OracleEntry(
            rule=str(p.oracle.rule), min_success=p.oracle.min_success, references=a.references
        ),
        "validator": a.legality.validator or None,
        "validator_gate": GateEntry(passed=gate.passed, reasons=list(gate.reasons))
        if gate
        else None,
        "pool": a.config.pool,
        "pool_size": len(a.submissions),
        "submissions": a.submissions,
        "build_errors": a.build_errors,
        "official_verdicts": a.official_verdicts,
        "tle_rejudged": _tle_rejudged(a),
        "no_gold_reasons": {s: g.reason for s, g in a.golds.items() if g.reason},
        "arms": {name: ProblemArmEntry.of(r) for name, r in a.arms.items()},
        "certified": len(a.ledger),
    }


def problem_entry(
    a: ProblemAudit, extras: Callable[[ProblemAudit], Mapping[str, Any]] | None = None
) -> ProblemEntry:
    """One problem's entry: the chain's fields, then what ``extras(a)`` adds (a key the chain
    already has is an error: extras add figures, they never replace the chain's own)."""
    entry = _chain_entry(a)
    if extras is not None:
        added = dict(extras(a))
        clash = sorted(set(added) & set(entry))
        if clash:
            raise ValueError(f"problem extras would replace results.json keys: {clash}")
        entry.update(added)
    return ProblemEntry(**entry)
