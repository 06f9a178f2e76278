"""``generate``: produce one arm's inputs for one problem, topped up to a budget of legal inputs.

Arms (the registry a user picks from with ``suitebench generate ARM``):

* ``random`` -- the problem's generator swept over seeds ``100000*S + i``, i = 0, 1, ...
  (``--seed 0`` is the audit's ``generator@N``);
* ``cc-mutation``, ``evalplus`` -- the mutation baselines (:mod:`suitebench.generate.mutation`);
* ``llm-single``, ``llm-genval`` -- the model arms (:mod:`suitebench.generate.llm_arms`);
* ``mixture`` -- several arms (``--mix a,b,c``; a name may repeat) interleaved by position
  within one budget, each component drawing from its own seed: ``--mix
  llm-single,llm-single,llm-single,llm-single`` is the paper's four-call mixture.

Every arm goes through the same top-up gate (:mod:`suitebench.generate.gate`): candidates in
emission order, duplicates dropped, the problem's validator first, then the consensus_oracle
must have a gold, until ``budget`` inputs are kept or ``max_attempts`` candidates were tried.
The output directory gets the kept inputs as ``001.in``, ``002.in``, ... in emission order and
``generate.json`` (what was tried, dropped and why, tokens and cost). ``audit --arm
NAME=DIR`` reads the directory as it is (``generate.json`` and sub-directories are skipped).
A model call that fails ends its arm's stream, not the run: the inputs kept so far are written,
``generate.json`` names the failure (``model_errors``) and says why calls gave nothing
(``notes``), and a rerun takes the earlier replies from the store.
"""

from __future__ import annotations

import json
import math
import platform
import random
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any, TypeVar

from suitebench import __version__
from suitebench.audit.runs import AuditEngine
from suitebench.generate.gate import InputGate, InputSource, legal_stream
from suitebench.generate.llm_arms import GenVal, SingleCall
from suitebench.generate.mutation import CCMutation, EvalPlusMutation
from suitebench.generate.records import Candidate, GenerateError, GenerationLog, derive_seed
from suitebench.generate.sweep import sweep
from suitebench.llm.client import ModelClient
from suitebench.model.problem import Problem
from suitebench.run import interrupt
from suitebench.run.outcome import Backend

__all__ = [
    "ARMS",
    "MODEL_ARMS",
    "GenerateOptions",
    "GenerateResult",
    "generate_arm",
    "make_source",
]

T = TypeVar("T")
ARMS = ("random", "cc-mutation", "evalplus", "llm-single", "llm-genval", "mixture")
MODEL_ARMS = frozenset({"llm-single", "llm-genval"})
LOG_FILE = "generate.json"
PROGRAMS_DIR = "programs"
_INPUT_FILE = re.compile(r"^\d+\.in$")


@dataclass(frozen=True)
class GenerateOptions:
    budget: int
    seed: int = 0
    max_attempts: int | None = None  # default: 10 x budget (at least 100)
    mix: tuple[str, ...] = ()
    reps: int = 1
    temperature: float = 1.0
    max_tokens: int | None = None
    max_calls: int = 3

    @property
    def attempt_cap(self) -> int:
        return self.max_attempts if self.max_attempts is not None else max(100, 10 * self.budget)


@dataclass
class GenerateResult:
    out_dir: Path
    inputs: list[Candidate]
    log: dict[str, Any]
    reps: list[GenerateResult] = field(default_factory=list)


class ProblemGenerator:
    """``random``: the problem's own generator, sandboxed, over consecutive seeds."""

    def __init__(self, problem: Problem, engine: AuditEngine, seed: int) -> None:
        if problem.generator is None:
            raise GenerateError(f"problem {problem.id}: random needs a generator in problem.toml")
        self.problem, self.engine, self.seed = problem, engine, seed
        self.built = engine.build(problem.generator)
        if not self.built.ok:
            raise GenerateError(
                f"problem {problem.id}: generator {problem.generator} did not build: "
                f"{self.built.message[:300]}"
            )

    def candidates(self) -> Iterator[Candidate]:
        start = 100_000 * self.seed
        yield from sweep(self.engine, self.built, count(start), "generator")

    def kept(self, candidate: Candidate) -> None:
        pass

    def own_validator(self) -> None:
        return None

    def details(self) -> dict[str, Any]:
        return {
            "generator": self.problem.rel(self.problem.generator or Path()),
            "first_seed": 100_000 * self.seed,
        }


def seed_inputs(problem: Problem) -> list[tuple[str, bytes]]:
    """The official and sample inputs (distinct contents), what the mutation arms mutate."""
    seen: set[bytes] = set()
    out = []
    for p in (*problem.official, *problem.samples):
        data = p.read_bytes()
        if data not in seen:
            seen.add(data)
            out.append((problem.rel(p), data))
    return out


