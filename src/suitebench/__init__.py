"""suitebench: measure, build and certify the strength of test suites.

Two modes share one engine (sandbox, toolchains, content-addressed store, executors):

* suite mode (TestSuiteBench): a pytest suite is scored against a reference program and its
  mutants -- validity V, mutation score M, the kill matrix, and R for an implementation;
* input mode (Test-Suite Auditors): input sets are judged against references and pools of
  submissions, and every kill is certified into a re-checkable ledger.
"""

__version__ = "0.1.0"
