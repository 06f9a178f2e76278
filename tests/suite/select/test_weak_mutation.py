"""Weak mutation: an operator mutant runs only the tests that evaluate its node with a result
its operator would change; the others keep their reference outcome, and the selected matrix
equals the full one.

``pager`` counts pages the way a listing does: ``full + (rest > 0)``.  Worked out by hand:

* ``more_or_equal`` (``rest > 0`` -> ``rest >= 0``) changes the result only when ``rest == 0``:
  20 items of 10 (2 pages -> 3) and 0 items (0 -> 1), not 25 items (5 left either way);
* ``minus`` (``full + ...`` -> ``full - ...``) changes it only when a partial page is added:
  25 items (3 -> 1, in the test and in the CLI's process), not 20 or 0 (``+ False``);
* ``start_plus`` (``(page - 1)`` -> ``(page + 1)``) changes every slice it computes;
* ``more_than_one`` (``rest > 0`` -> ``rest > 1``, a constant operand) changes it only when one
  item is left over, which no test has (0, 5 and 0 left): it runs no test;
* ``long_label`` (``style == "long"`` -> ``style == "XXlongXX"``, a string operand) changes
  the comparison only for the style "long": ``test_long`` runs, ``test_short`` does not.
"""

from __future__ import annotations

import ast
import operator
from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine
from suitebench.suite.inside.probe.infection import INFECTED, install, make_probe
from suitebench.suite.select.infection import _probe_of, _unchanged_lines, probes_for

from ..conftest import score_selected_and_full, write_python_instance

PAGER = '''\
"""How many pages a listing takes, and which items a page shows."""


def pages(items, per_page):
    full, rest = divmod(items, per_page)
    return full + (rest > 0)


def page_slice(page, per_page):
    start = (page - 1) * per_page
    return start, start + per_page


def label(count, style="short"):
    if style == "long":
        return f"{count} pages"
    return f"{count}p"
'''
MAIN = "import sys\n\nfrom pager import pages\n\nprint(pages(*map(int, sys.argv[1:3])))\n"
TESTS = {
    "test_pages.py": (
        "import subprocess, sys\n\nfrom pager import pages\n\n\n"
        "def test_exact():\n    assert pages(20, 10) == 2\n\n\n"
        "def test_partial():\n    assert pages(25, 10) == 3\n\n\n"
        "def test_empty():\n    assert pages(0, 10) == 0\n\n\n"
        "def test_cli():\n"
        "    out = subprocess.run([sys.executable, '-m', 'pager', '25', '10'],\n"
        "                         capture_output=True, text=True, check=True).stdout\n"
        "    assert out == '3\\n'\n"
    ),
    # A fixture shared by two tests: statements a test runs after it was set up are that
    # test's, not the fixture's (so not every user of the fixture runs on their mutants).
    "test_slices.py": (
        "import pytest\n\nfrom pager import page_slice\n\n\n"
        "@pytest.fixture(scope='module')\ndef per_page():\n    return 10\n\n\n"
        "def test_first_page(per_page):\n    assert page_slice(1, per_page) == (0, 10)\n\n\n"
        "def test_per_page(per_page):\n    assert per_page == 10\n"
    ),
    "test_labels.py": (
        "from pager import label\n\n\n"
        "def test_short():\n    assert label(3) == '3p'\n\n\n"
        "def test_long():\n    assert label(3, style='long') == '3 pages'\n"
    ),
}
T = "tests/test_pages.py::test_"
S = "tests/test_slices.py::test_"
L = "tests/test_labels.py::test_"
MUTANTS = [
    ("more_or_equal", "pager/__init__.py", "(rest > 0)", "(rest >= 0)"),
    ("minus", "pager/__init__.py", "full + (rest", "full - (rest"),
    ("start_plus", "pager/__init__.py", "(page - 1)", "(page + 1)"),
    ("end_longer", "pager/__init__.py", "start + per_page", "start + per_page + 1"),
    ("more_than_one", "pager/__init__.py", "(rest > 0)", "(rest > 1)"),
    ("long_label", "pager/__init__.py", 'style == "long"', 'style == "XXlongXX"'),
]


