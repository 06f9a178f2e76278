"""A ProgramBench task's suite laid out as the workspaces its tests expect.

ProgramBench runs each branch from a workspace holding ``./executable`` and the branch's whole
``eval/`` directory (``eval/tests/``, ``eval/fixtures/``, ``eval/cases/``, ...).  A task scores
every branch not ignored, together, so the suite a score runs is one directory of workspaces::

    tests/                       <- the suite, as every run's work dir holds it
      <branch>/
        executable -> ../../executable
        eval/tests/test_*.py     <- node ids tests/<branch>/eval/tests/test_x.py::Class::test
        eval/fixtures/...

Each test runs with its branch's workspace as its working directory
(:mod:`suitebench.suite.inside.workspaces`), so it finds ``./executable`` and ``eval/...`` as it
does under ProgramBench's ``eval/run.sh``.  Staged content-addressed under the build cache, like
the files carried beside a suite (:func:`suitebench.suite.execute.projectconfig.stage_beside`).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path

from suitebench.model.instance import Instance
from suitebench.run.tree import publish_by_hash

__all__ = [
    "EXECUTABLE_LINK",
    "HELD_OUT",
    "is_workspace_suite",
    "program_source",
    "stage_workspaces",
    "suite_to_run",
]

EXECUTABLE_LINK = "../../executable"  # from tests/<branch>/ to the work dir's program
_SKIP = shutil.ignore_patterns("__pycache__", ".pytest_cache", "results.xml")
# What a task's root holds that is not the program: its suites, their list, its mutants and
# spec.  Never in a build tree, whose entries the tests see beside ./executable: a suite that
# read mutants/*.diff or tests.json there could tell a mutant from the reference.
HELD_OUT = frozenset({".git", "tests", "tests.json", "mutants", "spec.md"})


def _has_eval_tests(directory: Path) -> bool:
    return (directory / "eval" / "tests").is_dir()


def is_workspace_suite(suite: Path) -> bool:
    """Whether ``suite`` is already laid out as workspaces (``<branch>/eval/tests`` beside an
    ``executable`` link): an instance ``build init`` made from a task."""
    return suite.is_dir() and any(
        _has_eval_tests(d) and os.path.lexists(d / "executable")
        for d in suite.iterdir()
        if d.is_dir()
    )


def stage_workspaces(branches: Sequence[tuple[str, Path]], cache_dir: Path) -> Path:
    """Lay out ``(name, branch directory holding eval/)`` pairs as a suite of workspaces under
    ``cache_dir/workspaces/<digest>`` (content-addressed: concurrent scores agree)."""
    home = cache_dir / "workspaces"
    staging = home / ".staging" / uuid.uuid4().hex
    staging.mkdir(parents=True)
    for name, directory in branches:
        shutil.copytree(directory / "eval", staging / name / "eval", symlinks=True, ignore=_SKIP)
        os.symlink(EXECUTABLE_LINK, staging / name / "executable")
    return publish_by_hash(staging, home)[0]


def suite_to_run(instance: Instance, suite: Path | None, cache_dir: Path) -> Path:
    """The directory a score runs as its suite: a ProgramBench task's branches (or a suite
    given in their shape: a directory of ``<branch>/eval/tests``, or one ``eval/tests``) staged
    as workspaces; any other suite as it is."""
    branches: list[tuple[str, Path]] = []
    if suite is None:
        names = getattr(instance, "branches", None)
        if names is None:
            return instance.tests.resolve()
        branches = [(b, instance.tests / b) for b in names]
    else:
        suite = Path(suite).resolve()
        if not suite.is_dir() or is_workspace_suite(suite):
            return suite
        if _has_eval_tests(suite):
            branches = [(suite.name, suite)]
        else:
            branches = [(d.name, d) for d in sorted(suite.iterdir()) if _has_eval_tests(d)]
        if not branches:
            return suite
    return stage_workspaces(branches, cache_dir)


def program_source(instance: Instance, cache_dir: Path) -> Path:
    """The directory the instance's programs are built from: its ``source``, but for a
    ProgramBench task (whose source is the task's root) a copy without :data:`HELD_OUT`,
    staged under ``cache_dir/sources/<digest>``."""
    if getattr(instance, "branches", None) is None:
        return instance.source
    root = instance.source
    home = cache_dir / "sources"
    staging = home / ".staging" / uuid.uuid4().hex
    top = os.fspath(root)
    shutil.copytree(
        root,
        staging,
        symlinks=True,
        ignore=lambda d, names: [n for n in names if d == top and n in HELD_OUT],
    )
    return publish_by_hash(staging, home)[0]
