"""A change inside a lambda's body, outside any function, runs the tests that call that lambda
(as a function's does); a change anywhere else on its line is code run on import.

``stamp`` formats dates through a table of lambdas, as ``strftime``'s directives (the shape of
isodate's ``STRF_DT_MAP``), sorts the table's keys on import with a ``key=lambda``, and keeps a
``join`` lambda with a default separator in a class body.  Worked out by hand:

* ``year`` (``d[0]`` -> ``d[1]`` in ``%Y``'s body): ``test_year`` alone calls that lambda and
  gets ``0003``: killed by it, and only it runs.
* ``day`` (``d[2]`` -> ``d[2] + 1`` in ``%d``'s body): ``test_month_day`` alone, ``03/06``.
* ``ordinal`` (the second line of ``%j``'s body, ``d[1] - 1`` -> ``d[1]``): ``test_ordinal``
  alone; 1 March 2023 is day 31 + 28 + 1 = 60, the mutant adds March's 31 days: ``091``.
* ``join_body`` (``sep.join(parts)`` -> ``sep.join(reversed(parts))``): ``test_join`` alone,
  ``b-a``.
* ``order`` (the sort key on import, ``k`` -> ``k.lower()``): the lambda runs while the module
  is imported, so the change is import-time: ``ORDER`` becomes ``%d %j %m %Y`` (``%Y`` sorts
  as ``%y``, after ``%m``); ``test_order`` expects ``%Y %d %j %m`` and fails.  No other test sees
  an order (each pattern holds its keys once).
* ``sep`` (the ``join`` lambda's default, ``"-"`` -> ``"+"``, on ``join_body``'s line):
  evaluated on import; ``test_join`` gets ``a+b``.
* ``key`` (the table's key ``"%m"`` -> ``"%M"``, on ``%m``'s lambda's line): import-time;
  ``test_month_day`` keeps ``%m`` (``%M/05``) and ``test_order`` sees ``%M`` first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine
from suitebench.suite.select.lambdas import changed_lambdas, lambda_holding

from ..conftest import score_selected_and_full, write_python_instance

STAMP = '''\
"""Date stamps through a table of formatters, as strftime's directives."""

MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

FIELDS = {
    "%Y": lambda d: "%04d" % d[0],
    "%m": lambda d: "%02d" % d[1],
    "%d": lambda d: "%02d" % d[2],
    "%j": lambda d: "%03d"
    % (sum(MONTH_DAYS[: d[1] - 1]) + d[2]),
}

ORDER = sorted(FIELDS, key=lambda k: (len(k), k))


def stamp(date, pattern):
    out = pattern
    for key in ORDER:
        if key in out:
            out = out.replace(key, FIELDS[key](date))
    return out


class Parts:
    join = staticmethod(lambda parts, sep="-": sep.join(parts))
'''
TESTS = {
    "test_stamp.py": (
        "from stamp import ORDER, Parts, stamp\n\n\n"
        "def test_year():\n    assert stamp((2024, 3, 5), 'Y=%Y') == 'Y=2024'\n\n\n"
        "def test_month_day():\n    assert stamp((2024, 3, 5), '%m/%d') == '03/05'\n\n\n"
        "def test_ordinal():\n    assert stamp((2023, 3, 1), '%j') == '060'\n\n\n"
        "def test_join():\n    assert Parts.join(['a', 'b']) == 'a-b'\n\n\n"
        "def test_order():\n    assert ORDER == ['%Y', '%d', '%j', '%m']\n"
    )
}
T = "tests/test_stamp.py::test_"
F = "stamp/__init__.py"
MUTANTS = [
    ("year", F, '"%04d" % d[0]', '"%04d" % d[1]'),
    ("day", F, '"%02d" % d[2]', '"%02d" % (d[2] + 1)'),
    ("ordinal", F, "d[1] - 1]", "d[1]]"),
    ("join_body", F, "sep.join(parts)", "sep.join(reversed(parts))"),
    ("order", F, "(len(k), k)", "(len(k), k.lower())"),
    ("sep", F, 'sep="-"', 'sep="+"'),
    ("key", F, '"%m": lambda', '"%M": lambda'),
]


def _instance(tmp_path: Path) -> Path:
    return write_python_instance(
        tmp_path / "stamp",
        name="stamp",
        source={F: STAMP},
        tests=TESTS,
        spec="# stamp\n\n## Stamps\nFormat dates.\n",
        mutants=MUTANTS,
    )


def _changed(old: str, new: str) -> list[tuple[int, int]] | None:
    return changed_lambdas(STAMP.encode(), STAMP.replace(old, new).encode())


def test_a_lambda_body_is_told_apart_from_its_line() -> None:
    # lines: %Y's lambda is on 6, %j's spans 9-10, the sort key 13, join 25
    assert _changed('"%04d" % d[0]', '"%04d" % d[1]') == [(6, 6)]
    assert _changed("d[1] - 1]", "d[1]]") == [(9, 10)]
    assert lambda_holding([(9, 10)], 10) == 9  # the key is the lambda's first line
    assert _changed("(len(k), k)", "(len(k), k.lower())") == [(13, 13)]
    assert _changed("sep.join(parts)", "sep.join(reversed(parts))") == [(25, 25)]
    assert _changed('sep="-"', 'sep="+"') is None  # a default: evaluated on import
    assert _changed('"%m": lambda', '"%M": lambda') is None  # the table's key
    assert _changed("[31, 28,", "[31, 29,") is None  # a constant
    assert _changed("out = pattern", "out = pattern.upper()") == []  # a function's body
    assert _changed('"%04d" % d[0],', '"%04d" % d[0') is None  # does not parse


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_changed_lambda_runs_only_the_tests_that_call_it(engine: Engine, tmp_path: Path) -> None:
    selected, _full = score_selected_and_full(_instance(tmp_path), tmp_path, engine=engine)
    by_id = {m.id: m for m in selected.mutants}
    expected = {
        "year": ["year"],
        "day": ["month_day"],
        "ordinal": ["ordinal"],
        "join_body": ["join"],
        "order": ["order"],
        "sep": ["join"],
        "key": ["month_day", "order"],
    }
    for mid, killers in expected.items():
        assert set(by_id[mid].killed_by) == {T + k for k in killers}, mid
    for mid in ("year", "day", "ordinal", "join_body"):
        assert by_id[mid].selection_reason == "coverage", mid
        assert set(by_id[mid].covered_by or ()) == {T + k for k in expected[mid]}, mid
    for mid in ("order", "sep", "key"):
        assert by_id[mid].selection_reason != "coverage", mid
    # the sort's lambda ran on import: the globals it built decide (ORDER, not FIELDS)
    assert by_id["order"].selection_reason == "import-time change; globals changed: ORDER"
