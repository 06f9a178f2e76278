"""A Python package's build check compiles every module in suitebench's own process: a module
that does not compile is named with the compiler's message, nothing of the package runs."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from suitebench.run.pycompile import compile_check


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


def test_a_mutant_drawing_a_syntax_warning_is_checked_quietly(tmp_path: Path) -> None:
    """A string mutant turns ``x == ""`` into ``x is ""``: it compiles, with a SyntaxWarning
    that is the program's business, not the terminal's (it once landed amid score's progress
    bar, one per mutant)."""
    package = tmp_path / "colors"
    package.mkdir()
    (package / "hexes.py").write_text(
        'def normalize(value):\n    if value is "":\n        raise ValueError(value)\n'
        "    return value.lower()\n"
    )
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert compile_check(package) == ""
    assert not [w for w in seen if issubclass(w.category, SyntaxWarning)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SyntaxError):  # the warning really is there to be drawn
            compile((package / "hexes.py").read_text(), "hexes.py", "exec")
