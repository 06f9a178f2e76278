"""Incremental mutant builds for C/C++ builds that compile and link in one command
(``cc -O2 -o executable src/*.c``): such a build leaves no object to start from, so the units
it compiles are compiled once more, each alone, from its recorded command
(:mod:`suitebench.run.compiles`), and kept beside the reference's recorded build.

A mutant is then built from a fresh copy of the source, as from scratch, by its own recipe, but
with *reusing* compiler wrappers first on ``PATH``: when a compiler command is one the
reference's build ran (the same directory, relative to the tree, and the same arguments), each
of its units whose every file of the tree it reads (the unit and its headers, as the
preprocessor saw them) has the reference's bytes is handed to the compiler as the kept object,
in the unit's place on the command line; the units a mutant's change reaches are compiled by
the command itself. The compiler driver compiles the units of such a command one by one into
objects and links them in order, which is what it then does, minus the compiles it can skip:
the program is the one a clean build gives (the same bytes where the build is deterministic; a
differential test holds it).

Commands whose object could differ are left to the compiler whole: those that do not link
(``-c``, ``-S``, ``-E``), write dependency files or other side outputs (``-M*``,
``-save-temps``, ``-fdump-*``, coverage or profile data), compile across units (``-flto``,
``-fwhole-program``, ``-combine``) or set a unit's language (``-x``), and units whose
preprocessing failed (what they read is unknown).

Trivial compiler equivalence: a mutant whose ``./executable`` is byte for byte the recorded
reference's is the same program.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from suitebench.run.buildcache import entry_lock
from suitebench.run.compiles import (
    COMPILERS,
    RECORD_DIR,
    CompileCommand,
    CompileRecord,
    each_command,
    unit_compile_argv,
    unit_positions,
)
from suitebench.run.outcome import Backend, Status
from suitebench.run.program import EXECUTABLE
from suitebench.suite.execute.incremental import changed_files

__all__ = ["UnitsBase", "reusable_commands"]

UNITS_DIR = "unit-objects"  # beside the recorded build's tree, in its cache entry
PLAN = "plan.json"
# Options that make a command's objects, or its side outputs, other than one unit's compile.
_WHOLE = ("-c", "-S", "-E", "-x", "-M", "-save-temps", "-fdump", "-flto", "-fwhole-program",
          "-combine", "--coverage", "-ftest-coverage", "-fprofile", "-fauto-profile", "-###",
          "-wrapper", "-fplugin", "-specs", "-aux-info")  # fmt: skip

_WRAPPER = """#!/usr/bin/python3 -IS
import hashlib, json, os, sys
REAL, PLAN = {real!r}, {plan!r}
args = sys.argv[1:]
try:
    home = os.environ["HOME"]
    cwd = os.path.relpath(os.getcwd(), home)
    with open(PLAN) as f:
        units = json.load(f).get("\\0".join([cwd, REAL, *args]), [])
except (OSError, ValueError, KeyError):
    units = []
