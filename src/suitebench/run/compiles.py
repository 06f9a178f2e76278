"""What a tree's own build compiles: its compiler commands, recorded by wrappers first on the
build's ``PATH``, and the preprocessor's view of each translation unit.

The wrappers (``gcc``, ``cc``, ``g++``, ``c++``, ``clang``, ``clang++``: those found here)
write each command's working directory and arguments into ``$HOME/.suitebench-compiles/``
(a build's ``HOME`` is its own tree) and run the real compiler, so the build is the one it
would be without them.  From the record: the translation units compiled, their objects, and
(one sandboxed ``-E`` run of each unit with the build's own flags) which lines of each file of
the tree the preprocessor kept -- what ``build mutants`` needs to mutate only what is built,
and what an incremental mutant build needs to know which objects a changed file reaches.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.run import sandbox
from suitebench.run.limits import TREE_BUILD
from suitebench.run.outcome import Backend, Outcome, Status

__all__ = [
    "COMPILERS",
    "RECORD_DIR",
    "CompileCommand",
    "CompileRecord",
    "compiler_wrappers",
    "read_record",
    "unit_compile_argv",
    "unit_positions",
]

COMPILERS = ("gcc", "cc", "g++", "c++", "clang", "clang++")
RECORD_DIR = ".suitebench-compiles"
UNIT_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".C")
# Options whose value is the next argument (the ones that matter for finding the sources).
_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ", "-I", "-D", "-U", "-include", "-imacros", "-isystem",
               "-iquote", "-idirafter", "-x", "-L", "-l", "-Xlinker", "-Xpreprocessor",
               "-Xassembler", "-aux-info", "-T", "-u", "-z"}  # fmt: skip
_DEPENDENCY_ONLY = {"-M", "-MM", "-E", "-S"}  # commands that make no object
_MARKER = re.compile(rb'^# (\d+) "((?:[^"\\]|\\.)*)"')

_WRAPPER = """#!/bin/sh
d="${{HOME:-/tmp}}/{record}"
mkdir -p "$d" 2>/dev/null && f=$(mktemp "$d/c.XXXXXXXXXX" 2>/dev/null) &&
  printf '%s\\0' "$PWD" {real} "$@" > "$f"
