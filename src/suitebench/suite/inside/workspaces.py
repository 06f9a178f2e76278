"""ProgramBench's workspace for each test: ``./executable`` beside the branch's whole ``eval/``.

ProgramBench runs a branch as ``cd WORKSPACE && python3 -m pytest eval/tests/``: the working
directory holds ``./executable`` and the branch's ``eval/`` (its tests, and the files they read:
``eval/fixtures/...``, ``eval/cases/...``).  A task scores every branch together, and each
branch has its own ``eval/``, so the suite's directory holds one *workspace* per branch,
``tests/<branch>/``, with ``eval/`` and an ``executable`` link to the work dir's program
(:func:`suitebench.suite.execute.workspaces.stage_task_suite` lays it out).  Here, inside the
sandbox, each test module is imported and each test runs with its workspace as the working
directory, and a branch's test modules never meet another branch's of the same name: when collection
enters a new workspace, the previous one's modules leave ``sys.modules`` (the collected tests
keep theirs) and its directories leave ``sys.path``.

A workspace is recognised by its shape alone: an ``eval`` directory above the test file whose
parent also holds ``executable`` (a link).  A suite without one runs where it always did.
Stdlib only, plus pytest: this runs inside the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator, Iterator
from typing import Any

import pytest

_cache: dict[str, str | None] = {}
_current: dict[str, str | None] = {"workspace": None}


def workspace_of(path: str) -> str | None:
    """The ProgramBench workspace a test file or directory belongs to (an absolute path), or
    None.  A directory is its own first candidate: the ``conftest.py`` files below ``eval/``
    are imported while ``eval/`` itself is collected."""
    full = os.path.abspath(path)
    directory = full if os.path.isdir(full) else os.path.dirname(full)
    if directory in _cache:
        return _cache[directory]
    found: str | None = None
    probe = directory
    while True:
        parent = os.path.dirname(probe)
        if os.path.basename(probe) == "eval" and os.path.lexists(
            os.path.join(parent, "executable")
        ):
            found = parent
            break
        if parent == probe:
            break
        probe = parent
    _cache[directory] = found
    return found


def _leave(workspace: str) -> None:
    """Forget a workspace's modules and import paths: the next branch imports its own."""
    prefix = workspace + os.sep
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.startswith(prefix):
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not (p == workspace or p.startswith(prefix))]


def _enter(workspace: str | None) -> None:
    previous = _current["workspace"]
    if previous is not None and previous != workspace:
        _leave(previous)
    if workspace is not None:
        _current["workspace"] = workspace


@contextlib.contextmanager
def _working_in(workspace: str) -> Iterator[None]:
    """The workspace as the working directory, the one before restored after (the suite's
    interpreter may predate ``contextlib.chdir``)."""
    before = os.getcwd()
    os.chdir(workspace)
    try:
        yield
    finally:
        os.chdir(before)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """A test module (and a directory's ``conftest.py``, which pytest imports as it collects
    the directory) is imported from its workspace, as ProgramBench imports it."""
    path = getattr(collector, "path", None)
    workspace = workspace_of(str(path)) if path is not None else None
    if workspace is None:
        return (yield)
    _enter(workspace)
    with _working_in(workspace):
        return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[Any]:
    """A test's set-up, call and teardown run in its workspace."""
    workspace = workspace_of(str(item.path))
    if workspace is None:
        return (yield)
    with _working_in(workspace):
        return (yield)
