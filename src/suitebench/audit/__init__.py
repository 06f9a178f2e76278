"""Input mode (Test-Suite Auditors): judge arms against submission pools and certify every kill.

The chain -- legality (with the validator quality gate), the consensus_oracle, the judge,
determinism re-judges, consensus correction, brute-force adjudication, tolerance -- turns output
disagreements into a re-checkable ledger; cov@k compares arms. Entry points:

* :func:`suitebench.audit.pipeline.run_audit` -- many problems, all outputs written;
* :func:`suitebench.audit.chain.audit_problem` -- one problem, records only;
* :func:`suitebench.audit.ledger.recheck_ledger` -- re-check a ledger from scratch;
* :class:`suitebench.audit.runs.AuditEngine` -- the store, executor and build cache runs go through;
* :class:`suitebench.audit.results.AuditRecord` -- ``results.json``, typed.
"""
