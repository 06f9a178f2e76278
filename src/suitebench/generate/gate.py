"""The top-up gate: an input counts toward the budget only once it is legal and has a gold.

The paper's equal legal-input budget: each arm continues its own generation procedure and
applies validator-first filtering plus the consensus checks until the budget of legal inputs
is reached (or an attempt cap). Here that is one lazy stream per arm: candidates are drawn in
batches, deduplicated, run through the problem's validator (with the audit's quality gate),
then through the consensus_oracle of the problem's references; only survivors are yielded, in
emission order. Every run is an audit engine job, so it is cached in the store exactly like the
audit's own runs of the same input: a later ``audit`` of the arm reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Protocol

from suitebench.audit.checkers import Checker
from suitebench.audit.judge import judge_limits
from suitebench.audit.legality import VALIDATOR_LIMITS, GateResult, certify_legality
from suitebench.audit.oracle import consensus_oracle
from suitebench.audit.records import GoldStatus, Legality
from suitebench.audit.runs import AuditEngine, RunSpec
from suitebench.generate.records import Candidate, GenerationLog
from suitebench.model.problem import Problem
from suitebench.run.outcome import sha256_bytes
from suitebench.run.toolchain import Built

__all__ = ["InputGate", "InputSource", "legal_stream"]


class InputSource(Protocol):
    """An arm's generation procedure: an endless (or finite) stream of candidates.

    ``kept`` is told of each candidate that passed the gate (EvalPlus grows its seed pool from
    them); ``details`` goes into ``generate.json``; ``own_validator`` (llm-genval) is the
    arm's own validator, applied before the problem's."""

    def candidates(self) -> Iterator[Candidate]: ...

    def kept(self, candidate: Candidate) -> None: ...

    def details(self) -> dict[str, Any]: ...

    def own_validator(self) -> Built | None: ...


@dataclass(frozen=True)
class Rejection:
    reason: str
    detail: str = ""


class InputGate:
    """Validator first, then the consensus_oracle, on one problem (batched, cached)."""

    def __init__(self, problem: Problem, engine: AuditEngine) -> None:
        self.problem = problem
        self.engine = engine
        engine.build_all(list(problem.references) + [p for p in [problem.validator] if p])
        self.references = [(problem.rel(p), engine.build(p)) for p in problem.references]
        self.checker = Checker(problem.checker, engine)
        self.limits = judge_limits(problem)
        self.validator_gate: GateResult | None = None

    def check(
        self, inputs: Sequence[bytes], own_validator: Built | None = None
    ) -> list[Rejection | None]:
        """``None`` for an input that counts, else why not."""
        out: list[Rejection | None] = [None] * len(inputs)
        todo = []
        for i, data in enumerate(inputs):
            if not data.strip():
                out[i] = Rejection("empty")
            else:
                todo.append(i)
        if todo and own_validator is not None:
            outs = self.engine.run(
                [RunSpec(own_validator, inputs[i], VALIDATOR_LIMITS) for i in todo]
            )
            rest = []
            for i, oc in zip(todo, outs, strict=True):
                if oc.ok:
                    rest.append(i)
                else:
                    msg = oc.stderr_text().strip()[:120]
                    out[i] = Rejection("own_validator", f"{oc.status}: {msg}".rstrip(": "))
            todo = rest
        if not todo:
            return out
        legality = certify_legality(self.problem, [inputs[i] for i in todo], self.engine)
        self.validator_gate = legality.gate
        rest = []
        for i in todo:
            sha = sha256_bytes(inputs[i])
            verdict = legality.verdicts[sha]
            if verdict is Legality.ILLEGAL:
                out[i] = Rejection("illegal", legality.messages.get(sha, ""))
            elif verdict is Legality.UNMEASURED:
                why = (
                    "validator failed its quality gate"
                    if legality.gate and not (legality.gate.passed)
                    else "the validator could not decide"
                )
                out[i] = Rejection("unmeasured", why)
            else:
                rest.append(i)
        if not rest:
            return out
        golds = consensus_oracle(
            self.problem,
            [inputs[i] for i in rest],
            self.references,
            self.limits,
            self.checker,
            self.engine,
        )
        for i in rest:
            gold = golds[sha256_bytes(inputs[i])]
            if gold.status is not GoldStatus.GOLD:
                out[i] = Rejection("no_gold", gold.reason)
        return out

    def legality_info(self) -> dict[str, Any]:
        p = self.problem
        return {
            "validator": p.rel(p.validator) if p.validator else None,
            "quality_gate": self.validator_gate.to_dict() if self.validator_gate else None,
            "references": [n for n, _ in self.references],
            "oracle_rule": str(p.oracle.rule),
        }


def legal_stream(
    source: InputSource,
    gate: InputGate,
    log: GenerationLog,
    batch: Callable[[], int],
    cap: int | None = None,
) -> Iterator[Candidate]:
    """The source's candidates that pass the gate, in emission order.

    Draws ``batch()`` candidates at a time, so the validator and the references run in few
    sandbox batches. Attempts are bounded by the log's cap (shared by every stream of the arm)
    and by ``cap`` for this stream alone (a mixture's share: a starved component must not use
    up the attempts of the others).
    """
    it = iter(source.candidates())
    own = source.own_validator()
    mine = 0
    while True:
        room = log.max_attempts - log.tried
        if cap is not None:
            room = min(room, cap - mine)
        if room <= 0:
            log.capped = True
            return
        chunk = list(islice(it, max(1, min(batch(), room))))
        if not chunk:
            return
        log.tried += len(chunk)
        mine += len(chunk)
        fresh: list[Candidate] = []
        for c in chunk:
            if c.drop is not None:
                log.drop(c.drop, c.origin, c.detail)
            elif c.sha256 in log.seen:
                log.drop("duplicate", c.origin)
            else:
                log.seen.add(c.sha256)
                fresh.append(c)
        verdicts = gate.check([c.data for c in fresh], own)
        passed: list[Candidate] = []
        for c, v in zip(fresh, verdicts, strict=True):
            if v is not None:
                log.drop(v.reason, c.origin, v.detail)
            else:
                passed.append(c)
                source.kept(c)
        # Counted before yielding: those the consumer never takes are "beyond the budget".
        log.legal += len(passed)
        yield from passed
