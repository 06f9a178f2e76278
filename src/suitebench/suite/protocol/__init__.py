"""The evaluation protocol of suite mode: the plan of a score, a cell's status, a mutant's verdict,
V, M and the matrix."""
