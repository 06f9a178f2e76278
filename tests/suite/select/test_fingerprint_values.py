"""The fingerprint sees into the standard library's immutable values written in C: a
``timedelta``, a date and time (its time zone a child: it may be the program's own), a
``Decimal``, a ``range``, a ``namedtuple`` class's fields -- and into instances of the
program's ``tzinfo`` classes, whose C base holds nothing.

isodate 0.7.2 keeps ``ZERO = timedelta(0)`` and ``UTC = Utc()`` at module level: its whole state
was "unknown" (the bundled ``intervals`` example's too, for a namedtuple), so none of its 210
import-time mutants could use import-time impact (each
collected the suite afresh) and no test's state was known to the selection.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.suite.inside.probe.fingerprint import Unknown
from suitebench.suite.inside.probe.impact import changed_globals

from .test_impact import _fingerprint_of

BASE = """\
import collections
import datetime
import decimal


class Utc(datetime.tzinfo):
    def utcoffset(self, dt):
        return ZERO

    def tzname(self, dt):
        return "UTC"

    def dst(self, dt):
        return ZERO


ZERO = datetime.timedelta(0)
WEEK = datetime.timedelta(days=7)
UTC = Utc()
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
NOON = datetime.time(12, 0)
START = datetime.date(2000, 1, 1)
PLUS_ONE = datetime.timezone(datetime.timedelta(hours=1), "CET")
CENT = decimal.Decimal("0.01")
DIGITS = range(0, 10)
Span = collections.namedtuple("Span", "lo hi")
"""

# (global changed, old, new): each change moves exactly that global's digest
CHANGES = [
    ("WEEK", "days=7", "days=6"),
    ("EPOCH", "1970, 1, 1", "1970, 1, 2"),
    ("NOON", "time(12, 0)", "time(12, 1)"),
    ("START", "date(2000, 1, 1)", "date(2000, 2, 1)"),
    ("PLUS_ONE", '"CET"', '"MET"'),
    ("CENT", '"0.01"', '"0.010"'),  # equal as numbers, another value as a Decimal
    ("DIGITS", "range(0, 10)", "range(0, 9)"),
    ("Span", '"lo hi"', '"hi lo"'),  # a namedtuple's fields (C descriptors) in another order
]


def test_stdlib_values_are_seen_into(tmp_path: Path) -> None:
    ref = _fingerprint_of(tmp_path, "ref", {"fp_when/__init__.py": BASE})
    assert "fp_when:ZERO" in ref and "fp_when:UTC" in ref
    moved = _fingerprint_of(tmp_path, "moved", {"fp_when/__init__.py": "\n\n" + BASE})
    assert changed_globals(ref, moved) == set(), "a shifted line changes no value"
    for name, old, new in CHANGES:
        assert BASE.count(old) == 1, old
        other = _fingerprint_of(tmp_path, name, {"fp_when/__init__.py": BASE.replace(old, new)})
        assert changed_globals(ref, other) == {f"fp_when:{name}"}, name


def test_a_change_in_the_programs_time_zone_reaches_the_dates_using_it(tmp_path: Path) -> None:
    changed = BASE.replace('return "UTC"', 'return "GMT"')
    ref = _fingerprint_of(tmp_path, "ref", {"fp_tz/__init__.py": BASE})
    other = _fingerprint_of(tmp_path, "tz", {"fp_tz/__init__.py": changed})
    # the class, its instance, the aware date made with it; not the naive values
    assert changed_globals(ref, other) == {"fp_tz:Utc", "fp_tz:UTC", "fp_tz:EPOCH"}


def test_a_c_object_with_hidden_state_stays_unknown(tmp_path: Path) -> None:
    """A deque keeps its items and bound in C: still unknown, not read as a value."""
    files = {
        "fp_sub/__init__.py": "import collections\n\nRECENT = collections.deque([1, 2], maxlen=5)\n"
    }
    with pytest.raises(Unknown):
        _fingerprint_of(tmp_path, "deque", files)
