"""Brute-force adjudication: slow but obviously correct solutions settle disputes.

Where a brute-force solution finishes within its (generous) limit, its output decides between
the gold and the flagged output. A brute that agrees with the submission proves the oracle
wrong; one that agrees with the gold settles a consensus dispute in the oracle's favour; one
that agrees with neither contests the gold, and the flag is withdrawn (conservative). A dispute
no brute can settle is withdrawn at the consensus stage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from suitebench.audit.checkers import Checker
from suitebench.audit.records import DetClass, Flag, Stage
from suitebench.audit.runs import AuditEngine
from suitebench.run.outcome import Limits
from suitebench.run.toolchain import Built

__all__ = ["brute_stage"]


def brute_stage(
    flags: Sequence[Flag],
    brutes: Sequence[tuple[str, Built]],
    inputs: Mapping[str, bytes],
    golds: Mapping[str, bytes],
    limits: Limits,
    checker: Checker,
    engine: AuditEngine,
) -> list[Flag]:
    runnable = [(n, b) for n, b in brutes if b.ok]
    todo = [
        i for i, f in enumerate(flags) if f.withdrawn is None and f.determinism is DetClass.DET_WA
    ]
    shas = sorted({flags[i].input_sha256 for i in todo})
    grid = engine.run_grid(runnable, {s: inputs[s] for s in shas}, limits)

    def finished_of(f: Flag) -> list[tuple[str, bytes]]:
        ran = [(n, grid[(n, f.input_sha256)]) for n, _ in runnable]
        return [(n, o.read_stdout()) for n, o in ran if o.ok and not o.stdout_truncated]

    checker.prefetch(
        [
            (inputs[flags[i].input_sha256], candidate, out)
            for i in todo
            for _, out in finished_of(flags[i])
            for candidate in (golds[flags[i].input_sha256], flags[i].got)
        ]
    )
    result = list(flags)
    for i in todo:
        f = flags[i]
        inp, gold = inputs[f.input_sha256], golds[f.input_sha256]
        finished = finished_of(f)
        gold_ok = checker.agree_many([(inp, gold, out) for _, out in finished])
        sub_ok = checker.agree_many([(inp, f.got, out) for _, out in finished])
        names = [n for n, _ in finished]
        if not finished:
            note = "no brute" if not brutes else "unfinished"
            if f.disputed:
                result[i] = dataclasses.replace(
                    f,
                    brute=note,
                    withdrawn=Stage.CONSENSUS,
                    reason=f"oracle is the outlier: {f.consensus}; no brute force finished",
                )
            else:
                result[i] = dataclasses.replace(f, brute=note)
        elif any(sub_ok) and not any(gold_ok):
            who = ", ".join(n for n, a in zip(names, sub_ok, strict=True) if a)
            result[i] = dataclasses.replace(
                f,
                brute=f"confirms submission ({who})",
                withdrawn=Stage.BRUTE,
                reason=f"brute force {who} agrees with the submission: the gold is wrong",
            )
        elif any(gold_ok) and not any(sub_ok):
            who = ", ".join(n for n, a in zip(names, gold_ok, strict=True) if a)
            result[i] = dataclasses.replace(f, brute=f"confirms gold ({who})")
        else:
            result[i] = dataclasses.replace(
                f,
                brute="contested",
                withdrawn=Stage.BRUTE,
                reason="brute-force solutions contest the gold (agree with neither or both)",
            )
    return result
