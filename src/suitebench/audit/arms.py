"""Arms: the input sets an audit compares.

An arm is a directory of input files (emission order = sorted names) or a generator program
plus a number of seeds: the generator is called testlib's way, its own arguments then seed ``s``
as the last argument (``gen.py 10 1000 7``), and ``s`` is written to its stdin as well (for a
generator that reads it there); its stdout is one input; it runs sandboxed like every untrusted
program. A generator that gives one and the same input for every seed ignores its seed: the arm
says so (``ignores_seed``) and the audit names it. The official and sample tests of a
problem are arms too (``official``, ``samples``). Identical inputs are deduplicated by sha256,
keeping the first, and the duplicates are counted: an arm gets no credit for repeating itself.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from suitebench.audit.records import InputCase
from suitebench.audit.runs import AuditEngine, RunResult, RunSpec
from suitebench.model.problem import Problem
from suitebench.run.limits import GENERATOR
from suitebench.run.outcome import Limits
from suitebench.run.toolchain import Built

__all__ = [
    "Arm",
    "ArmError",
    "ArmSource",
    "arm_from_dir",
    "arm_from_generator",
    "generator_failure",
    "generator_runs",
    "parse_arm",
]

OFFICIAL = "official"
GENERATE_LOG = "generate.json"
SAMPLES = "samples"
_GEN_RE = re.compile(r"^(?P<prog>.+)@(?P<seeds>\d+)$")


class ArmError(ValueError):
    """An arm that cannot be read: names the arm, the path and what was expected."""


@dataclass(frozen=True)
class ArmSource:
    """Where an arm's inputs come from: a directory, or a generator program and a seed count.

    The generator ``generator`` means the problem's own generator.
    """

    name: str
    path: str
    seeds: int | None = None
    args: tuple[str, ...] = ()  # the generator's own arguments, before the seed


@dataclass(frozen=True)
class Arm:
    name: str
    inputs: tuple[InputCase, ...]
    duplicates: int
    source: str
    failed_seeds: tuple[int, ...] = ()
    # Why each failed seed failed, in the same order: its status (``output_limit`` for a run
    # that printed past the limit) and the last line it wrote to stderr.
    failures: tuple[str, ...] = ()
    ignores_seed: bool = False  # two seeds or more, every one the same input


def parse_arm(text: str) -> ArmSource:
    """``NAME=DIR`` or ``NAME=PROGRAM@SEEDS`` (``PROGRAM`` may be ``generator``, and may be
    followed by its arguments: ``NAME=gen.py 10 1000@50``, split as a shell splits words)."""
    if "=" not in text:
        raise ArmError(f"arm {text!r}: expected NAME=PATH or NAME=PROGRAM@SEEDS")
    name, path = text.split("=", 1)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", name):
        raise ArmError(f"arm {text!r}: the name must be letters, digits, '_', '-', '.'")
    if name in (OFFICIAL, SAMPLES):
        raise ArmError(f"arm {text!r}: {name!r} is reserved for the problem's own tests")
    m = _GEN_RE.match(path)
    if m:
        try:
            words = shlex.split(m.group("prog"))
        except ValueError as exc:
            raise ArmError(f"arm {text!r}: {exc}") from None
        if not words:
            raise ArmError(f"arm {text!r}: no program before @SEEDS")
        return ArmSource(name, words[0], int(m.group("seeds")), tuple(words[1:]))
    return ArmSource(name, path)


def generator_runs(
    built: Built, seeds: Sequence[int], args: Sequence[str] = (), limits: Limits = GENERATOR
) -> list[RunSpec]:
    """One run per seed, testlib's way: ``argv`` + ``args`` + the seed, the seed on stdin
    too. Each distinct argv is a program of its own to the store (its runs keyed apart)."""
    specs = []
    for s in seeds:
        argv = (*args, str(s))
        tag = "\0".join(argv)
        program = dataclasses.replace(
            built, argv=(*built.argv, *argv), program_id=f"{built.program_id}|argv:{tag}"
        )
        specs.append(RunSpec(program, f"{s}\n".encode(), limits))
    return specs


def _dedup(name: str, cases: Sequence[InputCase], source: str) -> Arm:
    seen: set[str] = set()
    kept: list[InputCase] = []
    for c in cases:
        if c.sha256 in seen:
            continue
        seen.add(c.sha256)
        kept.append(c)
    return Arm(name, tuple(kept), len(cases) - len(kept), source)


def arm_from_files(name: str, files: Sequence[Path], source: str) -> Arm:
    return _dedup(name, [InputCase(name, f.name, f.read_bytes()) for f in files], source)


def arm_from_dir(name: str, directory: Path) -> Arm:
    """Every regular file of ``directory`` (not recursive), in sorted name order, except
    ``generate.json`` (the log ``suitebench generate`` writes beside the inputs)."""
    if not directory.is_dir():
        raise ArmError(f"arm {name!r}: {directory} is not a directory of input files")
    files = sorted(
        (p for p in directory.iterdir() if p.is_file() and p.name != GENERATE_LOG),
        key=lambda p: p.name,
    )
    return arm_from_files(name, files, str(directory))


def arm_from_generator(
    name: str,
    generator: Path,
    seeds: int,
    engine: AuditEngine,
    *,
    limits: Limits | None = None,
    args: Sequence[str] = (),
) -> Arm:
    """Run ``generator`` sandboxed once per seed 0..seeds-1 (:func:`generator_runs`); each
    successful stdout is an input.

    A seed whose run fails is recorded in ``failed_seeds`` with its reason in ``failures``
    (the audit names each on stderr), not silently dropped.
    """
    built = engine.build(generator)
    if not built.ok:
        raise ArmError(f"arm {name!r}: generator {generator} did not build: {built.message}")
    lim = limits or GENERATOR
    outs = engine.run(generator_runs(built, range(seeds), args, lim))
    cases, failed, why = [], [], []
    for s, oc in enumerate(outs):
        if oc.ok and not oc.stdout_truncated:
            cases.append(InputCase(name, f"seed-{s}", oc.read_stdout()))
        else:
            failed.append(s)
            why.append(generator_failure(oc))
    label = " ".join([str(generator), *args]) + f"@{seeds}"
    arm = _dedup(name, cases, label)
    same = len(cases) > 1 and len(arm.inputs) == 1
    return Arm(arm.name, arm.inputs, arm.duplicates, arm.source, tuple(failed), tuple(why), same)


def generator_failure(oc: RunResult) -> str:
    """Why a generator's run gave no input: its status (``output_limit`` when it printed past
    the limit: a generator that prints forever) and the last line it wrote to stderr."""
    status = "output_limit" if oc.stdout_truncated else str(oc.status.value)
    lines = oc.stderr_text().strip().splitlines()
    return f"{status}: {lines[-1][:150]}" if lines else status


def problem_arms(problem: Problem) -> list[Arm]:
    """The problem's own tests as arms (those it has)."""
    arms = []
    if problem.official:
        arms.append(arm_from_files(OFFICIAL, problem.official, "tests.official"))
    if problem.samples:
        arms.append(arm_from_files(SAMPLES, problem.samples, "tests.samples"))
    return arms


def resolve_arm(src: ArmSource, problem: Problem, engine: AuditEngine, base: Path) -> Arm:
    """Materialise ``src`` for one problem.

    Paths are tried relative to ``base`` (the working directory) and then to the problem root;
    a directory holding a sub-directory named after the problem id uses that sub-directory, so
    one ``--arm`` can serve several problems.
    """
    if src.seeds is not None and src.path == "generator":
        if problem.generator is None:
            raise ArmError(f"arm {src.name!r}: problem {problem.id} has no generator")
        return arm_from_generator(src.name, problem.generator, src.seeds, engine, args=src.args)
    candidates = [base / src.path, problem.root / src.path]
    path = next((c for c in candidates if c.exists()), None)
    if path is None:
        raise ArmError(
            f"arm {src.name!r}: {src.path} not found (looked in {base} and {problem.root})"
        )
    path = path.resolve()
    if src.seeds is not None:
        return arm_from_generator(src.name, path, src.seeds, engine, args=src.args)
    if (path / problem.id).is_dir():
        path = path / problem.id
    return arm_from_dir(src.name, path)
