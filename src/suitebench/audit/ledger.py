"""The ledger: one row per certified finding, re-checkable by machine from scratch.

``ledger.csv`` (and ``ledger.json``) carry, per certified (arm, submission): the problem, the
submission and its sha256, the pool, the official verdict, the killing input's id and sha256
(the input itself is saved under ``inputs/<sha256>`` next to the ledger), the legality
certificate, the references that formed the consensus_oracle, expected and got (first 80
characters and sha256), the verdict, the determinism class and the arm that found it.
``retractions.csv`` keeps every withdrawn flag with the stage and the reason.

:func:`recheck_ledger` rebuilds, re-runs and re-judges every row with nothing taken from the
audit's store, and reports each row that no longer holds.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from suitebench.audit.checkers import Checker
from suitebench.audit.judge import JudgeTask, judge_limits, judge_many
from suitebench.audit.legality import certify_legality
from suitebench.audit.oracle import consensus_oracle
from suitebench.audit.records import (
    CRASH,
    WRONG_OUTPUT,
    GoldStatus,
    LedgerRow,
    Legality,
    Retraction,
    Verdict,
)
from suitebench.audit.runs import AuditEngine, file_sha256
from suitebench.audit.tables import compile_label
from suitebench.model.problem import ExitStatus, Problem, ProblemError, load_problem
from suitebench.run.outcome import sha256_bytes

__all__ = [
    "LedgerError",
    "RecheckIssue",
    "read_ledger",
    "recheck_ledger",
    "write_ledger",
    "write_retractions",
]

RETRACTION_COLUMNS = [f.name for f in dataclasses.fields(Retraction)]


class LedgerError(ValueError):
    """A ledger file that cannot be read: names the file, the row and the column."""


@dataclass(frozen=True)
class RecheckIssue:
    """A ledger row that no longer holds, and why."""

    row: int  # 1-based data row in ledger.csv
    problem: str
    arm: str
    submission_id: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "reasons": list(self.reasons)}


def write_ledger(rows: Sequence[LedgerRow], out_dir: Path, inputs: dict[str, bytes]) -> None:
    """Write ledger.csv, ledger.json and the killing inputs under inputs/."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cols = LedgerRow.columns()
    with (out_dir / "ledger.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow(
                {
                    k: (str(v).lower() if isinstance(v, bool) else v)
                    for k, v in dataclasses.asdict(r).items()
                }
            )
    (out_dir / "ledger.json").write_text(
        json.dumps([dataclasses.asdict(r) for r in rows], indent=1) + "\n", encoding="utf-8"
    )
    inp_dir = out_dir / "inputs"
    inp_dir.mkdir(exist_ok=True)
    for sha, data in inputs.items():
        target = inp_dir / sha
        if not target.exists():
            target.write_bytes(data)


