"""The judge: run submissions on inputs that have a gold and give each cell a verdict.

Judge semantics follow the paper's harness: the problem's time limit plus an allowance (0.5 s by
default) for scheduling noise, an unlimited stack (deep-recursion solutions must not be killed
spuriously), and verdicts bucketed by type. A time-limit catch (TLE) stays in its own bucket and
is never counted as a bug: timeouts depend on the machine, wrong answers and crashes do not.
The problem's ``time_limit`` is CPU time; wall time is a watchdog at twice that (plus the
allowance), so a loaded machine does not turn a correct solution into a TLE. A program that
prints more than the problem's ``output_limit`` is killed there: ``OLE``, a kill like any other.

A run the wall-clock watchdog stopped while its CPU time was under the time limit is run once
more before it counts (:meth:`~suitebench.audit.runs.AuditEngine.run`); the cell keeps both runs'
times (``Judged.tle_first``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from suitebench.audit.checkers import Checker, CheckVerdict
from suitebench.audit.records import INLINE_OUTPUT, WRONG_OUTPUT, Judged, Verdict, normalized
from suitebench.audit.runs import AuditEngine, RunResult, RunSpec
from suitebench.model.problem import Problem
from suitebench.run.limits import judge as judged_run
from suitebench.run.outcome import Limits, MiB, Outcome, Status, sha256_bytes
from suitebench.run.toolchain import Built

__all__ = [
    "JudgeTask",
    "judge_limits",
    "judge_many",
    "verdict_of_status",
]

_CHECK = {
    CheckVerdict.OK: Verdict.AC,
    CheckVerdict.WA: Verdict.WA,
    CheckVerdict.PE: Verdict.PE,
    CheckVerdict.FAIL: Verdict.FAIL,
}


_INTERACTOR = {"wa": Verdict.WA, "pe": Verdict.PE, "fail": Verdict.FAIL, "crashed": Verdict.FAIL}


def judge_limits(problem: Problem, *, time_limit: float | None = None) -> Limits:
    """Limits of one judged run: CPU = time limit, wall watchdog = 2x, both + allowance; the
    output limit is the problem's ``output_limit`` (MiB, stdout and stderr each)."""
    tl = problem.time_limit if time_limit is None else time_limit
    return judged_run(
        tl,
        memory_mb=problem.memory_limit,
        allowance=problem.allowance,
        output_mb=problem.output_limit,
    )


def verdict_of_status(oc: Outcome | RunResult, *, ignore_exit: bool = False) -> Verdict | None:
    """The verdict an outcome implies before any checker (None: it ran fine, check output).

    ``ignore_exit`` (the problem's ``exit_status = "ignore"``): a non-zero exit status is not a
    verdict by itself, the output is checked as if the program had exited 0. A signal still is.

    An interactive run (``RunResult.interactor_verdict``): the submission's time, memory and
    output limits first, unless the interactor gave its WA or PE while the submission still ran
    (``interactor_first``: a submission that loops after a rejected answer is WA, as the
    package format's judges rule); an interactor that crashed (no word) after a submission
    that crashed is the submission's RE; then the interactor's WA, PE or FAIL (a crash: FAIL);
    then the submission's own exit (one the interactor hung up on dies of SIGPIPE: the
    interactor's verdict stands).
    """
    said = oc.interactor_verdict if isinstance(oc, RunResult) else None
    limit = oc.status in (Status.TIMEOUT, Status.MEMORY, Status.OUTPUT_LIMIT)
    if said in ("wa", "pe") and isinstance(oc, RunResult) and oc.interactor_first:
        limit = False  # the interactor rejected while the submission still ran: its word first
    crashed = oc.status in (Status.RUNTIME_ERROR, Status.SIGNALED)
    if said == "crashed" and crashed and not limit:  # the submission left first
        return Verdict.RE
    if said in _INTERACTOR and not limit:
        return _INTERACTOR[said]
    match oc.status:
        case Status.OK:
            return None
        case Status.TIMEOUT:
            return Verdict.TLE
        case Status.MEMORY:
            return Verdict.MLE
        case Status.OUTPUT_LIMIT:
            return Verdict.OLE
        case Status.RUNTIME_ERROR:
            return None if ignore_exit else Verdict.RE
        case Status.SIGNALED:
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


_CHECK_BATCH = 64 * MiB  # output bytes handed to a checker program at once


def _judged(verdict: Verdict, out: bytes, ro: RunResult, message: str) -> Judged:
    """A cell; the output stays inline only for a short wrong answer."""
    wall, cpu, first = ro.outcome.wall_time, ro.outcome.cpu_time, ro.tle_first
    if verdict in WRONG_OUTPUT:
        return Judged(
            verdict,
            out if len(out) <= INLINE_OUTPUT else b"",
            message,
            output_sha256=ro.stdout_sha256,
            normalized_sha256=sha256_bytes(normalized(out)),
            wall_time=wall,
            cpu_time=cpu,
            tle_first=first,
        )
    return Judged(
        verdict,
        b"",
        message,
        output_sha256=ro.stdout_sha256,
        wall_time=wall,
        cpu_time=cpu,
        tle_first=first,
    )


def judge_many(
    tasks: Sequence[JudgeTask],
    limits: Limits,
    checker: Checker,
    engine: AuditEngine,
    *,
    ignore_exit: bool = False,
) -> list[Judged]:
    """Verdicts of ``tasks`` in order: one cached batch of runs, then the checks.

    Outputs are read back from the store one at a time (or in batches of at most
    ``_CHECK_BATCH`` bytes for a checker program), so judging holds a bounded amount of
    output however much the programs printed. An output identical to the gold is accepted
    without reading it (every built-in checker accepts identical bytes).
    """
    runnable = [n for n, t in enumerate(tasks) if t.built.ok]
    outs = engine.run(
        [RunSpec(tasks[n].built, tasks[n].input, limits, tasks[n].salt) for n in runnable]
    )
    result: list[Judged] = [Judged(Verdict.CE, b"", t.built.message[:200]) for t in tasks]
    _judge_runs(tasks, runnable, outs, checker, ignore_exit, result)
    return result


def _judge_runs(
    tasks: Sequence[JudgeTask],
    indices: Sequence[int],
    outs: Sequence[RunResult],
    checker: Checker,
    ignore_exit: bool,
    result: list[Judged],
) -> None:
    """Give ``result[n]`` the verdict of run ``outs[i]`` of task ``n = indices[i]``."""
    gold_sha: dict[int, str] = {}
    batch: list[tuple[int, RunResult, bytes]] = []

    def flush() -> None:
        checks = checker.check_many([(tasks[n].input, out, tasks[n].gold) for n, _, out in batch])
        for (n, ro, out), cr in zip(batch, checks, strict=True):
            result[n] = _judged(_CHECK[cr.verdict], out, ro, cr.message)
        batch.clear()

    size = 0
    for n, ro in zip(indices, outs, strict=True):
        v = verdict_of_status(ro, ignore_exit=ignore_exit)
        if v is not None:
            msg = ro.message or ro.stderr_text()[-200:]
            result[n] = _judged(v, b"", ro, msg)
            continue
        gold = tasks[n].gold
        if checker.builtin:
            g = gold_sha.setdefault(id(gold), sha256_bytes(gold))
            if ro.stdout_sha256 == g:
                result[n] = _judged(Verdict.AC, b"", ro, "")
                continue
        out = ro.read_stdout()
        batch.append((n, ro, out))
        size += len(out)
        if checker.builtin or size > _CHECK_BATCH:
            flush()
            size = 0
    if batch:
        flush()
