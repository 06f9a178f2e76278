"""The spec an import-time mutant's run chooses its tests by
(:mod:`suitebench.suite.select.impactspec`), from coverage written by hand (no sandbox).

The package is ``units`` (a table module ``units/tables.py`` with ``LENGTH``, ``MASS`` and
``ALIASES``; a function ``convert``, whose body -- function key 7 of ``units/convert.py`` --
reads ``LENGTH``).  Four tests, by index:

    0 test_length   its own code names ``convert``; it enters convert (key 7, which reads
                    LENGTH) and runs the module's top level (key 0: import, not the test)
    1 test_mass     its own code names ``MASS``
    2 test_dynamic  its own code calls ``getattr(...)``: it reads by computed names
    3 test_unknown  no record of what its code names

so LENGTH is read by test 0, MASS by test 1, ALIASES by none; tests 2 and 3 run on every
import-time change (``always``).
"""

from __future__ import annotations

from suitebench.suite.select.impactspec import impact_readers, impact_spec
from suitebench.suite.select.selection import Coverage, Selection

LENGTH_T, MASS_T = "tests/test_u.py::test_length", "tests/test_u.py::test_mass"
DYNAMIC_T, UNKNOWN_T = "tests/test_u.py::test_dynamic", "tests/test_u.py::test_unknown"
TESTS = [LENGTH_T, MASS_T, DYNAMIC_T, UNKNOWN_T]
FINGERPRINT = {"units.tables:LENGTH": "a1", "units.tables:MASS": "b2", "units.tables:ALIASES": "c3"}
REFERENCE = {"fingerprint": FINGERPRINT, "collected": TESTS}


def coverage(**over: object) -> Coverage:
    fields: dict[str, object] = {
        "contexts": {LENGTH_T: {"units/convert.py": {0, 7}}, MASS_T: {}, DYNAMIC_T: {}},
        "fixtures": {LENGTH_T: [], MASS_T: [], DYNAMIC_T: [], UNKNOWN_T: []},
        "unknown": frozenset(),
        "spans": {},
        # key 0 (module code) names MASS: read on import, never by a test's own run
        "names": {"units/convert.py": {0: frozenset({"MASS"}), 7: frozenset({"LENGTH"})}},
        "test_names": {
            LENGTH_T: frozenset({"convert"}),
            MASS_T: frozenset({"MASS", "pytest"}),
            DYNAMIC_T: frozenset({"getattr", "tables"}),
        },
    }
    return Coverage(**{**fields, **over})  # type: ignore[arg-type]


def test_the_shared_part_names_each_global_s_readers_and_the_tests_that_always_run() -> None:
    shared = impact_readers(coverage(), REFERENCE, TESTS)
    assert shared == {
        "reference": FINGERPRINT,
        "collected": TESTS,
        "tests": TESTS,
        "readers": {"LENGTH": [0], "MASS": [1], "ALIASES": []},  # by index into "tests"
        "always": [2, 3],
        "writers": {},  # no record of state left between tests: none depends on another
        "rank": [],
        "collection_reads": [],  # no record of what the collection ran (nothing is carried)
        "collection_calls": [],
        "suite": None,  # no record of what the reference's collection computed
    }
    # the suite's collection entered convert (key 7): what it reads, the child declines
    called = impact_readers(
        coverage(suite_calls=frozenset({"units/convert.py:7"})), REFERENCE, TESTS
    )
    assert called is not None and called["collection_reads"] == ["LENGTH"]
    # a function the record names nothing for: not known, so no file is carried at all
    unknown = coverage(suite_calls=frozenset({"units/other.py:3"}))
    assert unknown.collection_reads() is None


def test_tests_that_leave_a_global_changed_are_named_with_their_place_in_the_run() -> None:
    # test_mass leaves MASS changed for the tests after it (a cache it fills); the coverage
    # run started them in the order mass, length, dynamic (test_unknown not at all: last).
    cov = coverage(writes={MASS_T: frozenset({"MASS"})}, order=(MASS_T, LENGTH_T, DYNAMIC_T))
    shared = impact_readers(cov, REFERENCE, TESTS)
    assert shared is not None
    assert shared["writers"] == {"1": ["MASS"]}
    # rank: the coverage run's place of each test of TESTS (length 1, mass 0, dynamic 2);
    # test_unknown did not run there: after all of them (3 ran + its index 3 = 6)
    assert shared["rank"] == [1, 0, 2, 6]


def test_without_a_fingerprint_or_recorded_names_every_test_runs() -> None:
    assert impact_readers(coverage(), None, TESTS) is None  # the reference's state unseen
    assert impact_readers(coverage(), {"fingerprint": None}, TESTS) is None
    assert impact_readers(coverage(test_names={}), REFERENCE, TESTS) is None  # no names


def test_a_mutant_spec_adds_the_tests_that_run_anyway() -> None:
    shared = impact_readers(coverage(), REFERENCE, TESTS)
    # a mutant of tables.py whose change test_mass reaches through a function anyway: base is
    # that test (1) and the always-run ones (2, 3); a test not among "tests" is dropped
    chosen = Selection(None, "import time", import_time=(MASS_T, "tests/test_gone.py::t"))
    assert impact_spec(shared, chosen) == {**(shared or {}), "base": [1, 2, 3]}
    # a changed default argument's tests are known already (final): only they run, as the
    # selection says, not the always-run ones
    final = Selection(None, "default of size()", import_time=(LENGTH_T,), final=True)
    assert impact_spec(shared, final) == {
        **(shared or {}), "base": [0], "final": "default of size()"
    }  # fmt: skip
    # not an import-time mutant, or no shared part: no spec (its selection decides)
    assert impact_spec(shared, Selection((LENGTH_T,), "coverage")) is None
    assert impact_spec(None, chosen) is None
