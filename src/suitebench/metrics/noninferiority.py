"""Noninferiority of an arm against a comparator, as the auditors paper tests it.

"Noninferiority is tested per engine on a per-problem macro-recall basis against the re-judged
official suites, with parameters fixed in advance (margin Delta = 0.02, B = 10,000 bootstrap
resamples, seed 20260619). An engine is noninferior at its single-engine 95% interval when the
interval's lower bound stays above -Delta." Across several engines the paper reports "Holm pass
counts".

So the test statistic is the paired cluster bootstrap (:mod:`.bootstrap`) of the per-problem
recall difference (arm minus comparator), and the decision is ``lo > -margin`` with ``lo`` the
lower end of the two-sided percentile interval (the 2.5% quantile at 95%): a one-sided test at
level ``(1 - confidence) / 2``.

For a family of arms, Holm's step-down procedure needs a p-value per arm. We use the bootstrap
p-value of H0 "delta <= -margin": ``p = (1 + #{delta* <= -margin}) / (B + 1)``, the share of
resampled deltas at or below the margin (with the usual +1 so that p is never 0). It is dual to
the percentile rule: ``lo > -margin`` exactly when fewer than a ``(1 - confidence) / 2`` share
of the resamples fall at or below ``-margin`` (up to the +1 and quantile interpolation). Holm
is then run at that same one-sided level.

With a single cluster (one problem) there is nothing to resample: every bootstrap delta is the
observed one, the "interval" is a point and the p-value is 1/(B+1) or 1 by construction, so
any delta above ``-margin`` would read as noninferior and pass Holm. Below
:data:`MIN_CLUSTERS` no test is made: ``decision`` is ``"not enough clusters"``,
``noninferior`` is False and ``p_value`` is 1.0 (no evidence against H0, so Holm keeps it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from suitebench.metrics.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    PerProblem,
    Progress,
    bootstrap_deltas,
    paired_values,
    percentile_interval,
)

#: The paper's noninferiority margin (2 percentage points of macro recall).
DEFAULT_MARGIN = 0.02

#: Fewest paired clusters (problems) a noninferiority decision is made on.
MIN_CLUSTERS = 2

NONINFERIOR = "noninferior"
NOT_NONINFERIOR = "not noninferior"
NOT_ENOUGH_CLUSTERS = "not enough clusters"


@dataclass(frozen=True)
class NoninferiorityResult:
    """One arm against the comparator: delta, its interval, the decision and its p-value.

    ``holm_pass`` is set only when the arm was tested as part of a family
    (:func:`noninferiority_family`); ``None`` means no multiplicity correction was applied.
    """

    arm: str
    comparator: str
    delta: float
    lo: float
    hi: float
    margin: float
    noninferior: bool
    p_value: float
    n_boot: int
    seed: int
    confidence: float
    n_clusters: int
    holm_pass: bool | None = None

    @property
    def decision(self) -> str:
        """``noninferior``, ``not noninferior`` or ``not enough clusters`` (no test made)."""
        if self.n_clusters < MIN_CLUSTERS:
            return NOT_ENOUGH_CLUSTERS
        return NONINFERIOR if self.noninferior else NOT_NONINFERIOR

    def to_dict(self) -> dict[str, object]:
        return {
            "arm": self.arm,
            "comparator": self.comparator,
            "delta": self.delta,
            "lo": self.lo,
            "hi": self.hi,
            "margin": self.margin,
            "noninferior": self.noninferior,
            "decision": self.decision,
            "p_value": self.p_value,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "confidence": self.confidence,
            "n_clusters": self.n_clusters,
            "holm_pass": self.holm_pass,
        }


def noninferiority(
    arm: PerProblem,
    comparator: PerProblem,
    *,
    margin: float = DEFAULT_MARGIN,
    weights: PerProblem | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    arm_name: str = "arm",
    comparator_name: str = "comparator",
    progress: Progress | None = None,
) -> NoninferiorityResult:
    """Is ``arm`` no worse than ``comparator`` by more than ``margin``?

    ``arm`` and ``comparator`` are per-problem values (the paper: per-problem recall), paired
    by problem id or position. Noninferior when the lower end of the two-sided ``confidence``
    percentile interval of the paired cluster-bootstrap delta is above ``-margin``.
    """
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    n_clusters = paired_values(arm, comparator, weights)[0].size
    delta, deltas = bootstrap_deltas(
        arm, comparator, weights=weights, n_boot=n_boot, seed=seed, progress=progress
    )
    lo, hi = percentile_interval(deltas, confidence)
    at_or_below = int(np.count_nonzero(deltas <= -margin))
    p_value = (1.0 + at_or_below) / (n_boot + 1.0)
    enough = n_clusters >= MIN_CLUSTERS
    if not enough:  # a point, not an interval: no test (see the module's docstring)
        p_value = 1.0
    return NoninferiorityResult(
        arm=arm_name,
        comparator=comparator_name,
        delta=delta,
        lo=lo,
        hi=hi,
        margin=margin,
        noninferior=enough and bool(lo > -margin),
        p_value=p_value,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        n_clusters=int(n_clusters),
    )


def holm(p_values: Mapping[str, float], alpha: float) -> dict[str, bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level alpha.

    Sort p ascending; reject the i-th smallest (0-based) while ``p <= alpha / (m - i)``; stop
    at the first that fails, keeping every later one. Controls the family-wise error rate under
    any dependence between the tests, which matters here because every arm is compared with
    the same comparator on the same problems.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    order = sorted(p_values, key=lambda name: (p_values[name], name))
    m = len(order)
    out = {name: False for name in p_values}
    for i, name in enumerate(order):
        if p_values[name] <= alpha / (m - i):
            out[name] = True
        else:
            break
    return out


def noninferiority_family(
    arms: Mapping[str, PerProblem],
    comparator: PerProblem,
    *,
    margin: float = DEFAULT_MARGIN,
    weights: PerProblem | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    comparator_name: str = "comparator",
    progress: Progress | None = None,
) -> list[NoninferiorityResult]:
    """Every arm against one comparator, with Holm's correction across the family.

    Each arm keeps its single-arm decision (``noninferior``, the paper's "at its single-engine
    95% interval") and gains ``holm_pass``: rejected by Holm at the one-sided level
    ``(1 - confidence) / 2``. The paper's "Holm pass count" is the number of arms with
    ``holm_pass``; which arms form the family (e.g. only the pre-designated confirmatory ones)
    is the caller's choice and must be fixed in advance.
    """
    names = list(arms)
    results: list[NoninferiorityResult] = []
    for i, name in enumerate(names):
        results.append(
            noninferiority(
                arms[name],
                comparator,
                margin=margin,
                weights=weights,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                arm_name=name,
                comparator_name=comparator_name,
            )
        )
        if progress is not None:
            progress(i + 1, len(names))
    if not results:
        return []
    passes = holm({r.arm: r.p_value for r in results}, alpha=(1.0 - confidence) / 2.0)
    return [NoninferiorityResult(**{**r.__dict__, "holm_pass": passes[r.arm]}) for r in results]
