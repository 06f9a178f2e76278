"""Suite mode's programs: an instance mapped to the tree programs it is scored against -- the
reference, every mutant, a candidate implementation, the coverage build -- and built by
:func:`suitebench.run.tree.build_tree` into the build cache.

A mutant is a unified diff against the instance's source directory, applied to a fresh copy with
``patch -p1 --fuzz=0`` (paths as ``git diff`` writes them, ``a/src.c``/``b/src.c``; no fuzz, so
a patch means exactly what it says, as with ``git apply``).  A patch that does not apply, a build
that fails, or a build that leaves no ``./executable`` is a ``build_error``: counted, excluded
from the mutation_score's denominator, never a crash.

Builds are cached by a content hash of the tree after patching plus the recipe (and the
interpreter, for Python packages): the same mutant is built once however many suites are
scored against it.  ``kind = "python"`` instances are "built" by compiling every module of the
package (a mutant with a syntax error does not build) after running the recipe, if any.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run.compiles import CompileRecord, compiler_wrappers
from suitebench.run.executor import Executor, LocalExecutor, run_all
from suitebench.run.layout import sandbox_path
from suitebench.run.outcome import Backend, Status
from suitebench.run.program import EXECUTABLE, Built, Language
from suitebench.run.store import job_key
from suitebench.run.tree import (
    TreeProgram,
    build_tree,
    find_built,
    needed_toolchains,
    staged_copy,
    tree_program_id,
)
from suitebench.suite.execute.incremental import (
    IncrementalBase,
    load_record,
    remove_objects,
    staged_build_copy,
)
from suitebench.suite.execute.incremental_native import CargoBase, GoBase
from suitebench.suite.execute.incremental_units import UnitsBase
from suitebench.suite.execute.interpreter import Interpreter, own_binds
from suitebench.suite.execute.patching import apply_exact, apply_patch
from suitebench.suite.execute.runspec import Target
from suitebench.suite.execute.workspaces import program_source

# The reference's recorded build a mutant is built from: C/C++ (its objects, or its units
# compiled alone when it compiles and links in one command), cargo's, Go's.
Base = IncrementalBase | UnitsBase | CargoBase | GoBase


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
    # A mutant's per-test limits, derived from the reference's times (not in its build record:
    # a score derives them from its reference runs; see
    # :func:`suitebench.suite.execute.runspec.derive_timeouts`).
    timeouts: tuple[tuple[str, float], ...] = ()
    # A mutant's run: the reference's names of its parametrized tests by their positions
    # (from the reference's first run, as its timeouts are).
    positions: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.status is BuildStatus.OK

    def target(self) -> Target:
        return Target(
            executable=self.executable,
            pythonpath=self.pythonpath,
            binds=(self.directory,) if self.directory else (),
            timeouts=self.timeouts,
            positions=self.positions,
        )

    @classmethod
    def from_built(cls, built: Built) -> BuiltProgram:
        """The suite's view of a tree program's build (a harness failure is a build_error)."""
        if built.status is not Status.OK:
            return cls(built.program_id, BuildStatus.BUILD_ERROR, message=built.message)
        return cls(
            program_id=built.program_id,
            status=BuildStatus.OK,
            directory=str(built.workdir),
            executable=built.argv[0] if built.argv else None,
            pythonpath=str(built.workdir) if built.language is Language.PYTHON else None,
            message=built.message,
        )


class Builder:
    """Builds programs of one instance into a content-addressed cache directory."""

    def __init__(
        self,
        instance: Instance,
        cache_dir: Path,
        *,
        backend: Backend | None = None,
        python: Interpreter | None = None,
        incremental: bool = True,
    ) -> None:
        self.instance = instance
        # Mutants rebuilt from the reference's build (``incremental.py``: C/C++;
        # ``incremental_native.py``: Rust, Go).
        self.incremental = incremental and instance.kind is not InstanceKind.PYTHON
        self._base: Base | bool | None = False  # False: not looked at yet
        self.cache_dir = Path(cache_dir).resolve()
        self.backend = backend
        # The project's interpreter (None: ours): a package compiles with its grammar.
        self.python = python
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._source: str | None = None
        self._native: list[Language] | None = None
        # What programs are built from (a ProgramBench task: its root less its suites, their
        # list and its mutants, which the tests would see beside ./executable).
        self.source = program_source(instance, self.cache_dir)

    def _program(
        self,
        tree: Path,
        coverage: Path | None = None,
        tag: str | None = None,
        *,
        keep_caches: bool = False,
        seed_caches: str | None = None,
    ) -> TreeProgram:
        """The instance's recipe and product for ``tree``: a Python package compiled module by
        module (here when its compiler is ours, else in the sandbox with the project's), else the
        build script's ``./executable``; ``coverage``: compiler wrappers first on ``PATH``
        (``tag`` names the variant: ``coverage`` by default, ``recorded``, ``incremental``)."""
        inst = self.instance
        python = self.python
        is_package = inst.kind is InstanceKind.PYTHON
        return TreeProgram(
            root=tree,
            build=inst.build,
            package=(inst.package or "") if is_package else None,
            python=sys.executable if python is None else python.executable,
            python_binds=own_binds() if python is None else python.binds,
            compile_here=python is None or python.compiles_here,
            path=sandbox_path(),
            path_prefix=None if coverage is None else str(coverage),
            identity=(str(inst.kind), inst.package or "", sys.version if is_package else ""),
            tag=(tag or "") if coverage is None or tag else "coverage",
            keep_caches=keep_caches,
            seed_caches=seed_caches,
        )

    def program_id(self, tree: Path) -> str:
        return tree_program_id(self._program(tree))

    def reference(self) -> BuiltProgram:
        """The reference implementation, built from the instance's source directory."""
        return self._build(self._program(self.source))

    def _source_key(self) -> str:
        """What a mutant's build depends on besides its patch: the reference source and
        the recipe, package, interpreter and toolchains (computed once per builder)."""
        if self._source is None:
            self._source = job_key("suite-source/1", self.program_id(self.source))
        return self._source

    def mutant(self, mutant: MutantSpec) -> BuiltProgram:
        """One mutant: the reference source with the mutant's patch applied, then built.

        A mutant built before (the same source, recipe and patch bytes) is found through a
        note in the cache, ``by-patch/``, without copying the source and applying the patch
        again: scoring many suites against one instance pays for its builds once."""
        patch = mutant.patch.read_bytes()
        note = self.cache_dir / "by-patch" / job_key(self._source_key(), patch)[:32]
        try:
            found = find_built(self.cache_dir, note.read_text(encoding="utf-8")[:32])
        except OSError:
            found = None  # not built yet, or the note is gone
        if found is not None:  # (None too when the build is gone from the cache: build)
            return BuiltProgram.from_built(found)
        built = self._incremental(mutant, patch) if self.incremental else None
        if built is not None and built.program_id == _patch_failed(patch):
            return built  # it does not apply to a fresh copy of the source either
        # A failed incremental build is tried from scratch, but Go's: a clean build with the
        # reference's cache, whose entries are keyed by their inputs' content, fails as one.
        go = isinstance(self._base, GoBase)
        if built is None or not (built.ok or go):
            built, applied = self._clean(mutant, patch)
            if not applied:  # nothing was built to note
                return built
        note.parent.mkdir(exist_ok=True)
        fresh = note.with_name(f"{note.name}.{os.getpid()}.{threading.get_ident()}")
        fresh.write_text(built.program_id, encoding="utf-8")
        os.replace(fresh, note)
        return built

    def recorded(self) -> tuple[BuiltProgram, CompileRecord | None]:
        """The reference built with recording compiler wrappers (``run/compiles.py``) and what
        its compiler saw: the units, their objects, the lines the preprocessor kept (None:
        the build compiled nothing through a wrapper, or it failed).  A Rust or Go tree's
        recorded build keeps its toolchain's caches and records (``incremental_native.py``)."""
        wrappers = compiler_wrappers(self.cache_dir)
        program = self._program(
            self.instance.source,
            coverage=wrappers,
            tag="recorded",
            keep_caches=bool(self.native_languages()),
        )
        built = self._build(program)
        if not built.ok:
            return built, None
        return built, load_record(Path(built.directory), backend=self.backend)

    def native_languages(self) -> list[Language]:
        """Rust and Go, when the reference's build calls their toolchains."""
        if self._native is None:
            self._native = needed_toolchains(self.source, self.instance.build)
        return self._native

    def incremental_base(self) -> Base | None:
        """The reference's recorded build when mutants can be rebuilt from it (it wrote
        objects; cargo's units; Go's cache), found once per builder."""
        if self._base is False:
            self._base = None
            source = self.instance.source
            native = self.native_languages() if self.incremental else []
            if self.incremental and (native or _has_c_sources(source)):
                built, record = self.recorded()
                tree = Path(built.directory)
                # (cargo's own records first: rustc links through ``cc``, a recorded command;
                # a Go build may call gcc for cgo)
                if built.ok and Language.RUST in native:
                    self._base = CargoBase.of(tree)
                elif built.ok and Language.GO in native:
                    self._base = GoBase.of(tree)
                elif record is not None and any(c.output for c in record.commands):
                    self._base = IncrementalBase(tree, record)
                elif record is not None and record.commands:  # compiled and linked at once
                    self._base = UnitsBase.of(tree, record, backend=self.backend)
        return None if isinstance(self._base, bool) else self._base

    def _incremental(self, mutant: MutantSpec, patch: bytes) -> BuiltProgram | None:
        """The mutant built from the reference's build (None: not possible here, e.g. it
        changes a file no compiled unit reads)."""
        base = self.incremental_base()
        if base is None:
            return None
        if isinstance(base, GoBase):  # a fresh copy of the source, the reference's GOCACHE
            built, applied = self._clean(mutant, patch, seed=str(base.entry))
            return built if applied else None
        stale = base.stale_objects(patch)
        if stale is None:
            return None
        if isinstance(base, UnitsBase):  # a fresh copy, the kept units' objects offered
            return self._clean(mutant, patch, reuse=base.wrappers)[0]
        with staged_build_copy(base.tree, self.cache_dir) as tree:
            applied, _ = apply_patch(tree, mutant.patch)
            if not applied:
                return None
            # The stale objects, and the products: what the reference's build linked and
            # ./executable. A build that goes on after a failed compile (no ``set -e``) then
            # fails as a clean build does, instead of handing on the reference's program.
            # (Cargo's stale units, programs and products: ``incremental_native.py``.)
            if isinstance(base, IncrementalBase):
                stale = [*stale, *base.record.links, EXECUTABLE]
            remove_objects(tree, stale)
            built = self._build(self._program(tree, tag="incremental"), staged=True)
        return built

    def _clean(
        self,
        mutant: MutantSpec,
        patch: bytes,
        seed: str | None = None,
        reuse: Path | None = None,
    ) -> tuple[BuiltProgram, bool]:
        """The mutant built from a fresh copy of the source, as the reference was, and whether
        its patch applied (if not, the build error says so); ``seed``: the cache entry whose
        kept toolchain caches the build starts from; ``reuse``: the reusing compiler wrappers
        of a one-command C/C++ build (``incremental_units.py``), first on ``PATH``."""
        # A copy, never links to the reference's files: a test would see which file the patch
        # wrote (``run/tree.py``, ``seal``).
        with staged_copy(self.source, self.cache_dir) as tree:
            if not apply_exact(tree, patch):
                applied, output = apply_patch(tree, mutant.patch)
                if not applied:
                    failed = BuiltProgram(
                        program_id=_patch_failed(patch),
                        status=BuildStatus.BUILD_ERROR,
                        message=f"patch {mutant.patch.name} does not apply (-p1, no fuzz):\n"
                        f"{output}",
                    )
                    return failed, False
            program = self._program(tree)
            if seed is not None:
                program = self._program(tree, tag="incremental", seed_caches=seed)
            if reuse is not None:
                program = self._program(tree, coverage=reuse, tag="units")
            return self._build(program, staged=True), True

    def implementation(self, directory: Path) -> BuiltProgram:
        """A candidate implementation (for R): its own tree, built with the same recipe -- or
        with its own build script where it has no file of the recipe's name (ProgramBench's
        published submissions build with ``compile.sh``, its tasks with ``build.sh``)."""
        program = self._program(Path(directory))
        own = submission_build(Path(directory), program.build)
        return self._build(program if own == program.build else replace(program, build=own))

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
        built = self._build(self._program(self.source, coverage=wrappers))
        if not built.ok or not any(Path(built.directory).rglob("*.gcno")):
            return None
        return built

    def _build(self, program: TreeProgram, *, staged: bool = False) -> BuiltProgram:
        built = build_tree(program, cache_dir=self.cache_dir, backend=self.backend, staged=staged)
        return BuiltProgram.from_built(built)


SUBMISSION_BUILDS = ("build.sh", "compile.sh")


def submission_build(directory: Path, recipe: str | None) -> str | None:
    """The build script a submission in ``directory`` runs: the recipe's file when it has one
    (or the recipe is a command line), else its own ``build.sh`` or ``compile.sh``."""
    if recipe is None or not recipe.endswith(".sh") or (directory / recipe).is_file():
        return recipe
    for name in SUBMISSION_BUILDS:
        if (directory / name).is_file():
            return name
    return recipe


_C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp")


def _has_c_sources(root: Path) -> bool:
    """Whether a source tree holds C or C++ files (else no compiler wrapper would see a unit,
    and the recorded build would be a second build for nothing)."""
    return any(
        name.endswith(_C_SUFFIXES) for _dirpath, _dirs, files in os.walk(root) for name in files
    )


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


def _build_slice(payload: tuple[Builder, list[MutantSpec]]) -> list[BuiltProgram]:
    builder, mutants = payload
    return [builder.mutant(m) for m in mutants]


def _build_slices(
    builder: Builder,
    mutants: list[MutantSpec],
    progress: Callable[[int, int], None] | None,
    executor: Executor,
) -> dict[str, BuiltProgram]:
    """The mutants' builds on ``executor`` (processes), a few slices per worker: one pickled
    builder per slice, not per mutant."""
    count = min(len(mutants), 4 * executor.jobs)
    slices = [mutants[i::count] for i in range(count)]
    built: dict[str, BuiltProgram] = {}
    done = 1
    for i, programs in executor.map_unordered(_build_slice, [(builder, s) for s in slices]):
        built.update((m.id, b) for m, b in zip(slices[i], programs, strict=True))
        done += len(programs)
        if progress is not None:
            progress(done, 1 + len(mutants))
    return {m.id: built[m.id] for m in mutants}


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
    # A package's builds copy, patch and compile in Python: threads would share one core
    # while the reference's suite runs, so they go to processes, a slice of mutants each,
    # started afresh (a fork would copy a lock another thread of ours holds, held), and
    # niced: the reference's runs and the coverage run, which the selection waits for, first.
    jobs = getattr(executor, "jobs", None)
    try:
        own = LocalExecutor(jobs, processes=True, start="forkserver", nice=10)
    except OSError:  # no process pool here (no POSIX semaphores: no /dev/shm): threads
        own = LocalExecutor(jobs)
    thread = cf.ThreadPoolExecutor(1, thread_name_prefix="suitebench-builds")
    future = thread.submit(_build_slices, builder, mutants, progress, own)

    def wait() -> dict[str, BuiltProgram]:
        try:
            return future.result()
        finally:
            thread.shutdown()
            own.close()

    return reference, wait


def _patch_failed(patch: bytes) -> str:
    """The id of the build error of a patch that does not apply to the reference's source."""
    return job_key("suite-build/patch-failed", patch)
