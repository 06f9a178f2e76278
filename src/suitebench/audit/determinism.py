"""Determinism: every kill is re-judged three times before it can be certified.

The paper's classes: DET_WA (the same wrong normalized output every time), DET_RE (a crash
every time), NONDET (the runs disagree), NOT_REPRODUCED (no re-run reproduces the kill). Only
DET_WA and DET_RE enter the ledger: flakiness is measured, never retried away.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from suitebench.audit.checkers import Checker
from suitebench.audit.judge import JudgeTask, judge_many
from suitebench.audit.records import (
    CRASH,
    WRONG_OUTPUT,
    DetClass,
    Flag,
    Judged,
    Stage,
    Verdict,
    normalized,
)
from suitebench.audit.runs import AuditEngine
from suitebench.run.outcome import Limits
from suitebench.run.toolchain import Built

__all__ = ["REJUDGES", "classify", "determinism_stage", "normalized"]

REJUDGES = 3


def classify(original: Judged, rejudges: Sequence[Judged]) -> DetClass:
    runs = [original, *rejudges]
    if all(r.verdict in WRONG_OUTPUT for r in runs):
        if len({r.normalized_sha256 for r in runs}) == 1:
            return DetClass.DET_WA
        return DetClass.NONDET
    if all(r.verdict in CRASH for r in runs) and len({r.verdict for r in runs}) == 1:
        return DetClass.DET_RE
    if all(r.verdict is Verdict.AC for r in rejudges):
        return DetClass.NOT_REPRODUCED
    return DetClass.NONDET


def determinism_stage(
    flags: Sequence[Flag],
    submissions: Mapping[str, Built],
    inputs: Mapping[str, bytes],
    golds: Mapping[str, bytes],
    limits: Limits,
    checker: Checker,
    engine: AuditEngine,
    times: int = REJUDGES,
    *,
    ignore_exit: bool = False,
) -> list[Flag]:
    """Re-judge each flag ``times`` times (fresh runs: salted job keys) and classify it."""
    tasks = [
        JudgeTask(
            submissions[f.submission],
            inputs[f.input_sha256],
            golds[f.input_sha256],
            salt=f"rejudge-{r}",
        )
        for f in flags
        for r in range(1, times + 1)
    ]
    judged = judge_many(tasks, limits, checker, engine, ignore_exit=ignore_exit)
    out: list[Flag] = []
    for n, f in enumerate(flags):
        original = Judged(f.verdict, f.got, output_sha256=f.got_sha256)
        cls = classify(original, judged[n * times : (n + 1) * times])
        if cls.certifiable:
            out.append(dataclasses.replace(f, determinism=cls))
        else:
            runs = judged[n * times : (n + 1) * times]
            seen = ", ".join(str(j.verdict) for j in runs)
            if cls is DetClass.NONDET and all(j.verdict in WRONG_OUTPUT for j in runs):
                seen += " (different wrong outputs)"
            out.append(
                dataclasses.replace(
                    f,
                    determinism=cls,
                    withdrawn=Stage.DETERMINISM,
                    reason=f"{cls}: first {f.verdict}, re-judges {seen}",
                )
            )
    return out