def _instance(tmp_path: Path) -> Path:
    return write_python_instance(
        tmp_path / "pager",
        name="pager",
        source={"pager/__init__.py": PAGER, "pager/__main__.py": MAIN},
        tests=TESTS,
        spec="# pager\n\n## Pages\nCount them.\n",
        mutants=MUTANTS,
    )


def _change(before: str, after: str) -> tuple[object, ...] | None:
    return _probe_of(0, "m.py", ast.parse(before), ast.parse(after))


def test_only_a_lone_operator_change_is_probed() -> None:
    assert _change("x = a + b\n", "x = a - b\n") == (0, "m.py", 1, 4, 1, 9, "BinOp", "Add", "Sub")
    assert _change("if a < b:\n    pass\n", "if a <= b:\n    pass\n") == (
        0, "m.py", 1, 3, 1, 8, "Compare", "Lt", "LtE",
    )  # fmt: skip
    assert _change("x = a < b < c\n", "x = a <= b < c\n") is None  # a chain: not one operator
    assert _change("x += 1\n", "x -= 1\n") is None  # an augmented assignment
    assert _change("x = a + b\ny = c\n", "x = a - b\ny = d\n") is None  # something else too
    assert _change("x = a + b + c\n", "x = a - b - c\n") is None  # two operators
    assert _change("x = 1\n", "x = 2\n") is None  # a constant, not an operand
    assert _change("x = a + 1\n", "x = a + 2\n") == (
        0, "m.py", 1, 4, 1, 9, "BinOp.right", "Add", 2,
    )  # fmt: skip
    assert _change("if 'a' in s:\n    pass\n", "if 'XXaXX' in s:\n    pass\n") == (
        0, "m.py", 1, 3, 1, 11, "Compare.left", "In", "XXaXX",
    )  # fmt: skip
    assert _change("x = k == None\n", "x = k == ''\n") == (
        0, "m.py", 1, 4, 1, 13, "Compare.right", "Eq", "",
    )  # fmt: skip
    assert _change("x = k is None\n", "x = k is ''\n") is None  # identity: the object decides
    assert _change("x = a < 1 < b\n", "x = a < 2 < b\n") is None  # a chain
    assert _change("x = f(1)\n", "x = f(2)\n") is None  # an argument
    assert _change("x = a + 1\n", "x = a - 2\n") is None  # an operator and a constant
    assert _change("x = a + 1e308\n", "x = a + 1e999\n") is None  # inf: not carried
    assert _change("x = s == b'a'\n", "x = s == b'b'\n") is None  # bytes: not carried
    assert _change("x = a and b\n", "x = a or b\n") is None  # a boolean operator
    # positions aside: a longer operator moves the rest of the line
    floor = (0, "m.py", 1, 4, 1, 9, "BinOp", "Div", "FloorDiv")
    assert _change("x = a / b\n", "x = a // b\n") == floor


_SHELF = (
    "import functools\n\n\n"
    "class Shelf:\n"
    "    def fits(self, width, room):\n"
    "        return width < room\n\n"
    "    @functools.lru_cache(maxsize=8)\n"
    "    def rows(self, items, per_row):\n"
    "        return (items + per_row - 1) // per_row\n"
)


def _lines_change(after: str) -> tuple[object, ...] | None:
    """``_change`` on ``_SHELF`` walking only the statements on lines that differ."""
    same = _unchanged_lines(_SHELF.encode(), after.encode())
    assert same is not None
    return _probe_of(0, "m.py", ast.parse(_SHELF), ast.parse(after), same=same)


