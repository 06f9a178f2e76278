"""A changed default argument runs only the tests that leave the parameter to its default (or
read the function's signature); the selected matrix equals the full one.

``units`` formats sizes: ``size(n, binary=False, precision=1)``, and a ``Formatter`` with
defaults of its own that passes every argument to ``size``.  Worked out by hand:

* ``binary_true`` (``binary=False`` -> ``True`` in ``size``): ``test_decimal`` and
  ``test_precision`` leave ``binary`` to the default, and so does the CLI's process; all three
  print kibibytes on the mutant and fail.  ``test_signature`` reads the signature (it passes:
  it checks ``precision`` only), and ``test_formatter_default``'s formatter passes ``False``,
  the default's value, so it runs too (a value equal to the default counts) and passes.
* ``precision_2`` (``precision=1`` -> ``2`` in ``size``): ``test_decimal``, the CLI and
  ``test_signature`` see it and fail; ``test_formatter`` passes precision 1 and runs (it
  passes), ``test_precision`` passes 2 and does not.
* ``init_binary`` and ``format_precision`` (the formatter's defaults): ``test_formatter_default``
  alone leaves them to the defaults.

Without the probes each of these is an import-time change of a function every test reaches
through ``size``: all seven tests would run on each.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine
from suitebench.suite.inside.probe import defaults
from suitebench.suite.select.infection import _probe_of, probes_for

from ..conftest import score_selected_and_full, write_python_instance

UNITS = '''\
"""Human-readable sizes."""


def size(n, binary=False, precision=1):
    base = 1024 if binary else 1000
    units = ["B", "KiB", "MiB"] if binary else ["B", "kB", "MB"]
    value = float(n)
    for unit in units:
        if value < base or unit == units[-1]:
            return f"{value:.{precision}f} {unit}"
        value /= base


class Formatter:
    def __init__(self, binary=False):
        self.binary = binary

    def format(self, n, *, precision=2):
        """``n`` bytes, as this formatter writes them."""
        return size(n, self.binary, precision)
'''
MAIN = "import sys\n\nfrom units import size\n\nprint(size(int(sys.argv[1])))\n"
TESTS = {
    "test_units.py": (
        "import inspect, subprocess, sys\n\nfrom units import Formatter, size\n\n\n"
        "def test_decimal():\n    assert size(1500) == '1.5 kB'\n\n\n"
        "def test_binary_explicit():\n"
        "    assert size(2048, binary=True, precision=0) == '2 KiB'\n\n\n"
        "def test_precision():\n    assert size(1500, precision=2) == '1.50 kB'\n\n\n"
        "def test_formatter():\n"
        "    assert Formatter(binary=True).format(1536, precision=1) == '1.5 KiB'\n\n\n"
        "def test_formatter_default():\n    assert Formatter().format(1536) == '1.54 kB'\n\n\n"
        "def test_signature():\n"
        "    assert inspect.signature(size).parameters['precision'].default == 1\n\n\n"
        "def test_cli():\n"
        "    out = subprocess.run([sys.executable, '-m', 'units', '1500'],\n"
        "                         capture_output=True, text=True, check=True).stdout\n"
        "    assert out == '1.5 kB\\n'\n"
    )
}
T = "tests/test_units.py::test_"
MUTANTS = [
    ("binary_true", "units/__init__.py", "size(n, binary=False,", "size(n, binary=True,"),
    ("precision_2", "units/__init__.py", "precision=1):", "precision=2):"),
    ("init_binary", "units/__init__.py", "(self, binary=False)", "(self, binary=True)"),
    ("format_precision", "units/__init__.py", "*, precision=2)", "*, precision=3)"),
]


def _instance(tmp_path: Path) -> Path:
    return write_python_instance(
        tmp_path / "units",
        name="units",
        source={"units/__init__.py": UNITS, "units/__main__.py": MAIN},
        tests=TESTS,
        spec="# units\n\n## Sizes\nFormat them.\n",
        mutants=MUTANTS,
    )


def _change(before: str, after: str) -> tuple[object, ...] | None:
    return _probe_of(0, "m.py", ast.parse(before), ast.parse(after))


def test_only_a_constant_default_of_a_function_defined_on_import_is_probed() -> None:
    assert _change("def f(a, b=1):\n    pass\n", "def f(a, b=2):\n    pass\n") == (
        0, "m.py", 1, 0, 2, 8, "Default", "b", None,
    )  # fmt: skip
    method = "class C:\n    def m(self, *, k='x'):\n        pass\n"
    assert _change(method, method.replace("'x'", "'XXxXX'")) == (
        0, "m.py", 2, 4, 3, 12, "Default", "k", None,
    )  # fmt: skip
    nested = "def outer():\n    def f(b=1):\n        pass\n"  # defined on each call
    assert _change(nested, nested.replace("b=1", "b=2")) is None
    assert _change("f = lambda b=1: b\n", "f = lambda b=2: b\n") is None
    assert _change("def f(b=(1,)):\n    pass\n", "def f(b=(2,)):\n    pass\n") is None  # a tuple
    both = ("def f(b=1, c=1):\n    pass\n", "def f(b=2, c=2):\n    pass\n")
    assert _change(*both) is None  # two defaults


def test_the_probe_notes_a_call_that_leaves_the_parameter_to_its_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # what the probes install is this process's for the test only
    monkeypatch.setattr(inspect, "_signature_from_function", inspect._signature_from_function)
    monkeypatch.setattr(defaults, "_WATCHING", [])
    monkeypatch.setattr(defaults, "_SITES", {})
    noted: list[int] = []
    note = lambda f, s: noted.append(s)  # noqa: E731
    assert defaults.watch_signatures(note)
    tree = ast.parse(UNITS)
    probes = [
        [0, "units/__init__.py", 4, 0, 11, 21, "Default", "binary", None],
        [1, "units/__init__.py", 4, 0, 11, 21, "Default", "precision", None],
        [2, "units/__init__.py", 18, 4, 20, 46, "Default", "precision", None],
        [3, "units/__init__.py", 99, 0, 99, 5, "Default", "binary", None],  # no such function
    ]
    assert defaults.install_defaults(tree, "units/__init__.py", probes) == {0, 1, 2}
    space: dict[str, object] = {
        "__builtins__": {
            **vars(builtins),
            defaults.DEFAULT_PROBE: defaults.make_default_probe(note),
        }
    }
    exec(compile(tree, "/work/units/__init__.py", "exec"), space)
    size, formatter = space["size"], space["Formatter"]
    assert size(2048, binary=True, precision=0) == "2 KiB" and noted == []  # type: ignore[operator]
    assert size(1500) == "1.5 kB" and sorted(noted) == [0, 1]  # type: ignore[operator]
    noted.clear()
    assert size(1500, False, 2) == "1.50 kB" and noted == [0]  # False passed: counted too
    noted.clear()
    # the formatter passes its own precision (1, the size's default: counted) and binary False
    assert formatter().format(1536, precision=1) == "1.5 kB"  # type: ignore[operator]
    assert sorted(noted) == [0, 1]
    noted.clear()
    assert formatter().format(1536) == "1.54 kB" and sorted(noted) == [0, 2]  # type: ignore[operator]
    doc = formatter.format.__doc__  # type: ignore[attr-defined]
    assert doc == "``n`` bytes, as this formatter writes them."  # the probe goes after it
    noted.clear()
    inspect.signature(size)  # type: ignore[arg-type]
    assert sorted(noted) == [0, 1]


def test_no_default_probe_where_the_suite_names_the_defaults(tmp_path: Path) -> None:
    from suitebench.model.instance import load_instance

    instance = load_instance(_instance(tmp_path))
    found = probes_for(instance.source, instance.mutants, instance.tests)
    assert sorted(found.sites) == sorted(m[0] for m in MUTANTS)
    assert all(found.is_default(site) for site in found.sites.values())
    (instance.tests / "test_units.py").write_text(
        TESTS["test_units.py"] + "\n\ndef test_defaults():\n    assert size.__defaults__\n"
    )
    assert probes_for(instance.source, instance.mutants, instance.tests).sites == {}


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_changed_default_runs_only_the_tests_that_use_it(engine: Engine, tmp_path: Path) -> None:
    selected, _full = score_selected_and_full(_instance(tmp_path), tmp_path, engine=engine)
    assert selected.coverage.unknown_tests == []
    by_id = {m.id: m for m in selected.mutants}
    tests = lambda *names: {T + n for n in names}  # noqa: E731
    assert set(by_id["binary_true"].covered_by or ()) == tests(
        "decimal", "precision", "signature", "cli", "formatter_default"
    )
    assert set(by_id["binary_true"].killed_by) == tests("decimal", "precision", "cli")
    assert set(by_id["precision_2"].covered_by or ()) == tests(
        "decimal", "signature", "cli", "formatter"
    )
    assert set(by_id["precision_2"].killed_by) == tests("decimal", "signature", "cli")
    for mid in ("init_binary", "format_precision"):
        assert set(by_id[mid].covered_by or ()) == tests("formatter_default")
        assert set(by_id[mid].killed_by) == tests("formatter_default")
