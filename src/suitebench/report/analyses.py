"""The figures a report shows, computed from loaded results with the ``metrics`` functions.

Everything here returns plain data (numbers, lists, dicts) so that the HTML report, the
``--json`` output and the tests read the same figures. Per arm of an audit: the kill matrices
rebuilt from ``kills.npz`` (the rows are the arm's scored inputs in emission order, exactly the
matrix the audit computed cov@k on), cov@k over every budget, pooled prefix coverage, the
killed sets and their overlap, near-clone clusters of the certified findings and the overlap
of the arm's inputs with the official tests. Per suite: the killed mutant sets, their overlap
across suites of the same instances, and the correlations the TestSuiteBench paper reports.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from suitebench.metrics.correlation import correlation
from suitebench.metrics.cov_at_k import (
    cov_at_k,
    micro_coverage,
    per_problem_recall,
)
from suitebench.metrics.overlap import (
    input_overlap,
    language_of,
    near_clone_clusters,
    set_overlap,
)
from suitebench.model.errors import FormatError
from suitebench.model.problem import load_problem
from suitebench.report.load import AuditRun, Results, ScoreRun

__all__ = [
    "DEFAULT_DESIGN_BUDGET",
    "OFFICIAL",
    "arm_matrices",
    "audit_kill_overlap",
    "certified_clusters",
    "cov_curve",
    "finite",
    "input_overlaps",
    "per_problem_values",
    "prefix_curve",
    "score_kill_overlap",
    "suite_correlations",
]

OFFICIAL = "official"

#: The auditors paper's design budget (50 inputs per problem), marked on the cov@k plot.
DEFAULT_DESIGN_BUDGET = 50


def finite(x: float | None) -> float | None:
    """``None`` for a missing or ``nan`` figure (JSON has no nan)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def arm_matrices(run: AuditRun, arm: str) -> dict[str, npt.NDArray[np.bool_]]:
    """Per problem, the arm's (scored inputs x pool) kill matrix; problems without the arm
    are left out."""
    return {p: m.kill_matrix(arm) for p, m in run.matrices.items() if arm in m.arm_columns}


def cov_curve(run: AuditRun, arm: str, ks: Sequence[int]) -> list[float | None]:
    """Pooled cov@k of an arm at each budget (each problem weighs by its pool size)."""
    mats = list(arm_matrices(run, arm).values())
    return [finite(micro_coverage(mats, k)) for k in ks]


def prefix_curve(run: AuditRun, arm: str) -> list[float | None]:
    """Pooled prefix coverage after the first k inputs of each problem, k = 1..max inputs."""
    mats = [m for m in arm_matrices(run, arm).values()]
    total = sum(m.shape[1] for m in mats)
    longest = max((m.shape[0] for m in mats), default=0)
    if total == 0:
        return [None] * longest
    acc = [np.logical_or.accumulate(m, axis=0) if m.shape[0] else m for m in mats]
    out: list[float | None] = []
    for k in range(1, longest + 1):
        killed = sum(int(a[min(k, a.shape[0]) - 1].sum()) for a in acc if a.shape[0])
        out.append(killed / total)
    return out


def per_problem_values(run: AuditRun, arm: str, k: int | None) -> dict[str, float]:
    """Per problem: the arm's recall (``k=None``) or cov@k; ``nan`` for an empty pool."""
    mats = arm_matrices(run, arm)
    if k is None:
        return dict(zip(mats, per_problem_recall(list(mats.values())), strict=True))
    return {p: cov_at_k(m, k) for p, m in mats.items()}


def pool_sizes(run: AuditRun) -> dict[str, int]:
    return {p: len(m.submissions) for p, m in run.matrices.items()}


def killed_set(run: AuditRun, arm: str) -> set[tuple[str, str]]:
    """(problem, submission) pairs some scored input of the arm kills."""
    out: set[tuple[str, str]] = set()
    for p, m in arm_matrices(run, arm).items():
        subs = run.matrices[p].submissions
        out |= {(p, subs[j]) for j in np.flatnonzero(m.any(axis=0))}
    return out


def audit_kill_overlap(run: AuditRun, arms: Sequence[str] | None = None) -> dict[str, Any]:
    """Overlap of the arms' killed submissions, over every pool submission of the audit."""
    names = list(arms) if arms is not None else run.arms
    universe = {(p, s) for p, m in run.matrices.items() for s in m.submissions}
    return set_overlap({a: killed_set(run, a) for a in names}, universe).to_dict()


