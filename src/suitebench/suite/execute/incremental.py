"""Incremental mutant builds and trivial compiler equivalence, from the reference's recorded
build (:mod:`suitebench.run.compiles`).

A C/C++ mutant changes one file. Its build starts from a copy of the reference's built tree --
sources, objects, libraries, with the sealed tree's one timestamp on every file -- the patch is
applied (the changed file is newer than everything else) and the objects of every unit that
reads the changed file are removed, with what the reference's build linked and its
``./executable``, so the build's own ``make`` recompiles exactly those units and relinks,
whatever the Makefile says of header dependencies, and a build that goes on after a failed
compile cannot hand on the reference's program.  A mutant of a file no recorded
unit reads (a Makefile, a script) is built from scratch, as is one whose incremental build
fails.

Trivial compiler equivalence (TCE): when every object the changed file reaches is the same
bytes in the mutant's build as in the reference's, the mutant compiles to the reference's
program: it is equivalent, and no test can kill it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from suitebench.model.diffs import DiffError, read_diff
from suitebench.run.buildcache import entry_lock
from suitebench.run.compiles import RECORD_DIR, CompileRecord, read_record
from suitebench.run.outcome import Backend
from suitebench.run.tree import IGNORED

__all__ = [
    "IncrementalBase",
    "changed_files",
    "load_record",
    "remove_objects",
    "staged_build_copy",
]

RECORD_FILE = "compiles.json"  # beside the recorded build's tree, in its cache entry


def changed_files(patch: bytes) -> list[str] | None:
    """The files a mutant's diff changes, relative to the source (None: it creates or
    deletes a file, or is not a diff we can read)."""
    try:
        diff = read_diff(patch)
    except DiffError:
        return None
    files: list[str] = []
    for f in diff.files:
        if "/dev/null" in (f.old_name, f.new_name) or f.binary:
            return None
        name = f.new_name
        files.append(name[2:] if name.startswith("b/") else name)
    return files or None


@dataclass(frozen=True)
class IncrementalBase:
    """The reference's recorded build: its tree (in the build cache) and compile record."""

    tree: Path
    record: CompileRecord

    def stale_objects(self, patch: bytes) -> list[str] | None:
        """The objects a mutant's change makes stale (None: a file no unit reads changes,
        so an incremental build cannot be trusted to see it)."""
        files = changed_files(patch)
        if files is None or self.record.failed:
            return None  # (a unit not preprocessed: what it reads is unknown)
        stale: set[str] = set()
        for path in files:
            objects = self.record.objects_reading(path)
            if not objects:
                return None
            stale.update(objects)
        return sorted(stale)

    def same_objects(self, mutant_tree: Path, patch: bytes) -> bool | None:
        """Trivial compiler equivalence: whether every object the mutant's change reaches is
        byte for byte the reference's (None: no object to compare, e.g. compiled and linked
        in one command, or an object missing from either build)."""
        stale = self.stale_objects(patch)
        if not stale:
            return None
        for obj in stale:
            try:
                ours = (mutant_tree / obj).read_bytes()
                theirs = (self.tree / obj).read_bytes()
            except OSError:
                return None
            if ours != theirs:
                return False
        return True


def load_record(tree: Path, *, backend: Backend | None = None) -> CompileRecord | None:
    """The compile record of the recorded build whose tree is ``tree``: read from its cache
    entry, else made (:func:`read_record`, under the entry's record lock: the processes
    building mutants all ask for it) and kept there."""
    kept = tree.parent / RECORD_FILE
    with entry_lock(tree.parent.parent, f"{tree.parent.name}.record"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            return CompileRecord.from_dict(json.loads(kept.read_text()))
        record = read_record(tree, backend=backend, env={"PATH": "/usr/bin:/bin", "LANG": "C"})
        if record is None:
            return None
        partial = kept.with_name(f"{RECORD_FILE}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        partial.write_text(json.dumps(record.to_dict()))
        os.replace(partial, kept)
        return record


@contextlib.contextmanager
def staged_build_copy(base: Path, cache_dir: Path) -> Iterator[Path]:
    """A copy of the reference's built tree (times kept: make sees every file as old as every
    other) beside the build cache's entries, without the compile record; removed on leaving
    if the build did not move it into place."""
    staging = Path(cache_dir) / ".staging"
    staging.mkdir(parents=True, exist_ok=True)
    tree = staging / uuid.uuid4().hex
    try:
        shutil.copytree(
            base, tree, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED, RECORD_DIR)
        )
        yield tree
    finally:
        if os.path.lexists(tree):
            shutil.rmtree(tree, ignore_errors=True)


def remove_objects(tree: Path, objects: list[str]) -> None:
    """The stale objects removed from a staged copy, so that its build remakes them (a
    directory whole: cargo's fingerprint of a unit)."""
    for obj in objects:
        path = tree / obj
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
