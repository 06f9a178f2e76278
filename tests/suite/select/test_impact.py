"""Import-time impact: a mutant that changes code run on import (a table, a constant, a class
attribute, a decorator) runs only the tests that read a global its import changed -- and the
kill matrix is still the one running every test gives.

The instance is a small unit-conversion package written for these tests, with the bugs such
packages have: a wrong factor in a table, a rounded constant, an alias pointing at the wrong
unit, a precision lowered, a class-level rounding changed (seen through an instance made at
import), a handler registered under the wrong kind, a lazily imported module's constant, a
broken ``__all__``, and a unit added to a table a test is parametrized over."""

from __future__ import annotations

import contextlib
import importlib
import random
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from suitebench.suite.execute.runspec import Engine
from suitebench.suite.inside.probe.fingerprint import Unknown, fingerprint, program_modules
from suitebench.suite.inside.probe.impact import DYNAMIC_NAMES, changed_globals, code_names

from ..conftest import score_selected_and_full, write_python_instance

SOURCE = {
    "units/__init__.py": '''\
"""units: convert lengths and masses."""
from units.convert import DEFAULT, Converter, convert, register
from units.tables import ALIASES, LENGTH, MASS

__all__ = ["convert", "register", "Converter", "DEFAULT", "LENGTH", "MASS", "ALIASES"]
''',
    "units/tables.py": '''\
"""Factors to the base unit (metre, gram)."""
LENGTH = {"m": 1.0, "cm": 0.01, "km": 1000.0, "in": 0.0254, "ft": 0.3048}
MASS = {"g": 1.0, "kg": 1000.0, "lb": 453.59237, "oz": 28.349523125}
ALIASES = {"metre": "m", "inch": "in", "foot": "ft", "pound": "lb"}
PRECISION = 6
''',
    "units/convert.py": '''\
"""Conversions, one handler per kind of quantity."""
from units import tables

_HANDLERS = {}


def register(kind):
    def wrap(fn):
        _HANDLERS[kind] = fn
        return fn

    return wrap


def canonical(unit):
    return tables.ALIASES.get(unit, unit)


@register("length")
def length(value, src, dst):
    return value * tables.LENGTH[canonical(src)] / tables.LENGTH[canonical(dst)]


@register("mass")
def mass(value, src, dst):
    return value * tables.MASS[canonical(src)] / tables.MASS[canonical(dst)]


def convert(value, src, dst):
    for kind, handler in _HANDLERS.items():
        table = tables.LENGTH if kind == "length" else tables.MASS
        if canonical(src) in table and canonical(dst) in table:
            return round(handler(value, src, dst), tables.PRECISION)
    raise ValueError(f"cannot convert {src} to {dst}")


def temperature(value, src, dst):
    from units import temperature as scale

    return scale.convert(value, src, dst)


class Converter:
    ROUNDING = 2

    def __init__(self, kind="length"):
        self.kind = kind

    def __call__(self, value, src, dst):
        return round(_HANDLERS[self.kind](value, src, dst), self.ROUNDING)


DEFAULT = Converter()
''',
    "units/temperature.py": '''\
"""Celsius and kelvin; imported only when a temperature is converted."""
OFFSET = 273.15


def convert(value, src, dst):
    kelvin = value + OFFSET if src == "C" else value
    return kelvin - OFFSET if dst == "C" else kelvin
''',
}