def test_statements_on_unchanged_lines_are_not_walked_but_seen_whole() -> None:
    # one operator in one method of a class: found as by the whole walk
    fits = _SHELF.replace("width < room", "width <= room")
    assert _lines_change(fits) == _change(_SHELF, fits) == (
        0, "m.py", 6, 15, 6, 27, "Compare", "Lt", "LtE",
    )  # fmt: skip
    # a decorator stands before its function's first line: changed with an operator in
    # another method, the change is two places, not one
    both = _SHELF.replace("maxsize=8", "maxsize=9").replace("width < room", "width <= room")
    assert _change(_SHELF, both) is None
    assert _lines_change(both) is None
    # texts of different lengths: the whole walk
    assert _unchanged_lines(b"x = 1\n", b"x = 1\ny = 2\n") is None


@pytest.mark.parametrize(
    ("before", "after", "left", "right", "infected"),
    [
        ("Lt", "LtE", 1, 2, False),  # 1 < 2 and 1 <= 2
        ("Lt", "LtE", 2, 2, True),
        ("Add", "Sub", 7, 0, False),
        ("Add", "Sub", 7, 1, True),
        ("Add", "Sub", -0.0, 0.0, True),  # 0.0 and -0.0: equal, not the same
        ("Mult", "Div", 3, 1, True),  # 3 and 3.0: not of one type
        ("Eq", "NotEq", "a", "a", True),
        ("In", "NotIn", "a", "abc", True),
        ("Add", "Sub", [1], [1], True),  # a list: the mutant's operator is not tried
        ("FloorDiv", "Div", 6, 3, True),  # 2 and 2.0
        ("RShift", "LShift", 1, 10**6, True),  # costly: not computed
        ("Mod", "Div", "%s", 1, True),  # a string formatted: not computed
        ("Sub", "Add", 5, 0, False),
    ],
)
def test_the_probe_notes_a_result_the_mutant_would_change(
    before: str, after: str, left: object, right: object, infected: bool
) -> None:
    noted: list[tuple[str, int]] = []
    probe = make_probe(lambda f, s: noted.append((f, s)))
    ops = {"Lt": operator.lt, "Add": operator.add, "Mult": operator.mul, "Eq": operator.eq,
           "In": lambda a, b: a in b, "FloorDiv": operator.floordiv,
           "RShift": operator.rshift, "Mod": operator.mod, "Sub": operator.sub}  # fmt: skip
    assert probe(((7, after, "", None),), before, left, right) == ops[before](left, right)
    assert noted == ([(INFECTED, 7)] if infected else [])


@pytest.mark.parametrize(
    ("op", "operand", "constant", "left", "right", "infected"),
    [
        ("Eq", "right", "XXautoXX", "legacy", "auto", False),  # False either way
        ("Eq", "right", "XXautoXX", "auto", "auto", True),
        ("Gt", "right", 1, 5, 0, False),  # 5 > 0 and 5 > 1
        ("Gt", "right", 1, 1, 0, True),
        ("In", "left", "XX-XX", "-", "a-b", True),
        ("In", "left", "XX-XX", "_", "a-b", False),
        ("Add", "right", 2, 1.5, 1, True),
        ("Add", "left", "XXaXX", "a", "b", True),
        ("Eq", "right", 0, [0], 1, True),  # a list on the other side: not tried
    ],
)
def test_the_probe_tries_the_mutant_constant_in_place_of_its_operand(
    op: str, operand: str, constant: object, left: object, right: object, infected: bool
) -> None:
    noted: list[int] = []
    probe = make_probe(lambda f, s: noted.append(s))
    ops = {"Eq": operator.eq, "Gt": operator.gt, "In": lambda a, b: a in b, "Add": operator.add}
    assert probe(((5, op, operand, constant),), op, left, right) == ops[op](left, right)
    assert noted == ([5] if infected else [])


def test_a_raising_operator_is_noted_and_raises_as_before() -> None:
    noted: list[int] = []
    probe = make_probe(lambda f, s: noted.append(s))
    with pytest.raises(ZeroDivisionError):
        probe(((3, "Mult", "", None), (4, "Div", "right", 2)), "Div", 1, 0)
    assert noted == [3, 4]


