"""``suitebench compare``: paired differences between arms (or suites) over the same problems.

A *side* is an arm of an audit (``RESULT_DIR:ARM``) or a suite (a score result directory, or a
directory holding the scores of one suite on several instances). All sides are paired by problem
(instance) id; the last side is the comparator. For each other side and each metric:

* the delta and its paired cluster-bootstrap percentile interval (problems are the clusters),
  at ``seed`` and again at each robustness seed, with the range of those intervals and whether
  every one of them excludes zero on the same side (a separation that holds under one seed
  only is an artefact of that seed);
* one-sided noninferiority on per-problem macro recall (arms) or per-instance M (suites), with
  margin delta, and Holm's correction across the sides compared with the comparator;
* Cohen's kappa of the two sides' killed labels over the items both scored (pool submissions,
  or mutants).

Metrics: for arms, ``recall`` (macro, unweighted: the noninferiority estimand) and ``cov@k``
for each requested k (pooled: each problem weighs by its pool size, as the report's cov@k);
for suites, ``M`` and ``V`` per instance (macro).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.metrics.agreement import cohen_kappa
from suitebench.metrics.bootstrap import paired_cluster_bootstrap
from suitebench.metrics.noninferiority import DEFAULT_MARGIN, holm, noninferiority
from suitebench.model.errors import FormatError
from suitebench.report import analyses as an
from suitebench.report.load import AuditRun, ScoreRun, load_results

__all__ = ["DEFAULT_COMPARE_KS", "DEFAULT_ROBUSTNESS", "Side", "compare", "parse_side"]

DEFAULT_COMPARE_KS = (1, 5, 10, 50)
DEFAULT_ROBUSTNESS = 12


@dataclass
class Side:
    """One side of a comparison: per-problem values per metric, and killed labels per item."""

    name: str
    kind: str  # "arm" or "suite"
    values: dict[str, dict[str, float]]  # metric -> problem -> value
    weights: dict[str, dict[str, float] | None]  # metric -> problem -> weight (None: macro)
    labels: dict[tuple[str, str], bool]  # (problem, item) -> killed


def _arm_side(run: AuditRun, arm: str, ks: Sequence[int], name: str) -> Side:
    if arm not in run.arms:
        raise FormatError(run.path / "results.json", "arms", f"an arm named {arm!r} ({run.arms})")
    pools = {p: float(n) for p, n in an.pool_sizes(run).items() if n > 0}
    values: dict[str, dict[str, float]] = {"recall": an.per_problem_values(run, arm, None)}
    weights: dict[str, dict[str, float] | None] = {"recall": None}
    for k in ks:
        v = an.per_problem_values(run, arm, k)
        values[f"cov@{k}"] = {p: x for p, x in v.items() if p in pools}
        weights[f"cov@{k}"] = {p: pools[p] for p in values[f"cov@{k}"]}
    killed = an.killed_set(run, arm)
    labels = {
        (p, s): (p, s) in killed
        for p, m in run.matrices.items()
        if arm in m.arm_columns
        for s in m.submissions
    }
    return Side(name, "arm", values, weights, labels)


def _suite_side(runs: Sequence[ScoreRun], name: str) -> Side:
    values: dict[str, dict[str, float]] = {"M": {}, "V": {}}
    labels: dict[tuple[str, str], bool] = {}
    for r in runs:
        inst = r.result.instance
        if inst in values["M"]:
            raise FormatError(
                r.path / "results.json", "instance", f"one score per instance ({inst})"
            )
        values["M"][inst] = math.nan if r.result.mutation_score is None else r.result.mutation_score
        values["V"][inst] = math.nan if r.result.validity is None else r.result.validity
        for m in r.result.mutants:
            if m.status.scored:
                labels[(inst, m.id)] = m.status.detected
    return Side(name, "suite", values, {"M": None, "V": None}, labels)


def parse_side(spec: str, ks: Sequence[int]) -> Side:
    """``DIR:ARM`` (an audit's arm), ``DIR`` (an audit with one arm, or suite score(s))."""
    path, arm = Path(spec), None
    if not path.exists() and ":" in spec:
        head, _, tail = spec.rpartition(":")
        path, arm = Path(head), tail
    results = load_results([path])
    if results.audits:
        if len(results.audits) > 1 or results.scores:
            raise FormatError(path, "(results)", "one audit result directory per side")
        run = results.audits[0]
        if arm is None:
            if len(run.arms) != 1:
                raise FormatError(
                    path, "arm", f"an arm to compare, as {spec}:ARM (arms: {', '.join(run.arms)})"
                )
            arm = run.arms[0]
        return _arm_side(run, arm, ks, spec)
    if arm is not None:
        raise FormatError(path, "arm", "an audit result directory (DIR:ARM names an audit's arm)")
    if not results.scores:
        raise FormatError(path, "(results)", "audit or score results")
    return _suite_side(results.scores, spec)


def _interval(
    arm: dict[str, float],
    comp: dict[str, float],
    weights: Any,
    n: int,
    seed: int,
    confidence: float,
) -> dict[str, Any]:
    r = paired_cluster_bootstrap(
        arm, comp, weights=weights, n_boot=n, seed=seed, confidence=confidence
    )
    return r.to_dict()


def _paired(a: Side, b: Side, metric: str) -> tuple[dict[str, float], dict[str, float], Any]:
    common = sorted(set(a.values[metric]) & set(b.values[metric]))
    w = a.weights.get(metric)
    weights = None if w is None else {p: w[p] for p in common}
    return (
        {p: a.values[metric][p] for p in common},
        {p: b.values[metric][p] for p in common},
        weights,
    )


def _mean(values: dict[str, float], weights: dict[str, float] | None) -> float | None:
    keep = [p for p, v in values.items() if not math.isnan(v)]
    if not keep:
        return None
    if weights is None:
        return sum(values[p] for p in keep) / len(keep)
    return sum(values[p] * weights[p] for p in keep) / sum(weights[p] for p in keep)


def _metric_row(
    side: Side,
    comp: Side,
    metric: str,
    n_boot: int,
    seed: int,
    seeds: list[int],
    confidence: float,
) -> dict[str, Any]:
    """One metric of a side against the comparator: both values, the paired interval of the
    difference, and the same interval under each robustness seed."""
    a, b, w = _paired(side, comp, metric)
    if not a:
        raise ValueError(f"{side.name} and {comp.name} share no problem")
    main = _interval(a, b, w, n_boot, seed, confidence)
    robust = [_interval(a, b, w, n_boot, s, confidence) for s in seeds]
    all_iv = [main, *robust]
    return {
        "metric": metric,
        "weighting": "macro" if w is None else "pooled by pool size",
        "value": _mean(a, w),
        "comparator_value": _mean(b, w),
        **main,
        "robustness_seeds": seeds,
        "robust_lo": [r["lo"] for r in robust],
        "robust_hi": [r["hi"] for r in robust],
        "lo_range": [min(r["lo"] for r in all_iv), max(r["lo"] for r in all_iv)],
        "hi_range": [min(r["hi"] for r in all_iv), max(r["hi"] for r in all_iv)],
        "separated_all_seeds": all(r["lo"] > 0 for r in all_iv) or all(r["hi"] < 0 for r in all_iv),
    }


def _side_entry(
    side: Side, comp: Side, first: str, rows: list[dict[str, Any]], confidence: float
) -> dict[str, Any]:
    """A side's entry: the problems it shares with the comparator (by the ``first`` metric)
    and those only one has, its metric rows, and the kappa of their labels."""
    shared = sorted(set(side.labels) & set(comp.labels))
    kappa = cohen_kappa(
        [side.labels[i] for i in shared],
        [comp.labels[i] for i in shared],
        confidence=confidence,
    ).to_dict()
    return {
        "name": side.name,
        "problems": sorted(set(side.values[first]) & set(comp.values[first])),
        "only_here": sorted(set(side.values[first]) - set(comp.values[first])),
        "only_comparator": sorted(set(comp.values[first]) - set(side.values[first])),
        "metrics": rows,
        "kappa": {**kappa, "items": len(shared)},
    }


def _noninferiority(
    sides: list[Side],
    comp: Side,
    ni_metric: str,
    margin: float,
    n_boot: int,
    seed: int,
    confidence: float,
) -> list[dict[str, Any]]:
    """Each side's noninferiority test against the comparator on ``ni_metric``, with whether
    it passes Holm's correction across the sides."""
    results = []
    for side in sides:
        a, b, _ = _paired(side, comp, ni_metric)
        results.append(
            noninferiority(
                a,
                b,
                margin=margin,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                arm_name=side.name,
                comparator_name=comp.name,
            )
        )
    passes = holm({r.arm: r.p_value for r in results}, alpha=(1.0 - confidence) / 2.0)
    return [{**r.to_dict(), "holm_pass": passes[r.arm]} for r in results]


def compare(
    specs: Sequence[str],
    *,
    ks: Sequence[int] = DEFAULT_COMPARE_KS,
    n_boot: int = 10_000,
    seed: int = 20260619,
    robustness: int = DEFAULT_ROBUSTNESS,
    margin: float = DEFAULT_MARGIN,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Compare every side but the last with the last (see the module doc)."""
    if len(specs) < 2:
        raise ValueError("compare needs at least two sides (the last is the comparator)")
    sides = [parse_side(s, ks) for s in specs]
    kinds = {s.kind for s in sides}
    if len(kinds) > 1:
        raise ValueError("cannot compare an arm with a suite: give arms only or suites only")
    comp = sides[-1]
    metrics = list(comp.values)
    seeds = [seed + i for i in range(1, robustness + 1)]
    out_sides: list[dict[str, Any]] = []
    for side in sides[:-1]:
        rows = [_metric_row(side, comp, m, n_boot, seed, seeds, confidence) for m in metrics]
        out_sides.append(_side_entry(side, comp, metrics[0], rows, confidence))
    # one family: every side against the comparator (each on the problems it shares with it),
    # Holm across the family at the one-sided level of the two-sided interval
    ni_metric = "recall" if comp.kind == "arm" else "M"
    noninf = _noninferiority(sides[:-1], comp, ni_metric, margin, n_boot, seed, confidence)
    return {
        "kind": comp.kind,
        "comparator": comp.name,
        "ks": list(ks),
        "n_boot": n_boot,
        "seed": seed,
        "confidence": confidence,
        "sides": out_sides,
        "noninferiority": {"metric": ni_metric, "margin": margin, "results": noninf},
    }
