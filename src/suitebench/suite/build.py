"""Build the programs a suite runs against: the reference, every mutant, a candidate.

A mutant is a unified diff against the instance's source directory, applied to a fresh copy with
``patch -p1 --fuzz=0`` (paths as ``git diff`` writes them, ``a/src.c``/``b/src.c``; no fuzz, so
a patch means exactly what it says, as with ``git apply``).  A patch that does not apply, a build
that fails, or a build that leaves no ``./executable`` is a ``build_error``: counted, excluded
from the mutation_score's denominator, never a crash.

Builds are cached by a content hash of the tree after patching plus the recipe (and the
interpreter, for Python packages): the same mutant is built once however many suites are
scored against it.

A build script sees the system's directories, its own tree and, read-only, the toolchains the
tree needs that live elsewhere: a Rust tree (``*.rs``, ``Cargo.toml``, or a script calling
``cargo``/``rustc``) gets the rustup toolchain's own directory (its ``bin/`` holds the real
``rustc`` and ``cargo``, first on ``PATH``), a Go tree its Go installation -- never the rest of
the home directory they sit in (``~/.cargo``'s registry and credentials stay hidden).  Their
versions are part of the program's identity; their caches (``CARGO_HOME``, ``GOCACHE``) live in
a scratch directory removed after the build.

``kind = "python"`` instances are "built" by compiling every module of the package (a mutant
with a syntax error does not build) after running the recipe, if any.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import json
import os
import re
import shutil
import sys
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import CodeType
from typing import Any

from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run import sandbox
from suitebench.run.executor import Executor, LocalExecutor, run_all
from suitebench.run.outcome import Backend, Limits, Status
from suitebench.run.program import Language
from suitebench.run.recipes import compiler, toolchain_binds, toolchain_version
from suitebench.run.store import job_key
from suitebench.suite.inside.workdir import open_up
from suitebench.suite.interpreter import Interpreter, own_binds
from suitebench.suite.patching import apply_patch
from suitebench.suite.runner import sandbox_path
from suitebench.suite.runspec import Target

_BUILD_LIMITS = Limits(wall_time=600.0, memory_mb=4096, processes=512)
_IGNORED = {".git", "__pycache__", ".pytest_cache", ".mypy_cache"}
_SCRATCH = ".suitebench-scratch"  # the toolchains' caches during a build, removed after it
# What says a tree is built with a toolchain: its files, or the build script's words.
_TOOLCHAIN_FILES: dict[Language, tuple[tuple[str, ...], tuple[str, ...]]] = {
    Language.RUST: ((".rs",), ("Cargo.toml",)),
    Language.GO: ((".go",), ("go.mod",)),
}
_TOOLCHAIN_WORDS: dict[Language, re.Pattern[str]] = {
    Language.RUST: re.compile(r"(?<![\w.-])(cargo|rustc)(?![\w.-])"),
    Language.GO: re.compile(r"(?<![\w.-])go\s+(build|run|install)\b"),
}
_COMPILE_CHECK = (
    "import pathlib, sys\n"
    "bad = 0\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
    "    try:\n"
    "        compile(p.read_bytes(), str(p), 'exec')\n"
    "    except (SyntaxError, ValueError) as exc:\n"
    "        print(f'{p}: {exc}', file=sys.stderr); bad = 1\n"
    "sys.exit(bad)\n"
)


_COMPILE_HERE_BYTES = 4 * 1024 * 1024


_COMPILING = threading.Lock()


def compile_quietly(source: bytes, filename: str) -> tuple[CodeType, bool]:
    """``compile`` without the ``SyntaxWarning`` a mutant's code may draw (``"is" with a
    literal``): the program's, not ours, and it would land amid the progress bar; with whether
    it drew one.  The warning filters are the process's, so threads take turns (compiling holds
    the interpreter anyway).  Raises what ``compile`` raises."""
    with _COMPILING, warnings.catch_warnings(record=True) as drawn:
        warnings.simplefilter("always")
        return compile(source, filename, "exec", dont_inherit=True), bool(drawn)


def _write_bytecode(path: Path, code: CodeType) -> None:
    """The module's ``__pycache__`` entry, as the interpreter would write it (timestamp-checked
    against the source, so a stale one is never used): every Python process the suite starts
    on this program (``python -m package``) then loads it instead of compiling the source
    again (runs set ``PYTHONDONTWRITEBYTECODE``).  Only for a module that compiles without a
    warning: one that draws a ``SyntaxWarning`` must draw it again when imported (under
    ``filterwarnings = error`` it fails the import), which loading bytecode would not."""
    to_pyc = getattr(importlib._bootstrap_external, "_code_to_timestamp_pyc", None)
    if to_pyc is None:
        return
    stat = path.stat()
    target = Path(importlib.util.cache_from_source(str(path)))
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(bytes(to_pyc(code, int(stat.st_mtime), stat.st_size)))


def compile_check(package: Path) -> str | None:
    """Whether every module of a package compiles: the errors, one line each ('' if none), as
    :data:`_COMPILE_CHECK` prints them in the sandbox -- or None when the package is too large
    to check here. Each module that compiles gets its bytecode written beside it. Compiling
    parses and runs nothing of the program (the interpreter's own recursion and nesting limits
    end a pathological source with an error), so no sandbox is needed; a process per mutant cost
    ~50 ms, more than scoring a small mutant."""
    files = sorted(package.rglob("*.py"))
    if sum(p.stat().st_size for p in files) > _COMPILE_HERE_BYTES:
        return None
    errors: list[str] = []
    for p in files:
        try:
            code, warned = compile_quietly(p.read_bytes(), str(p))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            errors.append(f"{p}: {exc}")
            continue
        try:
            if not warned:
                _write_bytecode(p, code)
        except OSError:
            pass  # a read-only tree: its processes compile the source, as before
    return "".join(line + "\n" for line in errors)


class BuildStatus(StrEnum):
    OK = "ok"
    BUILD_ERROR = "build_error"


@dataclass(frozen=True)
class BuiltProgram:
    """A program under test after its build: where it lives and how the suite reaches it."""

    program_id: str
    status: BuildStatus
    directory: str = ""  # the built tree (in the build cache)
    executable: str | None = None
    pythonpath: str | None = None
    message: str = ""  # why it is a build_error (patch output, compiler output)
    # A mutant's per-test limits, derived from the reference's times (not stored: a score
    # derives them from its reference runs; see :func:`suitebench.suite.runspec.derive_timeouts`).
    timeouts: tuple[tuple[str, float], ...] = ()

    @property
    def ok(self) -> bool:
        return self.status is BuildStatus.OK

    def target(self) -> Target:
        return Target(
            executable=self.executable,
            pythonpath=self.pythonpath,
            binds=(self.directory,) if self.directory else (),
            timeouts=self.timeouts,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "program_id": self.program_id,
            "status": str(self.status),
            "directory": self.directory,
            "executable": self.executable,
            "pythonpath": self.pythonpath,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BuiltProgram:
        return cls(
            program_id=d["program_id"],
            status=BuildStatus(d["status"]),
            directory=d.get("directory", ""),
            executable=d.get("executable"),
            pythonpath=d.get("pythonpath"),
            message=d.get("message", ""),
        )


def tree_hash(root: Path) -> str:
    """sha256 over relative paths, executable bits, symlink targets and file bytes."""
    h = hashlib.sha256()
    for path in sorted(_walk(root)):
        rel = path.relative_to(root).as_posix()
        h.update(rel.encode() + b"\0")
        if path.is_symlink():
            h.update(b"L" + os.readlink(path).encode() + b"\0")
        else:
            h.update(b"X" if os.access(path, os.X_OK) else b"F")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _walk(root: Path) -> list[Path]:
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED)
        files.extend(Path(dirpath) / f for f in filenames)
    return files


def needed_toolchains(tree: Path, build: str | None) -> list[Language]:
    """The compiled languages whose toolchain a build of ``tree`` may call, besides the
    system's: by the tree's files (``*.rs``, ``Cargo.toml``; ``*.go``, ``go.mod``) or by the
    build script's words (``cargo``, ``rustc``; ``go build``)."""
    script = ""
    if build:
        path = tree / build
        script = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else build
    files = _walk(tree)
    found: list[Language] = []
    for language, (suffixes, names) in _TOOLCHAIN_FILES.items():
        if _TOOLCHAIN_WORDS[language].search(script) or any(
            f.suffix in suffixes or f.name in names for f in files
        ):
            found.append(language)
    return found


