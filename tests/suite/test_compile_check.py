"""A Python package's build check compiles every module in suitebench's own process: a module
that does not compile is named with the compiler's message, nothing of the package runs."""

from __future__ import annotations

from pathlib import Path

from suitebench.suite.build import compile_check


def test_compile_check_names_the_module_that_does_not_compile(tmp_path: Path) -> None:
    package = tmp_path / "calc"
    package.mkdir()
    (package / "__init__.py").write_text("raise SystemExit('imported: the check ran the code')\n")
    (package / "ops.py").write_text("def add(a, b):\n    return a +\n")
    errors = compile_check(package)
    assert errors is not None
    assert str(package / "ops.py") in errors and "invalid syntax" in errors
    assert "__init__.py" not in errors  # it compiles; that it would exit when run is no matter


def test_compile_check_of_a_sound_package_is_empty(tmp_path: Path) -> None:
    package = tmp_path / "calc"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from calc.sub.ops import add\n")
    (package / "sub" / "ops.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    assert compile_check(package) == ""
