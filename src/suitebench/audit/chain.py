"""The certification chain, stage by stage, for one problem and then for many.

Stages (each reads and writes records, each visible in the outputs):

1. arms            -> the inputs of every arm, deduplicated by sha256
2. legality        -> validator quality gate, then legal / illegal / unmeasured per input
3. consensus_oracle-> gold per non-illegal input, or no_gold (skipped and counted)
4. judge           -> the kill matrix: every pool submission x every scored input
5. flags           -> per arm and submission, its killing inputs (logic kills, excl-TLE),
                      examined in rounds until one is certified
6. determinism     -> three re-judges: DET_WA / DET_RE / NONDET / NOT_REPRODUCED
7. consensus       -> optional: a larger accepted pool votes on each flagged input
8. brute           -> brute-force solutions settle gold-vs-submission disputes
9. tolerance       -> float-tolerance artifacts are withdrawn
10. legality cert. -> only inputs the quality-gated validator accepted certify a kill
11. ledger         -> one row per certified (arm, submission); retractions keep the rest
                      (:mod:`.tables`)

Harness errors (:mod:`.harness`): after each stage, what it found broken in the problem's own
instruments -- checker calls that failed, a validator that rejects the official tests or cannot
decide, references and brute-force solutions that do not build -- is logged per program.

Official-TLE reconciliation: each submission's verdict on the official tests is recorded; a
finding the official tests already catch (as TLE or otherwise) is marked ``new_finding=false``.

The stages of one problem are a schedule (:data:`STAGES`): each waits for the one before it,
since it reads what that one found. :func:`audit_problems` runs the schedules of many problems
at once, one coordinator thread each, on the engine's one job queue, so the runs of every
problem and stage keep the workers busy; the earliest problem's runs go first. Every run is
keyed by what determines it, so the results do not depend on that interleaving.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from suitebench.audit.arms import OFFICIAL, Arm, ArmSource, problem_arms, resolve_arm
from suitebench.audit.brute import brute_stage
from suitebench.audit.checkers import Checker
from suitebench.audit.consensus import consensus_stage
from suitebench.audit.determinism import determinism_stage
from suitebench.audit.harness import Role
from suitebench.audit.interactive import with_interactor
from suitebench.audit.judge import JudgeTask, judge_limits, judge_many
from suitebench.audit.legality import LegalityReport, certify_legality
from suitebench.audit.oracle import consensus_oracle
from suitebench.audit.records import (
    WRONG_OUTPUT,
    Flag,
    GoldStatus,
    Judged,
    Legality,
    Stage,
    Verdict,
)
from suitebench.audit.runs import AuditEngine
from suitebench.audit.state import DEFAULT_MAX_CANDIDATES, AuditConfig, ChainState
from suitebench.audit.tables import ProblemAudit, tabulate
from suitebench.audit.tolerance import tolerance_stage
from suitebench.model.problem import Problem
from suitebench.run.outcome import sha256_bytes
from suitebench.run.toolchain import Built

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "AuditConfig",
    "AuditError",
    "ProblemAudit",
    "audit_problem",
    "audit_problems",
]


class AuditError(ValueError):
    """The audit cannot start: a pool or arm that does not exist, named with the problem."""


def _official_verdict(sub: str, official: Arm | None, cells: dict[tuple[str, str], Judged]) -> str:
    """The submission's re-judged verdict on the official tests (a logic kill first, then TLE)."""
    if official is None or not official.inputs:
        return "unknown"
    verdicts = [cells[(sub, c.sha256)].verdict for c in official.inputs if (sub, c.sha256) in cells]
    for v in verdicts:
        if v.is_kill:
            return str(v)
    if Verdict.TLE in verdicts:
        return str(Verdict.TLE)
    if verdicts and all(v is Verdict.AC for v in verdicts):
        return str(Verdict.AC)
    return "unknown" if not verdicts else str(next(v for v in verdicts if v is not Verdict.AC))


