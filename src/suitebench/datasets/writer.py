"""Problem directories from dataset rows: the records every format module fills in, and the
one writer that turns them into what ``suitebench audit`` loads as it is.

A format module reads a row into a :class:`ProblemDraft` (or a :class:`Skipped` with its
reason); :func:`write_problem` writes the directory::

    problem.toml          limits, checker, validator, references, pools, tests
    statement.md          the row's description
    refs/                 the references: a seeded pick of the correct solutions
    submissions/POOL/     every usable program of each pool (accepted, rejected)
    tests/ samples/       the official and sample inputs (NNN.in)
    arms/ARM/             inputs of the dataset's other test sets (CodeContests' generated)
    answers/ARM/NNN.ans   the dataset's expected outputs, for provenance: the audit's gold is
                          the references' consensus_oracle, not these
    provenance.json       source file, row index, fields used, what was dropped and why

The references are also members of the accepted pool (the pool is every correct solution).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suitebench.datasets.languages import Lang
from suitebench.model.errors import ID_RE

__all__ = [
    "Dropped",
    "ProblemDraft",
    "Program",
    "Skipped",
    "TestCase",
    "cap_pools",
    "defaults_taken",
    "pick_references",
    "problem_id",
    "write_problem",
]

PROVENANCE_FILE = "provenance.json"
OFFICIAL, SAMPLES = "official", "samples"
_ARM_DIRS = {OFFICIAL: "tests", SAMPLES: "samples"}


@dataclass(frozen=True)
class Program:
    """One program of the row: ``name`` is its file stem (``s003``), ``origin`` the field it
    came from (``solutions[3]``)."""

    name: str
    lang: Lang
    source: str
    origin: str
    # C, C++: the gcc -std value its label names (gnu++20); Java: its release (8)
    standard: str | None = None

    @property
    def filename(self) -> str:
        return self.name + self.lang.suffix

    @property
    def table_name(self) -> str | None:
        """Its ``[languages]`` entry, where the suffix alone does not say: ``pypy3``, or the
        language with its standard (``cpp:gnu++20``)."""
        if self.standard is not None:
            return f"{self.lang}:{self.standard}"
        return self.lang.table_name


@dataclass(frozen=True)
class TestCase:
    """One test: its input, the dataset's expected output when it gives one, its origin."""

    input: str
    output: str | None
    origin: str


