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


def test_the_sandbox_check_writes_bytecode_for_clean_modules_alone(tmp_path: Path) -> None:
    """The check another interpreter runs in the sandbox: the module that does not compile is
    named (exit 1), and each clean module -- not one drawing a SyntaxWarning, which must draw
    it again when imported -- gets the bytecode its processes then load instead of compiling."""
    import importlib.util
    import subprocess
    import sys

    from suitebench.run.pycompile import COMPILE_CHECK

    package = tmp_path / "colors"
    package.mkdir()
    (package / "clean.py").write_text("def lower(value):\n    return value.lower()\n")
    (package / "warns.py").write_text('def empty(value):\n    return value is ""\n')
    (package / "broken.py").write_text("def add(a, b):\n    return a +\n")
    done = subprocess.run(
        [sys.executable, "-I", "-c", COMPILE_CHECK, str(package)], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert str(package / "broken.py") in done.stderr and "clean.py" not in done.stderr

    def cached(name: str) -> Path:
        return Path(importlib.util.cache_from_source(str(package / name)))

    assert cached("clean.py").is_file()
    assert not cached("warns.py").exists() and not cached("broken.py").exists()


def test_a_mutants_unchanged_modules_compile_once_and_load_from_their_own_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutant's tree is the reference's copied with its times and one module changed: the
    unchanged modules are compiled once for all the trees (toolz: ~30 a tree, each mutant
    compiled them all again), the changed one anew, and each tree's bytecode loads in a fresh
    interpreter as that tree's own modules (their file names are the tree's, not the first's)."""
    import importlib.util
    import shutil
    import subprocess
    import sys

    from suitebench.run import pycompile

    reference = tmp_path / "ref" / "shop"
    reference.mkdir(parents=True)
    (reference / "__init__.py").write_text("from shop.cart import total\n")
    (reference / "cart.py").write_text(
        "def total(prices, discount=0):\n    return sum(prices) - discount\n"
    )
    (reference / "tax.py").write_text(
        "RATE = 0.2\n\n\ndef with_tax(x):\n    return x * (1 + RATE)\n"
    )
    compiled: list[str] = []
    real = pycompile.compile_quietly

    def counting(source: bytes, filename: str):  # type: ignore[no-untyped-def]
        compiled.append(Path(filename).name)
        return real(source, filename)

    monkeypatch.setattr(pycompile, "compile_quietly", counting)
    assert compile_check(reference) == ""
    mutant = tmp_path / "m1" / "shop"
    shutil.copytree(reference, mutant, ignore=shutil.ignore_patterns("__pycache__"))
    (mutant / "cart.py").write_text(
        "def total(prices, discount=0):\n    return sum(prices) + discount\n"
    )
    compiled.clear()
    assert compile_check(mutant) == ""
    assert compiled == ["cart.py"]
    for name in ("__init__.py", "cart.py", "tax.py"):
        assert Path(importlib.util.cache_from_source(str(mutant / name))).is_file(), name
    probe = (
        "import sys, shop, shop.tax; "
        "print(shop.total([3, 4], 1), shop.tax.with_tax.__code__.co_filename, "
        "shop.tax.__cached__ is not None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=mutant.parent,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(mutant.parent), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr
    value, filename, cached = done.stdout.split()
    assert value == "8" and filename == str(mutant / "tax.py") and cached == "True"


def test_the_builds_verdict_on_warnings_is_read_from_its_bytecode(tmp_path: Path) -> None:
    """Selection asks whether a mutant's module draws a warning ``filterwarnings = error``
    would raise; a module the build compiled quietly has bytecode made from that very source,
    so it is not compiled again (toolz: 10 ms a mutant); one that warned, or changed since,
    has none that fits."""
    from suitebench.run.pycompile import compiled_quietly

    package = tmp_path / "colors"
    package.mkdir()
    (package / "clean.py").write_text("def lower(value):\n    return value.lower()\n")
    (package / "warns.py").write_text('def empty(value):\n    return value is ""\n')
    assert compile_check(package) == ""
    assert compiled_quietly(package / "clean.py")
    assert not compiled_quietly(package / "warns.py")
    (package / "clean.py").write_text("def lower(value):\n    return value.upper()  # changed\n")
    assert not compiled_quietly(package / "clean.py")
    assert not compiled_quietly(package / "missing.py")
