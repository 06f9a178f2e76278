"""cov@k: the expected share of a submission pool that a random k-subset of an input set kills.

The auditors paper compares arms (input sets) by cov@k, "the order-free expected pool fraction
killed by a uniform random k-subset of an arm's legal inputs"; "an arm with fewer than k legal
inputs contributes its whole set". Order-free matters: an arm is not rewarded or punished for
the order in which it emitted inputs, and arms of different sizes become comparable at a budget.
"Coverage" in this module is always the pool's (the share of submissions killed: micro-pooled
coverage, prefix coverage), never code coverage.

For one submission (a column) killed by ``c`` of the ``n`` inputs, a uniform k-subset misses it
with probability ``C(n-c, k) / C(n, k)``, so cov@k is the mean over columns of
``1 - C(n-c, k) / C(n, k)``. We evaluate the ratio as the product
``prod_{i<k} (n-c-i) / (n-i)`` whose factors all lie in [0, 1]: exact to rounding, never
overflowing, and zero as soon as ``n - c < k`` (every k-subset must then contain a killer).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

#: The budgets the auditors paper reports (Table B.3).
DEFAULT_KS: tuple[int, ...] = (1, 2, 5, 10, 20, 40, 50, 60)

BoolMatrix = npt.ArrayLike


def _as_kill_matrix(kill_matrix: BoolMatrix) -> npt.NDArray[np.bool_]:
    m = np.asarray(kill_matrix)
    if m.ndim != 2:
        raise ValueError(
            f"kill_matrix must be 2-dimensional (inputs x submissions), got shape {m.shape}"
        )
    if m.dtype != np.bool_:
        if m.size and not np.isin(m, (0, 1)).all():
            raise ValueError("kill_matrix must hold booleans (or 0/1)")
        m = m.astype(np.bool_)
    return m


def _miss_probability(n: int, c: npt.NDArray[np.int64], k: int) -> npt.NDArray[np.float64]:
    """P(a uniform k-subset of n rows contains none of a column's c killing rows)."""
    if k >= n:
        return np.where(c > 0, 0.0, 1.0)
    p = np.ones(c.shape, dtype=np.float64)
    free = (n - c).astype(np.float64)
    for i in range(k):
        p *= np.clip(free - i, 0.0, None) / float(n - i)
    return p


def per_submission_kill_probability(kill_matrix: BoolMatrix, k: int) -> npt.NDArray[np.float64]:
    """For each submission (column), the probability that a uniform k-subset kills it."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    m = _as_kill_matrix(kill_matrix)
    n = m.shape[0]
    if n == 0:
        return np.zeros(m.shape[1], dtype=np.float64)
    c = m.sum(axis=0, dtype=np.int64)
    return 1.0 - _miss_probability(n, c, int(k))


def cov_at_k(kill_matrix: BoolMatrix, k: int) -> float:
    """cov@k of one arm on one problem: expected fraction of the pool killed by a k-subset.

    ``kill_matrix`` is a bool array of shape (inputs, submissions): ``[i, j]`` is True when
    input ``i`` kills submission ``j`` (only an arm's legal, gold-carrying inputs belong in it).
    ``k`` larger than the number of inputs uses all of them, as the paper prescribes.
    An arm with no inputs kills nothing (0.0, the paper counts such an arm-problem pair as
    zero). An empty pool (no columns) has no fraction to report: the result is ``nan``, so
    that callers must decide how to aggregate it instead of silently averaging in a 0 or 1.
    """
    p = per_submission_kill_probability(kill_matrix, k)
    if p.size == 0:
        return math.nan
    return float(p.mean())


def cov_at_k_curve(kill_matrix: BoolMatrix, ks: Iterable[int] = DEFAULT_KS) -> dict[int, float]:
    """cov@k at every budget in ``ks`` (default: the paper's ladder 1, 2, 5, ..., 60)."""
    m = _as_kill_matrix(kill_matrix)
    return {int(k): cov_at_k(m, int(k)) for k in ks}


def prefix_coverage(kill_matrix: BoolMatrix, k: int) -> float:
    """Fraction of the pool killed by the *first* ``k`` inputs in emission order.

    Unlike cov@k this depends on order: it is the paper's "prefix cov@k" saturation view
    (Figure B.1), which shows whether an arm front-loads its coverage. Rows must be in
    emission order. ``nan`` for an empty pool.
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    m = _as_kill_matrix(kill_matrix)
    if m.shape[1] == 0:
        return math.nan
    return float(m[: int(k)].any(axis=0).mean())


def prefix_coverage_curve(kill_matrix: BoolMatrix) -> list[float]:
    """Prefix coverage after each input, ``[cov after 1 input, after 2, ...]``."""
    m = _as_kill_matrix(kill_matrix)
    if m.shape[1] == 0:
        return [math.nan] * m.shape[0]
    killed = np.logical_or.accumulate(m, axis=0)
    return [float(v) for v in killed.mean(axis=1)]


def tail_marginal(kill_matrix: BoolMatrix, budget: int, start: int = 6) -> float:
    """Mean new prefix coverage per added input from input ``start`` to ``min(n, budget)``.

    The paper's saturation detail (Table B.6): "mean new coverage per added input over the
    window from the sixth input through the smaller of the arm's actual input count and that
    budget, so arms with fewer inputs than that budget are not diluted". Equal to
    ``(prefix(end) - prefix(start - 1)) / (end - start + 1)``. ``nan`` when the window is empty
    (fewer than ``start`` inputs) or the pool is.
    """
    if start < 1 or budget < 1:
        raise ValueError(f"start and budget must be >= 1, got {start}, {budget}")
    curve = prefix_coverage_curve(kill_matrix)
    end = min(len(curve), budget)
    if end < start or not curve or math.isnan(curve[0]):
        return math.nan
    before = curve[start - 2] if start >= 2 else 0.0
    return (curve[end - 1] - before) / (end - start + 1)


def normalized_cov1(kill_matrix: BoolMatrix, budget: int) -> float:
    """cov@1 / cov@budget: how front-loaded an arm is (Table B.6; higher = more front-loaded).

    ``nan`` when the arm kills nothing at the budget or the pool is empty.
    """
    denom = cov_at_k(kill_matrix, budget)
    if math.isnan(denom) or denom == 0.0:
        return math.nan
    return cov_at_k(kill_matrix, 1) / denom


def miss_rate_ratio(coverage: float, reference_coverage: float) -> float:
    """How many times as many pool members ``coverage`` misses as ``reference_coverage`` does.

    The paper's "its miss rate is 4.01x the agent's": ``(1 - 0.809) / (1 - 0.952)``.
    ``inf`` when the reference misses nothing and the other does.
    """
    miss, ref_miss = 1.0 - coverage, 1.0 - reference_coverage
    if ref_miss == 0.0:
        return math.inf if miss > 0.0 else 1.0
    return miss / ref_miss


def _matrices(matrices: Mapping[str, BoolMatrix] | Sequence[BoolMatrix]) -> list[BoolMatrix]:
    if isinstance(matrices, Mapping):
        return list(matrices.values())
    return list(matrices)


def micro_coverage(
    matrices: Mapping[str, BoolMatrix] | Sequence[BoolMatrix], k: int | None = None
) -> float:
    """Pooled ("micro-pooled") coverage over problems: submissions killed / submissions.

    Each matrix is one problem's (inputs x submissions) kill matrix for one arm. With
    ``k=None`` a submission counts as killed when any input kills it (the paper's Figure 2
    basis); with a ``k`` each problem contributes its expected number of killed submissions at
    cov@k. Large pools weigh more: that is what pooling means, and why the paper bases its
    noninferiority test on :func:`macro_recall` instead. ``nan`` when the pools are all empty.
    """
    killed = 0.0
    total = 0
    for mat in _matrices(matrices):
        m = _as_kill_matrix(mat)
        total += m.shape[1]
        if k is None:
            killed += float(m.any(axis=0).sum())
        else:
            killed += float(per_submission_kill_probability(m, k).sum())
    return killed / total if total else math.nan


def per_problem_recall(
    matrices: Mapping[str, BoolMatrix] | Sequence[BoolMatrix], k: int | None = None
) -> list[float]:
    """Recall of each problem's pool (``nan`` for an empty pool), in the given order."""
    out: list[float] = []
    for mat in _matrices(matrices):
        m = _as_kill_matrix(mat)
        if m.shape[1] == 0:
            out.append(math.nan)
        elif k is None:
            out.append(float(m.any(axis=0).mean()))
        else:
            out.append(cov_at_k(m, k))
    return out


def macro_recall(
    matrices: Mapping[str, BoolMatrix] | Sequence[BoolMatrix], k: int | None = None
) -> float:
    """Mean over problems of each problem's recall (share of its pool killed).

    Every problem weighs the same whatever its pool size: the basis of the paper's
    noninferiority test. Problems with an empty pool have no recall and are left out of the
    mean; ``nan`` when no problem has a pool.
    """
    vals = [v for v in per_problem_recall(matrices, k) if not math.isnan(v)]
    return float(np.mean(vals)) if vals else math.nan
