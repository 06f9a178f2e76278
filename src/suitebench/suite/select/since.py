"""``--since REV``: the lines of a project changed since a git revision, and the mutants on them.

Stryker's ``--incremental``, PIT's history and cosmic-ray's ``cr-filter-git`` let a daily run
mutate only what an edit touched.  Here the edit is what ``git diff REV`` shows of the
instance's source tree (the working tree against ``REV``: committed, staged and unstaged
changes) plus the files git does not track yet; a mutant is *on a changed line* when a line
its patch replaces or removes (or the line it inserts after) is one the edit added or changed.
A line the edit deleted marks its neighbours as changed.  ``build mutants --since REV`` makes
mutants only there; ``score --since REV`` scores only those of the instance's mutants, and the
results name the mutants and files it left out.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.model.diffs import DiffError, read_diff
from suitebench.model.instance import Instance

__all__ = [
    "ChangedLines",
    "SinceChoice",
    "SinceError",
    "changed_lines",
    "mutant_lines",
    "on_changed_lines",
    "since_choice",
]

EVERY_LINE: frozenset[int] = frozenset()  # a file changed as a whole (new, untracked, binary)


class SinceError(ValueError):
    """``--since`` cannot be answered: the source is not in a git work tree, or the revision
    is not one git knows."""


@dataclass
class ChangedLines:
    """The lines changed since ``rev`` per file (paths relative to the source root); a file
    changed as a whole maps to :data:`EVERY_LINE`."""

    rev: str
    commit: str
    files: dict[str, frozenset[int]] = field(default_factory=dict)

    def changed(self, path: str, line: int) -> bool:
        lines = self.files.get(path)
        return lines is not None and (lines is EVERY_LINE or line in lines)

    def to_dict(self) -> dict[str, Any]:
        return {"rev": self.rev, "commit": self.commit, "changed_files": sorted(self.files)}


def _git(root: Path, *args: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "LANG": "C", "GIT_CONFIG_NOSYSTEM": "1"},
        )
    except FileNotFoundError:
        raise SinceError("--since needs git, and git is not installed") from None
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SinceError(f"{root}: git {args[0]} failed: {why[-1] if why else proc.returncode}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def changed_lines(root: Path, rev: str) -> ChangedLines:
    """The lines under ``root`` changed since ``rev`` (see the module doc).  Raises
    :class:`SinceError` naming ``root`` or ``rev`` when git cannot say."""
    root = Path(root)
    if not root.is_dir():
        raise SinceError(f"{root}: --since needs the source to be a directory")
    try:
        _git(root, "rev-parse", "--show-toplevel")
    except SinceError:
        raise SinceError(
            f"{root}: --since needs the instance's source in a git work tree "
            "(an instance.toml at the project's root names its source there)"
        ) from None
    try:
        commit = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except SinceError:
        raise SinceError(f"--since {rev}: not a revision git knows in {root}") from None
    text = _git(
        root, "diff", "--relative", "--no-color", "--no-ext-diff", "--no-renames", "-U0",
        commit, "--", ".",
    )  # fmt: skip
    out = ChangedLines(rev=rev, commit=commit)
    try:
        diff = read_diff(text)
    except DiffError as exc:  # git's own output: not expected
        raise SinceError(f"{root}: git diff {rev} could not be read: {exc}") from None
    for f in diff.files:
        if f.new_name == "/dev/null":
            continue  # deleted: no line of it is left to mutate
        name = f.new_name[2:] if f.new_name.startswith("b/") else f.new_name
        if f.old_name == "/dev/null" or f.binary:
            out.files[name] = EVERY_LINE
            continue
        lines: set[int] = set()
        for hunk in f.hunks:
            added = [line.new for line in hunk.lines if line.tag == "+" and line.new]
            lines.update(added)
            if not added:  # only deleted: the lines either side of the gap changed
                lines.update({hunk.new_start, hunk.new_start + 1} - {0})
        out.files[name] = frozenset(lines)
    for name in _git(root, "ls-files", "--others", "--exclude-standard", "-z").split("\0"):
        if name:
            out.files[name] = EVERY_LINE
    return out


def mutant_lines(patch: bytes) -> dict[str, set[int]] | None:
    """The reference lines a mutant's patch touches per file: those it replaces or removes,
    and for an insertion the line it follows (None: not a diff)."""
    try:
        diff = read_diff(patch)
    except DiffError:
        return None
    out: dict[str, set[int]] = {}
    for f in diff.files:
        name = f.old_name if f.old_name != "/dev/null" else f.new_name
        name = name.split("/", 1)[1] if "/" in name else name  # -p1
        lines = out.setdefault(name, set())
        for hunk in f.hunks:
            removed = [line.old for line in hunk.lines if line.tag == "-" and line.old]
            lines.update(removed)
            if not removed:
                lines.add(max(1, hunk.old_start))
    return out


def on_changed_lines(patch: bytes, changes: ChangedLines) -> bool:
    """Whether a mutant's patch touches a line changed since the revision (a patch that is
    not a diff: yes, so that it is run rather than silently left out)."""
    touched = mutant_lines(patch)
    if touched is None:
        return True
    return any(changes.changed(path, line) for path, lines in touched.items() for line in lines)


@dataclass
class SinceChoice:
    """``score --since``: the mutants on changed lines, and those left out (not run)."""

    changes: ChangedLines
    chosen: list[str]
    left_out: list[str]
    left_out_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.changes.to_dict(),
            "mutants_scored": len(self.chosen),
            "mutants_left_out": len(self.left_out),
            "left_out": self.left_out,
            "left_out_files": self.left_out_files,
        }


def since_choice(instance: Instance, rev: str, chosen: Iterable[str] | None) -> SinceChoice:
    """The instance's mutants (of ``chosen``, when given) on lines of its source changed since
    ``rev``; raises :class:`SinceError`."""
    changes = changed_lines(instance.source, rev)
    wanted = None if chosen is None else set(chosen)
    kept: list[str] = []
    left: list[str] = []
    files: set[str] = set()
    for m in instance.mutants:
        if wanted is not None and m.id not in wanted:
            continue
        try:
            patch = m.patch.read_bytes()
        except OSError:
            kept.append(m.id)  # its build says what is wrong with it
            continue
        if on_changed_lines(patch, changes):
            kept.append(m.id)
        else:
            left.append(m.id)
            files.update(mutant_lines(patch) or ())
    return SinceChoice(changes, kept, left, sorted(files))
