"""cov@k against brute-force enumeration of every k-subset, and the pooled aggregates."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from suitebench.metrics.cov_at_k import (
    DEFAULT_KS,
    cov_at_k,
    cov_at_k_curve,
    macro_recall,
    micro_coverage,
    miss_rate_ratio,
    normalized_cov1,
    per_problem_recall,
    prefix_coverage,
    prefix_coverage_curve,
    tail_marginal,
)


def brute_cov_at_k(m: np.ndarray, k: int) -> Fraction:
    """Average, over every k-subset of rows, of the fraction of columns some chosen row kills."""
    n, cols = m.shape
    k = min(k, n)
    total = Fraction(0)
    count = 0
    for subset in itertools.combinations(range(n), k):
        killed = int(m[list(subset)].any(axis=0).sum())
        total += Fraction(killed, cols)
        count += 1
    return total / count


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 7])
def test_cov_at_k_equals_enumeration_of_all_subsets(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    cols = int(rng.integers(1, 7))
    density = float(rng.uniform(0.05, 0.6))
    m = rng.random((n, cols)) < density
    for k in range(1, n + 3):  # includes k > n: the whole set is used
        assert cov_at_k(m, k) == pytest.approx(float(brute_cov_at_k(m, k)), abs=1e-12)


def test_zero_and_all_kill_columns() -> None:
    # column 0 killed by no input, column 1 by every input, column 2 by exactly one of 4
    m = np.array(
        [[0, 1, 1], [0, 1, 0], [0, 1, 0], [0, 1, 0]],
        dtype=bool,
    )
    # k=1: (0 + 1 + 1/4) / 3 ; k=2: (0 + 1 + 1 - C(3,2)/C(4,2)) / 3 = (1 + 1/2) / 3
    assert cov_at_k(m, 1) == pytest.approx((0 + 1 + 0.25) / 3)
    assert cov_at_k(m, 2) == pytest.approx((1 + 0.5) / 3)
    assert cov_at_k(m, 4) == pytest.approx(2 / 3)
    assert cov_at_k(m, 60) == pytest.approx(2 / 3)  # fewer inputs than k: the whole set


def test_large_budget_is_stable_and_monotone() -> None:
    rng = np.random.default_rng(42)
    m = rng.random((300, 50)) < 0.01
    curve = cov_at_k_curve(m, ks=range(1, 301))
    values = [curve[k] for k in range(1, 301)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(values))
    assert values[-1] == pytest.approx(float(m.any(axis=0).mean()))


def test_curve_uses_the_paper_ladder_by_default() -> None:
    m = np.eye(3, dtype=bool)
    curve = cov_at_k_curve(m)
    assert tuple(curve) == DEFAULT_KS == (1, 2, 5, 10, 20, 40, 50, 60)
    assert curve[1] == pytest.approx(1 / 3)
    assert curve[2] == pytest.approx(2 / 3)
    assert curve[5] == pytest.approx(1.0)


def test_empty_pool_is_nan_and_empty_arm_is_zero() -> None:
    assert math.isnan(cov_at_k(np.zeros((5, 0), dtype=bool), 3))
    assert cov_at_k(np.zeros((0, 4), dtype=bool), 3) == 0.0


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="positive integer"):
        cov_at_k(np.eye(2, dtype=bool), 0)
    with pytest.raises(ValueError, match="2-dimensional"):
        cov_at_k(np.ones(3, dtype=bool), 1)
    with pytest.raises(ValueError, match="booleans"):
        cov_at_k(np.array([[0, 2]]), 1)


def test_micro_pools_submissions_and_macro_weighs_problems_equally() -> None:
    big = np.zeros((2, 10), dtype=bool)
    big[0, :9] = True  # 9 of 10 killed
    small = np.zeros((2, 2), dtype=bool)  # 0 of 2 killed
    empty = np.zeros((2, 0), dtype=bool)  # no pool: left out of the macro mean
    problems = {"big": big, "small": small, "empty": empty}
    assert micro_coverage(problems) == pytest.approx(9 / 12)
    assert macro_recall(problems) == pytest.approx((0.9 + 0.0) / 2)
    recalls = per_problem_recall(problems)
    assert recalls[:2] == [pytest.approx(0.9), 0.0] and math.isnan(recalls[2])
    # at a budget k=1 each problem contributes its expected kills
    assert micro_coverage(problems, k=1) == pytest.approx((10 * cov_at_k(big, 1)) / 12)
    assert macro_recall(problems, k=1) == pytest.approx(cov_at_k(big, 1) / 2)
    assert math.isnan(micro_coverage([empty]))
    assert math.isnan(macro_recall([empty]))


def test_prefix_coverage_follows_emission_order() -> None:
    # input 0 kills nothing, input 1 kills submissions 0 and 1, input 2 kills submission 2
    m = np.array([[0, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0]], dtype=bool)
    assert prefix_coverage(m, 1) == 0.0
    assert prefix_coverage(m, 2) == 0.5
    assert prefix_coverage(m, 9) == 0.75
    assert prefix_coverage_curve(m) == [0.0, 0.5, 0.75]
    # the same inputs in the other order front-load: prefix differs, cov@k does not
    assert prefix_coverage(m[::-1], 1) == 0.25
    assert cov_at_k(m[::-1], 2) == pytest.approx(cov_at_k(m, 2))


def test_saturation_figures() -> None:
    # 10 inputs over 10 submissions; input i kills submission i only, except that the first
    # input also kills submissions 5..9: prefix = .6, .7, .8, .9, 1, 1, 1, ...
    m = np.eye(10, dtype=bool)
    m[0, 5:] = True
    curve = prefix_coverage_curve(m)
    assert curve[:5] == pytest.approx([0.6, 0.7, 0.8, 0.9, 1.0])
    # window is inputs 6..10 (1-based): no new coverage after input 5
    assert tail_marginal(m, budget=50) == 0.0
    # window from input 2 through 4: (.9 - .6) / 3
    assert tail_marginal(m, budget=4, start=2) == pytest.approx(0.1)
    assert math.isnan(tail_marginal(m[:4], budget=50))  # fewer inputs than the window start
    assert normalized_cov1(m, 10) == pytest.approx(cov_at_k(m, 1) / 1.0)
    assert math.isnan(normalized_cov1(np.zeros((3, 2), dtype=bool), 3))
    # the paper's example: CodeContests+ 0.809 vs the agent's 0.952 (4.01x from unrounded)
    assert miss_rate_ratio(0.809, 0.952) == pytest.approx(3.98, abs=0.01)
    assert miss_rate_ratio(0.5, 1.0) == math.inf and miss_rate_ratio(1.0, 1.0) == 1.0
