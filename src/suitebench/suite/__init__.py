"""Suite mode (TestSuiteBench), host side: validity V, mutation score M, the kill matrix and R.

``scoreplan`` decides which runs a score needs and how each is keyed in the store, ``score``
runs them (reference runs, coverage, mutants) through ``runner``'s engines, and ``tally`` turns
their per-test records into the result (``result``).  What runs inside the sandbox, in the
suite's pytest process, is the package ``inside``.
"""
