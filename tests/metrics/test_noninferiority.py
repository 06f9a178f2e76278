"""Noninferiority at a margin, both ways, and Holm across a family of arms."""

from __future__ import annotations

import numpy as np
import pytest

from suitebench.metrics.noninferiority import holm, noninferiority, noninferiority_family


def recalls(seed: int, n: int, shift: float, noise: float = 0.01) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.6, 0.98, n)
    return np.clip(base + shift + rng.normal(0, noise, n), 0, 1), base


def test_slightly_worse_arm_within_margin_is_noninferior() -> None:
    arm, official = recalls(1, 60, -0.004)  # like the paper's codex: -0.004 at margin 0.02
    r = noninferiority(arm, official, margin=0.02, n_boot=4000, seed=3)
    assert r.delta < 0
    assert r.lo > -0.02 and r.noninferior
    assert r.p_value < 0.025


def test_clearly_worse_arm_is_not_noninferior() -> None:
    arm, official = recalls(2, 60, -0.10)  # like budget-matched random: ~10p short
    r = noninferiority(arm, official, margin=0.02, n_boot=4000, seed=3)
    assert not r.noninferior and r.hi < -0.02
    assert r.p_value > 0.5


def test_decision_depends_on_the_margin() -> None:
    arm, official = recalls(3, 60, -0.03)
    strict = noninferiority(arm, official, margin=0.02, n_boot=4000)
    lenient = noninferiority(arm, official, margin=0.06, n_boot=4000)
    assert not strict.noninferior and lenient.noninferior
    with pytest.raises(ValueError):
        noninferiority(arm, official, margin=-0.1)


def test_holm_step_down() -> None:
    # m = 3, alpha = .05: thresholds .0167, .025, .05
    assert holm({"a": 0.01, "b": 0.02, "c": 0.04}, 0.05) == {"a": True, "b": True, "c": True}
    # the second fails its threshold: it and everything after it are kept
    assert holm({"a": 0.01, "b": 0.03, "c": 0.04}, 0.05) == {"a": True, "b": False, "c": False}
    assert holm({"a": 0.02}, 0.05) == {"a": True}


def test_family_marks_holm_passes_and_keeps_single_arm_decisions() -> None:
    rng = np.random.default_rng(9)
    official = rng.uniform(0.6, 0.98, 80)
    arms = {
        "close": official - 0.002 + rng.normal(0, 0.005, 80),
        "closer": official + rng.normal(0, 0.005, 80),
        "random": official - 0.11 + rng.normal(0, 0.02, 80),
    }
    out = {r.arm: r for r in noninferiority_family(arms, official, n_boot=4000)}
    assert out["close"].noninferior and out["close"].holm_pass
    assert out["closer"].noninferior and out["closer"].holm_pass
    assert not out["random"].noninferior and out["random"].holm_pass is False
    assert sum(bool(r.holm_pass) for r in out.values()) == 2
    assert noninferiority(arms["close"], official, n_boot=100).holm_pass is None