@dataclass(frozen=True)
class Dropped:
    """Something of the row not imported (a program, a test, a field) and why."""

    what: str
    reason: str
    kind: str = "program"  # program | test | field

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True)
class Skipped:
    """A row that became no problem, and why (interactive, file I/O, no usable reference)."""

    name: str
    source_file: Path
    row: int
    reason: str
    dropped: tuple[Dropped, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source_file": str(self.source_file),
            "row": self.row,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ProblemDraft:
    """Everything a problem directory holds, before it is written.

    ``checker`` is a built-in name (``tokens``, ``float:1e-6``) or the name of one of
    ``files``; so are ``validator`` and ``generator``. ``pools`` maps a pool name to its
    programs; ``arms`` maps ``official``, ``samples`` or another arm name to its tests.
    """

    id: str
    title: str
    statement: str
    time_limit: float
    memory_limit: int
    source_file: Path
    row: int
    fields_used: tuple[str, ...]
    checker: str = "tokens"
    validator: str | None = None
    generator: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    pools: dict[str, tuple[Program, ...]] = field(default_factory=dict)
    arms: dict[str, tuple[TestCase, ...]] = field(default_factory=dict)
    dropped: tuple[Dropped, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # The format's expected outputs are judge answers (a problem package's .ans): written
    # beside their input (tests/001.ans), where the audit checks the gold against them.
    answers_beside: bool = False
    interactor: str | None = None  # the interactor's source, one of ``files``
    # how it is called (problem.toml's ``interactor_convention``): None, testlib's
    interactor_convention: str | None = None


def defaults_taken(root: Path) -> list[str]:
    """What an imported problem took by default, as its import recorded it: each defaulted
    field's reason in ``provenance.json`` (``memory_limit missing in problem.yaml
    limits.memory: 2048 MiB taken``); nothing for a problem not imported or unreadable."""
    try:
        prov = json.loads((root / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    dropped = prov.get("dropped") if isinstance(prov, dict) else None
    return [
        str(d.get("reason"))
        for d in dropped or []
        if isinstance(d, dict) and d.get("kind") == "field" and d.get("what") in _LIMIT_FIELDS
    ]


_LIMIT_FIELDS = ("time_limit", "memory_limit")


def problem_id(name: str) -> str:
    """A file-name-safe id from a dataset's problem name (``76_B. Mice`` -> ``76_b-mice``)."""
    slug = re.sub(r"[^a-z0-9_]+", "-", name.strip().lower()).strip("-_")[:80].strip("-_")
    slug = slug or "problem"
    return slug if ID_RE.match(slug) else f"p-{slug}"


def pick_references(programs: Sequence[Program], n: int, seed: int, pid: str) -> list[Program]:
    """``n`` of the correct solutions, a seeded pick per problem (the same seed and problem
    pick the same references on every machine), in their dataset order."""
    if n >= len(programs):
        return list(programs)
    rng = random.Random(f"{seed}:{pid}")
    chosen = set(rng.sample(range(len(programs)), n))
    return [p for i, p in enumerate(programs) if i in chosen]


def cap_pools(draft: ProblemDraft, cap: int, seed: int) -> ProblemDraft:
    """Each pool cut to at most ``cap`` programs, a seeded pick (CodeContests rows carry up
    to thousands of solutions); the rest are dropped with the reason."""
    pools, dropped = {}, list(draft.dropped)
    for pool, progs in draft.pools.items():
        kept = pick_references(progs, cap, seed, f"{draft.id}:{pool}")
        names = {p.name for p in kept}
        dropped += [
            Dropped(p.origin, f"over --max-pool {cap}") for p in progs if p.name not in names
        ]
        pools[pool] = tuple(kept)
    return replace(draft, pools=pools, dropped=tuple(dropped))


def _toml_str(value: str) -> str:
    # JSON's escapes (\n, \", \\, \uXXXX) are TOML basic-string escapes too.
    return json.dumps(value, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")


def _tests(
    root: Path, arm: str, tests: Iterable[TestCase], beside: bool = False
) -> list[dict[str, Any]]:
    where = _ARM_DIRS.get(arm, f"arms/{arm}")
    written = []
    for i, t in enumerate(tests, start=1):
        rel = f"{where}/{i:03d}.in"
        _write(root / rel, t.input)
        entry: dict[str, Any] = {"file": rel, "origin": t.origin}
        if t.output is not None:
            ans = f"{where}/{i:03d}.ans" if beside else f"answers/{arm}/{i:03d}.ans"
            _write(root / ans, t.output)
            entry["answer"] = ans
        written.append(entry)
    return written


def _write_programs(
    draft: ProblemDraft, root: Path, refs: Sequence[Program]
) -> tuple[dict[str, list[dict[str, str]]], list[str], dict[str, str]]:
    """Write the references under ``refs/`` and each pool under ``submissions/POOL/``: the
    programs' provenance by pool, the ``[pools]`` lines and each file's language name."""
    languages: dict[str, str] = {}
    programs: dict[str, list[dict[str, str]]] = {}

    def put(rel: str, prog: Program) -> None:
        _write(root / rel, prog.source)
        if prog.table_name:
            languages[rel] = prog.table_name

    for prog in refs:
        put(f"refs/{prog.filename}", prog)
    programs["references"] = [{"file": f"refs/{p.filename}", "origin": p.origin} for p in refs]
    pool_lines = []
    for pool, progs in draft.pools.items():
        if not progs:
            continue
        for prog in progs:
            put(f"submissions/{pool}/{prog.filename}", prog)
        programs[pool] = [
            {"file": f"submissions/{pool}/{p.filename}", "origin": p.origin, "lang": p.lang}
            for p in progs
        ]
        pool_lines.append(f'{pool} = "submissions/{pool}/*"')
    return programs, pool_lines, languages


def write_problem(draft: ProblemDraft, root: Path, *, references: int, seed: int) -> dict[str, Any]:
    """Write ``draft`` into ``root`` (a new directory); return its provenance record."""
    root.mkdir(parents=True)
    accepted = draft.pools.get("accepted", ())
    refs = pick_references(accepted, references, seed, draft.id)
    lines = [
        f"id = {_toml_str(draft.id)}",
        'statement = "statement.md"',
        f"time_limit = {draft.time_limit!r}",
        f"memory_limit = {draft.memory_limit}",
        f"checker = {_toml_str(draft.checker)}",
    ]
    if draft.validator:
        lines.append(f"validator = {_toml_str(draft.validator)}")
    lines.append('references = ["refs/*"]')
    if draft.generator:
        lines.append(f"generator = {_toml_str(draft.generator)}")
    if draft.interactor:
        lines.append(f"interactor = {_toml_str(draft.interactor)}")
        if draft.interactor_convention:
            lines.append(f"interactor_convention = {_toml_str(draft.interactor_convention)}")
    _write(root / "statement.md", f"# {draft.title}\n\n{draft.statement.rstrip()}\n")
    for name, text in draft.files.items():
        _write(root / name, text)

    programs, pool_lines, languages = _write_programs(draft, root, refs)
    if pool_lines:
        lines += ["", "[pools]", *pool_lines]

    tests: dict[str, list[dict[str, Any]]] = {}
    for arm, cases in draft.arms.items():
        tests[arm] = _tests(root, arm, cases, draft.answers_beside)
    test_lines = [f'{arm} = "{_ARM_DIRS[arm]}/*.in"' for arm in _ARM_DIRS if draft.arms.get(arm)]
    if test_lines:
        lines += ["", "[tests]", *test_lines]
    for arm in draft.arms:
        if arm not in _ARM_DIRS:
            (root / "arms" / arm).mkdir(parents=True, exist_ok=True)
    lines += ["", "[oracle]", 'rule = "all_agree"', f"min_success = {min(2, len(refs))}"]
    if languages:
        lines += ["", "[languages]"]
        lines += [f"{_toml_str(rel)} = {_toml_str(lang)}" for rel, lang in languages.items()]
    _write(root / "problem.toml", "\n".join(lines) + "\n")

    provenance = {
        "id": draft.id,
        "title": draft.title,
        "source_file": str(draft.source_file),
        "row": draft.row,
        "fields_used": list(draft.fields_used),
        "metadata": draft.metadata,
        "limits": {"time_limit": draft.time_limit, "memory_limit": draft.memory_limit},
        "checker": draft.checker,
        "validator": draft.validator,
        "generator": draft.generator,
        "interactor": draft.interactor,
        "programs": programs,
        "tests": tests,
        "dropped": [d.to_dict() for d in draft.dropped],
        "notes": list(draft.notes),
        "reference_pick": {"requested": references, "seed": seed, "picked": len(refs)},
    }
    _write(root / PROVENANCE_FILE, json.dumps(provenance, indent=2, ensure_ascii=False) + "\n")
    return provenance
