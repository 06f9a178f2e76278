"""The paired cluster bootstrap over problems.

The auditors paper reports every arm-vs-arm contrast as "the paired cluster-bootstrap delta"
with a 95% interval: problems are the clusters (inputs and submissions of one problem are not
independent), so the bootstrap resamples *problems* with replacement and recomputes, on each
resample, the difference between the two arms' aggregate metric over the same drawn problems.
Pairing (both arms see the same resample) removes the between-problem variance that both arms
share, which is what makes a 41-problem comparison informative at all.

The aggregate is a weighted mean of per-problem values: equal weights give the macro (per-
problem) mean, pool sizes as weights give the micro-pooled figure (``sum(w*v)/sum(w)`` with
``w`` the pool size is exactly killed/total). The interval is the percentile interval of the
resampled deltas. A fixed ``seed`` makes a figure reproducible to the last digit; the paper's
canonical parameters are 10,000 resamples and seed 20260619.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_N_BOOT = 10_000
DEFAULT_SEED = 20260619
DEFAULT_CONFIDENCE = 0.95

Progress = Callable[[int, int], None]
PerProblem = Mapping[str, float] | Sequence[float] | npt.ArrayLike

_CHUNK = 1024


@dataclass(frozen=True)
class BootstrapResult:
    """A paired cluster-bootstrap delta (arm minus comparator) with its percentile interval."""

    estimate: float
    lo: float
    hi: float
    n_boot: int
    seed: int
    confidence: float
    n_clusters: int

    @property
    def excludes_zero(self) -> bool:
        """True when the interval separates the arms (the paper's "excludes zero")."""
        return self.lo > 0.0 or self.hi < 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "estimate": self.estimate,
            "lo": self.lo,
            "hi": self.hi,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "confidence": self.confidence,
            "n_clusters": self.n_clusters,
        }


def paired_values(
    arm: PerProblem, comparator: PerProblem, weights: PerProblem | None = None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Align two arms' per-problem values (and optional weights) into arrays.

    Mappings are aligned by problem id and must have the same keys (a problem one arm lacks is
    a bug in the caller: score it as 0 or drop it for both explicitly). Sequences are aligned by
    position. Problems where either value is ``nan`` (an empty pool: no recall defined) are
    dropped from both arms, the same rule :func:`~suitebench.metrics.cov_at_k.macro_recall`
    uses.
    """
    if isinstance(arm, Mapping) or isinstance(comparator, Mapping):
        if not (isinstance(arm, Mapping) and isinstance(comparator, Mapping)):
            raise TypeError("arm and comparator must both be mappings or both be sequences")
        if set(arm) != set(comparator):
            missing = sorted(set(arm) ^ set(comparator))
            raise ValueError(f"arms are not paired: problems present in only one arm: {missing}")
        keys = sorted(arm)
        a = np.array([arm[k] for k in keys], dtype=np.float64)
        b = np.array([comparator[k] for k in keys], dtype=np.float64)
        if weights is not None:
            if not isinstance(weights, Mapping) or set(weights) != set(arm):
                raise ValueError("weights must be a mapping over the same problems as the arms")
            w = np.array([weights[k] for k in keys], dtype=np.float64)
        else:
            w = np.ones_like(a)
    else:
        a = np.asarray(arm, dtype=np.float64).ravel()
        b = np.asarray(comparator, dtype=np.float64).ravel()
        if a.shape != b.shape:
            raise ValueError(f"arms are not paired: {a.size} vs {b.size} problems")
        if weights is None:
            w = np.ones_like(a)
        else:
            if isinstance(weights, Mapping):
                raise TypeError("weights must be a sequence when the arms are sequences")
            w = np.asarray(weights, dtype=np.float64).ravel()
            if w.shape != a.shape:
                raise ValueError(f"{w.size} weights for {a.size} problems")
    if (w <= 0).any() or not np.isfinite(w).all():
        raise ValueError("weights must be positive and finite (drop empty-pool problems)")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep], w[keep]


def _weighted_mean(v: npt.NDArray[np.float64], w: npt.NDArray[np.float64]) -> float:
    return float(np.sum(v * w) / np.sum(w))


def bootstrap_deltas(
    arm: PerProblem,
    comparator: PerProblem,
    *,
    weights: PerProblem | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> tuple[float, npt.NDArray[np.float64]]:
    """The observed delta and the ``n_boot`` resampled deltas (arm minus comparator).

    The resampling depends only on ``seed`` and the number of problems, never on the values:
    two arms compared to one comparator with one seed see the same problem resamples (common
    random numbers), so their intervals are comparable.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    a, b, w = paired_values(arm, comparator, weights)
    p = a.size
    if p == 0:
        raise ValueError("no problem with a defined value in both arms: nothing to bootstrap")
    d = a - b
    estimate = _weighted_mean(d, w)
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot, dtype=np.float64)
    wd = w * d
    for start in range(0, n_boot, _CHUNK):
        stop = min(n_boot, start + _CHUNK)
        idx = rng.integers(0, p, size=(stop - start, p))
        out[start:stop] = wd[idx].sum(axis=1) / w[idx].sum(axis=1)
        if progress is not None:
            progress(stop, n_boot)
    return estimate, out


def percentile_interval(
    deltas: npt.NDArray[np.float64], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """The two-sided percentile interval of a bootstrap distribution."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    alpha = 1.0 - confidence
    lo, hi = np.quantile(deltas, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def paired_cluster_bootstrap(
    arm: PerProblem,
    comparator: PerProblem,
    *,
    weights: PerProblem | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    progress: Progress | None = None,
) -> BootstrapResult:
    """Paired cluster-bootstrap delta of two arms' per-problem metric, with a percentile CI.

    ``arm`` and ``comparator`` hold one value per problem (e.g. cov@50 or recall), as mappings
    keyed by problem id or as aligned sequences. ``weights`` (e.g. pool sizes) turn the macro
    mean into the micro-pooled one. The estimate is the delta on the observed problems; ``lo``
    and ``hi`` are the ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles of the
    resampled deltas.
    """
    n_clusters = paired_values(arm, comparator, weights)[0].size
    estimate, deltas = bootstrap_deltas(
        arm, comparator, weights=weights, n_boot=n_boot, seed=seed, progress=progress
    )
    lo, hi = percentile_interval(deltas, confidence)
    return BootstrapResult(
        estimate=estimate,
        lo=lo,
        hi=hi,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        n_clusters=int(n_clusters),
    )


def robustness_seeds(
    arm: PerProblem,
    comparator: PerProblem,
    seeds: Sequence[int],
    *,
    weights: PerProblem | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[BootstrapResult]:
    """The same contrast under several seeds (the paper checks 12 "robustness-seed" intervals).

    A separation claim that holds under one seed only is an artefact of that seed.
    """
    return [
        paired_cluster_bootstrap(
            arm, comparator, weights=weights, n_boot=n_boot, seed=s, confidence=confidence
        )
        for s in seeds
    ]


__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_N_BOOT",
    "DEFAULT_SEED",
    "BootstrapResult",
    "bootstrap_deltas",
    "paired_cluster_bootstrap",
    "paired_values",
    "percentile_interval",
    "robustness_seeds",
]
