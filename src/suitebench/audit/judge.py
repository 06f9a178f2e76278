"""The judge: run submissions on inputs that have a gold and give each cell a verdict.

Judge semantics follow the paper's harness: the problem's time limit plus an allowance (0.5 s by
default) for scheduling noise, an unlimited stack (deep-recursion solutions must not be killed
spuriously), and verdicts bucketed by type. A time-limit catch (TLE) stays in its own bucket and
is never counted as a bug: timeouts depend on the machine, wrong answers and crashes do not.
The problem's ``time_limit`` is CPU time; wall time is a watchdog at twice that (plus the
allowance), so a loaded machine does not turn a correct solution into a TLE.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from suitebench.audit.checkers import Checker, CheckVerdict
from suitebench.audit.records import Judged, Verdict
from suitebench.audit.runs import Engine, RunSpec
from suitebench.model.problem import Problem
from suitebench.run.outcome import Limits, Outcome, Status
from suitebench.run.toolchain import Built

__all__ = ["JudgeTask", "judge_limits", "judge_many", "verdict_of_status"]

_CHECK = {
    CheckVerdict.OK: Verdict.AC,
    CheckVerdict.WA: Verdict.WA,
    CheckVerdict.PE: Verdict.PE,
    CheckVerdict.FAIL: Verdict.FAIL,
}


def judge_limits(problem: Problem, *, time_limit: float | None = None) -> Limits:
    """Limits of one judged run: CPU = time limit, wall watchdog = 2x, both + allowance."""
    tl = problem.time_limit if time_limit is None else time_limit
    return Limits(
        wall_time=2 * tl,
        cpu_time=tl,
        memory_mb=problem.memory_limit,
        extra_time=problem.allowance,
        stack_unlimited=True,
        output_bytes=64 * 1024 * 1024,
    )


def verdict_of_status(oc: Outcome) -> Verdict | None:
    """The verdict an outcome implies before any checker (None: it ran fine, check output)."""
    match oc.status:
        case Status.OK:
            return None
        case Status.TIMEOUT:
            return Verdict.TLE
        case Status.MEMORY:
            return Verdict.MLE
        case Status.OUTPUT_LIMIT:
            return Verdict.OLE
        case Status.RUNTIME_ERROR | Status.SIGNALED:
            return Verdict.RE
        case Status.BUILD_ERROR:
            return Verdict.CE
        case _:
            return Verdict.FAIL


@dataclass(frozen=True)
class JudgeTask:
    """One judged run: program on input against gold, with an optional salt (re-judges)."""

    built: Built
    input: bytes
    gold: bytes
    salt: str = ""


def judge_many(
    tasks: Sequence[JudgeTask], limits: Limits, checker: Checker, engine: Engine
) -> list[Judged]:
    """Verdicts of ``tasks`` in order: one cached batch of runs, then one batch of checks."""
    runnable = [n for n, t in enumerate(tasks) if t.built.ok]
    outs = engine.run(
        [RunSpec(tasks[n].built, tasks[n].input, limits, tasks[n].salt) for n in runnable]
    )
    result: list[Judged] = [Judged(Verdict.CE, b"", t.built.message[:200]) for t in tasks]
    to_check: list[tuple[int, Outcome]] = []
    for n, oc in zip(runnable, outs, strict=True):
        v = verdict_of_status(oc)
        if v is None:
            to_check.append((n, oc))
        else:
            result[n] = Judged(v, oc.stdout, oc.message or oc.stderr_text()[-200:])
    checks = checker.check_many([(tasks[n].input, oc.stdout, tasks[n].gold) for n, oc in to_check])
    for (n, oc), cr in zip(to_check, checks, strict=True):
        result[n] = Judged(_CHECK[cr.verdict], oc.stdout, cr.message)
    return result
