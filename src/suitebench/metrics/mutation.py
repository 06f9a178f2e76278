"""Suite-mode scores of the TestSuiteBench paper: validity V, mutation score M, pass rate R.

* *Validity* V: "the fraction of generated tests that do not kill the reference executable"
  (a test that fails on the reference, or flips across three reference runs, is invalid).
* *Mutation score* M: "the fraction of mutants killed by" the suite, counting only valid
  tests ("we filter out all tests that fail on the reference executable when calculating M"),
  so a suite of always-failing tests cannot score.
* *Reference pass rate* R: "the fraction of reference tests that do not kill" a generated
  implementation.

An empty denominator (no tests, no mutants) has no rate: these functions return ``nan`` and
aggregators skip it, rather than report a 0 or 1 nobody measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt


def _rate(num: float, den: float, what: str) -> float:
    if num < 0 or den < 0 or num > den:
        raise ValueError(f"{what}: need 0 <= numerator <= denominator, got {num}/{den}")
    return num / den if den else math.nan


def mutation_score(killed: int, scored: int) -> float:
    """M = killed / scored mutants (``nan`` when no mutant was scored)."""
    return _rate(killed, scored, "mutation_score")


def validity(valid: int, total: int) -> float:
    """V = valid tests / generated tests (``nan`` for an empty suite)."""
    return _rate(valid, total, "validity")


def reference_pass_rate(passed: int, total: int) -> float:
    """R = reference tests passed by an implementation / reference tests."""
    return _rate(passed, total, "reference_pass_rate")


def killed_mutants(
    kill_matrix: npt.ArrayLike, valid_tests: npt.ArrayLike | None = None
) -> npt.NDArray[np.bool_]:
    """Per mutant: killed by at least one *valid* test.

    ``kill_matrix`` is (tests x mutants), True where the test fails on the mutant;
    ``valid_tests`` a bool per test (default: all valid).
    """
    m = np.asarray(kill_matrix, dtype=np.bool_)
    if m.ndim != 2:
        raise ValueError(f"kill_matrix must be (tests x mutants), got shape {m.shape}")
    if valid_tests is None:
        return np.asarray(m.any(axis=0), dtype=np.bool_)
    v = np.asarray(valid_tests, dtype=np.bool_).ravel()
    if v.size != m.shape[0]:
        raise ValueError(f"{v.size} validity flags for {m.shape[0]} tests")
    return np.asarray(m[v].any(axis=0), dtype=np.bool_)


def mutation_score_from_matrix(
    kill_matrix: npt.ArrayLike, valid_tests: npt.ArrayLike | None = None
) -> float:
    """M straight from a (tests x mutants) kill matrix, counting valid tests only."""
    k = killed_mutants(kill_matrix, valid_tests)
    return mutation_score(int(k.sum()), int(k.size))


def per_section_mutation_score(
    killed: Mapping[str, bool], section_of: Mapping[str, str]
) -> dict[str, float]:
    """M per specification section (each TestSuiteBench mutant violates one section).

    ``killed`` maps mutant id to killed; ``section_of`` maps mutant id to its section. A mutant
    without a section is grouped under ``""``. Sections appear in first-seen order.
    """
    counts: dict[str, list[int]] = {}
    for mid, was_killed in killed.items():
        c = counts.setdefault(section_of.get(mid, ""), [0, 0])
        c[0] += int(bool(was_killed))
        c[1] += 1
    return {s: mutation_score(k, n) for s, (k, n) in counts.items()}


def mean_score(values: Iterable[float]) -> float:
    """Mean over instances of a per-instance score, skipping ``nan`` (unmeasured) entries."""
    vals = [v for v in values if not math.isnan(v)]
    return float(np.mean(vals)) if vals else math.nan
