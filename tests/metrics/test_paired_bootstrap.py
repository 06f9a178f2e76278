"""The paired cluster bootstrap: reproducible under a seed, covering a known difference."""

from __future__ import annotations

import numpy as np
import pytest

from suitebench.metrics.bootstrap import (
    DEFAULT_SEED,
    bootstrap_deltas,
    paired_cluster_bootstrap,
    robustness_seeds,
)


def synthetic_recalls(seed: int, n_problems: int, true_delta: float) -> tuple[np.ndarray, ...]:
    """Per-problem recalls that vary a lot between problems, with a shared paired shift."""
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0.3, 0.9, n_problems)  # shared between arms: pairing removes it
    comparator = difficulty + rng.normal(0, 0.02, n_problems)
    arm = difficulty + true_delta + rng.normal(0, 0.02, n_problems)
    return arm, comparator


def test_same_seed_same_interval_other_seed_differs() -> None:
    arm, comp = synthetic_recalls(1, 30, 0.05)
    a = paired_cluster_bootstrap(arm, comp, n_boot=2000, seed=7)
    b = paired_cluster_bootstrap(arm, comp, n_boot=2000, seed=7)
    c = paired_cluster_bootstrap(arm, comp, n_boot=2000, seed=8)
    assert a == b
    assert (a.lo, a.hi) != (c.lo, c.hi)
    assert a.seed == 7 and a.n_boot == 2000 and a.n_clusters == 30
    assert paired_cluster_bootstrap(arm, comp, n_boot=10).seed == DEFAULT_SEED


def test_interval_covers_the_true_difference_and_excludes_zero() -> None:
    covered = 0
    for seed in range(20):
        arm, comp = synthetic_recalls(seed, 40, 0.05)
        r = paired_cluster_bootstrap(arm, comp, n_boot=2000, seed=seed)
        assert r.lo <= r.estimate <= r.hi
        assert r.excludes_zero  # 0.05 against 0.02 noise on 40 problems: clearly separated
        covered += r.lo <= 0.05 <= r.hi
    assert covered >= 16  # nominal 95%: expect ~19 of 20


def test_pairing_is_what_makes_the_interval_narrow() -> None:
    arm, comp = synthetic_recalls(3, 40, 0.05)
    paired = paired_cluster_bootstrap(arm, comp, n_boot=2000, seed=1)
    # shuffling the comparator across problems destroys the pairing: the interval widens
    shuffled = paired_cluster_bootstrap(
        arm, np.random.default_rng(0).permutation(comp), n_boot=2000, seed=1
    )
    assert (paired.hi - paired.lo) * 3 < (shuffled.hi - shuffled.lo)


def test_no_difference_interval_straddles_zero() -> None:
    arm, comp = synthetic_recalls(5, 40, 0.0)
    r = paired_cluster_bootstrap(arm, comp, n_boot=4000, seed=11)
    assert r.lo < 0.0 < r.hi and not r.excludes_zero


def test_weights_give_the_micro_pooled_delta() -> None:
    # two problems, pools of 90 and 10: micro delta is pool-weighted
    arm = {"p1": 1.0, "p2": 0.0}
    comp = {"p1": 0.5, "p2": 1.0}
    pools = {"p1": 90.0, "p2": 10.0}
    r = paired_cluster_bootstrap(arm, comp, weights=pools, n_boot=500)
    assert r.estimate == pytest.approx((90 * 0.5 + 10 * -1.0) / 100)
    macro = paired_cluster_bootstrap(arm, comp, n_boot=500)
    assert macro.estimate == pytest.approx((0.5 - 1.0) / 2)


def test_mappings_are_aligned_by_problem_and_nan_problems_dropped() -> None:
    arm = {"b": 0.9, "a": 0.5, "c": float("nan")}
    comp = {"a": 0.4, "b": 0.7, "c": 0.3}
    r = paired_cluster_bootstrap(arm, comp, n_boot=200)
    assert r.n_clusters == 2
    assert r.estimate == pytest.approx((0.1 + 0.2) / 2)
    with pytest.raises(ValueError, match="only one arm"):
        paired_cluster_bootstrap({"a": 1.0}, {"b": 1.0})
    with pytest.raises(ValueError, match="not paired"):
        paired_cluster_bootstrap([1.0, 2.0], [1.0])


def test_progress_is_reported_and_seeds_are_checked() -> None:
    arm, comp = synthetic_recalls(2, 12, 0.1)
    seen: list[tuple[int, int]] = []
    _, deltas = bootstrap_deltas(
        arm, comp, n_boot=3000, seed=4, progress=lambda d, t: seen.append((d, t))
    )
    assert deltas.shape == (3000,)
    assert seen[-1] == (3000, 3000)
    results = robustness_seeds(arm, comp, seeds=range(12), n_boot=1000)
    assert len(results) == 12 and all(r.lo > 0 for r in results)
