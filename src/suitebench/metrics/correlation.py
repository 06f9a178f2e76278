"""Correlations the papers report, with the coefficient and its interval.

TestSuiteBench relates the number of tests an agent wrote to the size of the reference suite
(Figure 6a, App. A.1) and the number of specification sections to the mutation score
(Figure 6b, App. A.2: "Opus: rho = -0.16, Sol: rho = -0.42"). A coefficient over a few dozen
instances means little without its interval, so every correlation here comes with one:

* ``pearson``: the Fisher z interval, ``tanh(atanh(r) +- z / sqrt(n - 3))``;
* ``spearman`` (the papers' rho, the default): Pearson's r on the ranks (ties get average
  ranks), with the Fisher z interval at the Bonett-Wright standard error
  ``sqrt((1 + r^2 / 2) / (n - 3))``.

The p-value is the two-sided one of the t statistic ``r sqrt((n-2)/(1-r^2))`` with ``n - 2``
degrees of freedom (what ``scipy.stats`` reports for both coefficients). Fewer than 4 pairs give
no interval (``nan``); a constant variable gives no coefficient (``nan``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

__all__ = ["Correlation", "correlation"]

Method = Literal["pearson", "spearman"]


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient over ``n`` pairs with its two-sided interval."""

    method: str
    coefficient: float
    lo: float
    hi: float
    p_value: float
    n: int
    confidence: float

    def to_dict(self) -> dict[str, object]:
        def j(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "method": self.method,
            "coefficient": j(self.coefficient),
            "lo": j(self.lo),
            "hi": j(self.hi),
            "p_value": j(self.p_value),
            "n": self.n,
            "confidence": self.confidence,
        }


def correlation(
    x: Sequence[float],
    y: Sequence[float],
    *,
    method: Method = "spearman",
    confidence: float = 0.95,
) -> Correlation:
    """The correlation of paired values ``x`` and ``y`` with its interval (see module doc)."""
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"x and y are not paired: {a.size} vs {b.size} values")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(a.size)
    nan = math.nan
    if n < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return Correlation(method, nan, nan, nan, nan, n, confidence)
    from scipy import stats  # heavy: imported when a correlation is asked for, not with metrics

    if method == "spearman":
        a, b = stats.rankdata(a), stats.rankdata(b)
    r = float(np.corrcoef(a, b)[0, 1])
    r = max(-1.0, min(1.0, r))
    if n > 2 and abs(r) < 1.0:
        t = r * math.sqrt((n - 2) / (1.0 - r * r))
        p = float(2.0 * stats.t.sf(abs(t), n - 2))
    else:
        p = 0.0 if abs(r) == 1.0 and n > 2 else nan
    if n < 4:
        return Correlation(method, r, nan, nan, p, n, confidence)
    if abs(r) == 1.0:
        return Correlation(method, r, r, r, p, n, confidence)
    se = math.sqrt((1.0 + r * r / 2.0) / (n - 3)) if method == "spearman" else 1 / math.sqrt(n - 3)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    center = math.atanh(r)
    return Correlation(
        method, r, math.tanh(center - z * se), math.tanh(center + z * se), p, n, confidence
    )