def test_probed_code_computes_what_the_reference_computes() -> None:
    tree = ast.parse(PAGER)
    probes = [
        [0, "pager/__init__.py", 6, 11, 6, 28, "BinOp", "Add", "Sub"],
        [1, "pager/__init__.py", 6, 19, 6, 27, "Compare", "Gt", "GtE"],
        [2, "pager/__init__.py", 10, 13, 10, 21, "BinOp", "Sub", "Add"],
        [3, "pager/__init__.py", 99, 0, 99, 5, "BinOp", "Sub", "Add"],  # no such node
        [4, "pager/__init__.py", 15, 7, 15, 22, "Compare.right", "Eq", "XXlongXX"],
    ]
    assert install(tree, probes) == {0, 1, 2, 4}
    noted: list[int] = []
    probed: dict[str, object] = {"__builtins__": {"__suitebench_probe__": make_probe(
        lambda f, s: noted.append(s)), "divmod": divmod}}  # fmt: skip
    plain: dict[str, object] = {}
    exec(compile(tree, "pager.py", "exec"), probed)
    exec(compile(PAGER, "pager.py", "exec"), plain)
    for items in range(0, 31):
        assert probed["pages"](items, 10) == plain["pages"](items, 10)  # type: ignore[operator]
    assert probed["page_slice"](3, 10) == (20, 30)  # type: ignore[operator]
    assert set(noted) == {0, 1, 2}
    assert probed["label"](2) == "2p" and set(noted) == {0, 1, 2}  # type: ignore[operator]
    assert probed["label"](2, "long") == "2 pages"  # type: ignore[operator]
    assert set(noted) == {0, 1, 2, 4}


def test_probes_are_found_for_the_operator_mutants_only(tmp_path: Path) -> None:
    from suitebench.model.instance import load_instance

    instance = load_instance(_instance(tmp_path))
    found = probes_for(instance.source, instance.mutants)
    assert sorted(found.sites) == [
        "long_label", "minus", "more_or_equal", "more_than_one", "start_plus",
    ]  # fmt: skip
    kinds = {p[0]: (p[6], p[7], p[8]) for p in found.probes}
    assert kinds[found.sites["more_or_equal"]] == ("Compare", "Gt", "GtE")
    assert kinds[found.sites["minus"]] == ("BinOp", "Add", "Sub")
    assert kinds[found.sites["more_than_one"]] == ("Compare.right", "Gt", 1)
    assert kinds[found.sites["long_label"]] == ("Compare.right", "Eq", "XXlongXX")


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_tests_that_never_infect_keep_their_reference_outcome(
    engine: Engine, tmp_path: Path
) -> None:
    selected, _full = score_selected_and_full(_instance(tmp_path), tmp_path, engine=engine)
    assert selected.coverage.unknown_tests == []
    by_id = {m.id: m for m in selected.mutants}
    assert set(by_id["more_or_equal"].covered_by or ()) == {T + "exact", T + "empty"}
    assert set(by_id["more_or_equal"].killed_by) == {T + "exact", T + "empty"}
    assert set(by_id["minus"].covered_by or ()) == {T + "partial", T + "cli"}
    assert set(by_id["minus"].killed_by) == {T + "partial", T + "cli"}
    assert set(by_id["start_plus"].covered_by or ()) == {S + "first_page"}
    # not an operator mutant: statement-level selection, the fixture's other user left out
    assert set(by_id["end_longer"].covered_by or ()) == {S + "first_page"}
    assert set(by_id["end_longer"].killed_by) == {S + "first_page"}
    # a constant operand: only the tests whose comparison the mutant's constant changes
    assert by_id["more_than_one"].covered_by == []
    assert str(by_id["more_than_one"].status) == "survived"
    assert set(by_id["long_label"].covered_by or ()) == {L + "long"}
    assert set(by_id["long_label"].killed_by) == {L + "long"}


def test_the_operators_never_probed_are_build_mutants_other_operators() -> None:
    from suitebench.construct.python_ops import PYTHON_OPERATORS
    from suitebench.suite.select.infection import _OTHER_OPERATORS

    probed = {"arithmetic", "comparison", "constant", "string"}
    assert set(PYTHON_OPERATORS) - probed == _OTHER_OPERATORS