def same(rel, digest):
    try:
        with open(os.path.join(home, rel), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest() == digest
    except OSError:
        return False
for unit in units:
    if all(same(rel, digest) for rel, digest in unit["reads"].items()):
        args[unit["index"]] = unit["object"]
os.execv(REAL, [REAL, *args])
"""


def _links_units(argv: tuple[str, ...]) -> bool:
    """Whether a command compiles its units and links them, and nothing else (see the module)."""
    args = argv[1:]
    return "-" not in args and not any(a.startswith(_WHOLE) for a in args)


def reusable_commands(record: CompileRecord) -> list[CompileCommand]:
    """The recorded units compiled and linked in one command whose objects can stand in for
    their compile (see the module)."""
    if not record.commands:
        return []
    return [
        c
        for c in record.commands
        if c.output is None and c.source not in record.failed and _links_units(c.argv)
    ]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class UnitsBase:
    """The reference's recorded one-command build: its tree, its record and the directory of
    the reusing wrappers, their plan and the units' objects (``unit-objects/``)."""

    tree: Path
    record: CompileRecord
    wrappers: Path

    @classmethod
    def of(
        cls, tree: Path, record: CompileRecord, *, backend: Backend | None = None
    ) -> UnitsBase | None:
        """Made once per recorded build (under its entry's lock: every builder asks), None
        when no unit's object could be made or stand in for its compile."""
        wrappers = tree.parent / UNITS_DIR
        with entry_lock(tree.parent.parent, f"{tree.parent.name}.units"):
            made = (wrappers / PLAN).is_file() or _make_units(tree, record, wrappers, backend)
        if not made:
            return None
        return cls(tree, record, wrappers)

    def stale_objects(self, patch: bytes) -> list[str] | None:
        """The units a mutant's change reaches (None: a file no unit reads, e.g. the build
        script: nothing says a kept object is still what the build would compile)."""
        files = changed_files(patch)
        if files is None:
            return None
        stale: set[str] = set()
        for path in files:
            units = self.record.reads.get(path)
            if not units:
                return None
            stale.update(units)
        return sorted(stale)

    def same_objects(self, mutant_tree: Path, patch: bytes) -> bool | None:
        """Trivial compiler equivalence: the mutant's program is the reference's bytes."""
        if self.stale_objects(patch) is None:
            return None
        try:
            ours = (mutant_tree / EXECUTABLE).read_bytes()
            theirs = (self.tree / EXECUTABLE).read_bytes()
        except OSError:
            return None
        return ours == theirs


def _make_units(tree: Path, record: CompileRecord, wrappers: Path, backend: Backend | None) -> bool:
    """Compile each reusable unit alone from its recorded command (one sandboxed run, in the
    recorded tree), then write the plan and the wrappers into ``wrappers``."""
    commands = reusable_commands(record)
    if not commands:
        return False
    logs = tree / RECORD_DIR
    out_dir = logs / "units"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    outcome = each_command(
        tree,
        commands,
        unit_compile_argv,
        out_dir,
        ".o",
        env={"PATH": "/usr/bin:/bin", "LANG": "C"},
        backend=backend,
    )
    if outcome.status is Status.SANDBOX_ERROR:
        return False
    staging = wrappers.with_name(f"{UNITS_DIR}.{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    plan: dict[str, list[dict[str, object]]] = {}
    reads: dict[str, dict[str, str]] = {}
    for rel, units in record.reads.items():
        for unit in units:
            with contextlib.suppress(OSError):
                reads.setdefault(unit, {})[rel] = _digest(tree / rel)
    for index, command in enumerate(commands):
        made = out_dir / f"{index}.o"
        arg = next(
            (a for a, _ in unit_positions(command.argv).items()
             if os.path.normpath(os.path.join(command.cwd, a)) == command.source),
            None,
        )  # fmt: skip
        if not made.is_file() or arg is None or command.source not in reads:
            continue
        kept = staging / f"{index}.o"
        shutil.copyfile(made, kept)
        kept.chmod(0o644)
        key = "\0".join([command.cwd, *command.argv])
        plan.setdefault(key, []).append(
            {
                "index": unit_positions(command.argv)[arg],
                "object": str(wrappers / kept.name),
                "reads": reads[command.source],
            }
        )
    shutil.rmtree(out_dir, ignore_errors=True)
    if not plan:
        shutil.rmtree(staging, ignore_errors=True)
        return False
    (staging / PLAN).write_text(json.dumps(plan))
    for name in COMPILERS:
        real = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
        if real is not None:
            wrapper = staging / name
            wrapper.write_text(_WRAPPER.format(real=real, plan=str(wrappers / PLAN)))
            wrapper.chmod(0o755)
    staging.chmod(0o755)
    shutil.rmtree(wrappers, ignore_errors=True)
    os.rename(staging, wrappers)
    return True
