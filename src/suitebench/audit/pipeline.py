"""Audit many problems and write the outputs: results.json, kill matrices, ledger, funnel.

Every figure in ``results.json`` is traceable: per problem and arm the kill matrix
(``<problem>/kills.csv`` long form and ``<problem>/kills.npz``, a uint8 verdict matrix with its
id lists), legal / illegal / unmeasured / no-gold input counts, the killed submissions, cov@k
at the paper's budgets and the funnel of the paper's Table 1; per arm over all problems the
micro-pooled coverage and the macro recall; and the versions, limits and backend used.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from suitebench import __version__
from suitebench.audit.arms import ArmSource
from suitebench.audit.chain import AuditConfig, ProblemAudit, audit_problems
from suitebench.audit.harness import HarnessError
from suitebench.audit.judge import judge_limits
from suitebench.audit.ledger import write_ledger, write_retractions
from suitebench.audit.records import Funnel, Judged, Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.audit.tables import compile_label
from suitebench.metrics.cov_at_k import macro_recall, micro_coverage
from suitebench.model.problem import Problem, load_problem
from suitebench.run.outcome import Backend
from suitebench.run.toolchain import Language, ToolchainError, program_from_path, toolchain_version

__all__ = ["AuditResult", "format_funnel", "run_audit"]


@dataclass
class AuditResult:
    """What :func:`run_audit` found and where it wrote it."""

    audits: list[ProblemAudit]
    results: dict[str, Any]
    out_dir: Path | None
    funnel: dict[str, Funnel] = field(default_factory=dict)

    @property
    def ledger_rows(self) -> int:
        return sum(len(a.ledger) for a in self.audits)

    @property
    def harness_errors(self) -> list[HarnessError]:
        """Every broken program of the harness, problem by problem (see :mod:`.harness`)."""
        return [e for a in self.audits for e in a.harness_errors]


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _problem_json(
    a: ProblemAudit, extras: Callable[[ProblemAudit], Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    entry = _problem_entry(a)
    if extras is not None:
        added = dict(extras(a))
        clash = sorted(set(added) & set(entry))
        if clash:
            raise ValueError(f"problem extras would replace results.json keys: {clash}")
        entry.update(added)
    return entry


def _problem_entry(a: ProblemAudit) -> dict[str, Any]:
    p = a.problem
    lim = judge_limits(p)
    arms: dict[str, Any] = {}
    for name, r in a.arms.items():
        arms[name] = {
            "source": r.arm.source,
            "counts": r.counts,
            "killed": len(r.killed),
            "killed_submissions": r.killed,
            "tle_only_submissions": r.tle_only,
            "cov_at_k": {str(k): _finite(v) for k, v in r.cov_at_k.items()},
            "funnel": r.funnel.to_dict(),
        }
    no_gold = {s: g.reason for s, g in a.golds.items() if g.reason}
    return {
        "problem": p.id,
        "problem_dir": str(p.root),
        "limits": {
            "time_limit": p.time_limit,
            "allowance": p.allowance,
            "memory_limit_mb": p.memory_limit,
            "judge": lim.to_dict(),
            "brute_time_limit": p.brute_time_limit,
        },
        "exit_status": str(p.exit_status),
        "compile": {lang: list(flags) for lang, flags in sorted(p.compile.items())},
        "checker": p.checker.label(),
        "tolerance": p.tolerance,
        "oracle": {
            "rule": str(p.oracle.rule),
            "min_success": p.oracle.min_success,
            "references": a.references,
        },
        "validator": a.legality.validator or None,
        "validator_gate": a.legality.gate.to_dict() if a.legality.gate else None,
        "pool": a.config.pool,
        "pool_size": len(a.submissions),
        "submissions": a.submissions,
        "build_errors": a.build_errors,
        "official_verdicts": a.official_verdicts,
        "tle_rejudged": _tle_rejudged(a),
        "no_gold_reasons": no_gold,
        "arms": arms,
        "certified": len(a.ledger),
    }


#: Columns of ``<problem>/kills.csv``: the cell, its run's times (and those of the first run
#: when a wall-clock TLE was re-judged), and the judge's rules that decided it.
KILLS_COLUMNS = [
    "problem",
    "arm",
    "submission_id",
    "input_id",
    "input_sha256",
    "legality",
    "verdict",
    "wall_time",
    "cpu_time",
    "first_wall_time",
    "first_cpu_time",
    "exit_status",
    "compile_flags",
]


def _times(j: Judged | None) -> list[str]:
    if j is None:
        return ["", "", "", ""]
    first = ["", ""] if j.tle_first is None else [f"{t:.3f}" for t in j.tle_first]
    return [f"{j.wall_time:.3f}", f"{j.cpu_time:.3f}", *first]


def _tle_rejudged(a: ProblemAudit) -> list[dict[str, Any]]:
    """The judge's cells whose first run was a wall-clock TLE with little CPU, re-judged."""
    return [
        {
            "submission_id": n,
            "input_sha256": s,
            "verdict": str(j.verdict),
            "wall_time": round(j.wall_time, 3),
            "cpu_time": round(j.cpu_time, 3),
            "first_wall_time": round(j.tle_first[0], 3),
            "first_cpu_time": round(j.tle_first[1], 3),
        }
        for (n, s), j in a.cells.items()
        if j.tle_first is not None
    ]


