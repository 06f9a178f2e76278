"""The chain's last stage (11): per arm the kill matrix, cov@k and the funnel; the ledger's
rows and the retractions. Kept apart from the stages (:mod:`.chain`) because it only reads what
they wrote: every figure of the outputs is computed here from the records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from suitebench.audit.arms import OFFICIAL, Arm
from suitebench.audit.harness import HarnessError
from suitebench.audit.legality import LegalityReport
from suitebench.audit.records import (
    CRASH,
    Flag,
    Funnel,
    Gold,
    GoldStatus,
    Judged,
    LedgerRow,
    Legality,
    Retraction,
    Stage,
    Verdict,
)
from suitebench.audit.runs import file_sha256
from suitebench.audit.state import AuditConfig, ChainState
from suitebench.metrics.cov_at_k import cov_at_k_curve
from suitebench.model.problem import DEFAULT_DEFINES, Problem

__all__ = ["ArmResult", "ProblemAudit", "compile_label", "tabulate"]


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
    harness_errors: list[HarnessError] = field(default_factory=list)


def compile_label(
    table: Mapping[str, Sequence[str]], defines: Sequence[str] = DEFAULT_DEFINES
) -> str:
    """A problem's ``[compile]`` table in one cell: ``c=-O0 -std=gnu99`` (languages joined by
    ``"; "``, then ``defines=...`` where they are not the default ``ONLINE_JUDGE``), or
    ``default`` when every language keeps its default flags and macros."""
    cells = [f"{lang}={' '.join(flags)}" for lang, flags in sorted(table.items())]
    if tuple(defines) != DEFAULT_DEFINES:
        cells.append(f"defines={' '.join(defines) or 'none'}")
    return "; ".join(cells) or "default"


def _head(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")[:80].replace("\n", "\\n")


def tabulate(c: ChainState) -> ProblemAudit:
    """11. per arm: kill matrix, cov@k, funnel, ledger rows and retractions."""
    assert c.legality is not None
    problem, config = c.problem, c.config
    subs = [n for n, _ in c.ok_pool]
    audit = ProblemAudit(
        problem,
        config,
        subs,
        {n: b.message[:300] for n, b in c.pool if not b.ok},
        c.legality,
        c.golds,
        c.inputs,
        c.cells,
        c.official_verdicts,
        c.flags,
        references=[n for n, _ in c.refs],
        harness_errors=c.harness.errors(),
    )
    sub_sha = {
        n: file_sha256(p) for (n, _), p in zip(c.pool, problem.pools[config.pool], strict=True)
    }
    scored_set = set(c.scored)
    for a in c.arms:
        arm_scored = [x.sha256 for x in a.inputs if x.sha256 in scored_set]
        mat, killed, tle_only = _kill_matrix(c, arm_scored, subs)
        funnel = _examine(c, a, subs, sub_sha, audit)
        audit.arms[a.name] = ArmResult(
            a,
            arm_scored,
            mat,
            cov_at_k_curve(mat, config.ks),
            killed,
            tle_only,
            funnel,
            _arm_counts(c, a, arm_scored),
        )
    return audit


def _kill_matrix(
    c: ChainState, arm_scored: list[str], subs: list[str]
) -> tuple[np.ndarray, list[str], list[str]]:
    """An arm's kill matrix (scored inputs x submissions), the submissions it kills and those
    it only times out."""
    mat = np.array(
        [[c.cells[(n, s)].verdict.is_kill for n in subs] for s in arm_scored], dtype=bool
    ).reshape(len(arm_scored), len(subs))
    killed = [n for j, n in enumerate(subs) if mat[:, j].any()]
    tle_only = [
        n
        for n in subs
        if n not in killed and any(c.cells[(n, s)].verdict is Verdict.TLE for s in arm_scored)
    ]
    return mat, killed, tle_only


def _examine(
    c: ChainState, a: Arm, subs: list[str], sub_sha: dict[str, str], audit: ProblemAudit
) -> Funnel:
    """The funnel of one arm: each flagged submission's examined inputs, counted stage by
    stage; every withdrawn flag becomes a retraction, every certified one a ledger row (both
    appended to ``audit``)."""
    assert c.legality is not None
    flagged = reproducible = corrected = certified = new = off_tle = 0
    withdrawn_by: dict[str, int] = {}
    certified_by: dict[str, int] = {}
    for n in subs:
        if (a.name, n) not in c.candidates:
            continue
        flagged += 1
        if a.name != OFFICIAL and c.official_verdicts[n] == str(Verdict.TLE):
            off_tle += 1
        fl = [(iid, c.flags[(n, s)]) for iid, s in c.candidates[(a.name, n)]]
        if any(f.determinism and f.determinism.certifiable for _, f in fl):
            reproducible += 1
        if any(
            f.withdrawn in (None, Stage.LEGALITY) and f.determinism and f.determinism.certifiable
            for _, f in fl
        ):
            corrected += 1
        for iid, f in fl:
            if f.withdrawn is not None:
                withdrawn_by[str(f.withdrawn)] = withdrawn_by.get(str(f.withdrawn), 0) + 1
                audit.retractions.append(_retraction(c, a, n, iid, f))
        survivor = next(((iid, f) for iid, f in fl if f.withdrawn is None), None)
        if survivor is None:
            continue
        certified += 1
        iid, f = survivor
        basis = c.legality.basis_of(f.input_sha256)
        certified_by[basis] = certified_by.get(basis, 0) + 1
        is_new = a.name != OFFICIAL and c.official_verdicts[n] in (str(Verdict.AC), "unknown")
        new += is_new
        audit.ledger.append(_ledger_row(c, a, n, sub_sha[n], iid, f, is_new))
    return Funnel(
        flagged, off_tle, reproducible, corrected, certified, new, withdrawn_by, certified_by
    )


def _retraction(c: ChainState, a: Arm, sub: str, input_id: str, f: Flag) -> Retraction:
    assert f.withdrawn is not None
    return Retraction(
        c.problem.id,
        a.name,
        sub,
        input_id,
        f.input_sha256,
        str(f.verdict),
        str(f.withdrawn),
        f.reason,
        _head(f.got) if f.verdict not in CRASH else "",
    )


def _ledger_row(
    c: ChainState, a: Arm, sub: str, sub_sha: str, input_id: str, f: Flag, is_new: bool
) -> LedgerRow:
    """The ledger's row of a certified flag: everything needed to re-check it from scratch."""
    assert c.legality is not None
    problem, legality = c.problem, c.legality
    g = c.golds[f.input_sha256]
    return LedgerRow(
        problem=problem.id,
        problem_dir=str(problem.root),
        arm=a.name,
        pool=c.config.pool,
        submission_id=sub,
        submission_sha256=sub_sha,
        official_verdict=c.official_verdicts[sub],
        new_finding=is_new,
        input_id=input_id,
        input_sha256=f.input_sha256,
        validator=legality.validator,
        validator_id=legality.validator_id,
        legality=str(legality.verdicts[f.input_sha256]),
        legality_basis=legality.basis_of(f.input_sha256),
        oracle_rule=f"{problem.oracle.rule}/min{problem.oracle.min_success}",
        oracle_references=";".join(g.references),
        expected_head=_head(g.answer or b""),
        expected_sha256=g.sha256,
        got_head=_head(f.got) if f.verdict not in CRASH else "",
        got_sha256=f.got_sha256,
        verdict=str(f.verdict),
        determinism=str(f.determinism),
        consensus=f.consensus,
        brute=f.brute,
        exit_status=str(problem.exit_status),
        compile_flags=compile_label(problem.compile, problem.defines),
    )


def _arm_counts(c: ChainState, a: Arm, arm_scored: list[str]) -> dict[str, int]:
    """An arm's inputs counted by what became of them (``counts`` in results.json)."""
    assert c.legality is not None
    verdicts = c.legality.verdicts
    return {
        "inputs": len(a.inputs),
        "duplicates": a.duplicates,
        "failed_seeds": len(a.failed_seeds),
        **{str(lg): sum(verdicts[x.sha256] is lg for x in a.inputs) for lg in Legality},
        "no_gold": sum(
            1
            for x in a.inputs
            if x.sha256 in c.golds and c.golds[x.sha256].status is GoldStatus.NO_GOLD
        ),
        "scored": len(arm_scored),
    }
