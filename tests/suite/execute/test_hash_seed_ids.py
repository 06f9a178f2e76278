"""Test ids that depend on the hash seed: a suite parametrized over a set.

pytest names a parameter it cannot print by its position (``expected3``), and a set of
tuples holding strings is ordered by their hashes, which Python randomizes per process.
Before, each run of a score (the reference's repetitions, each batch of mutants) had a seed
of its own: the same test had another id in the next run, so the repetitions disagreed (the
tests counted flaky, V below 100%), and a mutant's selected tests named ids its run did not
have (a mutant killed only by such tests survived, where plain pytest kills it).  Now every
run of a score has one hash seed and one memory layout: the ids are the same in every run.
On Python 3.11, ``hash(None)`` is None's address, which address space randomization moves
from process to process: a tuple holding None (``("2023-02-30", None)``, a date that must be
refused) orders the set by where None was loaded, whatever the hash seed (isodate's test
cases hold such tuples).

``isodates`` parses ``YYYY-MM-DD`` into ``(year, month, day)`` (a tuple: pytest names it
by position); its mutants, each worked out by hand:

* ``century``: ``year % 100 != 0`` -> ``== 0``: 2024 is no longer leap (2024-02-29 is
  refused), 1900 is (1900-02-29 is accepted);
* ``april``: April has 31 days (2023-04-31 accepted);
* ``day_bound``: ``day <= days`` -> ``day < days``: the last day of every month is refused
  (2024-02-29, 2000-02-29, 2023-12-31, 2023-04-30, 2023-02-28: all five of them are in
  ``GOOD``, whose ids carry a position) and nothing else changes;
* ``feb``: February always has 29 days (2023-02-29 and 1900-02-29 accepted; 2023-02-30 is
  refused by every version).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.result import MutantStatus, SuiteResult
from suitebench.suite.score import score_suite

from ..conftest import unified_diff

SOURCE = """\
def is_leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    if month == 2:
        return 29 if is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def parse(text):
    year, month, day = (int(part) for part in text.split("-"))
    if not 1 <= month <= 12:
        raise ValueError(f"no month {month}")
    if not 1 <= day <= days_in_month(year, month):
        raise ValueError(f"no day {day} in {year}-{month:02d}")
    return year, month, day
"""

TESTS = """\
import pytest

from isodates import parse

GOOD = {
    ("2024-02-29", (2024, 2, 29)),
    ("2000-02-29", (2000, 2, 29)),
    ("2023-12-31", (2023, 12, 31)),
    ("2023-04-30", (2023, 4, 30)),
    ("1999-01-01", (1999, 1, 1)),
    ("2023-02-28", (2023, 2, 28)),
    ("2023-02-30", None),
}
BAD = {"1900-02-29", "2023-02-29", "2023-04-31", "2023-13-01", "2023-00-10"}


@pytest.mark.parametrize("text,expected", GOOD)
def test_parse(text, expected):
    if expected is None:
        with pytest.raises(ValueError):
            parse(text)
    else:
        assert parse(text) == expected


@pytest.mark.parametrize("text", BAD)
def test_rejects(text):
    with pytest.raises(ValueError):
        parse(text)
"""

MUTANTS = {
    "century": ("year % 100 != 0", "year % 100 == 0"),
    "april": ("(4, 6, 9, 11)", "(6, 9, 11)"),
    "day_bound": ("1 <= day <= days_in_month", "1 <= day < days_in_month"),
    "feb": ("29 if is_leap(year) else 28", "29"),
}
# the dates each mutant's failing tests are about (worked out in the docstring)
KILLERS = {
    "century": {"parse 2024-02-29", "rejects 1900-02-29"},
    "april": {"rejects 2023-04-31"},
    "day_bound": {
        "parse 2024-02-29",
        "parse 2000-02-29",
        "parse 2023-12-31",
        "parse 2023-04-30",
        "parse 2023-02-28",
    },
    "feb": {"rejects 2023-02-29", "rejects 1900-02-29"},
}
ID = re.compile(
    r"tests/test_isodates\.py::test_(parse|rejects)\[(\d{4}-\d\d-\d\d)(-expected\d|-None)?\]"
)


def _about(test_id: str) -> str:
    m = ID.fullmatch(test_id)
    assert m is not None, test_id
    return f"{m[1]} {m[2]}"


def _instance(root: Path) -> Path:
    (root / "src" / "isodates").mkdir(parents=True)
    (root / "src" / "isodates" / "__init__.py").write_text(SOURCE)
    (root / "tests").mkdir()
    (root / "tests" / "test_isodates.py").write_text(TESTS)
    (root / "mutants").mkdir()
    lines = ['name = "isodates"', 'kind = "python"', 'package = "isodates"']
    lines += ['source = "src"', 'tests = "tests"']
    for mid, (old, new) in MUTANTS.items():
        assert SOURCE.count(old) == 1, mid
        diff = unified_diff("isodates/__init__.py", SOURCE, SOURCE.replace(old, new))
        (root / "mutants" / f"{mid}.diff").write_text(diff)
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root / "instance.toml"


def _score(root: Path, **options: object) -> SuiteResult:
    store = Store(root.parent / f"{root.name}.sqlite")
    limits = SuiteLimits(per_test=10.0, per_program=300.0)
    return score_suite(load_instance(_instance(root)), store=store, limits=limits, **options)


@pytest.mark.parametrize("engine", ["batched", "plain"])
def test_ids_from_a_set_are_the_same_in_every_run(tmp_path: Path, engine: str) -> None:
    result = _score(tmp_path / engine, engine=engine)
    tests = [t.id for t in result.tests]
    assert sorted(_about(t) for t in tests) == sorted(
        [f"parse {d}" for d in ("2024-02-29", "2000-02-29", "2023-12-31", "2023-04-30")]
        + [f"parse {d}" for d in ("1999-01-01", "2023-02-28", "2023-02-30")]
        + [f"rejects {d}" for d in ("1900-02-29", "2023-02-29", "2023-04-31")]
        + [f"rejects {d}" for d in ("2023-13-01", "2023-00-10")]
    )
    # every test passed on every repetition of the reference: none flaky, V = 12/12
    assert [t.id for t in result.tests if not t.valid] == []
    assert result.validity == 1.0
    for mutant in result.mutants:
        assert mutant.status is MutantStatus.KILLED, mutant.id
        assert {_about(t) for t in mutant.killed_by} == KILLERS[mutant.id], mutant.id


def test_a_second_score_names_the_tests_as_the_first(tmp_path: Path) -> None:
    first = _score(tmp_path / "one")
    second = _score(tmp_path / "two", all_tests=True)
    assert [t.id for t in first.tests] == [t.id for t in second.tests]
    assert first.kill_matrix() == second.kill_matrix()
