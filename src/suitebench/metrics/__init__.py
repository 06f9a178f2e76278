"""metrics: the papers' figures, pure (numpy/scipy in, numbers out; never runs a program).

cov@k and pooled/macro coverage (input mode), the paired cluster bootstrap and noninferiority
for arm comparisons, Wilson bounds for the review's false-discovery rate, and the suite-mode
validity / mutation_score / reference pass rate, near-clone clustering of findings, overlap
of killed sets and of inputs, Cohen's kappa and correlations with their intervals.

Each submodule is imported when one of its names is first asked for (the package itself
imports none: numpy and scipy would cost a command that needs neither a third of a second).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "BootstrapResult": "bootstrap",
    "Correlation": "correlation",
    "DEFAULT_KS": "cov_at_k",
    "DEFAULT_MARGIN": "noninferiority",
    "DEFAULT_N_BOOT": "bootstrap",
    "DEFAULT_SEED": "bootstrap",
    "InputOverlap": "overlap",
    "Kappa": "agreement",
    "NoninferiorityResult": "noninferiority",
    "SetOverlap": "overlap",
    "clusters_by_problem": "overlap",
    "cohen_kappa": "agreement",
    "correlation": "correlation",
    "cov_at_k": "cov_at_k",
    "cov_at_k_curve": "cov_at_k",
    "holm": "noninferiority",
    "input_overlap": "overlap",
    "jaccard": "overlap",
    "macro_recall": "cov_at_k",
    "micro_coverage": "cov_at_k",
    "miss_rate_ratio": "cov_at_k",
    "mutation_score": "mutation",
    "mutation_score_from_matrix": "mutation",
    "near_clone_clusters": "overlap",
    "noninferiority": "noninferiority",
    "noninferiority_family": "noninferiority",
    "normalized_cov1": "cov_at_k",
    "paired_cluster_bootstrap": "bootstrap",
    "per_problem_recall": "cov_at_k",
    "per_section_mutation_score": "mutation",
    "prefix_coverage": "cov_at_k",
    "prefix_coverage_curve": "cov_at_k",
    "reference_pass_rate": "mutation",
    "set_overlap": "overlap",
    "tail_marginal": "cov_at_k",
    "validity": "mutation",
    "wilson_interval": "wilson",
    "wilson_lower": "wilson",
    "wilson_upper": "wilson",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "DEFAULT_KS",
    "DEFAULT_MARGIN",
    "DEFAULT_N_BOOT",
    "DEFAULT_SEED",
    "BootstrapResult",
    "Correlation",
    "InputOverlap",
    "Kappa",
    "NoninferiorityResult",
    "SetOverlap",
    "clusters_by_problem",
    "cohen_kappa",
    "correlation",
    "cov_at_k",
    "cov_at_k_curve",
    "holm",
    "input_overlap",
    "jaccard",
    "macro_recall",
    "micro_coverage",
    "miss_rate_ratio",
    "mutation_score",
    "mutation_score_from_matrix",
    "near_clone_clusters",
    "noninferiority",
    "noninferiority_family",
    "normalized_cov1",
    "paired_cluster_bootstrap",
    "per_problem_recall",
    "per_section_mutation_score",
    "prefix_coverage",
    "prefix_coverage_curve",
    "reference_pass_rate",
    "set_overlap",
    "tail_marginal",
    "validity",
    "wilson_interval",
    "wilson_lower",
    "wilson_upper",
]