def make_source(
    arm: str,
    problem: Problem,
    engine: AuditEngine,
    *,
    seed: int,
    options: GenerateOptions,
    work_dir: Path,
    client: ModelClient | None = None,
) -> InputSource:
    """One arm's generation procedure (not ``mixture``, which combines these)."""
    rng = random.Random(derive_seed(seed, arm))
    if arm == "random":
        return ProblemGenerator(problem, engine, seed)
    if arm == "cc-mutation":
        return CCMutation(seed_inputs(problem), rng)
    if arm == "evalplus":
        return EvalPlusMutation(seed_inputs(problem), rng)
    if arm in MODEL_ARMS:
        if client is None:
            raise GenerateError(f"{arm} needs a model: give --model (and an endpoint and key)")
        cls = SingleCall if arm == "llm-single" else GenVal
        return cls(
            problem,
            engine,
            client,
            seed=seed,
            budget=options.budget,
            work_dir=work_dir,
            max_calls=options.max_calls,
            temperature=options.temperature,
            max_tokens=options.max_tokens,
        )
    raise GenerateError(f"unknown arm {arm!r}; arms: {', '.join(ARMS)}")


def _interleave(streams: list[Iterator[Candidate]]) -> Iterator[Candidate]:
    """Position-wise: first of each stream, then second of each, ...; exhausted ones drop out."""
    live = list(streams)
    while live:
        nxt = []
        for s in live:
            c = next(s, None)
            if c is not None:
                yield c
                nxt.append(s)
        live = nxt


def _prepare(out: Path) -> None:
    """Clear what an earlier generate wrote here (numbered inputs, the log, programs)."""
    out.mkdir(parents=True, exist_ok=True)
    for f in out.iterdir():
        if f.is_file() and (_INPUT_FILE.match(f.name) or f.name == LOG_FILE):
            f.unlink()
    if (out / PROGRAMS_DIR).is_dir():
        shutil.rmtree(out / PROGRAMS_DIR)


def _whole(out: Path, make: Callable[[], T], reps: Sequence[Path] = ()) -> T:
    """``make()``, which writes into ``out`` (and the repetitions' directories ``reps``); if it
    stops half-way (Ctrl-C ends it at its next run, an error), what it wrote there is taken
    away: a finished ``rep-1`` beside no ``rep-2`` and no summary would pass for a result. The
    store keeps every run, so the same command again redoes none of them."""
    try:
        made = make()
        # A run cut short by Ctrl-C that a step took for a failure (a generator that gave no
        # input, say) is an interrupt all the same: the command says "nothing written".
        interrupt.check()
        return made
    except BaseException:
        for d in (*reps, out):
            if d.is_dir():
                _prepare(d)
                if d != out and not any(d.iterdir()):
                    d.rmdir()
        raise


def _component_notes(
    components: list[dict[str, Any]], *, mixture: bool
) -> tuple[list[str], list[str]]:
    """The components' notes and model failures, lifted to the top of ``generate.json`` (a
    mixture's prefixed with the component they are about) so neither hides in the details."""
    notes: list[str] = []
    errors: list[str] = []
    for i, c in enumerate(components):
        head = f"{c['arm']} {i + 1}: " if mixture else ""
        notes += [head + n for n in c.get("notes", [])]
        if c.get("model_error"):
            errors.append(head + c["model_error"])
    return notes, errors


def _mixture(
    problem: Problem,
    engine: AuditEngine,
    out: Path,
    options: GenerateOptions,
    seed: int,
    client: ModelClient | None,
    gate: InputGate,
    log: GenerationLog,
) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """The mixture's legal inputs, its arms' streams interleaved by position (each with its
    share of the budget and of the attempts), and each arm's details."""
    budget = options.budget
    kept: list[Candidate] = []
    components: list[dict[str, Any]] = []
    if len(options.mix) < 2:
        raise GenerateError("mixture needs --mix with at least two arms, e.g. a,b")
    if "mixture" in options.mix:
        raise GenerateError("a mixture cannot contain a mixture")
    k = len(options.mix)
    sources = []
    for i, name in enumerate(options.mix):
        cseed = derive_seed(seed, "mix", i, name)
        src = make_source(
            name,
            problem,
            engine,
            seed=cseed,
            options=options,
            work_dir=out / PROGRAMS_DIR / f"{i + 1}-{name}",
            client=client,
        )
        sources.append((name, cseed, src))
    share = math.ceil(budget / k)
    cap = math.ceil(options.attempt_cap / k)
    streams = [legal_stream(s, gate, log, lambda: share, cap) for _, _, s in sources]
    for c in _interleave(streams):
        kept.append(c)
        if len(kept) >= budget:
            break
    for name, cseed, src in sources:
        components.append({"arm": name, "seed": cseed, **src.details()})
    return kept, components


