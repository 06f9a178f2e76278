"""Suite-mode validity, mutation_score and reference pass rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from suitebench.metrics.mutation import (
    killed_mutants,
    mean_score,
    mutation_score,
    mutation_score_from_matrix,
    per_section_mutation_score,
    reference_pass_rate,
    validity,
)


def test_rates_and_empty_denominators() -> None:
    assert mutation_score(3, 4) == 0.75
    assert validity(88, 100) == 0.88
    assert reference_pass_rate(0, 5) == 0.0
    assert math.isnan(mutation_score(0, 0))
    with pytest.raises(ValueError, match="mutation_score"):
        mutation_score(5, 4)


def test_invalid_tests_do_not_count_towards_the_mutation_score() -> None:
    # test 0 fails on the reference too (kills everything): invalid, must not score
    kills = np.array(
        [[1, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 1]],
        dtype=bool,
    )
    valid = [False, True, True]
    assert killed_mutants(kills, valid).tolist() == [False, True, False, True]
    assert mutation_score_from_matrix(kills, valid) == 0.5
    assert mutation_score_from_matrix(kills) == 1.0
    with pytest.raises(ValueError, match="validity flags"):
        mutation_score_from_matrix(kills, [True])


def test_per_section_scores_and_mean_skips_unmeasured() -> None:
    killed = {"m1": True, "m2": False, "m3": True, "m4": False}
    sections = {"m1": "Counting", "m2": "Counting", "m3": "Output"}
    assert per_section_mutation_score(killed, sections) == {
        "Counting": 0.5,
        "Output": 1.0,
        "": 0.0,
    }
    assert mean_score([0.5, float("nan"), 1.0]) == 0.75
    assert math.isnan(mean_score([]))
