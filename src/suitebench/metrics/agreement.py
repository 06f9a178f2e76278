"""Cohen's kappa: how far two labelings of the same items agree beyond chance.

Where two arms (or two suites) label the same items (each pool submission killed or not; each
mutant killed or not), raw agreement overstates how alike they are when one label dominates:
two arms that kill almost nothing agree on almost everything. Cohen's kappa corrects for the
agreement expected from the two marginal label rates alone:

    kappa = (p_o - p_e) / (1 - p_e)

with ``p_o`` the observed share of items given the same label and ``p_e`` the share expected
if the two labelings were independent with their observed marginals. ``p_e == 1`` (both
labelings constant and equal) leaves kappa undefined: the result is ``nan``, never 1. When one
labeling is constant (an arm that kills nothing) kappa is 0 and no interval is given.

The interval is the large-sample one with the standard error of Fleiss, Cohen and Everitt
(1969), which is what statistics packages report as the asymptotic standard error.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["Kappa", "cohen_kappa"]


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa with its parts: agreement observed, agreement expected, the table."""

    kappa: float
    observed: float
    expected: float
    n: int
    labels: tuple[str, ...]
    table: tuple[tuple[int, ...], ...]  # table[i][j]: items labelled labels[i] by a, [j] by b
    lo: float
    hi: float
    confidence: float

    def to_dict(self) -> dict[str, object]:
        return {
            "kappa": _json(self.kappa),
            "observed": _json(self.observed),
            "expected": _json(self.expected),
            "n": self.n,
            "labels": list(self.labels),
            "table": [list(r) for r in self.table],
            "lo": _json(self.lo),
            "hi": _json(self.hi),
            "confidence": self.confidence,
        }


def _json(x: float) -> float | None:
    return None if math.isnan(x) else x


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], *, confidence: float = 0.95) -> Kappa:
    """Cohen's kappa of two labelings of the same items (aligned by position)."""
    if len(a) != len(b):
        raise ValueError(f"the labelings are not paired: {len(a)} vs {len(b)} items")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    labels = sorted({*a, *b}, key=str)
    index = {lab: i for i, lab in enumerate(labels)}
    q = len(labels)
    table = [[0] * q for _ in range(q)]
    for x, y in zip(a, b, strict=True):
        table[index[x]][index[y]] += 1
    n = len(a)
    names = tuple(str(lab) for lab in labels)
    frozen = tuple(tuple(r) for r in table)
    if n == 0:
        nan = math.nan
        return Kappa(nan, nan, nan, 0, names, frozen, nan, nan, confidence)
    p = [[c / n for c in row] for row in table]
    row = [sum(r) for r in p]
    col = [sum(p[i][j] for i in range(q)) for j in range(q)]
    po = sum(p[i][i] for i in range(q))
    pe = sum(row[i] * col[i] for i in range(q))
    if pe >= 1.0:
        return Kappa(math.nan, po, pe, n, names, frozen, math.nan, math.nan, confidence)
    kappa = (po - pe) / (1.0 - pe)
    if len({*a}) < 2 or len({*b}) < 2:
        # one labeling is constant: kappa is 0 by construction, and the asymptotic variance
        # (0 here) would claim a certainty the data do not have: no interval
        return Kappa(kappa, po, pe, n, names, frozen, math.nan, math.nan, confidence)
    # Fleiss, Cohen & Everitt (1969): the asymptotic variance of kappa-hat.
    t1 = sum(p[i][i] * (1.0 - (row[i] + col[i]) * (1.0 - kappa)) ** 2 for i in range(q))
    t2 = (1.0 - kappa) ** 2 * sum(
        p[i][j] * (col[i] + row[j]) ** 2 for i in range(q) for j in range(q) if i != j
    )
    t3 = (kappa - pe * (1.0 - kappa)) ** 2
    var = max(t1 + t2 - t3, 0.0) / (n * (1.0 - pe) ** 2)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    half = z * math.sqrt(var)
    return Kappa(
        kappa, po, pe, n, names, frozen, max(-1.0, kappa - half), min(1.0, kappa + half), confidence
    )
