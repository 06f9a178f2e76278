"""Wilson intervals against published values and the auditors paper's own FDR bounds."""

from __future__ import annotations

import pytest

from suitebench.metrics.wilson import wilson_interval, wilson_lower, wilson_upper


@pytest.mark.parametrize(
    ("x", "n", "lo", "hi"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # by hand, z = 1.96: p = .25, denom = 1 + 3.8416/20 = 1.19208,
        # centre = (.25 + .09604)/1.19208 = .29029, half = 1.64418 * sqrt(.011776) = .17842
        (5, 20, 0.1119, 0.4687),
    ],
)
def test_wilson_matches_published_intervals(x: int, n: int, lo: float, hi: float) -> None:
    got_lo, got_hi = wilson_interval(x, n)
    assert got_lo == pytest.approx(lo, abs=6e-5)
    assert got_hi == pytest.approx(hi, abs=6e-5)


def test_paper_fdr_bounds_are_reproduced() -> None:
    # 0 overturns in 202 adjudicated rows -> 1.87%; 0 in 163 -> 2.3% (both z^2 / (n + z^2))
    assert round(wilson_upper(0, 202) * 100, 2) == 1.87
    assert round(wilson_upper(0, 163) * 100, 1) == 2.3


def test_one_sided_bound_is_tighter_and_edges_hold() -> None:
    assert wilson_upper(0, 202, one_sided=True) < wilson_upper(0, 202)
    # one-sided 95% at zero successes: z = 1.6449, z^2/(n+z^2) = 2.7055/204.7055
    assert wilson_upper(0, 202, one_sided=True) == pytest.approx(2.7055 / 204.7055, rel=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_upper(10, 10) == 1.0
    assert wilson_lower(0, 10) == 0.0
    # non-integer counts (effective sample sizes) are accepted
    assert 0.0 < wilson_upper(0.5, 12.3) < 1.0
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