exec {real} "$@"
"""


def compiler_wrappers(cache_dir: Path) -> Path:
    """The directory of recording wrappers (made once per cache, atomically)."""
    wrappers = Path(cache_dir) / "recording-compilers"
    if wrappers.is_dir():
        return wrappers
    staging = Path(cache_dir) / f"recording-compilers.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in COMPILERS:
        real = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
        if real is not None:
            script = staging / name
            script.write_text(_WRAPPER.format(record=RECORD_DIR, real=shlex.quote(real)))
            script.chmod(0o755)
    try:
        os.rename(staging, wrappers)
    except OSError:  # another process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return wrappers


@dataclass(frozen=True)
class CompileCommand:
    """One compiler run that compiled a translation unit: where (relative to the tree), how,
    which unit and which object it wrote (None: compiled and linked at once)."""

    cwd: str
    argv: tuple[str, ...]
    source: str  # relative to the tree
    output: str | None  # relative to the tree


@dataclass
class CompileRecord:
    """A tree's build as its compiler saw it: the units' commands and, per file of the tree
    the units read, the lines the preprocessor emitted (1-based, non-blank output lines)."""

    commands: list[CompileCommand] = field(default_factory=list)
    emitted: dict[str, set[int]] = field(default_factory=dict)  # file -> lines kept
    reads: dict[str, set[str]] = field(default_factory=dict)  # file -> units reading it
    failed: list[str] = field(default_factory=list)  # units whose -E run failed
    links: list[str] = field(default_factory=list)  # what the link commands wrote

    def objects_reading(self, path: str) -> list[str]:
        """The objects of the units that read ``path`` (the unit itself or a header)."""
        units = self.reads.get(path, set())
        return sorted({c.output for c in self.commands if c.source in units and c.output})

    def to_dict(self) -> dict[str, object]:
        return {
            "units": [
                {"cwd": c.cwd, "argv": list(c.argv), "source": c.source, "output": c.output}
                for c in self.commands
            ],
            "files": {f: sorted(lines) for f, lines in sorted(self.emitted.items())},
            "reads": {f: sorted(units) for f, units in sorted(self.reads.items())},
            "failed": self.failed,
            "links": self.links,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompileRecord:
        return cls(
            commands=[
                CompileCommand(u["cwd"], tuple(u["argv"]), u["source"], u["output"])
                for u in d["units"]
            ],
            emitted={f: set(lines) for f, lines in d["files"].items()},
            reads={f: set(units) for f, units in d["reads"].items()},
            failed=list(d["failed"]),
            links=list(d.get("links", [])),
        )


def _inside(tree: Path, path: str) -> str | None:
    """``path`` (absolute, or relative to the tree) relative to the tree, None outside it."""
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(tree, path))
    rel = os.path.relpath(full, tree)
    return None if rel == ".." or rel.startswith("../") else rel


def _link_output(tree: Path, cwd: str, argv: list[str]) -> str | None:
    """What a command that links (no ``-c``, ``-E``, ``-S``, ``-M``) writes, in the tree."""
    args = argv[1:]
    if "-c" in args or any(a in _DEPENDENCY_ONLY for a in args):
        return None
    output = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"), "a.out")
    return _inside(tree, os.path.join(tree, cwd, output))


def _commands_of(tree: Path, cwd: str, argv: list[str]) -> list[CompileCommand]:
    if any(a in _DEPENDENCY_ONLY for a in argv[1:]):
        return []
    sources: list[str] = []
    output: str | None = None
    skip = False
    for i, arg in enumerate(argv[1:], 1):
        if skip:
            skip = False
            continue
        if arg in _WITH_VALUE:
            skip = True
            if arg == "-o" and i + 1 < len(argv):
                output = argv[i + 1]
            continue
        if not arg.startswith("-") and arg.endswith(UNIT_SUFFIXES):
            sources.append(arg)
    compiles = "-c" in argv[1:]
    commands = []
    for source in sources:
        rel = _inside(tree, os.path.join(cwd, source))
        if rel is None:
            continue
        obj: str | None = None
        if compiles and len(sources) == 1:
            name = output or Path(source).with_suffix(".o").name
            obj = _inside(tree, os.path.join(cwd, name))
        commands.append(CompileCommand(_inside(tree, cwd) or ".", tuple(argv), rel, obj))
    return commands


def unit_positions(argv: tuple[str, ...] | list[str]) -> dict[str, int]:
    """Each unit argument of a compiler command and its position among the arguments after
    ``argv[0]`` (the first, if given twice), as :func:`_commands_of` finds them."""
    positions: dict[str, int] = {}
    skip = False
    for i, arg in enumerate(argv[1:]):
        if skip:
            skip = False
        elif arg in _WITH_VALUE:
            skip = True
        elif not arg.startswith("-") and arg.endswith(UNIT_SUFFIXES):
            positions.setdefault(arg, i)
    return positions


def unit_compile_argv(tree: Path, command: CompileCommand, out: str) -> list[str]:
    """The unit's own command turned into a compile of that unit alone, to the object
    ``out`` (no other unit, nothing linked, no dependency file)."""
    return [*_preprocess_argv(tree, command, out)[:-3], "-c", "-o", out]


def _preprocess_argv(tree: Path, command: CompileCommand, out: str) -> list[str]:
    """The unit's own command turned into a preprocessor run: no object, no dependency file,
    no other unit, output to ``out``."""
    args = command.argv
    argv = [args[0]]
    i = 1
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            i += 2
        elif arg in _WITH_VALUE:
            argv += args[i : i + 2]
            i += 2
        elif arg in ("-c", "-MD", "-MMD", "-MP") or arg.startswith(("-Wl,", "-l")):
            i += 1
        elif (
            not arg.startswith("-")
            and arg.endswith(UNIT_SUFFIXES)
            and _inside(tree, os.path.join(tree, command.cwd, arg)) != command.source
        ):
            i += 1  # another unit of a compile-and-link command
        else:
            argv.append(arg)
            i += 1
    return [*argv, "-E", "-o", out]


def _emitted_lines(tree: Path, cwd: str, text: bytes) -> dict[str, set[int]]:
    """Per file of the tree, the line numbers whose preprocessed text is not blank."""
    emitted: dict[str, set[int]] = {}
    current: set[int] | None = None
    line = 0
    for raw in text.split(b"\n"):
        match = _MARKER.match(raw)
        if match:
            name = match.group(2).decode("utf-8", "replace")
            rel = None if name.startswith("<") else _inside(tree, os.path.join(tree, cwd, name))
            current = None if rel is None else emitted.setdefault(rel, set())
            line = int(match.group(1))
            continue
        if current is not None and raw.strip() and not raw.startswith(b"#pragma"):
            current.add(line)
        line += 1
    return emitted


def each_command(
    tree: Path,
    commands: list[CompileCommand],
    argv_of: Callable[[Path, CompileCommand, str], list[str]],
    out_dir: Path,
    suffix: str,
    *,
    env: dict[str, str],
    backend: Backend | None,
) -> Outcome:
    """Run, for each recorded command, the command ``argv_of(tree, command, out)`` makes of it
    (``out``: ``out_dir/<its index><suffix>``), in its own directory, one after another in one
    sandboxed shell in the recorded tree (a failing one is left to its missing output)."""
    lines = ["#!/bin/sh"]
    for index, command in enumerate(commands):
        argv = argv_of(tree, command, str(out_dir / f"{index}{suffix}"))
        words = " ".join(shlex.quote(a) for a in argv)
        lines.append(f"(cd {shlex.quote(str(tree / command.cwd))} && {words}) 2>/dev/null")
    logs = out_dir.parent
    script = logs / f"{out_dir.name}.sh"
    script.write_text("\n".join(lines) + "\n")
    for path in (logs, out_dir, script):
        path.chmod(0o777 if path.is_dir() else 0o755)
    return sandbox.run(
        ["/bin/sh", str(script)], cwd=tree, env=env, limits=TREE_BUILD, backend=backend
    )


def read_record(
    tree: Path, *, backend: Backend | None = None, env: dict[str, str] | None = None
) -> CompileRecord | None:
    """The record a wrapped build left in ``tree`` (None: the build called no wrapped
    compiler), with each unit preprocessed by its own command, all in one sandboxed run."""
    logs = tree / RECORD_DIR
    if not logs.is_dir():
        return None
    record = CompileRecord()
    seen: set[tuple[str, str]] = set()
    for log in sorted(logs.glob("c.*")):
        fields = log.read_bytes().split(b"\0")[:-1]
        if len(fields) < 2:
            continue
        cwd, *argv = (f.decode("utf-8", "surrogateescape") for f in fields)
        rel_cwd = _inside(tree, cwd)
        if rel_cwd is None:
            continue
        link = _link_output(tree, rel_cwd, argv)
        if link is not None and link not in record.links:
            record.links.append(link)
        for command in _commands_of(tree, rel_cwd, argv):
            if not (tree / command.source).is_file():
                continue  # a configure step's probe, removed after it ran
            if (command.source, command.output or "") not in seen:
                seen.add((command.source, command.output or ""))
                record.commands.append(command)
    if not record.commands:
        return record
    out_dir = logs / "preprocessed"
    out_dir.mkdir(exist_ok=True)
    outcome = each_command(
        tree, record.commands, _preprocess_argv, out_dir, ".i", env=env or {}, backend=backend
    )
    if outcome.status is Status.SANDBOX_ERROR:
        record.failed = [c.source for c in record.commands]
        return record
    for index, command in enumerate(record.commands):
        try:
            text = (out_dir / f"{index}.i").read_bytes()
        except OSError:
            record.failed.append(command.source)
            continue
        for rel, kept in _emitted_lines(tree, command.cwd, text).items():
            record.emitted.setdefault(rel, set()).update(kept)
            record.reads.setdefault(rel, set()).add(command.source)
    shutil.rmtree(out_dir, ignore_errors=True)
    return record
