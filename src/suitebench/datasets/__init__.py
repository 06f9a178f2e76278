"""Datasets as downloaded (parquet shards, JSON lines) -> input-mode problem directories.

``suitebench import FORMAT PATH --out DIR`` (``suitebench.cli.import_``): one module per
format (``codecontests``, ``codecontests_plus``, ``codeforces``, ``taco`` for TACO and APPS),
one reader of files on disk (``source``), one writer of problem directories and their
provenance (``writer``), one language contract (``languages``). See docs/import.md.
"""
