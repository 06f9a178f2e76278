"""Where a project's doctests come from, read without running it: the reference's docstring
examples as ``doctest.DocTestFinder`` finds them on the imported module (what pytest's
``--doctest-modules`` collects), so R's runs name and hold the same tests as a score's.

``shapes`` below, by hand: the module's docstring (``shapes``), ``area`` (redefined: the
second definition's example stands), the class ``Square`` and its method ``grow``, its
property ``side`` (the setter adds no test and does not replace the getter's docstring), a
static method ``unit``, an async function ``fetch``, a nested class ``Square.Corner``; ``_hidden``
has a docstring without an example (no test), and ``inner``, defined inside a function, is not
found by the finder (nor here).  Eight tests.
"""

from __future__ import annotations

import doctest
import importlib.util
import sys
from pathlib import Path

from suitebench.suite.execute.docstrings import docstring_examples

SHAPES = '''"""Shapes.

>>> 1 + 1
2
"""


def area(side):
    """>>> area(2)
    5
    """
    return side * side


def area(side):
    """>>> area(2)
    4
    """
    return side * side


async def fetch():
    """>>> 2 * 3
    6
    """


def _hidden():
    """No example here."""

    def inner():
        """>>> 0
        0
        """


class Square:
    """>>> Square(2).side
    2
    """

    def __init__(self, side):
        self._side = side

    @property
    def side(self):
        """>>> Square(3).side
        3
        """
        return self._side

    @side.setter
    def side(self, value):
        """>>> 'setter'
        'setter'
        """
        self._side = value

    @staticmethod
    def unit():
        """>>> Square.unit().side
        1
        """
        return Square(1)

    def grow(self):
        """>>> Square(1).grow().side
        2
        """
        return Square(self._side + 1)

    class Corner:
        """>>> Square.Corner is not None
        True
        """
'''

EXPECTED = {
    "shapes",
    "shapes.area",
    "shapes.fetch",
    "shapes.Square",
    "shapes.Square.side",
    "shapes.Square.unit",
    "shapes.Square.grow",
    "shapes.Square.Corner",
}


def test_the_examples_are_those_the_finder_finds(tmp_path: Path) -> None:
    package = tmp_path / "shapes"
    package.mkdir()
    (package / "__init__.py").write_text(SHAPES)
    found = docstring_examples(package)
    assert list(found) == ["shapes"]
    assert {e["name"] for e in found["shapes"]} == EXPECTED
    docs = {e["name"]: e["docstring"] for e in found["shapes"]}
    assert docs["shapes.area"].strip().splitlines()[1].strip() == "4"  # the second definition
    # the same names as the standard library's finder on the imported module
    spec = importlib.util.spec_from_file_location("shapes", package / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["shapes"] = module
    try:
        spec.loader.exec_module(module)
        tests = doctest.DocTestFinder().find(module, "shapes")
    finally:
        del sys.modules["shapes"]
    assert {t.name for t in tests if t.examples} == set(EXPECTED)
    assert {t.name: t.docstring for t in tests if t.examples} == docs
    # and the lines a failure report names (the docstring's, 0-based), where the finder
    # knows one (a property's it does not)
    lines = {e["name"]: e["lineno"] for e in found["shapes"]}
    finder = {t.name: t.lineno for t in tests if t.examples and t.lineno is not None}
    assert len(finder) == 7 and finder == {name: lines[name] for name in finder}


def test_text_files_of_doctests_are_found_where_pytest_walks(tmp_path: Path) -> None:
    """By hand, with ``--doctest-glob=*.rst``: with no ``testpaths`` pytest walks the root --
    ``README.rst``, ``docs/a.rst``, ``notes/n.rst`` -- but not ``docs/build/`` nor
    ``docs/.cache/`` (pytest's default ``norecursedirs``: ``build``, ``.*``), nor a virtual
    environment (``env/`` holds ``pyvenv.cfg``); with ``testpaths = tests docs``, only
    ``docs/a.rst``, run after the suite; with ``norecursedirs = docs``, the root's others."""
    from suitebench.suite.execute.projectconfig import carry_config

    for name in ("README.rst", "docs/a.rst", "docs/build/b.rst", "docs/.cache/c.rst"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(">>> 1\n1\n")
    for name in ("notes/n.rst", "env/lib/e.rst", "env/pyvenv.cfg", "tests/test_x.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(">>> 1\n1\n")
    entries = {p.name: p for p in tmp_path.iterdir() if p.name != "tests"}
    config = tmp_path / "pytest.ini"

    def found(ini: str) -> tuple[list[str], tuple[str, ...]]:
        config.write_text("[pytest]\naddopts = --doctest-glob=*.rst\n" + ini)
        carried = carry_config(config, None, tmp_path / "tests")
        return carried.doctest_text_paths(entries), carried.after_suite

    assert found("") == (["README.rst", "docs/a.rst", "notes/n.rst"], ())
    assert found("testpaths = tests docs\n") == (["docs/a.rst"], ("docs/",))
    assert found("testpaths = docs tests\n") == (["docs/a.rst"], ())
    assert found("norecursedirs = docs\n") == (["README.rst", "notes/n.rst"], ())
