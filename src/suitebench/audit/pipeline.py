"""Audit many problems and write the outputs: results.json, kill matrices, ledger, funnel.

The whole audit of a problem set: the chain on every problem (:mod:`.chain`), then every
output written. ``results.json`` is built through its typed records (:mod:`.results`).

Every figure in ``results.json`` is traceable: per problem and arm the kill matrix
(``<problem>/kills.csv`` long form and ``<problem>/kills.npz``, a uint8 verdict matrix with its
id lists), legal / illegal / unmeasured / no-gold input counts, the killed submissions, cov@k
at the paper's budgets and the funnel of the paper's Table 1; per arm over all problems the
micro-pooled coverage and the macro recall; and the versions, limits and backend used.
"""

from __future__ import annotations

import contextlib
import csv
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
from suitebench.audit.ledger import write_ledger, write_retractions
from suitebench.audit.records import Funnel, Judged, Verdict
from suitebench.audit.results import (
    ArmEntry,
    AuditRecord,
    FunnelEntry,
    HarnessErrorEntry,
    RunCounts,
    finite,
    problem_entry,
)
from suitebench.audit.runs import AuditEngine
from suitebench.audit.tables import compile_label
from suitebench.metrics.cov_at_k import macro_recall, micro_coverage
from suitebench.model.problem import Problem, load_problem, split_language
from suitebench.run.outcome import Backend
from suitebench.run.toolchain import Language, ToolchainError, program_from_path, toolchain_version

__all__ = ["AuditResult", "format_funnel", "run_audit"]


@dataclass
class AuditResult:
    """What :func:`run_audit` found and where it wrote it."""

    audits: list[ProblemAudit]
    results: dict[str, Any]  # results.json's content (``record`` as plain JSON values)
    out_dir: Path | None
    funnel: dict[str, Funnel] = field(default_factory=dict)
    record: AuditRecord | None = None  # the same, typed

    @property
    def ledger_rows(self) -> int:
        return sum(len(a.ledger) for a in self.audits)

    @property
    def harness_errors(self) -> list[HarnessError]:
        """Every broken program of the harness, problem by problem (see :mod:`.harness`)."""
        return [e for a in self.audits for e in a.harness_errors]


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
        "compile_flags": np.array(compile_label(a.problem.compile, a.problem.defines)),
    }
    judge_rules = [str(a.problem.exit_status), compile_label(a.problem.compile, a.problem.defines)]
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
                declared = p.language_of(path)
                lang = split_language(declared)[0] if declared else None
                langs.add(program_from_path(path, lang).language)
    return {str(lang): toolchain_version(lang) for lang in sorted(langs)}


_BASIS_WORDS = {"validator": "the validator", "problem_tests": "definition (own tests)"}


def format_funnel(funnel: dict[str, Funnel]) -> str:
    """The paper's Table 1 per arm, as plain text: every line names its unit (the funnel
    counts submissions; only the withdrawals count flags, one per submission and input)."""
    lines = []
    for arm, f in funnel.items():
        by = ", ".join(f"{k} {v}" for k, v in sorted(f.withdrawn_by.items())) or "none"
        lines += [
            f"arm {arm}",
            f"  flagged                               {f.flagged:6d} submissions",
            f"    of which official TLE catches       {f.official_tle:6d} submissions"
            "  (marked, not new)",
            f"  reproducible (DET_WA / DET_RE)        {f.reproducible:6d} submissions",
            f"  after corrections                     {f.after_corrections:6d} submissions",
            f"  certified (legal inputs)              {f.certified:6d} submissions",
            *(
                f"    legal by {_BASIS_WORDS.get(k, k):<27s}{v:6d} submissions"
                for k, v in sorted(f.certified_by.items())
            ),
            f"    of which new findings               {f.new_findings:6d} submissions",
            f"  withdrawn flags (submission x input) by stage: {by}",
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
    funnel = _pooled_funnels(audits)
    record = _record(audits, config, engine, funnel, problem_extras)
    if out_dir is not None:
        _write_outputs(audits, funnel, record, out_dir)
    return AuditResult(audits, record.to_dict(), out_dir, funnel, record)


def _arm_names(audits: Sequence[ProblemAudit]) -> list[str]:
    """Every arm of the audit, in the order the problems first name them."""
    names: list[str] = []
    for a in audits:
        names += [n for n in a.arms if n not in names]
    return names


def _pooled_funnels(audits: Sequence[ProblemAudit]) -> dict[str, Funnel]:
    """Each arm's funnel summed over the problems it was run on."""
    funnel: dict[str, Funnel] = {}
    for name in _arm_names(audits):
        f = Funnel()
        for a in audits:
            if name in a.arms:
                f = f + a.arms[name].funnel
        funnel[name] = f
    return funnel


def _arm_entry(name: str, audits: Sequence[ProblemAudit], ks: Sequence[int], f: Funnel) -> ArmEntry:
    """One arm over every problem: micro-pooled coverage, macro recall, both at each k."""
    mats = [a.arms[name].kill_matrix for a in audits if name in a.arms]
    return ArmEntry(
        problems=sum(name in a.arms for a in audits),
        micro_coverage=finite(micro_coverage(mats)),
        macro_recall=finite(macro_recall(mats)),
        cov_at_k={str(k): finite(micro_coverage(mats, k)) for k in ks},
        macro_cov_at_k={str(k): finite(macro_recall(mats, k)) for k in ks},
        certified=f.certified,
        funnel=FunnelEntry.of(f),
    )


def _record(
    audits: Sequence[ProblemAudit],
    config: AuditConfig,
    engine: AuditEngine,
    funnel: dict[str, Funnel],
    problem_extras: Callable[[ProblemAudit], Mapping[str, Any]] | None,
) -> AuditRecord:
    """``results.json``: the versions, limits and backend used, every arm, every problem."""
    return AuditRecord(
        suitebench_version=__version__,
        python=platform.python_version(),
        backend=str(engine.backend),
        unsandboxed=engine.backend is Backend.PLAIN,
        toolchains=_toolchains(audits),
        pool=config.pool,
        consensus_pool=config.consensus_pool,
        max_candidates=config.max_candidates,
        ks=list(config.ks),
        basis="legal-or-unmeasured inputs with gold; kills are WA/PE/RE/MLE/OLE (excl-TLE)",
        runs=RunCounts(executed=engine.executed_runs, cached=engine.cached_runs),
        harness_errors=[
            HarnessErrorEntry.model_validate(e.to_dict()) for a in audits for e in a.harness_errors
        ],
        arms={name: _arm_entry(name, audits, config.ks, f) for name, f in funnel.items()},
        problems={a.problem.id: problem_entry(a, problem_extras) for a in audits},
        certified=sum(len(a.ledger) for a in audits),
    )


def _write_outputs(
    audits: Sequence[ProblemAudit], funnel: dict[str, Funnel], record: AuditRecord, out: Path
) -> None:
    """The ledger (with the killing inputs), the retractions, each problem's kill matrix, the
    funnel and results.json."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for a in audits for r in a.ledger]
    retr = [r for a in audits for r in a.retractions]
    needed = {r.input_sha256 for r in rows} | {r.input_sha256 for r in retr}
    inputs = {s: d for a in audits for s, d in a.inputs.items() if s in needed}
    write_ledger(rows, out, inputs)
    write_retractions(retr, out)
    for a in audits:
        _write_matrix(a, out)
    (out / "funnel.txt").write_text(format_funnel(funnel), encoding="utf-8")
    (out / "results.json").write_text(record.to_json(), encoding="utf-8")
