"""The sandbox boundary: what runs in a suite's pytest process imports only what is there.

``suitebench.suite.inside`` is loaded by the interpreter that runs a suite, which may be a
project's venv holding only a copy of that package (:func:`suitebench.suite.execute.interpreter.
plugin_root`).  So each of its modules imports only the standard library, pytest and the package
itself; one import of the host side (``suitebench.run``, pydantic, another module of
``suitebench.suite``) would work here and fail there.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import suitebench
from suitebench.suite.execute import interpreter

PACKAGE = Path(suitebench.__file__).resolve().parent
INSIDE = PACKAGE / "suite" / "inside"
OWN = "suitebench.suite.inside"
THIRD_PARTY_ALLOWED = {"pytest", "_pytest"}


def _package_of(path: Path) -> str:
    """The dotted package a module file under ``suite/inside`` belongs to (what its relative
    imports start from)."""
    return ".".join(path.relative_to(PACKAGE.parent).parent.parts)


def _allowed(name: str) -> bool:
    top = name.split(".", 1)[0]
    if top in sys.stdlib_module_names or top in THIRD_PARTY_ALLOWED:
        return True
    return name == OWN or name.startswith(OWN + ".")


def foreign_imports(path: Path, package: str | None = None) -> list[str]:
    """Every import in ``path`` (at any depth: a deferred import counts) of something outside
    the standard library, pytest and ``suitebench.suite.inside``, as ``line: module``;
    relative imports resolved from ``package`` (default: where ``path`` sits)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = package or _package_of(path)
    bad: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names = [module]
            if module == "suitebench.suite":  # ``from suitebench.suite import inside``
                names = [f"{module}.{alias.name}" for alias in node.names]
        bad.extend(f"{node.lineno}: {name}" for name in names if not _allowed(name))
    return bad


def _modules() -> list[Path]:
    return sorted(INSIDE.rglob("*.py"))


def test_the_inside_package_holds_the_sandbox_modules() -> None:
    names = {p.relative_to(INSIDE).as_posix() for p in _modules()}
    for name in (
        "plugin.py",
        "batch/forkserver.py",
        "wire.py",
        "probe/subcover/sitecustomize.py",
    ):
        assert name in names
    assert len(names) > 10


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(INSIDE).as_posix())
def test_an_inside_module_imports_only_the_standard_library_and_pytest(path: Path) -> None:
    assert foreign_imports(path) == []


def test_the_packages_above_it_import_nothing() -> None:
    """``suitebench/__init__.py`` and ``suitebench/suite/__init__.py`` run first whenever the
    sandbox imports ``suitebench.suite.inside``, and are copied with it."""
    for path in (PACKAGE / "__init__.py", PACKAGE / "suite" / "__init__.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        assert imports == [], path


def test_the_check_sees_a_host_import(tmp_path: Path) -> None:
    """The check can fail: host imports, direct, deferred or relative, are found."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json\n"
        "import pytest\n"
        "from _pytest.junitxml import xml_key\n"
        "from suitebench.suite.inside import plugin\n"
        "from . import wire\n"
        "from suitebench.run import sandbox\n"
        "def later():\n"
        "    import pydantic\n"
        "    from suitebench.suite.records import TestStatus\n"
        "    from .. import score\n"
        "    from suitebench.suite import rows, inside\n"
        "    import suitebench\n",
        encoding="utf-8",
    )
    assert foreign_imports(probe, OWN) == [
        "6: suitebench.run",
        "8: pydantic",
        "9: suitebench.suite.records",
        "10: suitebench.suite.score",
        "11: suitebench.suite.rows",
        "12: suitebench",
    ]


def test_a_projects_interpreter_gets_the_inside_package_alone(tmp_path: Path) -> None:
    root = interpreter.plugin_root(tmp_path)
    copied = {p.relative_to(root).as_posix() for p in root.rglob("*.py")}
    assert "suitebench/__init__.py" in copied
    assert "suitebench/suite/__init__.py" in copied
    assert "suitebench/suite/inside/plugin.py" in copied
    assert "suitebench/suite/inside/probe/subcover/sitecustomize.py" in copied
    others = {c for c in copied if not c.startswith("suitebench/suite/inside/")}
    assert others == {"suitebench/__init__.py", "suitebench/suite/__init__.py"}
