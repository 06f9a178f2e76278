"""Consensus correction: a larger accepted pool votes on each flagged input.

The paper's AtCoder audit found an 8-reference oracle that was itself the outlier on one
problem: re-judging each flag against a larger accepted pool showed most of the pool agreeing
with the flagged submission. Where the pool's majority sides with the submission, the flag is
*disputed*; brute force settles the dispute where it can, and otherwise the flag is withdrawn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from suitebench.audit.checkers import Checker
from suitebench.audit.records import DetClass, Flag
from suitebench.audit.runs import AuditEngine
from suitebench.run.outcome import Limits
from suitebench.run.toolchain import Built

__all__ = ["consensus_stage"]


def consensus_stage(
    flags: Sequence[Flag],
    pool: Sequence[tuple[str, Built]],
    inputs: Mapping[str, bytes],
    golds: Mapping[str, bytes],
    limits: Limits,
    checker: Checker,
    engine: AuditEngine,
) -> list[Flag]:
    """Vote on every standing DET_WA flag with ``pool`` (the flagged submission abstains).

    Only voters that ran successfully have an opinion; a voter that timed out or crashed on
    the input abstains (and is counted in the note).
    """
    voters = [(n, b) for n, b in pool if b.ok]
    todo = [
        i
        for i, f in enumerate(flags)
        if f.withdrawn is None and f.determinism is DetClass.DET_WA and voters
    ]
    shas = sorted({flags[i].input_sha256 for i in todo})
    grid = engine.run_grid(voters, {s: inputs[s] for s in shas}, limits)
    ballots_of = {
        i: [grid[(n, flags[i].input_sha256)] for n, _ in voters if n != flags[i].submission]
        for i in todo
    }
    checker.prefetch(
        [
            (inputs[flags[i].input_sha256], b.read_stdout(), answer)
            for i in todo
            for b in ballots_of[i]
            if b.ok
            for answer in (flags[i].got, golds[flags[i].input_sha256])
        ]
    )
    result = list(flags)
    for i in todo:
        f = flags[i]
        inp = inputs[f.input_sha256]
        ballots = ballots_of[i]
        ran = [b.read_stdout() for b in ballots if b.ok]
        with_sub = checker.agree_many([(inp, o, f.got) for o in ran])
        with_gold = checker.agree_many([(inp, o, golds[f.input_sha256]) for o in ran])
        n_sub, n_gold, n = sum(with_sub), sum(with_gold), len(ran)
        silent = len(ballots) - len(ran)
        result[i] = dataclasses.replace(
            f,
            consensus=(
                f"{n_sub}/{n} voters agree with submission, {n_gold}/{n} with gold"
                + (f" ({silent} did not finish)" if silent else "")
            ),
            disputed=n > 0 and 2 * n_sub > n,
        )
    return result
