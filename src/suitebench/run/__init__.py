"""The engine: sandbox, toolchains, the store and executors.

``run`` knows nothing about suites, mutants or judges: it builds programs and runs them under
limits, caches outcomes by content, and spreads batches of jobs over a pool or a Dask cluster.
"""
