"""Incremental mutant builds and trivial compiler equivalence for Rust (cargo) and Go, from the
reference's recorded build (:meth:`suitebench.suite.execute.programs.Builder.recorded`).

**Rust.** A mutant's build starts from a copy of the reference's built tree, ``target/``
included (every file with the sealed tree's one timestamp), with the patch applied. Cargo
would find the changed crate stale by itself (its source is newer than the unit's dependency
file), but that is not left to timestamps: every unit whose dependency file names a changed
file loses its fingerprint and its outputs, so cargo recompiles it, and everything linked
from it is relinked (cargo rebuilds a unit whose dependency was rebuilt). Every linked program
(a unit with an output without extension), what cargo copied up into ``target/<profile>/``,
and ``./executable`` are removed too, so a build script that goes on after a failed compile
fails as it does from scratch instead of handing on the reference's program. A change of a
file no unit read (``Cargo.toml``, the build script) is built from scratch.

**Go.** A mutant is built from a fresh copy of the source, as from scratch, but with a copy of
the build cache (``GOCACHE``) the reference's recorded build filled. Go keys every entry by a
hash of its inputs' content (sources, flags, the toolchain, and the package's directory unless
the build uses ``-trimpath``), so an entry found is what the build would have compiled: the
changed package and what imports it are compiled, the rest is found. Without ``-trimpath`` the
module's own packages are keyed by their directory, which is each build's own, so only the
standard library would be found, and Go installs its own: such a build's mutants are built
from scratch (on gojq, copying the cache made them slower than clean builds).

**Trivial compiler equivalence.** A mutant whose ``./executable`` is byte for byte the
reference's recorded build's (Go: but for its build ID, a hash of the build's inputs that every
change of a source moves) is the same program: equivalent. Only a build that is deterministic
where it is run can show it: Go with ``-trimpath``, cargo for a workspace whose crates and
dependencies do not embed the tree's own path (a crate vendored inside the tree does: its
panic messages name its absolute path, and every build has its own).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from suitebench.run.program import EXECUTABLE, Language
from suitebench.run.toolrecords import GO_RECORD, CargoUnit, cargo_units, without_go_build_id
from suitebench.run.tree import KEPT_CACHES
from suitebench.suite.execute.incremental import changed_files

__all__ = ["CargoBase", "GoBase", "native_files"]


def _same_bytes(a: Path, b: Path, *, go: bool) -> bool | None:
    try:
        ours, theirs = a.read_bytes(), b.read_bytes()
    except OSError:
        return None
    if go:
        ours_, theirs_ = without_go_build_id(ours), without_go_build_id(theirs)
        if ours_ is None or theirs_ is None:
            return None
        return ours_ == theirs_
    return ours == theirs


@dataclass(frozen=True)
class CargoBase:
    """The reference's recorded cargo build: its tree and the units its dependency files name."""

    tree: Path
    units: tuple[CargoUnit, ...]

    @classmethod
    def of(cls, tree: Path) -> CargoBase | None:
        units = tuple(cargo_units(tree))
        return cls(tree, units) if units else None

    @property
    def sources(self) -> set[str]:
        """Every file of the tree some unit read: what the build compiles."""
        return {s for u in self.units for s in u.sources}

    def stale_objects(self, patch: bytes) -> list[str] | None:
        """What to remove from a copy of the reference's tree before a mutant's build: the
        fingerprints and outputs of the units reading a changed file, every linked program and
        every copied-up product (None: a changed file no unit read)."""
        files = changed_files(patch)
        if files is None:
            return None
        stale = [u for u in self.units if set(u.sources) & set(files)]
        if not all(any(f in u.sources for u in stale) for f in files):
            return None
        remove: set[str] = {EXECUTABLE}
        for unit in stale:
            remove.update(unit.outputs)
            if unit.fingerprint is not None:
                remove.add(unit.fingerprint)
        for unit in self.units:
            if unit.is_executable:
                remove.update(unit.outputs)
            profile = Path(unit.dep_file).parent.parent  # target/<profile>/deps/x.d
            try:
                uplifted = [e.name for e in os.scandir(self.tree / profile) if e.is_file()]
            except OSError:
                continue
            remove.update((profile / name).as_posix() for name in uplifted)
        return sorted(remove)

    def same_objects(self, mutant_tree: Path, patch: bytes) -> bool | None:
        """Trivial compiler equivalence: the mutant's program is the reference's bytes."""
        if self.stale_objects(patch) is None:
            return None
        return _same_bytes(mutant_tree / EXECUTABLE, self.tree / EXECUTABLE, go=False)


@dataclass(frozen=True)
class GoBase:
    """The reference's recorded Go build: its cache entry (the tree, the kept ``GOCACHE``) and
    the files ``go list`` says the program was compiled from (None: not recorded)."""

    entry: Path
    files: frozenset[str] | None

    @classmethod
    def of(cls, tree: Path, *, incremental: bool = True) -> GoBase | None:
        """The recorded build in whose tree ``tree`` is, when it kept its cache and (with
        ``incremental``) was built with ``-trimpath``: without it the module's packages are
        keyed by their directory, every mutant's own, and a copy of the cache would cost more
        than the standard library's packages it holds save (Go's own are installed)."""
        entry = tree.parent
        if not (entry / KEPT_CACHES / "gocache").is_dir():
            return None
        try:
            record = json.loads((entry / GO_RECORD).read_text())
            files: frozenset[str] | None = frozenset(record["files"])
            trimpath = record["settings"].get("-trimpath") == "true"
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            files, trimpath = None, False
        if incremental and not trimpath:
            return None
        return cls(entry, files)

    @property
    def tree(self) -> Path:
        return self.entry / "tree"

    def same_objects(self, mutant_tree: Path, patch: bytes) -> bool | None:
        """Trivial compiler equivalence: the mutant's program is the reference's bytes but for
        the build ID (None: a program without one, or missing)."""
        if changed_files(patch) is None:
            return None
        return _same_bytes(mutant_tree / EXECUTABLE, self.tree / EXECUTABLE, go=True)


def native_files(languages: list[Language], tree: Path) -> frozenset[str] | None:
    """The files a recorded Rust or Go build compiled, relative to its tree (None: neither
    toolchain said: no dependency file, no ``go list``)."""
    found: set[str] | None = None
    if Language.RUST in languages:
        cargo = CargoBase.of(tree)
        if cargo is not None:
            found = cargo.sources
    if Language.GO in languages:
        go = GoBase.of(tree, incremental=False)
        if go is not None and go.files is not None:
            found = (found or set()) | go.files
    return None if found is None else frozenset(found)