TESTS = {
    "conftest.py": """\
import pytest
import units


@pytest.fixture
def metre():
    return units.LENGTH["m"]
""",
    "test_length.py": """\
import pytest
from units import convert


@pytest.mark.parametrize(
    ("value", "src", "dst", "expected"),
    [(1, "km", "m", 1000.0), (12, "in", "ft", 1.0), (1, "inch", "cm", 2.54)],
)
def test_length(value, src, dst, expected):
    assert convert(value, src, dst) == pytest.approx(expected)


def test_length_and_mass_do_not_mix():
    with pytest.raises(ValueError):
        convert(1, "km", "kg")


def test_metre_is_the_base(metre):
    assert metre == 1.0
""",
    "test_mass.py": """\
from units import convert


def test_pound_in_grams():
    assert convert(1, "pound", "g") == 453.59237


def test_ounces_in_a_pound_round_to_one():
    assert convert(16, "oz", "lb") == 1.0
""",
    "test_converter.py": """\
import units


def test_default_converter_rounds_to_hundredths():
    assert units.DEFAULT(1, "in", "cm") == 2.54


def test_mass_converter():
    assert units.Converter("mass")(1500, "g", "kg") == 1.5
""",
    "test_tables.py": """\
import pytest
import units
from units.tables import PRECISION


@pytest.mark.parametrize("unit", sorted(units.LENGTH))
def test_every_length_unit_converts_to_itself(unit):
    assert units.convert(3, unit, unit) == 3


def _factor(unit):
    return units.MASS[unit]


def test_kilogram_factor():
    assert _factor("kg") == 1000.0


def test_precision_is_six_places():
    assert PRECISION == 6


def test_exports_are_callable_by_name():
    for name in ["convert", "Converter"]:
        assert callable(getattr(units, name))
""",
    "test_temperature.py": """\
from units.convert import temperature


def test_water_boils_at_373_kelvin():
    assert temperature(100, "C", "K") == 373.15
""",
}

# (id, file, old, new): the import-time bugs, and one inside a function for comparison.
MUTANTS = [
    ("i01", "units/tables.py", '"in": 0.0254', '"in": 0.254'),  # a wrong factor
    ("i02", "units/tables.py", '"lb": 453.59237', '"lb": 453.6'),  # a rounded constant
    ("i03", "units/tables.py", '"inch": "in"', '"inch": "ft"'),  # an alias to the wrong unit
    ("i04", "units/tables.py", "PRECISION = 6", "PRECISION = 2"),  # precision lowered
    ("i05", "units/convert.py", "    ROUNDING = 2", "    ROUNDING = 1"),  # via DEFAULT
    ("i06", "units/convert.py", '@register("mass")', '@register("length")'),  # wrong kind
    ("i07", "units/temperature.py", "OFFSET = 273.15", "OFFSET = 273"),  # imported in a test
    ("i08", "units/__init__.py", '"MASS", "ALIASES"', '"MASS"'),  # __all__
    ("i09", "units/tables.py", '"ft": 0.3048}', '"ft": 0.3048, "yd": 0.9144}'),  # a new unit
    ("f01", "units/convert.py", "    raise ValueError", "    return None\n    raise ValueError"),
]


def write_units(root: Path, mutants: list[tuple[str, str, str, str]] = MUTANTS) -> Path:
    return write_python_instance(
        root,
        name="units",
        source=SOURCE,
        tests=TESTS,
        spec="# units\n\n## Conversions\nLengths and masses.\n",
        mutants=mutants,
    )


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_import_time_mutants_run_only_the_readers_of_what_changed(
    engine: Engine, tmp_path: Path
) -> None:
    toml = write_units(tmp_path / "units")
    selected, _full = score_selected_and_full(toml, tmp_path, engine=engine)
    by_id = {m.id: m for m in selected.mutants}
    everything = len(selected.tests)
    narrowed = ["i01", "i02", "i03", "i04", "i05", "i06"]
    for mid in narrowed:
        mutant = by_id[mid]
        assert mutant.selection_reason.startswith("import-time change"), mid
        assert mutant.status == "killed", mid
        assert mutant.covered_by is not None and len(mutant.covered_by) < everything, mid
    assert "MASS" in by_id["i02"].selection_reason
    assert "ALIASES" in by_id["i03"].selection_reason
    # A rounding changed in the class reaches the instance made at import; the test that
    # only reads DEFAULT runs (and kills), the length tests do not.
    assert "tests/test_converter.py::test_default_converter_rounds_to_hundredths" in (
        by_id["i05"].killed_by
    )
    assert not any("test_length.py" in t for t in by_id["i05"].covered_by or [])
    # Run everything: a module imported while a test runs, __all__, a differing collection.
    assert "imported while a test runs" in by_id["i07"].selection_reason
    assert by_id["i07"].covered_by is None and by_id["i07"].status == "killed"
    for mid in ("i08", "i09"):
        assert by_id[mid].covered_by is None, mid
    assert by_id["f01"].selection_reason == "coverage"
    assert selected.test_selection == "mixed"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 4])