@dataclass(frozen=True)
class Toolchain:
    """A toolchain as a sandboxed build sees it: its tools' directory (first on ``PATH``), the
    directories shown read-only (empty when it is a system one) and its version."""

    language: Language
    bin_dir: str
    binds: tuple[str, ...]
    version: str


def toolchains_for(tree: Path, build: str | None) -> list[Toolchain]:
    """The toolchains found here that a build of ``tree`` needs (a missing one is left out:
    the build fails as it would anywhere without it, an outcome)."""
    out: list[Toolchain] = []
    for language in needed_toolchains(tree, build):
        tool = compiler(language)
        if tool is None:
            continue
        out.append(
            Toolchain(
                language=language,
                bin_dir=str(Path(os.path.realpath(tool)).parent),
                binds=tuple(toolchain_binds(language)),
                version=toolchain_version(language),
            )
        )
    return out


def _copy_tree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(*_IGNORED))


@contextlib.contextmanager
def _staged_copy(source: Path, staging: Path) -> Iterator[Path]:
    """``source`` copied to a fresh directory under ``staging``, removed on leaving unless
    it was moved away."""
    staging.mkdir(exist_ok=True)
    tree = staging / uuid.uuid4().hex
    try:
        _copy_tree(source, tree)
        yield tree
    finally:
        if os.path.lexists(tree):
            shutil.rmtree(tree, ignore_errors=True)


