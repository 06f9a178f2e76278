"""Legality: the validator decides whether an input is inside the statement's constraints.

A kill on an input the statement forbids proves nothing, so the paper makes legality part of
the certificate. Each legal input records its *basis*: ``validator`` (the quality-gated
validator accepted it) or ``problem_tests`` (a problem without a validator: its official and
sample tests define the problem, so they are legal by definition; every other input stays
``no_validator`` and certifies nothing). Validators follow testlib's convention (input on
stdin, exit 0 = legal). The validator itself is checked first by the paper's *quality gate*:
it must accept every official input and reject the empty input. A validator that fails the
gate certifies nothing: every input of that problem is ``unmeasured`` (never ``illegal``: a
broken instrument cannot convict).

A validator that does not build, rejects one of the problem's own official inputs, or cannot
decide an input (time, memory or output limit) is broken: ``LegalityReport.failures`` lists
each such failure, the first first, and the chain reports them as a harness error. (A validator
that exits non-zero on a malformed input, by an uncaught exception or an ``assert``, has
rejected it: that is the lazy validator's idiom, not a crash.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from suitebench.audit.harness import build_message, run_message
from suitebench.audit.records import Legality
from suitebench.audit.runs import AuditEngine, RunResult, RunSpec
from suitebench.model.problem import Problem
from suitebench.run.limits import VALIDATOR
from suitebench.run.outcome import Status, sha256_bytes

__all__ = [
    "BASIS_PROBLEM_TESTS",
    "BASIS_VALIDATOR",
    "VALIDATOR_LIMITS",
    "GateResult",
    "LegalityReport",
    "certify_legality",
]

VALIDATOR_LIMITS = VALIDATOR  # the table's (suitebench.run.limits)
BASIS_VALIDATOR = "validator"
BASIS_PROBLEM_TESTS = "problem_tests"


@dataclass(frozen=True)
class GateResult:
    """The validator quality gate: passed, and if not, why."""

    passed: bool
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"passed": self.passed, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class LegalityReport:
    validator: str  # the validator's path relative to the problem, "" if none
    validator_id: str  # its program id (content hash), "" if none
    gate: GateResult | None
    verdicts: dict[str, Legality]  # input sha256 -> legality
    messages: dict[str, str]  # input sha256 -> the validator's complaint, for illegal inputs
    basis: dict[str, str] = field(default_factory=dict)  # legal input sha256 -> its basis
    failures: tuple[str, ...] = ()  # the validator's harness failures, the first first

    def basis_of(self, sha256: str) -> str:
        """Why the input is legal (``validator`` or ``problem_tests``); "" if it is not."""
        if self.verdicts.get(sha256) is not Legality.LEGAL:
            return ""
        return self.basis.get(sha256, BASIS_VALIDATOR)


_UNDECIDED = (Status.TIMEOUT, Status.MEMORY, Status.OUTPUT_LIMIT, Status.SANDBOX_ERROR)


def _how(oc: RunResult) -> str:
    o = oc.outcome
    return run_message(o.status, o.exit_code, o.signal, o.wall_time, oc.stderr_text())


def _verdict(oc: RunResult) -> Legality:
    if oc.status is Status.OK:
        return Legality.LEGAL
    if oc.status in (Status.RUNTIME_ERROR, Status.SIGNALED):
        return Legality.ILLEGAL
    return Legality.UNMEASURED  # the validator could not decide (timeout, memory, harness)


def certify_legality(
    problem: Problem, inputs: Sequence[bytes], engine: AuditEngine
) -> LegalityReport:
    """Run the quality gate, then the validator on every input (one cached batch)."""
    shas = [sha256_bytes(b) for b in inputs]
    if problem.validator is None:
        own = {sha256_bytes(p.read_bytes()) for p in (*problem.official, *problem.samples)}
        by_definition = {s: Legality.LEGAL if s in own else Legality.NO_VALIDATOR for s in shas}
        basis = {s: BASIS_PROBLEM_TESTS for s in shas if s in own}
        return LegalityReport("", "", None, by_definition, {}, basis)
    rel = problem.rel(problem.validator)
    built = engine.build(problem.validator)
    if not built.ok:
        gate = GateResult(False, (f"validator did not build: {built.message[:300]}",))
        return LegalityReport(
            rel,
            built.program_id,
            gate,
            dict.fromkeys(shas, Legality.UNMEASURED),
            {},
            failures=(f"did not build: {build_message(built.message)}",),
        )
    official = [p.read_bytes() for p in problem.official]
    batch = [b"", *official, *inputs]
    outs = engine.run([RunSpec(built, b, VALIDATOR_LIMITS) for b in batch])
    reasons: list[str] = []
    failures: list[str] = []
    if outs[0].status in _UNDECIDED:
        failures.append(f"cannot decide the empty input: {_how(outs[0])}")
    if outs[0].status is Status.OK:
        reasons.append("accepts the empty input")
    elif outs[0].status not in (Status.RUNTIME_ERROR, Status.SIGNALED):
        reasons.append(f"cannot decide the empty input ({outs[0].status})")
    for path, oc in zip(problem.official, outs[1 : 1 + len(official)], strict=True):
        if oc.status is not Status.OK:
            reasons.append(f"rejects official input {problem.rel(path)} ({oc.status})")
            failures.append(f"rejects official input {problem.rel(path)}: {_how(oc)}")
    if not official:
        reasons.append("no official inputs to check it against (gate checked the empty input only)")
        passed = len(reasons) == 1
    else:
        passed = not reasons
    gate = GateResult(passed, tuple(reasons))
    verdicts: dict[str, Legality] = {}
    messages: dict[str, str] = {}
    own = {sha256_bytes(b) for b in batch[: 1 + len(official)]}
    for sha, oc in zip(shas, outs[1 + len(official) :], strict=True):
        if oc.status in _UNDECIDED and sha not in own:
            failures.append(f"cannot decide input {sha[:12]}: {_how(oc)}")
        v = _verdict(oc) if passed else Legality.UNMEASURED
        verdicts[sha] = v
        if _verdict(oc) is Legality.ILLEGAL:
            messages[sha] = oc.stderr_text().strip()[:200]
    return LegalityReport(rel, built.program_id, gate, verdicts, messages, failures=tuple(failures))