def test_random_import_time_mutants_keep_the_full_matrix(seed: int, tmp_path: Path) -> None:
    """Random changes to the numbers and strings of the tables and module-level code."""
    rng = random.Random(seed)
    candidates: list[tuple[str, str, str, str]] = []
    for rel, text in SOURCE.items():
        for line in text.splitlines():
            if line.startswith((" ", "#", "def ", '"""', "class ")) or not line.strip():
                continue
            for token in sorted(set(line.replace(",", " ").replace("}", " ").split())):
                if text.count(token) != 1:
                    continue
                if token.replace(".", "").isdigit():
                    candidates.append((rel, rel, token, str(float(token) + 1)))
                elif token.startswith('"') and token.endswith('"') and len(token) > 2:
                    candidates.append((rel, rel, token, token[:-1] + 'x"'))
    chosen = rng.sample(candidates, 8)
    mutants = [(f"r{i:02d}", rel, old, new) for i, (_, rel, old, new) in enumerate(chosen)]
    toml = write_units(tmp_path / "units", mutants)
    selected, _full = score_selected_and_full(toml, tmp_path, engine=Engine.BATCHED)
    assert any(m.selection_reason.startswith("import-time change") for m in selected.mutants)


# A package that finds a helper module by name and reads its functions by constant names, as
# python-slugify finds its transliteration backend (``getattr(module, "anyascii" if ... else
# "unidecode")``), beside a reader by a computed name.
NAMED_SOURCE = {
    "textkit/__init__.py": '''\
"""textkit: slugs and titles."""
from importlib import import_module

SEPARATOR = "-"
BACKEND = "string"


def slug(text):
    return SEPARATOR.join(word.lower() for word in text.split())


def titled(text):
    module = import_module(BACKEND)
    return getattr(module, "capwords")(text)


def field(record, name):
    return getattr(record, name)
''',
}
NAMED_TESTS = {
    "test_textkit.py": """\
import types

from textkit import field, slug, titled


def test_slug_joins_lowercase_words():
    assert slug("Hello  World") == "hello-world"


def test_titled_capitalises_each_word():
    assert titled("hello world") == "Hello World"


def test_field_reads_an_attribute():
    assert field(types.SimpleNamespace(size=3), "size") == 3
""",
}


def _mutants_scored(
    tmp_path: Path,
    name: str,
    source: dict[str, str],
    tests: dict[str, str],
    spec: str,
    mutants: list[tuple[str, str, str, str]],
    engine: Engine,
) -> dict[str, Any]:
    """The package's mutants scored with selection and with every test (the two matrices
    asserted equal): the selected run's mutants by id."""
    toml = write_python_instance(
        tmp_path / name, name=name, source=source, tests=tests, spec=spec, mutants=mutants
    )
    selected, _full = score_selected_and_full(toml, tmp_path, engine=engine)
    return {m.id: m for m in selected.mutants}


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_reads_by_constant_names_are_reads_of_those_names(engine: Engine, tmp_path: Path) -> None:
    """``import_module(BACKEND)`` and ``getattr(module, "capwords")`` read
    nothing by a computed name: a changed SEPARATOR does not run the titling test (it ran every
    import-time mutant's whole suite on slugify), a changed BACKEND does and is killed by it;
    ``getattr(record, name)`` still reads by a computed name and runs on every such mutant."""
    mutants = [
        ("n01", "textkit/__init__.py", 'SEPARATOR = "-"', 'SEPARATOR = "_"'),
        ("n02", "textkit/__init__.py", 'BACKEND = "string"', 'BACKEND = "XXstringXX"'),
    ]
    by_id = _mutants_scored(
        tmp_path,
        "textkit",
        NAMED_SOURCE,
        NAMED_TESTS,
        "# textkit\n\n## Slugs\nWords joined by a dash.\n",
        mutants,
        engine,
    )
    slug_t = "tests/test_textkit.py::test_slug_joins_lowercase_words"
    title_t = "tests/test_textkit.py::test_titled_capitalises_each_word"
    field_t = "tests/test_textkit.py::test_field_reads_an_attribute"
    assert "SEPARATOR" in by_id["n01"].selection_reason
    assert set(by_id["n01"].covered_by or ()) == {slug_t, field_t}
    assert by_id["n01"].killed_by == [slug_t]
    assert "BACKEND" in by_id["n02"].selection_reason
    assert set(by_id["n02"].covered_by or ()) == {title_t, field_t}
    assert by_id["n02"].killed_by == [title_t]