def write_retractions(rows: Sequence[Retraction], out_dir: Path) -> None:
    with (out_dir / "retractions.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=RETRACTION_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(dataclasses.asdict(r))


def read_ledger(path: Path) -> list[LedgerRow]:
    cols = LedgerRow.columns()
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            # ledgers written before the legality basis was recorded: their legal inputs
            # were all certified by a validator
            optional = {"legality_basis", "exit_status", "compile_flags"}
            missing = [c for c in cols if c not in (reader.fieldnames or []) and c not in optional]
            if missing:
                raise LedgerError(f"{path}: missing columns {missing}")
            rows = []
            for n, rec in enumerate(reader, start=1):
                vals: dict[str, object] = {c: rec.get(c) for c in cols}
                for c in ("exit_status", "compile_flags"):  # before the judge options were
                    vals[c] = vals[c] or ""
                if vals["legality_basis"] is None:
                    vals["legality_basis"] = "validator" if rec["legality"] == "legal" else ""
                if rec["new_finding"] not in ("true", "false"):
                    raise LedgerError(f"{path}: row {n}: column 'new_finding': expected true/false")
                vals["new_finding"] = rec["new_finding"] == "true"
                rows.append(LedgerRow(**vals))  # type: ignore[arg-type]
    except OSError as exc:
        raise LedgerError(f"{path}: cannot read the ledger: {exc}") from None
    return rows


def _verdict_class(v: str) -> str:
    try:
        verdict = Verdict(v)
    except ValueError:
        return f"unknown:{v}"
    if verdict in WRONG_OUTPUT:
        return "wrong_output"
    if verdict in CRASH:
        return "crash"
    return str(verdict)


def _recheck_row(
    row: LedgerRow, ledger_dir: Path, problems: dict[str, Problem], engine: AuditEngine
) -> list[str]:
    reasons: list[str] = []
    try:
        problem = problems.get(row.problem_dir) or load_problem(Path(row.problem_dir))
    except ProblemError as exc:
        return [f"problem cannot be loaded: {exc}"]
    problems[row.problem_dir] = problem
    if problem.id != row.problem:
        reasons.append(f"problem id is {problem.id!r}, ledger says {row.problem!r}")
    for what, now_is, then in (
        ("exit_status", str(problem.exit_status), row.exit_status),
        ("compile_flags", compile_label(problem.compile, problem.defines), row.compile_flags),
    ):
        if then and now_is != then:
            reasons.append(f"{what} is now {now_is!r}, ledger says {then!r}")
    sub_path = problem.root / row.submission_id
    if not sub_path.exists():
        return [*reasons, f"submission {row.submission_id} not found"]
    if file_sha256(sub_path) != row.submission_sha256:
        reasons.append("submission sha256 differs")
    inp_path = ledger_dir / "inputs" / row.input_sha256
    if not inp_path.is_file():
        return [*reasons, f"killing input inputs/{row.input_sha256} not found"]
    data = inp_path.read_bytes()
    if sha256_bytes(data) != row.input_sha256:
        return [*reasons, "killing input content does not match its sha256"]

    legality = certify_legality(problem, [data], engine)
    now = legality.verdicts[row.input_sha256]
    if str(now) != row.legality:
        reasons.append(f"legality is now {now}, ledger says {row.legality}")
    elif now is Legality.LEGAL and legality.basis_of(row.input_sha256) != row.legality_basis:
        reasons.append(
            f"legal by {legality.basis_of(row.input_sha256)} now, ledger says {row.legality_basis}"
        )
    if now is not Legality.LEGAL:
        reasons.append(f"the input is not certified legal ({now})")

    checker = Checker(problem.checker, engine)
    limits = judge_limits(problem)
    refs = [(problem.rel(p), engine.build(p, problem.compile)) for p in problem.references]
    gold = consensus_oracle(problem, [data], refs, limits, checker, engine)[row.input_sha256]
    if gold.status is not GoldStatus.GOLD or gold.answer is None:
        return [*reasons, f"no gold any more: {gold.reason}"]
    if gold.sha256 != row.expected_sha256:
        reasons.append(
            f"gold sha256 is now {gold.sha256[:12]}, ledger says {row.expected_sha256[:12]}"
        )
    built = engine.build(sub_path, problem.compile)
    if not built.ok:
        return [*reasons, "submission does not build"]
    runs = judge_many(
        [JudgeTask(built, data, gold.answer, salt=f"recheck-{i}") for i in range(3)],
        limits,
        checker,
        engine,
        ignore_exit=problem.exit_status is ExitStatus.IGNORE,
    )
    want = _verdict_class(row.verdict)
    for i, j in enumerate(runs, start=1):
        if _verdict_class(str(j.verdict)) != want:
            reasons.append(f"re-judge {i}: {j.verdict}, ledger says {row.verdict}")
        elif want == "wrong_output" and j.output_sha256 != row.got_sha256:
            reasons.append(f"re-judge {i}: output sha256 differs from the ledger's got")
    return reasons


def recheck_ledger(
    path: Path, engine: AuditEngine, *, progress: Callable[[int, int], None] | None = None
) -> list[RecheckIssue]:
    """Re-check every row of ``path`` from scratch; the rows that no longer hold."""
    rows = read_ledger(path)
    problems: dict[str, Problem] = {}
    issues: list[RecheckIssue] = []
    for n, row in enumerate(rows, start=1):
        reasons = _recheck_row(row, path.parent, problems, engine)
        if reasons:
            issues.append(RecheckIssue(n, row.problem, row.arm, row.submission_id, tuple(reasons)))
        if progress is not None:
            progress(n, len(rows))
    return issues
