"""metrics: the papers' figures, pure (numpy/scipy in, numbers out; never runs a program).

cov@k and pooled/macro coverage (input mode), the paired cluster bootstrap and noninferiority
for arm comparisons, Wilson bounds for the review's false-discovery rate, and the suite-mode
validity / mutation_score / reference pass rate, near-clone clustering of findings, overlap
of killed sets and of inputs, Cohen's kappa and correlations with their intervals.
"""

from suitebench.metrics.agreement import Kappa, cohen_kappa
from suitebench.metrics.bootstrap import (
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    BootstrapResult,
    paired_cluster_bootstrap,
)
from suitebench.metrics.correlation import Correlation, correlation
from suitebench.metrics.coverage import (
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
from suitebench.metrics.mutation import (
    mutation_score,
    mutation_score_from_matrix,
    per_section_mutation_score,
    reference_pass_rate,
    validity,
)
from suitebench.metrics.noninferiority import (
    DEFAULT_MARGIN,
    NoninferiorityResult,
    holm,
    noninferiority,
    noninferiority_family,
)
from suitebench.metrics.overlap import (
    InputOverlap,
    SetOverlap,
    clusters_by_problem,
    input_overlap,
    jaccard,
    near_clone_clusters,
    set_overlap,
)
from suitebench.metrics.wilson import wilson_interval, wilson_lower, wilson_upper

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
