"""The certification chain, stage by stage, for one problem and then for many.

Stages (each reads and writes records, each visible in the outputs):

1. arms            -> the inputs of every arm, deduplicated by sha256
2. legality        -> validator quality gate, then legal / illegal / unmeasured per input
3. consensus_oracle-> gold per non-illegal input, or no_gold (skipped and counted)
4. judge           -> the kill matrix: every pool submission x every scored input
5. flags           -> per arm and submission, its killing inputs (logic kills, excl-TLE),
                      examined in rounds until one is certified
6. determinism     -> three re-judges: DET_WA / DET_RE / NONDET / NOT_REPRODUCED
7. consensus       -> optional: a larger accepted pool votes on each flagged input
8. brute           -> brute-force solutions settle gold-vs-submission disputes
9. tolerance       -> float-tolerance artifacts are withdrawn
10. legality cert. -> only inputs the quality-gated validator accepted certify a kill
11. ledger         -> one row per certified (arm, submission); retractions keep the rest

Official-TLE reconciliation: each submission's verdict on the official tests is recorded; a
finding the official tests already catch (as TLE or otherwise) is marked ``new_finding=false``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from suitebench.audit.arms import OFFICIAL, Arm, ArmSource, problem_arms, resolve_arm
from suitebench.audit.brute import brute_stage
from suitebench.audit.checkers import Checker
from suitebench.audit.consensus import consensus_stage
from suitebench.audit.determinism import determinism_stage
from suitebench.audit.judge import JudgeTask, judge_limits, judge_many
from suitebench.audit.legality import LegalityReport, certify_legality
from suitebench.audit.oracle import consensus_oracle
from suitebench.audit.records import (
    CRASH,
    Flag,
    Funnel,
    Gold,
    GoldStatus,
    Judged,
    Legality,
    Retraction,
    Stage,
    Verdict,
)
from suitebench.audit.runs import Engine, file_sha256
from suitebench.audit.tolerance import tolerance_stage
from suitebench.metrics.coverage import DEFAULT_KS, cov_at_k_curve
from suitebench.model.problem import Problem
from suitebench.run.outcome import sha256_bytes
from suitebench.run.toolchain import Built

__all__ = [
    "AuditConfig",
    "AuditError",
    "LedgerRow",
    "ProblemAudit",
    "audit_problem",
]

DEFAULT_MAX_CANDIDATES = 4


class AuditError(ValueError):
    """The audit cannot start: a pool or arm that does not exist, named with the problem."""


@dataclass(frozen=True)
class AuditConfig:
    """What to audit: the pool, the optional consensus pool, the budgets of the report."""

    pool: str = "accepted"
    consensus_pool: str | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    ks: tuple[int, ...] = DEFAULT_KS


@dataclass(frozen=True)
class LedgerRow:
    """One certified finding: everything needed to re-check it from scratch."""

    problem: str
    problem_dir: str
    arm: str
    pool: str
    submission_id: str
    submission_sha256: str
    official_verdict: str
    new_finding: bool
    input_id: str
    input_sha256: str
    validator: str
    validator_id: str
    legality: str
    oracle_rule: str
    oracle_references: str
    expected_head: str
    expected_sha256: str
    got_head: str
    got_sha256: str
    verdict: str
    determinism: str
    consensus: str
    brute: str

    @classmethod
    def columns(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]


@dataclass
class ArmResult:
    arm: Arm
    scored: list[str]  # input sha256s that carry a gold and are not illegal, in arm order
    kill_matrix: np.ndarray  # bool, scored inputs x pool submissions
    cov_at_k: dict[int, float]
    killed: list[str]
    tle_only: list[str]
    funnel: Funnel
    counts: dict[str, int]


@dataclass
class ProblemAudit:
    """Everything the chain found on one problem."""

    problem: Problem
    config: AuditConfig
    submissions: list[str]  # pool submissions that built (the kill matrix's columns)
    build_errors: dict[str, str]
    legality: LegalityReport
    golds: dict[str, Gold]
    inputs: dict[str, bytes]  # sha256 -> content, first-appearance order
    cells: dict[tuple[str, str], Judged]  # (submission, input sha256) -> verdict
    official_verdicts: dict[str, str]
    flags: dict[tuple[str, str], Flag]
    arms: dict[str, ArmResult] = field(default_factory=dict)
    ledger: list[LedgerRow] = field(default_factory=list)
    retractions: list[Retraction] = field(default_factory=list)
    references: list[str] = field(default_factory=list)


def _head(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")[:80].replace("\n", "\\n")


def _official_verdict(sub: str, official: Arm | None, cells: dict[tuple[str, str], Judged]) -> str:
    """The submission's re-judged verdict on the official tests (a logic kill first, then TLE)."""
    if official is None or not official.inputs:
        return "unknown"
    verdicts = [cells[(sub, c.sha256)].verdict for c in official.inputs if (sub, c.sha256) in cells]
    for v in verdicts:
        if v.is_kill:
            return str(v)
    if Verdict.TLE in verdicts:
        return str(Verdict.TLE)
    if verdicts and all(v is Verdict.AC for v in verdicts):
        return str(Verdict.AC)
    return "unknown" if not verdicts else str(next(v for v in verdicts if v is not Verdict.AC))


