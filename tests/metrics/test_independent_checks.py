"""Each statistic the report shows, checked against a computation that does not share its code.

The paired cluster bootstrap against ``scipy.stats.bootstrap`` on unclustered data and against
the exact resampling distribution of small clustered cases (enumerated by hand); the overlap
regions against plain set arithmetic; Cohen's kappa against a worked example and its standard
error against a bootstrap; correlations against ``scipy.stats``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from suitebench.metrics.agreement import cohen_kappa
from suitebench.metrics.bootstrap import bootstrap_deltas, paired_cluster_bootstrap
from suitebench.metrics.correlation import correlation
from suitebench.metrics.overlap import input_overlap, normalize_whitespace, set_overlap

# --- the paired cluster bootstrap -------------------------------------------------------------


def test_bootstrap_matches_scipy_on_unclustered_paired_data() -> None:
    """One value per cluster: the cluster bootstrap is the ordinary paired bootstrap."""
    rng = np.random.default_rng(4)
    comparator = rng.uniform(0.2, 0.9, 60)
    arm = comparator + 0.03 + rng.normal(0, 0.05, 60)
    ours = paired_cluster_bootstrap(arm, comparator, n_boot=40_000, seed=1)
    ref = stats.bootstrap(
        (arm, comparator),
        lambda a, b, axis=-1: np.mean(a - b, axis=axis),
        paired=True,
        n_resamples=40_000,
        method="percentile",
        confidence_level=0.95,
        random_state=np.random.default_rng(99),
    )
    width = ours.hi - ours.lo
    assert ours.estimate == pytest.approx(float(np.mean(arm - comparator)))
    # two independent Monte Carlo runs of the same distribution: equal to a small share of the
    # interval's width (the Monte Carlo error of a 2.5% quantile at 40k resamples is ~1%)
    assert abs(ours.lo - ref.confidence_interval.low) < 0.04 * width
    assert abs(ours.hi - ref.confidence_interval.high) < 0.04 * width


def _exact_distribution(values: list[float], weights: list[float]) -> dict[float, float]:
    """Every ordered resample of the problems, equally likely: the bootstrap's true law."""
    p = len(values)
    law: Counter[float] = Counter()
    for draw in itertools.product(range(p), repeat=p):
        num = sum(weights[i] * values[i] for i in draw)
        den = sum(weights[i] for i in draw)
        law[round(num / den, 9)] += 1
    total = p**p
    return {v: c / total for v, c in law.items()}


def test_clustered_two_problem_case_checked_by_hand() -> None:
    """Problem A: pool of 4, the arm kills 3, the comparator 1; problem B: pool of 2, the arm
    kills 0, the comparator 2. Micro (pool-weighted) delta = (4*0.5 + 2*(-1)) / 6 = 0.
    Resampling problems: (A,A) -> 0.5 with prob 1/4; (A,B), (B,A) -> 0 with prob 1/2;
    (B,B) -> -1 with prob 1/4. The 95% percentile interval is therefore [-1, 0.5]; resampling
    the 6 submissions instead would produce many other values (e.g. 1/6)."""
    arm = {"A": 0.75, "B": 0.0}
    comp = {"A": 0.25, "B": 1.0}
    pools = {"A": 4.0, "B": 2.0}
    est, deltas = bootstrap_deltas(arm, comp, weights=pools, n_boot=20_000, seed=5)
    assert est == pytest.approx(0.0)
    values, counts = np.unique(np.round(deltas, 9), return_counts=True)
    assert values.tolist() == [-1.0, 0.0, 0.5]
    shares = counts / counts.sum()
    assert shares == pytest.approx([0.25, 0.5, 0.25], abs=0.015)
    r = paired_cluster_bootstrap(arm, comp, weights=pools, n_boot=20_000, seed=5)
    assert (r.lo, r.hi) == (-1.0, 0.5)


def test_clustered_three_problems_follow_the_enumerated_law() -> None:
    d = [0.4, -0.1, 0.25]
    w = [5.0, 1.0, 2.0]
    law = _exact_distribution(d, w)
    _, deltas = bootstrap_deltas(d, [0.0, 0.0, 0.0], weights=w, n_boot=30_000, seed=3)
    seen = Counter(np.round(deltas, 9).tolist())
    assert set(seen) <= set(law)
    for value, prob in law.items():
        assert seen[value] / deltas.size == pytest.approx(prob, abs=0.012)


# --- overlap of killed sets -------------------------------------------------------------------


def test_overlap_regions_agree_with_set_arithmetic() -> None:
    rnd = random.Random(7)
    universe = set(range(200))
    sets = {
        name: {x for x in universe if rnd.random() < p}
        for name, p in [("opus", 0.5), ("sol", 0.35), ("gemini", 0.3), ("mini", 0.1)]
    }
    o = set_overlap(sets, universe)
    names = list(sets)
    union = set().union(*sets.values())
    assert o.union == len(union)
    assert o.none == len(universe - union) and o.universe == 200
    assert sum(o.regions.values()) == o.union
    assert len(o.regions) == 2**4 - 1 == len(o.intersections)
    for r in range(1, 5):
        for combo in itertools.combinations(names, r):
            inside = set.intersection(*(sets[n] for n in combo))
            outside = set().union(*(sets[n] for n in names if n not in combo))
            assert o.regions[combo] == len(inside - outside)
            assert o.intersections[combo] == len(inside)


