"""A cache filled by the first test that needs it, under a program state the fingerprint cannot
see into: the selected matrix is still the full one.

``calver`` parses calendar versions (``2024``, ``2024.05``, ``2024.05.17``) with patterns it
compiles once, under a lock, into a module-level table.  The first test to parse anything runs
the statements that build the table; every later test finds it built.  isodate 0.7.2 does the
same (``build_date_regexps``' cache) and its module-level ``timedelta`` made its state
unknown: statement-level selection then ran such a mutant only on the test that built the
table, and 39 mutants killed by a later test were reported survived.  Worked out:

* ``month_digits`` (the month pattern's ``\\d{2}`` -> ``\\d{3}``): ``test_year`` builds the
  table and passes (``2024`` matches the year pattern first); ``test_month`` fails
  (``2024.05`` matches nothing: ValueError); ``test_day`` passes (``2024.05.17`` is no
  ``\\d{3}`` month and matches the day pattern) -- killed by ``test_month`` alone;
* ``day_order`` (``int(g)`` -> ``-int(g)`` in ``parse``, which every test runs): killed by
  all three.

The lock (``threading.Lock``: its state lives in C) makes the fingerprint unknown; the same
program with a plain flag instead is known, and the state links tie the later tests in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import score_selected_and_full, write_python_instance

SOURCE = '''\
"""Calendar versions: YYYY, YYYY.MM, YYYY.MM.DD."""

import re
import threading

_LOCK = threading.Lock()
_PATTERNS = {}


def _patterns():
    with _LOCK:
        if not _PATTERNS:
            _PATTERNS["year"] = re.compile(r"^(\\d{4})$")
            _PATTERNS["month"] = re.compile(r"^(\\d{4})\\.(\\d{2})$")
            _PATTERNS["day"] = re.compile(r"^(\\d{4})\\.(\\d{2})\\.(\\d{2})$")
    return _PATTERNS


def parse(text):
    for kind, pattern in _patterns().items():
        found = pattern.match(text)
        if found:
            return kind, tuple(int(g) for g in found.groups())
    raise ValueError(f"not a calendar version: {text!r}")
'''

TESTS = """\
from calver import parse


def test_year():
    assert parse("2024") == ("year", (2024,))


def test_month():
    assert parse("2024.05") == ("month", (2024, 5))


def test_day():
    assert parse("2024.05.17") == ("day", (2024, 5, 17))
"""

MUTANTS = [
    ("month_digits", "calver/__init__.py", '(\\d{4})\\.(\\d{2})$")', '(\\d{4})\\.(\\d{3})$")'),
    ("day_order", "calver/__init__.py", "tuple(int(g)", "tuple(-int(g)"),
]


@pytest.mark.parametrize("lock", [True, False], ids=["state-unknown", "state-known"])
def test_a_table_built_by_the_first_test_selects_the_later_tests(lock: bool, tmp_path: Path):
    source = SOURCE
    if not lock:  # no lock: every global can be fingerprinted
        source = source.replace("import threading\n", "").replace("_LOCK = threading.Lock()\n", "")
        source = source.replace("    with _LOCK:\n        if", "    if True:\n        if")
    toml = write_python_instance(
        tmp_path / "calver",
        name="calver",
        source={"calver/__init__.py": source},
        tests={"test_calver.py": TESTS},
        spec="# calver\n\nCalendar versions.\n",
        mutants=MUTANTS,
    )
    selected, full = score_selected_and_full(toml, tmp_path)  # asserts the same matrix
    by_id = {m.id: m for m in selected.mutants}
    month = by_id["month_digits"]
    assert month.status == "killed"
    assert month.killed_by == ["tests/test_calver.py::test_month"]
    assert "tests/test_calver.py::test_month" in (month.covered_by or [])
    assert sorted(by_id["day_order"].killed_by) == [
        "tests/test_calver.py::test_day",
        "tests/test_calver.py::test_month",
        "tests/test_calver.py::test_year",
    ]
    assert {m.id: m.status for m in full.mutants} == {
        "month_digits": "killed",
        "day_order": "killed",
    }