def mutant_set(run: ScoreRun) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(killed, scored) mutants of a suite, keyed by (instance, mutant id)."""
    inst = run.result.instance
    scored = {(inst, m.id) for m in run.result.mutants if m.status.scored}
    killed = {(inst, m.id) for m in run.result.mutants if m.status.detected}
    return killed, scored


def score_kill_overlap(runs: Sequence[ScoreRun]) -> dict[str, Any] | None:
    """Overlap of killed mutants across suites (TestSuiteBench Figure 12).

    Suites are grouped by label (``reference`` or the suite directory's name) over the
    instances they were all scored on; ``None`` when fewer than two suites share an instance.
    """
    by_suite: dict[str, dict[str, ScoreRun]] = {}
    for r in runs:
        by_suite.setdefault(r.suite_label, {})[r.result.instance] = r
    if len(by_suite) < 2:
        return None
    shared = set.intersection(*(set(v) for v in by_suite.values()))
    if not shared:
        return None
    sets: dict[str, set[tuple[str, str]]] = {}
    universe: set[tuple[str, str]] = set()
    for label, per_inst in by_suite.items():
        killed: set[tuple[str, str]] = set()
        for inst in sorted(shared):
            k, s = mutant_set(per_inst[inst])
            killed |= k
            universe |= s
        sets[label] = killed
    sets = {k: v & universe for k, v in sets.items()}  # a mutant scored for one suite only
    out = set_overlap(sets, universe).to_dict()
    out["instances"] = sorted(shared)
    return out


def _source_text(problem_dir: str, submission: str) -> str | None:
    path = Path(problem_dir) / submission
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def certified_clusters(run: AuditRun) -> dict[str, Any]:
    """Near-clone clusters of the certified findings, per arm and problem.

    The sources are read from the problem directories the ledger names; a finding whose source
    is gone counts as its own cluster and is listed under ``missing_sources``.
    """
    out: dict[str, Any] = {}
    for arm in sorted({r["arm"] for r in run.ledger}):
        rows = [r for r in run.ledger if r["arm"] == arm]
        per_problem: dict[str, list[list[str]]] = {}
        missing: list[str] = []
        for problem in sorted({r["problem"] for r in rows}):
            sources: dict[str, str] = {}
            langs: dict[str, str] = {}
            singles: list[list[str]] = []
            for r in rows:
                if r["problem"] != problem:
                    continue
                text = _source_text(r["problem_dir"], r["submission_id"])
                if text is None:
                    missing.append(f"{problem}/{r['submission_id']}")
                    singles.append([r["submission_id"]])
                    continue
                sources[r["submission_id"]] = text
                langs[r["submission_id"]] = language_of(r["submission_id"])
            clusters = near_clone_clusters(sources, language=langs) if sources else []
            per_problem[problem] = sorted(clusters + singles, key=lambda c: c[0])
        out[arm] = {
            "findings": len(rows),
            "clusters": sum(len(c) for c in per_problem.values()),
            "per_problem": per_problem,
            "missing_sources": missing,
        }
    return out


def _arm_bytes(run: AuditRun, problem: str, arm: str) -> dict[str, bytes] | None:
    """sha256 -> content of an arm's inputs where they are files on disk, else ``None``
    (a generator arm's inputs are not kept: only their sha256 is in the kill matrix)."""
    entry = run.results["problems"][problem]
    source = str(entry["arms"].get(arm, {}).get("source", ""))
    root = Path(entry.get("problem_dir", ""))
    files: list[Path] = []
    if source in ("tests.official", "tests.samples"):
        try:
            loaded = load_problem(root)
        except FormatError:
            return None
        files = list(loaded.official if source == "tests.official" else loaded.samples)
    else:
        folder = next((c for c in (root / source, Path(source)) if source and c.is_dir()), None)
        if folder is None:
            return None
        files = sorted(f for f in folder.iterdir() if f.is_file())
    out: dict[str, bytes] = {}
    for f in files:
        data = f.read_bytes()
        out[hashlib.sha256(data).hexdigest()] = data
    return out


def input_overlaps(run: AuditRun) -> dict[str, Any]:
    """Per arm and problem: how many of its inputs are also official tests (exact by sha256;
    whitespace-normalised where both sides' inputs are files on disk)."""
    out: dict[str, Any] = {}
    for arm in run.arms:
        if arm == OFFICIAL:
            continue
        per: dict[str, Any] = {}
        for p, m in run.matrices.items():
            if arm not in m.arm_columns or OFFICIAL not in m.arm_columns:
                continue
            mine = {m.inputs[c] for c in m.arm_columns[arm]}
            official = {m.inputs[c] for c in m.arm_columns[OFFICIAL]}
            a_bytes, o_bytes = _arm_bytes(run, p, arm), _arm_bytes(run, p, OFFICIAL)
            if a_bytes is not None and o_bytes is not None and set(a_bytes) >= mine:
                ov = input_overlap([a_bytes[s] for s in mine], list(o_bytes.values())).to_dict()
            else:
                ov = {
                    "arm_inputs": len(mine),
                    "official_inputs": len(official),
                    "exact": len(mine & official),
                    "exact_share": finite(len(mine & official) / len(mine)) if mine else None,
                    "normalized": None,
                    "normalized_share": None,
                    "jaccard_exact": len(mine & official) / len(mine | official)
                    if mine | official
                    else 1.0,
                    "jaccard_normalized": None,
                }
            per[p] = ov
        exact = sum(v["exact"] for v in per.values())
        norm = [v["normalized"] for v in per.values()]
        total = sum(v["arm_inputs"] for v in per.values())
        out[arm] = {
            "per_problem": per,
            "arm_inputs": total,
            "exact": exact,
            "normalized": None if any(n is None for n in norm) else sum(norm),
        }
    return out


def suite_correlations(runs: Sequence[ScoreRun]) -> dict[str, Any]:
    """Spec sections vs M over the scored suites, and tests written vs reference suite size
    over the non-reference suites whose instance also has a reference score."""
    with_m = [r for r in runs if r.result.mutation_score is not None]
    sections = [float(len(r.result.per_section)) for r in with_m]
    scores = [float(r.result.mutation_score or 0.0) for r in with_m]
    ref_size = {r.result.instance: r.result.counts.tests for r in runs if r.is_reference}
    pairs = [
        (float(ref_size[r.result.instance]), float(r.result.counts.tests))
        for r in runs
        if not r.is_reference and r.result.instance in ref_size
    ]
    return {
        "sections_vs_mutation_score": {
            **correlation(sections, scores).to_dict(),
            "x": sections,
            "y": scores,
            "labels": [r.label for r in with_m],
        },
        "reference_tests_vs_tests_written": {
            **correlation([p[0] for p in pairs], [p[1] for p in pairs]).to_dict(),
            "x": [p[0] for p in pairs],
            "y": [p[1] for p in pairs],
        },
    }


def summary(results: Results, ks: Sequence[int]) -> dict[str, Any]:
    """Every figure of a report as JSON-able data (``suitebench report --json``)."""
    audits = []
    for run in results.audits:
        audits.append(
            {
                "path": str(run.path),
                "arms": {
                    arm: {
                        **{k: v for k, v in run.results["arms"][arm].items() if k != "funnel"},
                        "funnel": run.results["arms"][arm].get("funnel", {}),
                        "cov_curve": dict(zip(map(str, ks), cov_curve(run, arm, ks), strict=True)),
                    }
                    for arm in run.arms
                },
                "kill_overlap": audit_kill_overlap(run),
                "near_clone_clusters": certified_clusters(run),
                "input_overlap": input_overlaps(run),
                "ledger_rows": len(run.ledger),
                "retractions": len(run.retractions),
            }
        )
    scores = [
        {
            "path": str(r.path),
            "instance": r.result.instance,
            "suite": r.suite_label,
            "validity": r.result.validity,
            "mutation_score": r.result.mutation_score,
            "per_section": r.result.per_section,
            "counts": r.result.counts.model_dump(),
        }
        for r in results.scores
    ]
    return {
        "audits": audits,
        "scores": scores,
        "implementations": [
            {
                "path": str(i.path),
                "instance": i.result.instance,
                "reference_pass_rate": i.result.reference_pass_rate,
                "passed": i.result.passed,
                "total": i.result.total,
            }
            for i in results.implementations
        ],
        "score_kill_overlap": score_kill_overlap(results.scores),
        "correlations": suite_correlations(results.scores) if results.scores else None,
    }