def test_which_getattr_calls_read_by_a_computed_name(tmp_path: Path) -> None:
    """A constant attribute name, or a choice between constants, is a read of those names
    (in a function or at module level); a name from a variable, an alias of ``getattr`` or a
    call through ``builtins`` is a read by a computed name."""
    source = (
        "import builtins\n"
        "LABEL = getattr(str, 'upper')\n\n\n"
        "def backend(module, name):\n"
        "    return getattr(module, 'anyascii' if name == 'anyascii' else 'unidecode')\n\n\n"
        "def ready(obj):\n    return hasattr(obj, 'READY')\n\n\n"
        "def computed(obj, name):\n    return getattr(obj, name)\n\n\n"
        "def aliased(obj):\n    get = getattr\n    return get(obj, 'X')\n\n\n"
        "def through(obj):\n    return builtins.getattr(obj, 'X')\n"
    )
    path = tmp_path / "named.py"
    path.write_text(source)
    module = compile(source, str(path), "exec")
    functions = {c.co_name: c for c in module.co_consts if isinstance(c, types.CodeType)}

    def reads(code: types.CodeType) -> set[str]:
        return code_names(code) & (DYNAMIC_NAMES | {"anyascii", "unidecode", "READY", "upper"})

    assert reads(functions["backend"]) == {"anyascii", "unidecode"}
    assert reads(functions["ready"]) == {"READY"}
    assert "upper" in code_names(module, functions=False)
    assert not code_names(module, functions=False) & DYNAMIC_NAMES
    for name in ("computed", "aliased", "through"):
        assert "getattr" in code_names(functions[name]), name


def test_a_loop_over_literal_names_reads_those_names(tmp_path: Path) -> None:
    """``for option in ("verbose", "quiet"): getattr(args, option)`` (python-slugify's command
    line copies its options so) reads those two names, in a loop or a comprehension; rebinding
    the variable in the loop, a loop over anything but a literal, the loop's ``else``, and a
    function defined in the loop (it may run after the loop moved on) read by computed names."""
    source = (
        "def copied(args):\n"
        "    out = {}\n"
        "    for option in ('verbose', 'quiet'):\n"
        "        if hasattr(args, option):\n"
        "            out[option] = getattr(args, option)\n"
        "    return out\n\n\n"
        "def shown(args):\n"
        "    return [o for o in ('verbose', 'quiet') if getattr(args, o)]\n\n\n"
        "def rebound(args):\n"
        "    for option in ('verbose', 'quiet'):\n"
        "        option = option.upper()\n"
        "        getattr(args, option)\n\n\n"
        "def over_a_variable(args, names):\n"
        "    for option in names:\n"
        "        getattr(args, option)\n\n\n"
        "def in_else(args):\n"
        "    for option in ('verbose',):\n"
        "        pass\n"
        "    else:\n"
        "        return getattr(args, option)\n\n\n"
        "def later(args):\n"
        "    for option in ('verbose',):\n"
        "        def read():\n"
        "            return getattr(args, option)\n"
        "    option = input()\n"
        "    return read()\n"
    )
    path = tmp_path / "loops.py"
    path.write_text(source)
    module = compile(source, str(path), "exec")
    functions = {c.co_name: c for c in module.co_consts if isinstance(c, types.CodeType)}
    for name in ("copied", "shown"):
        names = code_names(functions[name])
        assert {"verbose", "quiet"} <= names and not names & DYNAMIC_NAMES, name
    for name in ("rebound", "over_a_variable", "in_else", "later"):
        assert "getattr" in code_names(functions[name]), name