def _single(
    arm: str,
    problem: Problem,
    engine: AuditEngine,
    out: Path,
    options: GenerateOptions,
    seed: int,
    client: ModelClient | None,
    gate: InputGate,
    log: GenerationLog,
) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """One arm's legal inputs up to the budget (asking for what is missing, at least 8 at a
    time), and its details."""
    budget = options.budget
    kept: list[Candidate] = []
    src = make_source(
        arm, problem, engine, seed=seed, options=options, work_dir=out / PROGRAMS_DIR, client=client
    )

    def need() -> int:
        return max(8, budget - len(kept))

    for c in legal_stream(src, gate, log, need):
        kept.append(c)
        if len(kept) >= budget:
            break
    return kept, [{"arm": arm, "seed": seed, **src.details()}]


def _write_inputs(out: Path, kept: list[Candidate], budget: int) -> list[dict[str, Any]]:
    """Write the kept inputs as numbered ``NNN.in`` files in emission order; their records."""
    width = max(3, len(str(budget)))
    files = []
    for n, c in enumerate(kept, 1):
        name = f"{n:0{width}d}.in"
        (out / name).write_bytes(c.data)
        files.append({"file": name, "sha256": c.sha256, "origin": c.origin})
    return files


def _one(
    arm: str,
    problem: Problem,
    engine: AuditEngine,
    out: Path,
    options: GenerateOptions,
    seed: int,
    client: ModelClient | None,
) -> GenerateResult:
    """One repetition of the arm into ``out``: its legal inputs and ``generate.json``."""
    _prepare(out)
    work = out / PROGRAMS_DIR
    gate = InputGate(problem, engine)
    log = GenerationLog(options.attempt_cap)
    budget = options.budget
    usage_before = client.usage.copy() if client is not None else None
    if arm == "mixture":
        kept, components = _mixture(problem, engine, out, options, seed, client, gate, log)
    else:
        kept, components = _single(arm, problem, engine, out, options, seed, client, gate, log)
    files = _write_inputs(out, kept, budget)
    usage: dict[str, Any] | None = None
    if client is not None and usage_before is not None:
        usage = {**client.usage.since(usage_before).to_dict(), "model": client.model}
    # A stream that stopped at its cap matters only if the budget was not reached.
    log.capped = log.capped and len(kept) < budget
    notes, errors = _component_notes(components, mixture=arm == "mixture")
    entry: dict[str, Any] = {
        "arm": arm,
        "problem": problem.id,
        "seed": seed,
        "budget": budget,
        "max_attempts": options.attempt_cap,
        "reached_budget": len(kept) >= budget,
        **log.to_dict(len(kept)),
        "mix": list(options.mix) if arm == "mixture" else None,
        "usage": usage,
        "model_errors": errors,
        "notes": notes,
        "legality": gate.legality_info(),
        "backend": str(engine.backend),  # every run of the gate (and the arm's programs)
        "unsandboxed": engine.backend is Backend.PLAIN,
        "components": components,
        "inputs": files,
        "suitebench_version": __version__,
        "python": platform.python_version(),
    }
    (out / LOG_FILE).write_text(json.dumps(entry, indent=1) + "\n", encoding="utf-8")
    if work.is_dir() and not any(work.rglob("*")):
        work.rmdir()
    return GenerateResult(out, kept, entry)


def generate_arm(
    arm: str,
    problem: Problem,
    engine: AuditEngine,
    out: Path,
    options: GenerateOptions,
    *,
    client: ModelClient | None = None,
) -> GenerateResult:
    """Generate ``arm`` for ``problem`` into ``out`` (``--reps K``: ``out/rep-1`` ..
    ``out/rep-K``, each an independent repetition from its own seed, and a summary
    ``out/generate.json``)."""
    if arm not in ARMS:
        raise GenerateError(f"unknown arm {arm!r}; arms: {', '.join(ARMS)}")
    if options.budget < 1:
        raise GenerateError("the budget must be at least 1")
    if options.reps < 1:
        raise GenerateError("--reps must be at least 1")
    names = options.mix if arm == "mixture" else (arm,)
    if any(n in MODEL_ARMS for n in names) and client is None:
        raise GenerateError(f"{arm} needs a model: give --model (and an endpoint and key)")
    if options.reps == 1:
        return _whole(out, lambda: _one(arm, problem, engine, out, options, options.seed, client))
    _prepare(out)
    dirs = [out / f"rep-{r + 1}" for r in range(options.reps)]

    def every_rep() -> list[GenerateResult]:
        return [
            _one(arm, problem, engine, d, options, derive_seed(options.seed, "rep", r), client)
            for r, d in enumerate(dirs)
        ]

    reps = _whole(out, every_rep, dirs)
    summary = {
        "arm": arm,
        "problem": problem.id,
        "seed": options.seed,
        "budget": options.budget,
        "reps": [
            {
                "dir": f"rep-{r + 1}",
                "seed": rep.log["seed"],
                "kept": rep.log["kept"],
                "tried": rep.log["tried"],
                "usage": rep.log["usage"],
                "model_errors": rep.log["model_errors"],
            }
            for r, rep in enumerate(reps)
        ],
        "suitebench_version": __version__,
    }
    (out / LOG_FILE).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return GenerateResult(out, [], summary, reps)