def _legality_certificate(f: Flag, legality: LegalityReport) -> Flag:
    """Only a legal input (by the quality-gated validator, or one of the problem's own tests
    when it has no validator) certifies a kill."""
    lg = legality.verdicts[f.input_sha256]
    if f.withdrawn is not None or lg is Legality.LEGAL:
        return f
    if lg is Legality.NO_VALIDATOR:
        why = "the problem has no validator (only its own tests are legal by definition)"
    elif legality.gate and not legality.gate.passed:
        why = f"{lg}: validator failed its quality gate ({'; '.join(legality.gate.reasons)})"
    else:
        why = f"{lg}: the validator could not decide"
    return dataclasses.replace(f, withdrawn=Stage.LEGALITY, reason=why)


def _stage_build(c: ChainState) -> None:
    """Build everything (in parallel through the job queue, cached by content hash)."""
    p, cfg, engine = c.problem, c.config, c.engine
    extra = [x for x in (p.validator, p.checker.program, p.interactor) if x is not None]
    cons_paths = p.pools[cfg.consensus_pool] if cfg.consensus_pool else ()
    judged = [*p.references, *p.pools[cfg.pool], *p.brute, *cons_paths]
    # the problem's [compile] flags are those of the judged programs; tools keep the defaults
    engine.build_all(judged, p.compile)
    engine.build_all(extra)

    def built(paths: Sequence[Path]) -> list[tuple[str, Built]]:
        return [(p.rel(x), engine.build(x, p.compile)) for x in paths]

    if p.interactor is not None:  # every judged program runs against it (audit/interactive.py)
        interactor = engine.build(p.interactor)
        c.harness.build_failed("build", Role.INTERACTOR, p.rel(p.interactor), interactor)

        def built(paths: Sequence[Path]) -> list[tuple[str, Built]]:
            return [
                (p.rel(x), with_interactor(b, interactor, p.interactor_convention))
                for x in paths
                for b in (engine.build(x, p.compile),)
            ]

    c.refs, c.pool, c.brutes = built(p.references), built(p.pools[cfg.pool]), built(p.brute)
    c.cons = built(cons_paths)
    c.checker = Checker(p.checker, engine)
    for role, programs in ((Role.REFERENCE, c.refs), (Role.BRUTE, c.brutes)):
        for name, b in programs:
            c.harness.build_failed("build", role, name, b)
    if p.checker.program is not None:
        c.harness.build_failed("build", Role.CHECKER, p.rel(p.checker.program), c.checker.built)


def _stage_arms(c: ChainState) -> None:
    """1. arms: every arm's inputs, deduplicated by sha256 across arms."""
    c.arms = problem_arms(c.problem) + [
        resolve_arm(s, c.problem, c.engine, c.base) for s in c.sources
    ]
    names = [a.name for a in c.arms]
    if len(set(names)) != len(names):
        raise AuditError(f"problem {c.problem.id}: arm names repeat: {names}")
    for a in c.arms:
        for case in a.inputs:
            c.inputs.setdefault(case.sha256, case.data)


def _stage_legality(c: ChainState) -> None:
    """2. legality: the validator's quality gate, then its word on every input."""
    c.legality = certify_legality(c.problem, list(c.inputs.values()), c.engine)


def _stage_oracle(c: ChainState) -> None:
    """3. consensus_oracle on every input the validator does not reject."""
    assert c.legality is not None and c.checker is not None
    cands = [s for s in c.inputs if c.legality.verdicts[s] is not Legality.ILLEGAL]
    c.golds = consensus_oracle(
        c.problem, [c.inputs[s] for s in cands], c.refs, c.limits, c.checker, c.engine
    )
    _check_official_answers(c)
    c.scored = [s for s in cands if c.golds[s].status is GoldStatus.GOLD]
    c.gold_bytes = {s: c.golds[s].answer or b"" for s in c.scored}
    built = all(b.ok for _, b in c.refs)  # a reference that did not build is said already
    if cands and not c.scored and built:  # nothing can be judged: the references' fault
        first = c.golds[cands[0]].reason
        why = f"no gold on any of {len(cands)} inputs (first: {first})"
        names = ", ".join(n for n, _ in c.refs)
        c.harness.record("oracle", Role.REFERENCE, names, why, len(cands))


