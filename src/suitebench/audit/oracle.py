"""The consensus_oracle: the expected output is what independent accepted solutions agree on.

No single reference is trusted. Every reference runs on every legal input; the gold is the
output the successful runs agree on under the problem's checker. The rule is configurable:
``all_agree`` (the paper's CF-fresh rule: all successful runs agree and at least ``min_success``
succeed) or ``majority`` (a strict majority of all references, and at least ``min_success``).
An input without gold is skipped and counted, never scored.
"""

from __future__ import annotations

from collections.abc import Sequence

from suitebench.audit.checkers import Checker
from suitebench.audit.records import Gold, GoldStatus
from suitebench.audit.runs import AuditEngine, RunResult
from suitebench.model.problem import OracleRule, Problem
from suitebench.run.outcome import Limits, Outcome, Status, sha256_bytes
from suitebench.run.toolchain import Built

__all__ = ["consensus_oracle", "gold_from_outputs"]

Ran = Outcome | RunResult  # a run as the engine returns it, or a bare outcome


def _successful(names: Sequence[str], outcomes: Sequence[Ran]) -> list[tuple[str, bytes]]:
    return [
        (n, _stdout(o))
        for n, o in zip(names, outcomes, strict=True)
        if o.ok and not o.stdout_truncated
    ]


def _stdout(o: Ran) -> bytes:
    return o.read_stdout() if isinstance(o, RunResult) else o.stdout


def agreement_items(
    inp: bytes, names: Sequence[str], outcomes: Sequence[Ran], rule: OracleRule
) -> list[tuple[bytes, bytes, bytes]]:
    """The comparisons ``rule`` needs on one input: (input, output, answer) triples."""
    ok = _successful(names, outcomes)
    if rule is OracleRule.ALL_AGREE:
        return [(inp, out, ok[0][1]) for _, out in ok[1:]]
    return [(inp, ok[j][1], ok[i][1]) for i in range(len(ok)) for j in range(i + 1, len(ok))]


def gold_from_outputs(
    inp: bytes,
    names: Sequence[str],
    outcomes: Sequence[Ran],
    checker: Checker,
    rule: OracleRule,
    min_success: int,
) -> Gold:
    """Apply the agreement rule to the references' outcomes on one input."""
    ok = _successful(names, outcomes)
    failed = tuple(
        n for n, o in zip(names, outcomes, strict=True) if not o.ok or o.stdout_truncated
    )
    if len(ok) < min_success:
        return Gold(
            GoldStatus.NO_GOLD,
            None,
            (),
            (),
            failed,
            f"{len(ok)} of {len(names)} references succeeded, {min_success} needed",
        )
    if rule is OracleRule.ALL_AGREE:
        first = ok[0][1]
        same = checker.agree_many([(inp, out, first) for _, out in ok[1:]])
        if all(same):
            return Gold(GoldStatus.GOLD, first, tuple(n for n, _ in ok), (), failed)
        dissent = tuple(n for (n, _), a in zip(ok[1:], same, strict=True) if not a)
        return Gold(
            GoldStatus.NO_GOLD,
            None,
            (),
            dissent,
            failed,
            f"references disagree: {ok[0][0]} vs {', '.join(dissent)}",
        )
    pairs = [(i, j) for i in range(len(ok)) for j in range(len(ok)) if i < j]
    verdicts = checker.agree_many([(inp, ok[j][1], ok[i][1]) for i, j in pairs])
    agree = {(i, i) for i in range(len(ok))}
    for (i, j), a in zip(pairs, verdicts, strict=True):
        if a:
            agree.add((i, j))
            agree.add((j, i))
    clusters = [[j for j in range(len(ok)) if (i, j) in agree] for i in range(len(ok))]
    best = max(range(len(ok)), key=lambda i: (len(clusters[i]), -i))
    members = clusters[best]
    if len(members) * 2 > len(names) and len(members) >= min_success:
        dissent = tuple(ok[j][0] for j in range(len(ok)) if j not in members)
        return Gold(GoldStatus.GOLD, ok[best][1], tuple(ok[j][0] for j in members), dissent, failed)
    return Gold(
        GoldStatus.NO_GOLD,
        None,
        (),
        tuple(n for n, _ in ok),
        failed,
        f"no strict majority: largest agreeing group {len(members)} of {len(names)}",
    )


def consensus_oracle(
    problem: Problem,
    inputs: Sequence[bytes],
    references: Sequence[tuple[str, Built]],
    limits: Limits,
    checker: Checker,
    engine: AuditEngine,
) -> dict[str, Gold]:
    """Gold per input sha256: run every reference on every input (one cached batch)."""
    names = [n for n, _ in references]
    keyed = {str(k): inp for k, inp in enumerate(inputs)}
    grid = engine.run_grid(references, keyed, limits)
    failed: dict[str, Ran] = {
        n: Outcome(Status.BUILD_ERROR, message=b.message[:200]) for n, b in references if not b.ok
    }
    rows: list[list[Ran]] = [
        [grid.get((n, str(k))) or failed[n] for n in names] for k in range(len(inputs))
    ]
    checker.prefetch(
        [
            item
            for inp, row in zip(inputs, rows, strict=True)
            for item in agreement_items(inp, names, row, problem.oracle.rule)
        ]
    )
    golds: dict[str, Gold] = {}
    for inp, row in zip(inputs, rows, strict=True):
        golds[sha256_bytes(inp)] = gold_from_outputs(
            inp, names, row, checker, problem.oracle.rule, problem.oracle.min_success
        )
    return golds
