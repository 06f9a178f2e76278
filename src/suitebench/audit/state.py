"""What one problem's audit holds while its stages run, and what the audit is asked to do.

Kept apart from the stages (:mod:`.chain`) and from the tables they end in (:mod:`.tables`):
both read this state, so it sits below them and neither imports the other's module to name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from suitebench.audit.arms import Arm, ArmSource
from suitebench.audit.checkers import Checker
from suitebench.audit.harness import HarnessLog
from suitebench.audit.judge import judge_limits
from suitebench.audit.legality import LegalityReport
from suitebench.audit.records import Flag, Gold, Judged
from suitebench.audit.runs import AuditEngine
from suitebench.metrics.cov_at_k import DEFAULT_KS
from suitebench.model.problem import ExitStatus, Problem
from suitebench.run.outcome import Limits
from suitebench.run.toolchain import Built

__all__ = ["DEFAULT_MAX_CANDIDATES", "AuditConfig", "ChainState"]

DEFAULT_MAX_CANDIDATES = 4


@dataclass(frozen=True)
class AuditConfig:
    """What to audit: the pool, the optional consensus pool, the budgets of the report."""

    pool: str = "accepted"
    consensus_pool: str | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    ks: tuple[int, ...] = DEFAULT_KS


@dataclass
class ChainState:
    """One problem's audit in progress: what each stage read and wrote."""

    problem: Problem
    sources: Sequence[ArmSource]
    config: AuditConfig
    engine: AuditEngine
    base: Path
    refs: list[tuple[str, Built]] = field(default_factory=list)
    pool: list[tuple[str, Built]] = field(default_factory=list)
    brutes: list[tuple[str, Built]] = field(default_factory=list)
    cons: list[tuple[str, Built]] = field(default_factory=list)
    checker: Checker | None = None
    arms: list[Arm] = field(default_factory=list)
    inputs: dict[str, bytes] = field(default_factory=dict)
    legality: LegalityReport | None = None
    golds: dict[str, Gold] = field(default_factory=dict)
    scored: list[str] = field(default_factory=list)
    gold_bytes: dict[str, bytes] = field(default_factory=dict)
    cells: dict[tuple[str, str], Judged] = field(default_factory=dict)
    official_verdicts: dict[str, str] = field(default_factory=dict)
    candidates: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    flags: dict[tuple[str, str], Flag] = field(default_factory=dict)
    harness: HarnessLog = field(init=False)

    def __post_init__(self) -> None:
        self.harness = HarnessLog(self.problem.id)

    @property
    def limits(self) -> Limits:
        return judge_limits(self.problem)

    @property
    def ignore_exit(self) -> bool:
        return self.problem.exit_status is ExitStatus.IGNORE

    @property
    def ok_pool(self) -> list[tuple[str, Built]]:
        return [(n, b) for n, b in self.pool if b.ok]