def _legality_certificate(f: Flag, legality: LegalityReport) -> Flag:
    """Only an input the quality-gated validator accepted certifies a kill."""
    lg = legality.verdicts[f.input_sha256]
    if f.withdrawn is not None or lg is Legality.LEGAL:
        return f
    if lg is Legality.NO_VALIDATOR:
        why = "the problem has no validator"
    elif legality.gate and not legality.gate.passed:
        why = f"{lg}: validator failed its quality gate ({'; '.join(legality.gate.reasons)})"
    else:
        why = f"{lg}: the validator could not decide"
    return dataclasses.replace(f, withdrawn=Stage.LEGALITY, reason=why)


def audit_problem(
    problem: Problem,
    sources: Sequence[ArmSource],
    config: AuditConfig,
    engine: Engine,
    *,
    base: Path | None = None,
) -> ProblemAudit:
    """Run the whole certification chain on one problem."""
    if config.pool not in problem.pools:
        raise AuditError(
            f"problem {problem.id}: no pool {config.pool!r} "
            f"(pools: {', '.join(problem.pools) or 'none'})"
        )
    if config.consensus_pool is not None and config.consensus_pool not in problem.pools:
        raise AuditError(
            f"problem {problem.id}: no consensus pool {config.consensus_pool!r} "
            f"(pools: {', '.join(problem.pools) or 'none'})"
        )
    base = base or Path.cwd()

    # Build everything (in parallel, cached by content hash).
    extra = [x for x in (problem.validator, problem.checker.program) if x is not None]
    engine.build_all(
        [
            *problem.references,
            *problem.pools[config.pool],
            *problem.brute,
            *(problem.pools[config.consensus_pool] if config.consensus_pool else ()),
            *extra,
        ]
    )

    def built(paths: Sequence[Path]) -> list[tuple[str, Built]]:
        return [(problem.rel(p), engine.build(p)) for p in paths]

    refs = built(problem.references)
    pool = built(problem.pools[config.pool])
    brutes = built(problem.brute)
    cons = built(problem.pools[config.consensus_pool]) if config.consensus_pool else []
    checker = Checker(problem.checker, engine)

    # 1. arms
    arms = problem_arms(problem) + [resolve_arm(s, problem, engine, base) for s in sources]
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise AuditError(f"problem {problem.id}: arm names repeat: {names}")
    inputs: dict[str, bytes] = {}
    for a in arms:
        for c in a.inputs:
            inputs.setdefault(c.sha256, c.data)
    shas = list(inputs)

    # 2. legality
    legality = certify_legality(problem, [inputs[s] for s in shas], engine)

    # 3. consensus_oracle on every input the validator does not reject
    limits = judge_limits(problem)
    candidates = [s for s in shas if legality.verdicts[s] is not Legality.ILLEGAL]
    golds = consensus_oracle(
        problem, [inputs[s] for s in candidates], refs, limits, checker, engine
    )
    scored = [s for s in candidates if golds[s].status is GoldStatus.GOLD]
    gold_bytes = {s: golds[s].answer or b"" for s in scored}

    # 4. judge: the kill matrix
    ok_pool = [(n, b) for n, b in pool if b.ok]
    tasks = [JudgeTask(b, inputs[s], gold_bytes[s]) for _, b in ok_pool for s in scored]
    judged = judge_many(tasks, limits, checker, engine)
    cells: dict[tuple[str, str], Judged] = {}
    it = iter(judged)
    for n, _ in ok_pool:
        for s in scored:
            cells[(n, s)] = next(it)
    subs = [n for n, _ in ok_pool]
    official = next((a for a in arms if a.name == OFFICIAL), None)
    official_verdicts = {n: _official_verdict(n, official, cells) for n in subs}

    # 5. flags: per arm and submission, its killing inputs in emission order, examined in
    # rounds of ``max_candidates`` until one is certified or none is left (so a wrong gold on
    # an arm's first inputs cannot hide a real bug further down).
    scored_set = set(scored)
    killing: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a in arms:
        for n in subs:
            kills = [
                (c.input_id, c.sha256)
                for c in a.inputs
                if c.sha256 in scored_set and cells[(n, c.sha256)].verdict.is_kill
            ]
            if kills:
                killing[(a.name, n)] = kills
    per_arm_candidates: dict[tuple[str, str], list[tuple[str, str]]] = {k: [] for k in killing}
    flags: dict[tuple[str, str], Flag] = {}
    subs_built = dict(ok_pool)
    brute_limits = judge_limits(problem, time_limit=problem.brute_time_limit)
    step = max(1, config.max_candidates)
    while True:
        fresh: dict[tuple[str, str], Flag] = {}
        for key, kills in killing.items():
            chosen = per_arm_candidates[key]
            done = any(flags[(key[1], s)].withdrawn is None for _, s in chosen)
            if done or len(chosen) == len(kills):
                continue
            more = kills[len(chosen) : len(chosen) + step]
            chosen.extend(more)
            for _, s in more:
                n = key[1]
                if (n, s) not in flags and (n, s) not in fresh:
                    j = cells[(n, s)]
                    fresh[(n, s)] = Flag(problem.id, n, s, j.verdict, j.output)
        if not fresh:
            break
        # 6-9. determinism, consensus correction, brute force, tolerance
        flist = list(fresh.values())
        flist = determinism_stage(flist, subs_built, inputs, gold_bytes, limits, checker, engine)
        if cons:
            flist = consensus_stage(flist, cons, inputs, gold_bytes, limits, checker, engine)
        flist = brute_stage(flist, brutes, inputs, gold_bytes, brute_limits, checker, engine)
        flist = tolerance_stage(flist, gold_bytes, problem.tolerance)
        # 10. the legality certificate
        for f in flist:
            flags[(f.submission, f.input_sha256)] = _legality_certificate(f, legality)

    audit = ProblemAudit(
        problem,
        config,
        subs,
        {n: b.message[:300] for n, b in pool if not b.ok},
        legality,
        golds,
        inputs,
        cells,
        official_verdicts,
        flags,
        references=[n for n, _ in refs],
    )
    sub_sha = {
        n: file_sha256(p) for (n, _), p in zip(pool, problem.pools[config.pool], strict=True)
    }

    # 11. per arm: kill matrix, cov@k, funnel, ledger, retractions
    for a in arms:
        arm_scored = [c.sha256 for c in a.inputs if c.sha256 in scored_set]
        mat = np.array(
            [[cells[(n, s)].verdict.is_kill for n in subs] for s in arm_scored], dtype=bool
        ).reshape(len(arm_scored), len(subs))
        killed = [n for j, n in enumerate(subs) if mat[:, j].any()]
        tle_only = [
            n
            for n in subs
            if n not in killed and any(cells[(n, s)].verdict is Verdict.TLE for s in arm_scored)
        ]
        flagged = reproducible = corrected = certified = new = off_tle = 0
        withdrawn_by: dict[str, int] = {}
        for n in subs:
            if (a.name, n) not in per_arm_candidates:
                continue
            chosen = per_arm_candidates[(a.name, n)]
            flagged += 1
            if a.name != OFFICIAL and official_verdicts[n] == str(Verdict.TLE):
                off_tle += 1
            fl = [(iid, flags[(n, s)]) for iid, s in chosen]
            if any(f.determinism and f.determinism.certifiable for _, f in fl):
                reproducible += 1
            if any(
                f.withdrawn in (None, Stage.LEGALITY)
                and f.determinism
                and f.determinism.certifiable
                for _, f in fl
            ):
                corrected += 1
            for iid, f in fl:
                if f.withdrawn is not None:
                    withdrawn_by[str(f.withdrawn)] = withdrawn_by.get(str(f.withdrawn), 0) + 1
                    audit.retractions.append(
                        Retraction(
                            problem.id,
                            a.name,
                            n,
                            iid,
                            f.input_sha256,
                            str(f.verdict),
                            str(f.withdrawn),
                            f.reason,
                        )
                    )
            survivor = next(((iid, f) for iid, f in fl if f.withdrawn is None), None)
            if survivor is None:
                continue
            certified += 1
            iid, f = survivor
            is_new = a.name != OFFICIAL and official_verdicts[n] in (str(Verdict.AC), "unknown")
            new += is_new
            g = golds[f.input_sha256]
            audit.ledger.append(
                LedgerRow(
                    problem=problem.id,
                    problem_dir=str(problem.root),
                    arm=a.name,
                    pool=config.pool,
                    submission_id=n,
                    submission_sha256=sub_sha[n],
                    official_verdict=official_verdicts[n],
                    new_finding=is_new,
                    input_id=iid,
                    input_sha256=f.input_sha256,
                    validator=legality.validator,
                    validator_id=legality.validator_id,
                    legality=str(legality.verdicts[f.input_sha256]),
                    oracle_rule=f"{problem.oracle.rule}/min{problem.oracle.min_success}",
                    oracle_references=";".join(g.references),
                    expected_head=_head(g.answer or b""),
                    expected_sha256=g.sha256,
                    got_head=_head(f.got) if f.verdict not in CRASH else "",
                    got_sha256=sha256_bytes(f.got),
                    verdict=str(f.verdict),
                    determinism=str(f.determinism),
                    consensus=f.consensus,
                    brute=f.brute,
                )
            )
        counts = {
            "inputs": len(a.inputs),
            "duplicates": a.duplicates,
            "failed_seeds": len(a.failed_seeds),
            **{
                str(lg): sum(legality.verdicts[c.sha256] is lg for c in a.inputs) for lg in Legality
            },
            "no_gold": sum(
                1
                for c in a.inputs
                if c.sha256 in golds and golds[c.sha256].status is GoldStatus.NO_GOLD
            ),
            "scored": len(arm_scored),
        }
        audit.arms[a.name] = ArmResult(
            a,
            arm_scored,
            mat,
            cov_at_k_curve(mat, config.ks),
            killed,
            tle_only,
            Funnel(flagged, off_tle, reproducible, corrected, certified, new, withdrawn_by),
            counts,
        )
    return audit
