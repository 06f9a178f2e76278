"""A suite whose tests start a ``multiprocessing.Pool``, scored in the sandbox.

Pool's locks are POSIX semaphores in /dev/shm: where the sandbox's /dev/shm is not writable by
the program, such a test fails on the reference every run (``PermissionError``), is never valid,
and the mutant it catches in its real suite survives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import TestStatus
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance

SQUARES = '''\
"""Squares, computed in worker processes."""
import multiprocessing


def square(x):
    return x * x


def squares(xs):
    with multiprocessing.Pool(2) as pool:
        return pool.map(square, xs)
'''

TESTS = {
    "test_squares.py": """\
import multiprocessing

from squares import square, squares


def test_squares_in_a_pool():
    assert squares([1, 2, 3]) == [1, 4, 9]


def test_a_pool_the_test_starts():
    pool = multiprocessing.Pool(2)
    try:
        assert pool.map(square, [-2, 5]) == [4, 25]
    finally:
        pool.close()
        pool.join()
""",
}

POOLED = "tests/test_squares.py::test_squares_in_a_pool"
OWN_POOL = "tests/test_squares.py::test_a_pool_the_test_starts"


@pytest.mark.parametrize("engine", [Engine.BATCHED, Engine.PLAIN])
def test_a_suite_using_multiprocessing_is_valid_and_kills(tmp_path: Path, engine: Engine) -> None:
    toml = write_python_instance(
        tmp_path / "squares",
        name="squares",
        source={"squares/__init__.py": SQUARES},
        tests=TESTS,
        spec="# squares\n\n## Squares\nSquares of numbers.\n",
        mutants=[("plus_one", "squares/__init__.py", "return x * x", "return x * x + 1")],
    )
    store = Store(tmp_path / "store" / "store.sqlite")
    try:
        result = score_suite(
            load_instance(toml),
            store=store,
            cache_dir=tmp_path / "builds",
            engine=engine,
            limits=SuiteLimits(per_test=10.0, per_program=300.0),
        )
    finally:
        store.close()
    tests = {t.id: t for t in result.tests}
    for test in (POOLED, OWN_POOL):
        assert tests[test].reference == [TestStatus.PASSED] * 3, tests[test]
        assert tests[test].valid
    assert result.validity == 1.0
    (mutant,) = result.mutants
    assert sorted(mutant.killed_by) == sorted([POOLED, OWN_POOL]), mutant
    assert result.mutation_score == 1.0
