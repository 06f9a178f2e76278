"""A mutant that changes a value the suite parametrizes with: its tests get other names, and
are still the reference's tests.

``datefmt`` formats dates in the ISO 8601 forms it exports as constants (``BASIC``,
``EXTENDED``), padding years below 1000 to four digits (``strftime`` does not).  Its suite
parametrizes ``test_format`` with those constants, and pytest names each case by its values
(``test_format[day0-%Y%m%d-20240517]``).  isodate 0.7.2 does the same with its
``DATE_BAS_COMPLETE``: a mutant of such a constant (``"%Y%m%d"`` -> ``"XX%Y%m%dXX"``) collected
its cases under other names, every one of them failed as pytest ran them, and the reference's
names were left without an outcome: the mutant was reported survived (24 such mutants on
isodate, in every engine alike), where a plain ``pytest`` run of the mutant fails.

A case is the same test when it is the same function with the same parameter indices; worked
out by hand, with ids as pytest makes them (a ``date`` is its argument's name and index, a
string itself):

* ``basic_marked`` (``BASIC = "XX%Y%m%dXX"``): cases 0 and 2 format with it and give
  ``XX20240517XX`` and ``XX09870601XX``: killed by ``test_format[day0-%Y%m%d-20240517]`` and
  ``test_format[day2-%Y%m%d-09870601]``, the reference's names of those cases;
* ``extended_swapped`` (``EXTENDED = "%Y-%d-%m"``): case 1 gives ``2024-17-05`` and the
  default format (``test_default``) too: killed by ``test_format[day1-%Y-%m-%d-2024-05-17]`` and
  ``test_default``;
* ``pad_three`` (``:04d`` -> ``:03d``, a body: no name changes): year 987 gives ``987``:
  killed by ``test_format[day2-%Y%m%d-09870601]`` alone;
* ``basic_same`` (``BASIC = "%Y" "%m%d"``: the same string in two pieces, which compiles to
  the same code): equivalent, out of M (3 of 3).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine
from suitebench.suite.implementation import score_implementation

from ..conftest import (
    SELECTION_LIMITS,
    score_in_store,
    score_selected_and_full,
    write_python_instance,
)

SOURCE = '''\
"""ISO 8601 calendar dates in their basic and extended forms."""

BASIC = "%Y%m%d"
EXTENDED = "%Y-%m-%d"


def format_date(day, fmt=EXTENDED):
    """``day`` in ``fmt``, the year always four digits (strftime leaves 987 as it is)."""
    text = day.strftime(fmt.replace("%Y", "{year}"))
    return text.format(year=f"{day.year:04d}")
'''

TESTS = """\
from datetime import date

import pytest

from datefmt import BASIC, EXTENDED, format_date


@pytest.mark.parametrize(
    "day, fmt, expected",
    [
        (date(2024, 5, 17), BASIC, "20240517"),
        (date(2024, 5, 17), EXTENDED, "2024-05-17"),
        (date(987, 6, 1), BASIC, "09870601"),
    ],
)
def test_format(day, fmt, expected):
    assert format_date(day, fmt) == expected


def test_default():
    assert format_date(date(1999, 12, 31)) == "1999-12-31"
"""

MUTANTS = [
    ("basic_marked", "datefmt/__init__.py", 'BASIC = "%Y%m%d"', 'BASIC = "XX%Y%m%dXX"'),
    ("extended_swapped", "datefmt/__init__.py", 'EXTENDED = "%Y-%m-%d"', 'EXTENDED = "%Y-%d-%m"'),
    ("pad_three", "datefmt/__init__.py", ":04d}", ":03d}"),
    ("basic_same", "datefmt/__init__.py", 'BASIC = "%Y%m%d"', 'BASIC = "%Y" "%m%d"'),
]

CASE = "tests/test_datefmt.py::test_format"


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_renamed_case_is_the_reference_case(engine: Engine, tmp_path: Path):
    toml = write_python_instance(
        tmp_path / "datefmt",
        name="datefmt",
        source={"datefmt/__init__.py": SOURCE},
        tests={"test_datefmt.py": TESTS},
        spec="# datefmt\n\nISO 8601 dates.\n",
        mutants=MUTANTS,
    )
    selected, _ = score_selected_and_full(toml, tmp_path, engine=engine)
    assert sorted(t.id for t in selected.tests) == [
        "tests/test_datefmt.py::test_default",
        f"{CASE}[day0-%Y%m%d-20240517]",
        f"{CASE}[day1-%Y-%m-%d-2024-05-17]",
        f"{CASE}[day2-%Y%m%d-09870601]",
    ]
    by_id = {m.id: m for m in selected.mutants}
    assert {m: by_id[m].status for m in by_id} == {
        "basic_marked": "killed",
        "extended_swapped": "killed",
        "pad_three": "killed",
        "basic_same": "equivalent",
    }
    assert sorted(by_id["basic_marked"].killed_by) == [
        f"{CASE}[day0-%Y%m%d-20240517]",
        f"{CASE}[day2-%Y%m%d-09870601]",
    ]
    assert sorted(by_id["extended_swapped"].killed_by) == [
        "tests/test_datefmt.py::test_default",
        f"{CASE}[day1-%Y-%m-%d-2024-05-17]",
    ]
    assert by_id["pad_three"].killed_by == [f"{CASE}[day2-%Y%m%d-09870601]"]
    assert selected.mutation_score == 1.0
    # --fast, stopping at the first kill: the same verdicts
    (tmp_path / "fast").mkdir()
    fast = score_in_store(
        toml, tmp_path / "fast", fast=True, engine=engine, limits=SELECTION_LIMITS
    )
    assert {m.id: m.status for m in fast.mutants} == {m: by_id[m].status for m in by_id}


# R: a generated implementation whose dishes are spelt otherwise is run as a mutant is, its
# cases by the reference's names.  Worked out: the candidate serves ``Soup`` and ``Salad``
# (priced), so each case passes at its place and ``test_price`` too: R = 3/3.  Before, the
# reference's ``[soup]`` and ``[salad]`` had no outcome and counted as failing: R = 1/3.
MENU = """\
DISHES = {dishes}
PRICES = {prices}


def price(dish):
    return PRICES[dish]
"""

MENU_TESTS = """\
import pytest

from menu import DISHES, price


@pytest.mark.parametrize("dish", DISHES)
def test_served(dish):
    assert price(dish) > 0


def test_price():
    assert price(DISHES[0]) == 4
"""


def test_an_implementation_is_scored_by_the_reference_names(tmp_path: Path):
    reference = MENU.format(dishes=["soup", "salad"], prices={"soup": 4, "salad": 5})
    toml = write_python_instance(
        tmp_path / "menu",
        name="menu",
        source={"menu/__init__.py": reference},
        tests={"test_menu.py": MENU_TESTS},
        spec="# menu\n\nDishes and prices.\n",
        mutants=[],
    )
    candidate = tmp_path / "candidate"
    (candidate / "menu").mkdir(parents=True)
    (candidate / "menu" / "__init__.py").write_text(
        MENU.format(dishes=["Soup", "Salad"], prices={"Soup": 4, "Salad": 5})
    )
    store = Store(tmp_path / "store.sqlite")
    try:
        result = score_implementation(load_instance(toml), candidate, store=store)
    finally:
        store.close()
    assert result.total == 3
    assert result.failing == {}
    assert result.reference_pass_rate == 1.0