# A command line's options copied by a loop over their names, and a unittest class one of whose
# tests runs documentation code through ``exec``: that test reads by computed names, its
# neighbours do not; a helper method and ``setUp`` are read as the tests that use them.
OPTKIT_SOURCE = {
    "optkit/__init__.py": '''\
"""optkit: a command line's options as keyword arguments."""
import argparse

UNITS = {"km": 1000, "m": 1}
DEFAULT_UNIT = "m"


def parse(argv):
    parser = argparse.ArgumentParser(prog="optkit")
    parser.add_argument("--unit", default=DEFAULT_UNIT)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("value", type=float)
    return parser.parse_args(argv)


def params(args):
    out = {"value": args.value * UNITS[args.unit]}
    for option in ("verbose", "quiet"):
        if getattr(args, option):
            out[option] = True
    return out


def describe(args, unit):
    shown = [option for option in ("verbose", "quiet") if getattr(args, option)]
    return unit + ": " + ", ".join(shown)
''',
}
OPTKIT_TESTS = {
    "test_optkit.py": """\
import types
import unittest

from optkit import DEFAULT_UNIT, UNITS, describe, params, parse


class OptionTests(unittest.TestCase):
    def setUp(self):
        self.unit = DEFAULT_UNIT

    def _scale(self, unit):
        return UNITS[unit]

    def test_default_is_metres(self):
        self.assertEqual(params(parse(["3"])), {"value": 3.0})

    def test_flags_are_copied(self):
        self.assertEqual(params(parse(["--verbose", "1"])), {"value": 1.0, "verbose": True})

    def test_kilometres(self):
        self.assertEqual(params(parse(["--unit", "km", "2"]))["value"], 2000)

    def test_units_table(self):
        self.assertEqual(self._scale("km"), 1000)

    def test_describe(self):
        args = types.SimpleNamespace(verbose=True, quiet=False)
        self.assertEqual(describe(args, self.unit), "m: verbose")

    def test_documented_example(self):
        namespace = {}
        exec("from optkit import parse\\nargs = parse(['5'])", namespace)
        self.assertEqual(namespace["args"].value, 5.0)
""",
}


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_test_class_reads_what_its_tests_use(engine: Engine, tmp_path: Path) -> None:
    """A changed UNITS runs the tests whose code or covered functions name it -- the helper
    ``_scale`` counts for the test calling it -- and the ``exec`` test, not ``test_describe``
    (it ran on every import-time mutant while the class held one ``exec`` and ``describe`` a
    loop of ``getattr``); a changed DEFAULT_UNIT also runs ``test_describe``, through
    ``setUp``, and it kills."""
    mutants = [
        ("u01", "optkit/__init__.py", '"km": 1000', '"km": 100'),
        ("u02", "optkit/__init__.py", 'DEFAULT_UNIT = "m"', 'DEFAULT_UNIT = "km"'),
    ]
    by_id = _mutants_scored(
        tmp_path,
        "optkit",
        OPTKIT_SOURCE,
        OPTKIT_TESTS,
        "# optkit\n\n## Options\nA value in metres; --unit km scales it.\n",
        mutants,
        engine,
    )
    test = "tests/test_optkit.py::OptionTests::".__add__
    assert "UNITS" in by_id["u01"].selection_reason
    assert set(by_id["u01"].covered_by or ()) == {
        test(t)
        for t in ("test_default_is_metres", "test_flags_are_copied", "test_kilometres",
                  "test_units_table", "test_documented_example")
    }  # fmt: skip
    assert by_id["u01"].killed_by == [test("test_kilometres"), test("test_units_table")]
    assert "DEFAULT_UNIT" in by_id["u02"].selection_reason
    assert len(by_id["u02"].covered_by or ()) == 6
    assert by_id["u02"].killed_by == [
        test("test_default_is_metres"), test("test_describe"), test("test_flags_are_copied")
    ]  # fmt: skip


# -- the fingerprint itself ---------------------------------------------------------------------