def test_overlap_figure_12_shape() -> None:
    """Three suites: killed by all, by exactly one, combined gain and killed by none."""
    a, b, c = {1, 2, 3, 4, 5, 6}, {1, 2, 3, 7}, {1, 2, 8}
    o = set_overlap({"a": a, "b": b, "c": c}, range(1, 11))
    assert o.regions[("a", "b", "c")] == 2
    assert o.regions[("a", "b")] == 1 and o.regions[("b",)] == 1 and o.regions[("c",)] == 1
    assert o.regions[("a",)] == 3
    assert o.union == 8 and o.none == 2
    with pytest.raises(ValueError, match="not in the universe"):
        set_overlap({"a": {11}}, range(10))


def test_input_overlap_exact_and_whitespace_normalised() -> None:
    official = [b"3\n1 2 3\n", b"1\n5\n", b"2\n7 7\n"]
    arm = [b"3\n1 2 3\n", b"1 5", b"2\n7  7", b"4\n1 1 1 1\n"]
    o = input_overlap(arm, official)
    assert o.exact == 1 and o.normalized == 3 and o.arm_inputs == 4
    assert o.exact_share == 0.25 and o.normalized_share == 0.75
    assert o.jaccard_exact == pytest.approx(1 / 6)
    assert o.jaccard_normalized == pytest.approx(3 / 4)
    assert normalize_whitespace(b" a\t b \n") == b"a b"


# --- Cohen's kappa ----------------------------------------------------------------------------


def test_kappa_worked_example() -> None:
    """50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15.
    p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5 (a says yes 25, b says yes 30);
    kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4."""
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    k = cohen_kappa(a, b)
    assert k.observed == pytest.approx(0.7)
    assert k.expected == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)
    assert k.labels == ("no", "yes") and k.table == ((15, 10), (5, 20))
    assert k.lo < 0.4 < k.hi


def test_kappa_edge_cases() -> None:
    assert cohen_kappa([1, 0, 1], [1, 0, 1]).kappa == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([0, 0, 0], [0, 0, 0]).kappa)  # chance agreement is total
    assert cohen_kappa([1, 0], [0, 1]).kappa == pytest.approx(-1.0)
    constant = cohen_kappa([0, 0, 0, 0], [1, 0, 1, 0])  # an arm that kills nothing
    assert constant.kappa == 0.0 and math.isnan(constant.lo) and math.isnan(constant.hi)
    with pytest.raises(ValueError, match="not paired"):
        cohen_kappa([1], [1, 0])


def test_kappa_standard_error_matches_a_bootstrap() -> None:
    rng = np.random.default_rng(11)
    truth = rng.random(600) < 0.4
    a = truth ^ (rng.random(600) < 0.15)
    b = truth ^ (rng.random(600) < 0.2)
    k = cohen_kappa(a.tolist(), b.tolist())
    se = (k.hi - k.lo) / (2 * 1.959964)
    boot = stats.bootstrap(
        (a, b),
        lambda x, y: cohen_kappa(x.tolist(), y.tolist()).kappa,
        paired=True,
        vectorized=False,
        n_resamples=1500,
        method="percentile",
        random_state=np.random.default_rng(2),
    )
    assert se == pytest.approx(boot.standard_error, rel=0.12)


# --- correlations ----------------------------------------------------------------------------


def test_pearson_matches_scipy_with_fisher_interval() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=30)
    y = 0.5 * x + rng.normal(size=30)
    ours = correlation(x, y, method="pearson")
    ref = stats.pearsonr(x, y)
    ci = ref.confidence_interval(0.95)
    assert ours.coefficient == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue)
    assert (ours.lo, ours.hi) == pytest.approx((ci.low, ci.high))


def test_spearman_matches_scipy_and_ties_get_average_ranks() -> None:
    sections = [3, 5, 5, 8, 2, 9, 4, 7, 6, 10, 5, 3]
    m = [0.9, 0.7, 0.8, 0.5, 0.95, 0.4, 0.85, 0.6, 0.75, 0.3, 0.7, 0.88]
    ours = correlation(sections, m)
    ref = stats.spearmanr(sections, m)
    assert ours.method == "spearman" and ours.n == 12
    assert ours.coefficient == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue)
    # Bonett-Wright: Fisher z with sqrt((1 + r^2/2) / (n - 3))
    r = ref.statistic
    half = 1.959964 * math.sqrt((1 + r * r / 2) / 9)
    assert ours.lo == pytest.approx(math.tanh(math.atanh(r) - half), abs=1e-6)
    assert ours.hi == pytest.approx(math.tanh(math.atanh(r) + half), abs=1e-6)
    assert ours.hi < 0  # more sections, lower M


def test_correlation_degenerate_inputs() -> None:
    assert math.isnan(correlation([1, 2, 3], [4, 4, 4]).coefficient)
    few = correlation([1, 2, 3], [1, 3, 2])
    assert not math.isnan(few.coefficient) and math.isnan(few.lo)
    with pytest.raises(ValueError, match="not paired"):
        correlation([1, 2], [1])