def official_answers(problem: Problem) -> dict[str, tuple[Path, bytes]]:
    """The problem's own expected outputs: ``X.ans`` beside a test input ``X.in`` (the
    problem package convention), by the input's sha256."""
    out: dict[str, tuple[Path, bytes]] = {}
    for path in (*problem.official, *problem.samples):
        ans = path.with_suffix(".ans")
        if ans != path and ans.is_file():
            out.setdefault(sha256_bytes(path.read_bytes()), (ans, ans.read_bytes()))
    return out


def _check_official_answers(c: ChainState) -> None:
    """3b. Where the problem ships an expected output, the consensus gold must pass the
    problem's checker against it. A disagreement is a harness error naming the test and the
    references (the references, the answer or the checker is wrong: no kill rests on it), and
    the input loses its gold."""
    assert c.checker is not None
    answers = official_answers(c.problem)
    todo = [s for s, g in c.golds.items() if g.status is GoldStatus.GOLD and s in answers]
    items = [(c.inputs[s], c.golds[s].answer or b"", answers[s][1]) for s in todo]
    for s, ok, (_, out, ans) in zip(todo, c.checker.agree_many(items), items, strict=True):
        if ok:
            continue
        g, rel = c.golds[s], c.problem.rel(answers[s][0])
        why = c.checker.check_many([(c.inputs[s], out, ans)])[0].message
        message = (
            f"the references' consensus ({', '.join(g.references)}) is not accepted against "
            f"the official answer by checker {c.checker.label}" + (f": {why}" if why else "")
        )
        c.harness.record("oracle", Role.ANSWER, rel, message)
        c.golds[s] = dataclasses.replace(
            g,
            status=GoldStatus.NO_GOLD,
            answer=None,
            reason=f"the consensus disagrees with the official answer {rel}",
        )


def _stage_judge(c: ChainState) -> None:
    """4. judge: the kill matrix, every pool submission on every scored input."""
    assert c.checker is not None
    ok_pool = c.ok_pool
    tasks = [JudgeTask(b, c.inputs[s], c.gold_bytes[s]) for _, b in ok_pool for s in c.scored]
    judged = judge_many(tasks, c.limits, c.checker, c.engine, ignore_exit=c.ignore_exit)
    it = iter(judged)
    for n, _ in ok_pool:
        for s in c.scored:
            c.cells[(n, s)] = next(it)
    if c.problem.interactor is not None:  # an interactor that fails is the harness's fault
        fails = [j.message for j in judged if j.verdict is Verdict.FAIL]
        if fails:
            rel = c.problem.rel(c.problem.interactor)
            c.harness.record("judge", Role.INTERACTOR, rel, fails[0], len(fails))
    official = next((a for a in c.arms if a.name == OFFICIAL), None)
    c.official_verdicts = {n: _official_verdict(n, official, c.cells) for n, _ in ok_pool}


def _new_flag(c: ChainState, sub: str, sha: str) -> Flag:
    """A flag on a kill: a wrong answer carries its output (read back from the store if it was
    not kept inline), a crash only its output's sha256."""
    j = c.cells[(sub, sha)]
    got = b""
    if j.verdict in WRONG_OUTPUT:
        got = j.output or c.engine.output(j.output_sha256)
    return Flag(c.problem.id, sub, sha, j.verdict, got, got_sha256=j.output_sha256)