def _import_fresh(root: Path, name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    sys.path.insert(0, str(root))
    try:
        importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


@contextlib.contextmanager
def _live(tmp_path: Path, tag: str, files: dict[str, str]) -> Iterator[tuple[Path, ModuleType]]:
    """A package written under ``tmp_path/tag`` and imported fresh; yields (root, package),
    and forgets its modules afterwards."""
    root = tmp_path / tag
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    name = next(iter(files)).split("/")[0]
    _import_fresh(root, name)
    try:
        yield root, sys.modules[name]
    finally:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def _fingerprint_of(tmp_path: Path, tag: str, files: dict[str, str]) -> dict[str, str]:
    with _live(tmp_path, tag, files) as (root, _):
        return fingerprint(str(root))


def test_fingerprint_sees_values_classes_through_instances_and_aliasing(tmp_path: Path) -> None:
    base = (
        "class Box:\n    SIZE = 2\n\n\nBOX = Box()\n"
        "A = [1, 2]\nC = [1, 2]\nB = A\n\n\ndef area(x):\n    return x * Box.SIZE\n"
    )
    ref = _fingerprint_of(tmp_path, "ref", {"fp_pkg/__init__.py": base})
    same = _fingerprint_of(tmp_path, "same", {"fp_pkg/__init__.py": "\n" + base})
    assert changed_globals(ref, same) == set(), "a shifted line changes no global"
    size = _fingerprint_of(tmp_path, "size", {"fp_pkg/__init__.py": base.replace("= 2", "= 3")})
    assert changed_globals(ref, size) == {"fp_pkg:Box", "fp_pkg:BOX"}
    alias = _fingerprint_of(
        tmp_path, "alias", {"fp_pkg/__init__.py": base.replace("B = A", "B = C")}
    )
    assert "fp_pkg:B" in changed_globals(ref, alias)  # equal values, other sharing
    body = _fingerprint_of(tmp_path, "body", {"fp_pkg/__init__.py": base.replace("x *", "x +")})
    assert changed_globals(ref, body) == {"fp_pkg:area"}


def test_a_fingerprint_taken_again_is_the_same_and_sees_what_changed(tmp_path: Path) -> None:
    """The coverage run fingerprints the program after every test, reusing the digests of
    what cannot change (strings, code, tuples of those): a second fingerprint equals the
    first and one taken with nothing kept, and it still sees a cache filled in place."""
    from suitebench.suite.inside.probe import fingerprint as fp

    source = (
        'RULES = [("(quiz)$", "\\1zes"), ("s$", "s")]\nSHARED = [1]\nALIAS = SHARED\n'
        "CACHE = {}\n\n\ndef parse(text):\n    return CACHE.setdefault(text, text.split())\n"
    )
    with _live(tmp_path, "warm", {"fp_warm/__init__.py": source}) as (root, module):
        cold = fingerprint(str(root))
        warm = fingerprint(str(root))
        fp._PURE.clear()
        assert fingerprint(str(root)) == warm == cold
        module.parse("a b")
        assert changed_globals(cold, fingerprint(str(root))) == {"fp_warm:CACHE"}


def test_what_a_test_leaves_changed_is_seen_between_tests(tmp_path: Path) -> None:
    """``state_of`` (after every test of the coverage run) sees a cache filled, a mutable
    default appended to and a function rebound, and nothing where nothing changed."""
    from suitebench.suite.inside.probe.fingerprint import state_of

    source = (
        "CACHE = {}\nLIMIT = 3\n\n\ndef seen(x, into=[]):\n    into.append(x)\n"
        "    return len(into)\n\n\ndef double(x):\n    return 2 * x\n"
    )
    with _live(tmp_path, "state", {"fp_state/__init__.py": source}) as (root, module):
        before = state_of(str(root))
        module.double(2)
        assert state_of(str(root)) == before
        module.seen(1)
        module.CACHE["k"] = 1
        module.double = lambda x: x
        after = state_of(str(root))
        assert changed_globals(before, after) == {"fp_state:seen", "fp_state:CACHE",
                                                  "fp_state:double"}  # fmt: skip


def test_fingerprint_refuses_objects_with_hidden_state(tmp_path: Path) -> None:
    """A random generator's state lives in C: two seeds look alike from Python, so the
    fingerprint is unknown (every test runs) rather than wrong."""
    files = {"fp_rng/__init__.py": "import random\n\nRNG = random.Random(7)\n"}
    with pytest.raises(Unknown):
        _fingerprint_of(tmp_path, "rng", files)


def test_fingerprint_sees_into_an_empty_lru_cache(tmp_path: Path) -> None:
    """A ``functools.lru_cache``d function (python-slugify has one) is its wrapped function
    and its parameters while the cache is empty: a change to either is seen, a shifted line
    is not; once it holds results the fingerprint is unknown rather than blind to them."""
    base = (
        "import functools\n\n\n@functools.lru_cache(maxsize=64)\n"
        "def width(ch):\n    return 2 if ord(ch) > 0x1100 else 1\n"
    )
    ref = _fingerprint_of(tmp_path, "ref", {"fp_lru/__init__.py": base})
    same = _fingerprint_of(tmp_path, "same", {"fp_lru/__init__.py": "\n" + base})
    assert changed_globals(ref, same) == set()
    body = _fingerprint_of(tmp_path, "body", {"fp_lru/__init__.py": base.replace("2 if", "3 if")})
    assert changed_globals(ref, body) == {"fp_lru:width"}
    size = _fingerprint_of(tmp_path, "size", {"fp_lru/__init__.py": base.replace("64", "65")})
    assert changed_globals(ref, size) == {"fp_lru:width"}
    with _live(tmp_path, "filled", {"fp_lru/__init__.py": base}) as (root, module):
        module.width("a")
        with pytest.raises(Unknown):
            fingerprint(str(root))


def test_a_literal_alias_fills_typings_cache_not_the_programs(tmp_path: Path) -> None:
    """``Backend = Literal["auto", "text-unidecode"]`` (python-slugify's annotations) fills
    ``typing``'s own lru_cache on import; that memo is typing's state, so the program's
    globals still fingerprint, and a change to the literal's values is seen on the alias (the
    finding: every test ran on each of slugify's 123 import-time mutants)."""
    base = (
        "from typing import Literal, Union\n\n"
        "Backend = Literal['auto', 'text-unidecode']\nStage = Union[int, str]\nLIMIT = 3\n"
    )
    ref = _fingerprint_of(tmp_path, "ref", {"fp_lit/__init__.py": base})
    moved = _fingerprint_of(tmp_path, "moved", {"fp_lit/__init__.py": base.replace("3", "4")})
    assert changed_globals(ref, moved) == {"fp_lit:LIMIT"}
    other = base.replace("'auto'", "'XXautoXX'")
    values = _fingerprint_of(tmp_path, "values", {"fp_lit/__init__.py": other})
    assert changed_globals(ref, values) == {"fp_lit:Backend"}


def test_the_programs_modules_are_found_through_links(tmp_path: Path) -> None:
    """Which imported modules are the program's is decided on real paths, as before the
    per-directory memo: a module reached through a linked directory or a linked file whose
    target lies under the root is the program's; a file under the root linking out is not."""
    root, outside, via = tmp_path / "root", tmp_path / "outside", tmp_path / "via"
    (root / "linkpkg_a").mkdir(parents=True)
    (root / "linkpkg_a" / "__init__.py").write_text("A = 1\n")
    (root / "linkmod_real.py").write_text("B = 2\n")
    outside.mkdir()
    (outside / "linkmod_ext.py").write_text("C = 3\n")
    (root / "linkmod_alias.py").symlink_to(outside / "linkmod_ext.py")  # links out
    (outside / "linkmod_in.py").symlink_to(root / "linkmod_real.py")  # links in
    via.symlink_to(root, target_is_directory=True)
    names = ["linkpkg_a", "linkmod_alias", "linkmod_in"]
    sys.path[:0] = [str(via), str(outside)]
    try:
        for name in names:
            importlib.import_module(name)
        found = {name for name, _ in program_modules(str(root))}
        assert found & set(names) == {"linkpkg_a", "linkmod_in"}
    finally:
        sys.path.remove(str(via))
        sys.path.remove(str(outside))
        for name in names:
            sys.modules.pop(name, None)
