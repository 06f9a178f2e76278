"""``build init`` of a Python project as it ships: a package, its tests, its pytest
configuration, the files its tests read, and the interpreter with its test dependencies.

A project is a directory with no ``build.sh`` and a pytest suite (``tests/`` or ``test/``)
beside one importable package: ``src/<name>/__init__.py`` (the src layout) or
``<name>/__init__.py`` at the root.  The instance is named as the project is (its
``pyproject.toml`` or ``setup.cfg``, else its folder) and gets ``kind = "python"`` with the
package's root as ``source``; the project's pytest configuration (the file pytest would read:
:func:`suitebench.suite.execute.projectconfig.find_pytest_config`) and its root ``conftest.py`` are
copied and named by ``pytest_config``; the root's files and directories the tests read or
import (``README.md``, ``docs``, ``tools``), and those holding text files of doctests its
pytest collects (``--doctest-glob``: ``README.rst``, ``docs/`` under ``testpaths = tests
docs``), are copied and listed in ``beside``; ``--python``
becomes ``python``.
"""

from __future__ import annotations

import configparser
import json
import shutil
import tomllib
from pathlib import Path

from suitebench.construct.mutate_paths import mutation_settings_files, mutmut_settings
from suitebench.model.instance import InstanceError
from suitebench.suite.execute.projectconfig import (
    carry_config,
    doctest_entries,
    find_pytest_config,
    read_by_tests,
)

_TEST_DIRS = ("tests", "test")
_SKIP = {".git", ".tox", ".nox", ".venv", "venv", "build", "dist", "__pycache__", ".github"}
_TAKEN = {"tests", "executable", "pytest.ini", "src", "instance.toml", "spec.md", "mutants"}


def is_python_project(repo: Path) -> bool:
    """No build script, a pytest suite, and a package: what :func:`python_lines` takes."""
    return not (repo / "build.sh").is_file() and _tests_dir(repo) is not None


def _tests_dir(repo: Path) -> Path | None:
    """mutmut's ``tests_dir`` (the first that holds tests), else ``tests/`` or ``test/``."""
    configured, _ = mutmut_settings(repo)
    wanted = configured.get("tests_dir")
    names = [wanted] if isinstance(wanted, str) else list(wanted or [])
    for name in names:
        path = repo / str(name).strip().strip("/")
        if str(name).strip() and path.is_dir() and any(path.rglob("test*.py")):
            return path
    for name in _TEST_DIRS:
        if (repo / name).is_dir() and any((repo / name).rglob("test*.py")):
            return repo / name
    return None


def project_name(repo: Path) -> str:
    """The project's own name: ``[project] name`` in ``pyproject.toml``, else ``[metadata]
    name`` in ``setup.cfg``, else the folder's (a clone may be named anything)."""
    try:
        meta = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
        name = meta.get("project", {}).get("name") or meta.get("tool", {}).get("poetry", {}).get(
            "name"
        )
        if isinstance(name, str) and name.strip():
            return name.strip()
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        pass
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(repo / "setup.cfg", encoding="utf-8")
        name = cfg.get("metadata", "name", fallback="").strip()
    except (configparser.Error, UnicodeDecodeError):
        name = ""
    return name or repo.name


def _package(repo: Path) -> tuple[Path, str]:
    """(source root, package name): the src layout first, then a package at the root; the one
    named by ``pyproject.toml``'s ``[project] name`` where there are several."""
    wanted = ""
    if (repo / "pyproject.toml").is_file():
        try:
            meta = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
            wanted = str(meta.get("project", {}).get("name", "")).lower().replace("-", "_")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            wanted = ""
    for root in (repo / "src", repo):
        found = sorted(
            p.parent.name
            for p in root.glob("*/__init__.py")
            if p.parent.name not in _SKIP and p.parent.name not in _TEST_DIRS
        )
        if len(found) == 1:
            return root, found[0]
        if wanted in found:
            return root, wanted
        if found:
            raise InstanceError(
                root, "<dir>", f"expected one package, found {', '.join(found)}: keep one"
            )
    raise InstanceError(repo, "<dir>", "expected a package (src/NAME/__init__.py or NAME/)")


def _pytest_config(repo: Path) -> Path | None:
    try:
        return find_pytest_config(repo)
    except (ValueError, OSError):  # a file pytest could not read either
        return None


def python_lines(repo: Path, out: Path, python: Path | None) -> tuple[list[str], Path, dict]:
    """Copy a Python project's parts into ``out``; the ``instance.toml`` lines, the suite's
    directory in the repository, and what was found (for ``init.json``)."""
    tests = _tests_dir(repo)
    assert tests is not None
    source, package = _package(repo)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    shutil.copytree(source / package, out / "src" / package, symlinks=True, ignore=ignore)
    lines = [
        f"name = {json.dumps(project_name(repo))}",
        'kind = "python"',
        f"description = {json.dumps(f'built from {repo.name}')}",
        'source = "src/"',
        f"package = {json.dumps(package)}",
        'tests = "tests/"',
    ]
    prefix = source.relative_to(repo).as_posix()
    found: dict[str, object] = {
        "package": package,
        "source": str(source),
        "source_prefix": "" if prefix == "." else prefix,
        "tests": tests.relative_to(repo).as_posix(),
    }
    config = _pytest_config(repo)
    # the project's mutation settings (mutmut's, cosmic-ray's, suitebench's own), for the
    # later steps to read where they read the project's configuration
    settings = mutation_settings_files(repo)
    if settings:
        (out / "project").mkdir(exist_ok=True)
        for path in settings:
            shutil.copy2(path, out / "project" / path.name)
        found["settings_files"] = [p.name for p in settings]
    configured, where = mutmut_settings(repo)
    if where and "tests_dir" in configured:
        found["settings_read"] = [f"{where} tests_dir = {configured['tests_dir']}"]
    if config is not None:
        (out / "project").mkdir(exist_ok=True)
        shutil.copy2(config, out / "project" / config.name)
        if (repo / "conftest.py").is_file():
            shutil.copy2(repo / "conftest.py", out / "project" / "conftest.py")
        lines.append(f"pytest_config = {json.dumps('project/' + config.name)}")
        found["pytest_config"] = config.name
    beside = read_by_tests(repo, tests, {package, tests.name, *_TAKEN})
    if config is not None:  # the text files of doctests its pytest collects (README.rst, docs/)
        held = {package, tests.relative_to(repo).parts[0], *_TAKEN}
        texts = carry_config(config).doctest_text_paths(doctest_entries(repo, held))
        beside = sorted({*beside, *(t.split("/", 1)[0] for t in texts)})
        if texts:
            found["doctest_files"] = texts
    for name in beside:
        entry = repo / name
        if entry.is_dir():
            shutil.copytree(entry, out / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(entry, out / name)
    if beside:
        lines.append(f"beside = {json.dumps(beside)}")
    found["beside"] = beside
    if python is not None:
        lines.append(f"python = {json.dumps(str(Path(python).absolute()))}")
        found["python"] = str(python)
    return lines, tests, found
