"""``build init``: an instance skeleton from a repository with a build script and a pytest
suite (TestSuiteBench Section 2.1's starting point).

A ProgramBench task directory (``build.sh`` or ``compile.sh`` at the root,
``tests/<branch>/eval/tests``, with or without ``tests.json``) is read as it is: the suite is
every branch not ignored (or ``--branch``), each laid out as the workspace its tests expect
(``tests/<branch>/eval/`` whole, fixtures included, beside an ``executable`` link:
:mod:`suitebench.suite.execute.workspaces`), and the tests ``tests.json`` marks ignored are removed
with their reasons.  A Python project (no ``build.sh``, a package and ``tests/``) becomes a ``kind =
"python"`` instance with its pytest configuration, the files its tests read and its interpreter
(:mod:`.init_python`).  Any other repository needs ``build.sh`` at its root (leaving
``./executable``) and a pytest suite in ``tests/``.  The source (the repository without its
tests) and the suite are copied into the new instance, an ``instance.toml`` is written, and
:mod:`hygiene <suitebench.construct.hygiene>` runs on the result: a new instance starts with a
reference suite that passes on its reference, every run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suitebench.construct.hygiene import HygieneReport, apply_hygiene, remove_tests
from suitebench.construct.init_python import is_python_project, python_lines
from suitebench.model.instance import InstanceError, load_instance
from suitebench.model.programbench import is_programbench_task, load_programbench_task
from suitebench.run.executor import Executor
from suitebench.run.store import Store
from suitebench.suite.execute.workspaces import stage_workspaces

__all__ = ["init_instance"]

_NOT_SOURCE = {".git", "tests", "tests.json", "spec.md", "mutants"}
_NOT_SOURCE_ANYWHERE = {"__pycache__", ".pytest_cache"}
Progress = Callable[[int, int], None]


def init_instance(
    repo: Path,
    out: Path,
    *,
    store: Store,
    branch: str | None = None,
    runs: int = 3,
    per_test: float = 10.0,
    check_network: bool = True,
    cache_dir: Path | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    python: Path | None = None,
) -> tuple[dict[str, Any], HygieneReport]:
    """Create the instance ``out`` from ``repo``; return (what init did, the hygiene report)."""
    repo = Path(repo).resolve()
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out}: --out must be a new or empty directory")
    ignored: dict[str, list[str]] = {}
    found: dict[str, Any] = {}
    listed: tuple[str, ...] = ()
    build = "build.sh"
    if is_python_project(repo) and not is_programbench_task(repo):
        out.mkdir(parents=True, exist_ok=True)
        lines, suite, found = python_lines(repo, out, python)
        shutil.copytree(suite, out / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    elif is_programbench_task(repo):
        task = load_programbench_task(repo, branch)
        # Every branch scored, each as the workspace its tests expect (``eval/`` whole).
        suite = stage_workspaces(
            [(b, task.tests / b) for b in task.branches],
            cache_dir or Path(tempfile.mkdtemp(prefix="suitebench-init-")),
        )
        listed = task.scored_tests()
        ignored = {t: list(r) for t, r in task.ignored_tests.items()}
        description = task.description
        build = task.build or "build.sh"
    else:
        if not (repo / "build.sh").is_file():
            raise InstanceError(
                repo / "build.sh", "<file>", "expected build.sh leaving ./executable"
            )
        suite = repo / "tests"
        if not suite.is_dir() or not any(suite.rglob("test_*.py")):
            raise InstanceError(suite, "<dir>", "expected a pytest suite (tests/test_*.py)")
        description = f"built from {repo.name}"
    if not found:
        out.mkdir(parents=True, exist_ok=True)

        def not_source(directory: str, names: list[str]) -> list[str]:
            top = Path(directory) == repo
            return [n for n in names if (top and n in _NOT_SOURCE) or n in _NOT_SOURCE_ANYWHERE]

        shutil.copytree(repo, out / "src", symlinks=True, ignore=not_source)
        shutil.copytree(
            suite, out / "tests", symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
        )
        lines = [
            f"name = {json.dumps(repo.name)}",
            f"description = {json.dumps(description)}",
            'source = "src/"',
            f"build = {json.dumps(build)}",
            'tests = "tests/"',
        ]
    if (repo / "spec.md").is_file():
        shutil.copy2(repo / "spec.md", out / "spec.md")
        lines.insert(2, 'spec = "spec.md"')
    (out / "instance.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, missing = remove_tests(out / "tests", set(ignored))
    summary: dict[str, Any] = {
        "repository": str(repo),
        "instance": str(out),
        "ignored_by_task": ignored,
        "ignored_not_found": missing,
        **({"python_project": found} if found else {}),
    }
    report = apply_hygiene(
        load_instance(out),
        store=store,
        runs=runs,
        per_test=per_test,
        check_network=check_network,
        cache_dir=cache_dir,
        executor=executor,
        progress=progress,
    )
    if listed:  # tests.json's count: a file that did not collect drops each test it lists
        summary["dropped_in_files"] = {
            d.id: [t for t in listed if t.split("::", 1)[0] == d.id]
            for d in report.dropped
            if "::" not in d.id
        }
        units = [t for t in listed if t.split("::", 1)[0] not in summary["dropped_in_files"]]
        dropped = {d.id for d in report.dropped}
        summary["tests"] = len(listed)
        summary["kept"] = sum(1 for t in units if t not in dropped)
    (out / "init.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return summary, report