def _stage_certify(c: ChainState) -> None:
    """5-10. flags: per arm and submission, its killing inputs in emission order, examined in
    rounds of ``max_candidates`` until one is certified or none is left (so a wrong gold on an
    arm's first inputs cannot hide a real bug further down): determinism, consensus correction,
    brute force, tolerance, then the legality certificate."""
    assert c.legality is not None and c.checker is not None
    scored_set = set(c.scored)
    subs = [n for n, _ in c.ok_pool]
    killing: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a in c.arms:
        for n in subs:
            kills = [
                (case.input_id, case.sha256)
                for case in a.inputs
                if case.sha256 in scored_set and c.cells[(n, case.sha256)].verdict.is_kill
            ]
            if kills:
                killing[(a.name, n)] = kills
    c.candidates = {k: [] for k in killing}
    subs_built = dict(c.ok_pool)
    brute_limits = judge_limits(c.problem, time_limit=c.problem.brute_time_limit)
    step = max(1, c.config.max_candidates)
    while True:
        fresh: dict[tuple[str, str], Flag] = {}
        for key, kills in killing.items():
            chosen = c.candidates[key]
            done = any(c.flags[(key[1], s)].withdrawn is None for _, s in chosen)
            if done or len(chosen) == len(kills):
                continue
            more = kills[len(chosen) : len(chosen) + step]
            chosen.extend(more)
            for _, s in more:
                n = key[1]
                if (n, s) not in c.flags and (n, s) not in fresh:
                    fresh[(n, s)] = _new_flag(c, n, s)
        if not fresh:
            break
        flist = determinism_stage(
            list(fresh.values()),
            subs_built,
            c.inputs,
            c.gold_bytes,
            c.limits,
            c.checker,
            c.engine,
            ignore_exit=c.ignore_exit,
        )
        if c.cons:
            flist = consensus_stage(
                flist, c.cons, c.inputs, c.gold_bytes, c.limits, c.checker, c.engine
            )
        flist = brute_stage(
            flist, c.brutes, c.inputs, c.gold_bytes, brute_limits, c.checker, c.engine
        )
        flist = tolerance_stage(flist, c.gold_bytes, c.problem.tolerance)
        for f in flist:
            c.flags[(f.submission, f.input_sha256)] = _legality_certificate(f, c.legality)


#: One problem's stages, in order; each reads what the ones before it wrote.
STAGES: tuple[Callable[[ChainState], None], ...] = (
    _stage_build,
    _stage_arms,
    _stage_legality,
    _stage_oracle,
    _stage_judge,
    _stage_certify,
)


def _check_pools(problem: Problem, config: AuditConfig) -> None:
    for what, name in (("pool", config.pool), ("consensus pool", config.consensus_pool)):
        if name is not None and name not in problem.pools:
            raise AuditError(
                f"problem {problem.id}: no {what} {name!r} "
                f"(pools: {', '.join(problem.pools) or 'none'})"
            )


def audit_problem(
    problem: Problem,
    sources: Sequence[ArmSource],
    config: AuditConfig,
    engine: AuditEngine,
    *,
    base: Path | None = None,
) -> ProblemAudit:
    """Run the whole certification chain on one problem: its :data:`STAGES` in order, then the
    per-arm tables (11)."""
    _check_pools(problem, config)
    c = ChainState(problem, sources, config, engine, base or Path.cwd())
    for stage in STAGES:
        seen = c.checker.failures if c.checker else 0
        stage(c)
        _log_harness(c, stage.__name__.removeprefix("_stage_"), seen)
    return tabulate(c)


def _log_harness(c: ChainState, stage: str, seen: int) -> None:
    """Log what ``stage`` found broken: the checker's failed calls since it began (``seen``
    before), and the validator's failures (the legality stage)."""
    p = c.problem
    if c.checker is not None and p.checker.program is not None and c.checker.failures > seen:
        c.harness.record(
            stage,
            Role.CHECKER,
            p.rel(p.checker.program),
            c.checker.first_failure,
            c.checker.failures - seen,
        )
    if stage == "legality" and c.legality is not None and c.legality.failures:
        fails = c.legality.failures
        c.harness.record(stage, Role.VALIDATOR, c.legality.validator, fails[0], len(fails))


def audit_problems(
    problems: Sequence[Problem],
    sources: Sequence[ArmSource],
    config: AuditConfig,
    engine: AuditEngine,
    *,
    base: Path | None = None,
    in_flight: int | None = None,
) -> list[ProblemAudit]:
    """Audit many problems at once on the engine's one job queue, in the order given.

    Up to ``in_flight`` problems (default: four per worker) have a coordinator thread each;
    problem ``i``'s runs have priority ``i``, so the earliest problem finishes first and the
    later ones fill every idle worker. The first error (in problem order) is raised.
    """
    for p in problems:
        _check_pools(p, config)
    if not problems:
        return []
    width = max(1, min(len(problems), in_flight or 4 * engine.queue.jobs))

    def one(i: int) -> ProblemAudit:
        with engine.queue.priority(i):
            return audit_problem(problems[i], sources, config, engine, base=base)

    with cf.ThreadPoolExecutor(width, thread_name_prefix="suitebench-problem") as pool:
        futures = [pool.submit(one, i) for i in range(len(problems))]
        try:
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()
