"""The Wilson score interval for a binomial proportion.

The auditors paper bounds the ledger's false-discovery rate by the "Wilson 95% upper" bound of
the overturned share of a human-adjudicated sample: 0 overturns of 202 rows give 1.87%, 0 of
163 give 2.3%. Both figures are the upper end of the *two-sided* 95% Wilson interval
(z = 1.96: ``z^2 / (n + z^2)`` at zero successes), so that is the default here; the strictly
one-sided 95% bound (z = 1.645) is available with ``one_sided=True``. Wilson, unlike the Wald
interval, stays inside [0, 1] and is informative at zero successes, which is the case that
matters when a review finds no false discovery.

``successes`` and ``n`` may be non-integers: a weighted review enters as an effective sample
size (see :mod:`suitebench.audit.review`).
"""

from __future__ import annotations

import math
from statistics import NormalDist


def _z(confidence: float, one_sided: bool) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    tail = 1.0 - confidence if one_sided else (1.0 - confidence) / 2.0
    return NormalDist().inv_cdf(1.0 - tail)


def _check(successes: float, n: float) -> None:
    if n < 0 or successes < 0 or successes > n or math.isnan(successes) or math.isnan(n):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")


def wilson_interval(
    successes: float, n: float, confidence: float = 0.95, *, z: float | None = None
) -> tuple[float, float]:
    """Two-sided Wilson score interval ``(lo, hi)`` for ``successes`` out of ``n``.

    ``n == 0`` carries no information: the interval is the whole of ``(0.0, 1.0)``.
    """
    _check(successes, n)
    if n == 0:
        return 0.0, 1.0
    zz = _z(confidence, one_sided=False) if z is None else z
    p = successes / n
    z2 = zz * zz
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = zz / denom * math.sqrt(max(p * (1.0 - p) / n + z2 / (4.0 * n * n), 0.0))
    lo = 0.0 if successes == 0 else max(0.0, center - half)  # exact at the edges, not 1e-17
    hi = 1.0 if successes == n else min(1.0, center + half)
    return lo, hi


def wilson_upper(
    successes: float, n: float, confidence: float = 0.95, *, one_sided: bool = False
) -> float:
    """Upper Wilson bound: the paper's "Wilson 95% upper" with the defaults.

    ``one_sided=True`` gives the one-sided bound at ``confidence`` (z = 1.645 at 95%).
    """
    _check(successes, n)
    if n == 0:
        return 1.0
    return wilson_interval(successes, n, z=_z(confidence, one_sided))[1]


def wilson_lower(
    successes: float, n: float, confidence: float = 0.95, *, one_sided: bool = False
) -> float:
    """Lower Wilson bound (two-sided interval's lower end unless ``one_sided``)."""
    _check(successes, n)
    if n == 0:
        return 0.0
    return wilson_interval(successes, n, z=_z(confidence, one_sided))[0]