class Builder:
    """Builds programs of one instance into a content-addressed cache directory."""

    def __init__(
        self,
        instance: Instance,
        cache_dir: Path,
        *,
        backend: Backend | None = None,
        python: Interpreter | None = None,
    ) -> None:
        self.instance = instance
        self.cache_dir = Path(cache_dir).resolve()
        self.backend = backend
        # The project's interpreter (None: ours): a package compiles with its grammar.
        self.python = python
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._source: str | None = None

    def _recipe(self, tree: Path) -> list[str]:
        build = self.instance.build
        if build is None:
            return []
        if (tree / build).is_file():
            return ["bash", build]
        return ["bash", "-c", build]

    def program_id(self, tree: Path) -> str:
        inst = self.instance
        return job_key(
            "suite-build/1",
            str(inst.kind),
            inst.build or "",
            inst.package or "",
            sys.version if inst.kind is InstanceKind.PYTHON else "",
            tree_hash(tree),
            *(f"{t.language}={t.version}" for t in toolchains_for(tree, inst.build)),
        )

    def reference(self) -> BuiltProgram:
        """The reference implementation, built from the instance's source directory."""
        with self._copy(self.instance.source) as tree:
            return self._build_tree(tree)

    def _copy(self, source: Path) -> contextlib.AbstractContextManager[Path]:
        """A copy of ``source`` to build from, made beside the build cache so that the build
        moves it into place by a rename (a copy through a temporary directory elsewhere cost
        a directory made and removed per mutant, and a second copy across file systems);
        what is left of it when the build was found cached is removed."""
        return _staged_copy(source, self.cache_dir / ".staging")

    def _source_key(self) -> str:
        """What a mutant's build depends on besides its patch: the reference source and
        the recipe, package, interpreter and toolchains (computed once per builder)."""
        if self._source is None:
            self._source = job_key("suite-source/1", self.program_id(self.instance.source))
        return self._source

    def mutant(self, mutant: MutantSpec) -> BuiltProgram:
        """One mutant: the reference source with the mutant's patch applied, then built.

        A mutant built before (the same source, recipe and patch bytes) is found through a
        note in the cache, ``by-patch/``, without copying the source and applying the patch
        again: scoring many suites against one instance pays for its builds once."""
        patch = mutant.patch.read_bytes()
        note = self.cache_dir / "by-patch" / job_key(self._source_key(), patch)[:32]
        try:
            record = self.cache_dir / note.read_text(encoding="utf-8")[:32] / "build.json"
            return BuiltProgram.from_dict(json.loads(record.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError):
            pass  # not built yet, or the note or record is gone or damaged: build
        with self._copy(self.instance.source) as tree:
            applied, output = apply_patch(tree, mutant.patch)
            if not applied:
                return BuiltProgram(
                    program_id=job_key("suite-build/patch-failed", patch),
                    status=BuildStatus.BUILD_ERROR,
                    message=f"patch {mutant.patch.name} does not apply (-p1, no fuzz):\n{output}",
                )
            built = self._build_tree(tree)
        note.parent.mkdir(exist_ok=True)
        fresh = note.with_name(f"{note.name}.{os.getpid()}.{threading.get_ident()}")
        fresh.write_text(built.program_id, encoding="utf-8")
        os.replace(fresh, note)
        return built

    def implementation(self, directory: Path) -> BuiltProgram:
        """A candidate implementation (for R): its own tree, built with the same recipe."""
        with self._copy(Path(directory)) as tree:
            return self._build_tree(tree)

    def coverage(self) -> BuiltProgram | None:
        """The reference built with ``gcc --coverage`` (per-test coverage of a C or C++
        program): the recipe runs with compiler wrappers first on ``PATH`` that add the flag.
        None when the build fails or leaves no coverage notes (``.gcno``): not a gcc build."""
        if self.instance.kind is InstanceKind.PYTHON:
            return None
        wrappers = self.cache_dir / "coverage-compilers"
        if not wrappers.is_dir():
            staging = self.cache_dir / f"coverage-compilers.{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            for name in ("gcc", "cc", "g++", "c++"):
                real = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
                if real is not None:
                    script = staging / name
                    script.write_text(f'#!/bin/sh\nexec {real} --coverage "$@"\n')
                    script.chmod(0o755)
            try:
                os.rename(staging, wrappers)
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
        with self._copy(self.instance.source) as tree:
            built = self._build_tree(tree, coverage=wrappers)
        if not built.ok or not any(Path(built.directory).rglob("*.gcno")):
            return None
        return built

    def _build_tree(self, tree: Path, coverage: Path | None = None) -> BuiltProgram:
        program_id = self.program_id(tree)
        if coverage is not None:
            program_id = job_key("suite-build/coverage", program_id)
        final = self.cache_dir / program_id[:32]
        record = final / "build.json"
        if record.is_file():
            return BuiltProgram.from_dict(json.loads(record.read_text(encoding="utf-8")))
        # One builder per program at a time (threads, processes, concurrent runs): a lock file.
        with open(self.cache_dir / f"{program_id[:32]}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if record.is_file():  # built while we waited
                return BuiltProgram.from_dict(json.loads(record.read_text(encoding="utf-8")))
            # Build in place at the final path: a recipe may bake absolute paths into it.
            shutil.rmtree(final, ignore_errors=True)  # a build that died halfway
            final.mkdir()
            built_tree = final / "tree"
            shutil.move(str(tree), built_tree)
            result = self._run_build(program_id, built_tree, built_tree, coverage)
            partial = final / "build.json.part"
            partial.write_text(json.dumps(result.to_dict()), encoding="utf-8")
            os.replace(partial, record)
            return result

    def _run_build(
        self, program_id: str, tree: Path, final_tree: Path, coverage: Path | None = None
    ) -> BuiltProgram:
        toolchains = toolchains_for(tree, self.instance.build)
        # A system toolchain is on PATH already (putting /usr/bin first would change python3).
        extra = dict.fromkeys(t.bin_dir for t in toolchains if t.binds)
        path = os.pathsep.join([*extra, sandbox_path()])
        env = {
            "PATH": path if coverage is None else f"{coverage}{os.pathsep}{path}",
            "HOME": str(tree),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        binds = [b for t in toolchains for b in t.binds]
        scratch = tree / _SCRATCH
        if toolchains:
            env.update(_toolchain_env(scratch, {t.language for t in toolchains}))

        def fail(message: str) -> BuiltProgram:
            return BuiltProgram(program_id, BuildStatus.BUILD_ERROR, message=message)

        if toolchains:
            scratch.mkdir(exist_ok=True)
        open_up(tree)  # the build may run as an unprivileged uid
        recipe = self._recipe(tree)
        if recipe:
            outcome = sandbox.run(
                recipe,
                cwd=tree,
                env=env,
                limits=_BUILD_LIMITS,
                backend=self.backend,
                ro_binds=(*binds, *(() if coverage is None else (coverage,))),
            )
            shutil.rmtree(scratch, ignore_errors=True)
            if outcome.status is not Status.OK:
                log = (outcome.stdout + outcome.stderr).decode("utf-8", errors="replace")
                return fail(f"build {outcome.status} (exit {outcome.exit_code}):\n{log[-4000:]}")
        if self.instance.kind is InstanceKind.PYTHON:
            package = self.instance.package or ""
            python = self.python
            # Too large to compile here, or for another Python: in the sandbox, as a build.
            errors = compile_check(tree / package) if python is None else None
            if errors is None:
                outcome = sandbox.run(
                    [
                        sys.executable if python is None else python.executable,
                        "-I",
                        "-c",
                        _COMPILE_CHECK,
                        str(tree / package),
                    ],
                    cwd=tree,
                    env=env,
                    limits=_BUILD_LIMITS,
                    backend=self.backend,
                    ro_binds=own_binds() if python is None else python.binds,
                )
                errors = "" if outcome.status is Status.OK else outcome.stderr_text()
            if errors:
                return fail("package does not compile:\n" + errors[-4000:])
            return BuiltProgram(
                program_id,
                BuildStatus.OK,
                directory=str(final_tree),
                pythonpath=str(final_tree),
            )
        executable = tree / "executable"
        if not executable.is_file() or not os.access(executable, os.X_OK):
            return fail("the build left no executable ./executable")
        return BuiltProgram(
            program_id,
            BuildStatus.OK,
            directory=str(final_tree),
            executable=str(final_tree / "executable"),
        )


def _toolchain_env(scratch: Path, languages: set[Language]) -> dict[str, str]:
    """Where the toolchains keep their caches (in the build's scratch directory: the build
    sees no other writable place) and how they stay offline."""
    env: dict[str, str] = {}
    if Language.RUST in languages:
        env |= {"CARGO_HOME": str(scratch / "cargo"), "CARGO_NET_OFFLINE": "true"}
    if Language.GO in languages:
        env |= {
            "GOCACHE": str(scratch / "gocache"),
            "GOPATH": str(scratch / "gopath"),
            "GOTOOLCHAIN": "local",
            "GOFLAGS": "-buildvcs=false",
            "GOPROXY": "off",
        }
    return env


def _build_job(payload: tuple[Builder, MutantSpec | None]) -> BuiltProgram:
    builder, mutant = payload
    return builder.reference() if mutant is None else builder.mutant(mutant)


def build_all(
    builder: Builder,
    mutants: list[MutantSpec],
    progress: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,
) -> tuple[BuiltProgram, dict[str, BuiltProgram]]:
    """The reference and every mutant, built in parallel on ``executor`` (cached by hash)."""
    payloads: list[tuple[Builder, MutantSpec | None]] = [(builder, None)]
    payloads += [(builder, m) for m in mutants]
    built = run_all(_build_job, payloads, executor=executor, progress=progress)
    return built[0], {m.id: b for m, b in zip(mutants, built[1:], strict=True)}


def build_reference_first(
    builder: Builder,
    mutants: list[MutantSpec],
    *,
    beside: bool,
    progress: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,
) -> tuple[BuiltProgram, Callable[[], dict[str, BuiltProgram]]]:
    """The reference, built now, and a call that returns the mutants' builds.  ``beside``: the
    mutants build on a local thread pool of their own while the caller goes on (it runs the
    reference's suite meanwhile; the call waits for them); otherwise they are built here with
    the reference, on ``executor``, as :func:`build_all` does."""
    if not beside or not mutants:
        reference, built = build_all(builder, mutants, progress=progress, executor=executor)
        return reference, lambda: built
    reference = builder.reference()
    if progress is not None:
        progress(1, 1 + len(mutants))
    if not reference.ok:
        return reference, lambda: {}
    own = LocalExecutor(getattr(executor, "jobs", None))
    thread = cf.ThreadPoolExecutor(1, thread_name_prefix="suitebench-builds")
    # build_all builds the reference again: found in the cache at once
    future = thread.submit(build_all, builder, mutants, progress, own)

    def wait() -> dict[str, BuiltProgram]:
        try:
            return future.result()[1]
        finally:
            thread.shutdown()
            own.close()

    return reference, wait