def _write_matrix(a: ProblemAudit, out: Path) -> None:
    d = out / a.problem.id
    d.mkdir(parents=True, exist_ok=True)
    shas = list(a.inputs)
    col = {s: i for i, s in enumerate(shas)}
    mat = np.full((len(a.submissions), len(shas)), Verdict.SKIP.code, dtype=np.uint8)
    for i, n in enumerate(a.submissions):
        for s in shas:
            j = a.cells.get((n, s))
            if j is not None:
                mat[i, col[s]] = j.verdict.code
    arrays: dict[str, Any] = {
        "verdicts": mat,
        "submissions": np.array(a.submissions, dtype=str),
        "inputs": np.array(shas, dtype=str),
        "legality": np.array([str(a.legality.verdicts[s]) for s in shas], dtype=str),
        "verdict_names": np.array([str(v) for v in Verdict], dtype=str),
        "exit_status": np.array(str(a.problem.exit_status)),
        "compile_flags": np.array(compile_label(a.problem.compile)),
    }
    judge_rules = [str(a.problem.exit_status), compile_label(a.problem.compile)]
    with (d / "kills.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(KILLS_COLUMNS)
        for name, r in a.arms.items():
            arrays[f"arm_{name}"] = np.array([col[c.sha256] for c in r.arm.inputs], dtype=np.int64)
            arrays[f"arm_{name}_ids"] = np.array([c.input_id for c in r.arm.inputs], dtype=str)
            for c in r.arm.inputs:
                for n in a.submissions:
                    j = a.cells.get((n, c.sha256))
                    w.writerow(
                        [
                            a.problem.id,
                            name,
                            n,
                            c.input_id,
                            c.sha256,
                            str(a.legality.verdicts[c.sha256]),
                            str(j.verdict) if j else str(Verdict.SKIP),
                            *_times(j),
                            *judge_rules,
                        ]
                    )
    np.savez_compressed(d / "kills.npz", **arrays)


def _toolchains(audits: Sequence[ProblemAudit]) -> dict[str, str]:
    """Version of every toolchain that built a program of the audit."""
    langs: set[Language] = set()
    for a in audits:
        p = a.problem
        paths = [*p.references, *p.brute, *[f for pool in p.pools.values() for f in pool]]
        paths += [x for x in (p.validator, p.generator, p.checker.program) if x is not None]
        for path in paths:
            with contextlib.suppress(ToolchainError):
                langs.add(program_from_path(path, p.language_of(path)).language)
    return {str(lang): toolchain_version(lang) for lang in sorted(langs)}


_BASIS_WORDS = {"validator": "the validator", "problem_tests": "definition (own tests)"}


def format_funnel(funnel: dict[str, Funnel]) -> str:
    """The paper's Table 1 per arm, as plain text."""
    lines = []
    for arm, f in funnel.items():
        by = ", ".join(f"{k} {v}" for k, v in sorted(f.withdrawn_by.items())) or "none"
        lines += [
            f"arm {arm}",
            f"  flagged submissions               {f.flagged:6d}",
            f"    of which official TLE catches   {f.official_tle:6d}  (marked, not new)",
            f"  reproducible (DET_WA / DET_RE)    {f.reproducible:6d}",
            f"  after corrections                 {f.after_corrections:6d}",
            f"  certified (legal inputs)          {f.certified:6d}",
            *(
                f"    legal by {_BASIS_WORDS.get(k, k):<23s}{v:6d}"
                for k, v in sorted(f.certified_by.items())
            ),
            f"    of which new findings           {f.new_findings:6d}",
            f"  withdrawn flags by stage: {by}",
        ]
    return "\n".join(lines) + "\n"


def run_audit(
    problems: Sequence[Path | Problem],
    sources: Sequence[ArmSource],
    engine: AuditEngine,
    *,
    config: AuditConfig | None = None,
    out_dir: Path | None = None,
    base: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    problem_extras: Callable[[ProblemAudit], Mapping[str, Any]] | None = None,
) -> AuditResult:
    """Audit every problem with every arm, then write the outputs to ``out_dir`` (if given).

    ``progress(done, total)`` counts runs (stored or executed); the total grows as the chain
    plans each stage, since later stages depend on what earlier ones found.

    ``problem_extras(audit)``, if given, is called once per problem after its audit and before
    ``results.json`` is written; the keys it returns are added to that problem's entry (audits
    of the chain itself, such as the validator fuzz, report there). A key that the entry already
    has is an error: extras add figures, they never replace the chain's own.
    """
    config = config or AuditConfig()
    if progress is not None:
        engine.progress = progress
    loaded = [p if isinstance(p, Problem) else load_problem(p) for p in problems]
    ids = [p.id for p in loaded]
    if len(set(ids)) != len(ids):
        raise ValueError(f"problem ids repeat: {ids}")
    audits = audit_problems(loaded, sources, config, engine, base=base)

    arm_names: list[str] = []
    for a in audits:
        arm_names += [n for n in a.arms if n not in arm_names]
    per_arm: dict[str, Any] = {}
    funnel: dict[str, Funnel] = {}
    for name in arm_names:
        mats = [a.arms[name].kill_matrix for a in audits if name in a.arms]
        f = Funnel()
        for a in audits:
            if name in a.arms:
                f = f + a.arms[name].funnel
        funnel[name] = f
        per_arm[name] = {
            "problems": sum(name in a.arms for a in audits),
            "micro_coverage": _finite(micro_coverage(mats)),
            "macro_recall": _finite(macro_recall(mats)),
            "cov_at_k": {str(k): _finite(micro_coverage(mats, k)) for k in config.ks},
            "macro_cov_at_k": {str(k): _finite(macro_recall(mats, k)) for k in config.ks},
            "certified": f.certified,
            "funnel": f.to_dict(),
        }
    results: dict[str, Any] = {
        "suitebench_version": __version__,
        "python": platform.python_version(),
        "backend": str(engine.backend),
        "unsandboxed": engine.backend is Backend.PLAIN,
        "toolchains": _toolchains(audits),
        "pool": config.pool,
        "consensus_pool": config.consensus_pool,
        "max_candidates": config.max_candidates,
        "ks": list(config.ks),
        "basis": "legal-or-unmeasured inputs with gold; kills are WA/PE/RE/MLE/OLE (excl-TLE)",
        "runs": {"executed": engine.executed_runs, "cached": engine.cached_runs},
        "harness_errors": [e.to_dict() for a in audits for e in a.harness_errors],
        "arms": per_arm,
        "problems": {a.problem.id: _problem_json(a, problem_extras) for a in audits},
        "certified": sum(len(a.ledger) for a in audits),
    }
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        rows = [r for a in audits for r in a.ledger]
        retr = [r for a in audits for r in a.retractions]
        needed = {r.input_sha256 for r in rows} | {r.input_sha256 for r in retr}
        inputs = {s: d for a in audits for s, d in a.inputs.items() if s in needed}
        write_ledger(rows, out_dir, inputs)
        write_retractions(retr, out_dir)
        for a in audits:
            _write_matrix(a, out_dir)
        (out_dir / "funnel.txt").write_text(format_funnel(funnel), encoding="utf-8")
        (out_dir / "results.json").write_text(
            json.dumps(results, indent=1) + "\n", encoding="utf-8"
        )
    return AuditResult(audits, results, out_dir, funnel)
