"""Stress testing: one solution against the references (or the brute force) on a generator's
inputs until they differ, as Polygon's stress test does.

Seeds run in batches: the generator makes one input per seed (called testlib's way: its own
arguments, then the seed as the last argument; the seed is also its stdin, for generators that
read it there), the validator must call the input legal (illegal ones are counted and skipped),
the references -- every one of them, judged under the problem's checker, or its interactor --
must agree on the expected output, and the solution is judged against that. The first input on
which the solution's verdict is not AC is the counter-example; the search stops there, or after
``count`` seeds, or after ``seconds``.

What is not the solution's fault is a harness error and stops the search: a generator that fails
or gives the same input for every seed of a batch (it ignores its seed), a validator that fails
its quality gate or cannot decide, references that disagree on an input (the input is named),
a checker or interactor that answers FAIL. Every run goes through the store, so a second stress
of the same seeds reruns nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from suitebench.audit.arms import generator_runs
from suitebench.audit.checkers import Checker
from suitebench.audit.harness import run_message
from suitebench.audit.interactive import with_interactor
from suitebench.audit.judge import JudgeTask, judge_limits, judge_many
from suitebench.audit.legality import certify_legality
from suitebench.audit.oracle import consensus_oracle
from suitebench.audit.records import GoldStatus, Legality, Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import OracleConfig, OracleRule, Problem
from suitebench.run.outcome import sha256_bytes
from suitebench.run.toolchain import Built

__all__ = ["CounterExample", "StressError", "StressOptions", "StressResult", "stress"]

Against = str  # "references" or "brute"


class StressError(RuntimeError):
    """The harness, not the solution, is broken (exit 4): says which program and why."""


@dataclass(frozen=True)
class StressOptions:
    count: int = 1000  # seeds (generated inputs) at most
    seconds: float = 60.0  # wall seconds at most (checked between batches)
    seed: int = 1  # the first seed
    batch: int = 16  # seeds per batch
    against: Against = "references"
    generator_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class CounterExample:
    seed: int
    input: bytes
    expected: bytes
    got: bytes
    verdict: str
    message: str


@dataclass
class StressResult:
    solution: str
    against: list[str]
    generator: str
    tried: int = 0  # inputs judged
    seeds: int = 0  # seeds run
    illegal: int = 0
    duplicates: int = 0
    unchecked: bool = False  # no validator: legality not checked
    stopped: str = ""  # "found", "count", "time"
    seconds: float = 0.0
    counterexample: CounterExample | None = None
    build_error: str = ""  # the solution did not build
    notes: list[str] = field(default_factory=list)


def _judged_programs(
    problem: Problem, engine: AuditEngine, paths: Sequence[Path]
) -> list[tuple[str, Built]]:
    out = [(problem.rel(p), engine.build(p, problem.compile)) for p in paths]
    if problem.interactor is None:
        return out
    inter = engine.build(problem.interactor)
    if not inter.ok:
        raise StressError(f"interactor {problem.rel(problem.interactor)} did not build")
    conv = problem.interactor_convention
    return [(n, with_interactor(b, inter, conv)) for n, b in out]


def stress(
    problem: Problem,
    solution: Path,
    engine: AuditEngine,
    options: StressOptions,
    *,
    generator: Path | None = None,
    on_batch: Callable[[StressResult], None] | None = None,
) -> StressResult:
    """Run the stress test (module docstring); raises :class:`StressError` on a harness error."""
    gen_path = generator or problem.generator
    if gen_path is None:
        raise StressError(f"problem {problem.id} has no generator: give one with --generator")
    others = problem.brute if options.against == "brute" else problem.references
    if not others:
        raise StressError(f"problem {problem.id} has no {options.against} solutions")
    result = StressResult(
        problem.rel(solution), [problem.rel(p) for p in others], problem.rel(gen_path)
    )
    engine.build_all([solution, *others], problem.compile)
    (sol,) = _judged_programs(problem, engine, [solution])
    if not sol[1].ok:
        result.build_error = sol[1].message[:300]
        return result
    refs = _judged_programs(problem, engine, others)
    broken = [n for n, b in refs if not b.ok]
    if broken:
        raise StressError(f"{options.against} solution {broken[0]} did not build")
    gen = engine.build(gen_path)
    if not gen.ok:
        raise StressError(f"generator {result.generator} did not build: {gen.message[:200]}")
    checker = Checker(problem.checker, engine)
    limits = judge_limits(problem)
    ref_limits = (
        judge_limits(problem, time_limit=problem.brute_time_limit)
        if options.against == "brute"
        else limits
    )
    # Every reference must succeed and agree: a stress test trusts no single one.
    strict = problem.model_copy(
        update={"oracle": OracleConfig(rule=OracleRule.ALL_AGREE, min_success=len(refs))}
    )
    seen: dict[str, int] = {}
    duplicate: list[int] = []  # seeds whose input an earlier seed gave
    illegal: list[int] = []  # seeds whose input the validator rejects
    start = time.monotonic()
    seed = options.seed
    while True:
        n = min(options.batch, options.count - result.seeds)
        if n <= 0:
            result.stopped = "count"
            break
        if time.monotonic() - start > options.seconds:
            result.stopped = "time"
            break
        seeds = list(range(seed, seed + n))
        seed += n
        specs = generator_runs(gen, seeds, options.generator_args)
        inputs: list[tuple[int, bytes]] = []
        for s, ran in zip(seeds, engine.run(specs), strict=True):
            if not ran.ok:
                o = ran.outcome
                why = run_message(o.status, o.exit_code, o.signal, o.wall_time, o.stderr_text())
                raise StressError(f"generator {result.generator} failed on seed {s}: {why}")
            inputs.append((s, ran.read_stdout()))
        result.seeds += len(seeds)
        if len(seeds) > 1 and len({d for _, d in inputs}) == 1:
            raise StressError(
                f"generator {result.generator} gave the same input for seeds {seeds[0]}.."
                f"{seeds[-1]}: it ignores its seed (the seed is its last argument and its stdin)"
            )
        fresh = []
        for s, data in inputs:
            sha = sha256_bytes(data)
            if sha in seen:
                duplicate.append(s)
                result.duplicates += 1
            else:
                seen[sha] = s
                fresh.append((s, data))
        legality = certify_legality(problem, [d for _, d in fresh], engine)
        if legality.gate is not None and not legality.gate.passed:
            raise StressError(
                f"validator {legality.validator} fails its quality gate: "
                + "; ".join(legality.gate.reasons)
            )
        if legality.failures:
            raise StressError(f"validator {legality.validator}: {legality.failures[0]}")
        legal = []
        for s, data in fresh:
            v = legality.verdicts[sha256_bytes(data)]
            if v is Legality.ILLEGAL:
                illegal.append(s)
                result.illegal += 1
            else:
                result.unchecked = result.unchecked or v is Legality.NO_VALIDATOR
                legal.append((s, data))
        golds = consensus_oracle(strict, [d for _, d in legal], refs, ref_limits, checker, engine)
        for s, data in legal:
            g = golds[sha256_bytes(data)]
            if g.status is not GoldStatus.GOLD:
                failed = f" (did not succeed: {', '.join(g.failed)})" if g.failed else ""
                raise StressError(f"on seed {s}: {g.reason}{failed}")
        tasks = [JudgeTask(sol[1], d, golds[sha256_bytes(d)].answer or b"") for _, d in legal]
        judged = judge_many(tasks, limits, checker, engine, ignore_exit=False)
        for (s, data), task, j in zip(legal, tasks, judged, strict=True):
            result.tried += 1
            if j.verdict is Verdict.FAIL:
                raise StressError(f"on seed {s} the checker or interactor failed: {j.message}")
            if j.verdict is not Verdict.AC:
                got = j.output or (engine.output(j.output_sha256) if j.output_sha256 else b"")
                result.counterexample = CounterExample(
                    s, data, task.gold, got, str(j.verdict), j.message
                )
                # the seeds after it in its batch do not count
                result.seeds = s - options.seed + 1
                result.duplicates = sum(1 for t in duplicate if t <= s)
                result.illegal = sum(1 for t in illegal if t <= s)
                break
        result.seconds = time.monotonic() - start
        if on_batch is not None:
            on_batch(result)
        if result.counterexample is not None:
            result.stopped = "found"
            break
    result.seconds = time.monotonic() - start
    return result
