"""Where a project's pytest finds text files of doctests (``--doctest-glob``): below the
folders it walks -- the root's, or those ``testpaths`` names (``docs`` of semver's
``testpaths = tests docs``) -- but not in folders ``norecursedirs`` leaves out, a virtual
environment or ``__pycache__``; and in which order, against the suite's tests.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["NORECURSE", "after_suite", "files_below", "folders"]

# pytest's default ``norecursedirs``
NORECURSE = ["*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"]


def folders(testpaths: str | list[str] | None) -> tuple[str, ...]:
    """The folders below the root that ``testpaths`` names (``docs``, ``docs/usage``)."""
    entries = (testpaths.split() if isinstance(testpaths, str) else testpaths) or []
    parts = [[p for p in e.strip().split("/") if p not in ("", ".")] for e in entries]
    return tuple("/".join(p) for p in parts if p and ".." not in p)


def after_suite(
    testpaths: str | list[str] | None, root: Path, tests: Path | None
) -> tuple[str, ...]:
    """The ``testpaths`` folders listed after the suite's (``docs`` of ``tests docs``), each
    ending in ``/``: pytest collects, and runs, their doctests after the suite's tests."""
    listed = list(folders(testpaths))
    if tests is None:
        return ()
    suite = tests.resolve()
    for i, folder in enumerate(listed):
        if (root / folder).resolve() == suite:
            return tuple(f"{f}/" for f in listed[i + 1 :])
    return ()


def files_below(
    entries: Mapping[str, Path], starts: Iterable[str], globs: list[str], skip: Iterable[str]
) -> set[str]:
    """The files matching ``globs`` below each folder of ``starts`` (a path from the root
    whose first part is one of ``entries``), as paths from the root; folders matching
    ``skip`` (``norecursedirs``), virtual environments and ``__pycache__`` not entered."""
    skip = [p.rstrip("/") for p in skip]
    found: set[str] = set()
    for start in starts:
        parts = Path(start).parts
        top = entries[parts[0]].joinpath(*parts[1:])
        if not top.is_dir() or any(fnmatch.fnmatch(p, s) for p in parts for s in skip):
            continue
        if (top / "pyvenv.cfg").is_file():  # a virtual environment, as pytest's walk skips
            continue
        for walked, dirs, files in os.walk(top):
            folder = Path(walked)
            dirs[:] = sorted(
                d
                for d in dirs
                if d != "__pycache__"
                and not (folder / d / "pyvenv.cfg").is_file()
                and not any(fnmatch.fnmatch(d, s) for s in skip)
            )
            inside = Path(*parts, folder.relative_to(top))
            found |= {
                (inside / f).as_posix() for f in files if any(fnmatch.fnmatch(f, g) for g in globs)
            }
    return found
