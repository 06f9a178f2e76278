"""A test whose threads never finish on a mutant: the test times out, and the run ends there
(the tests after it go on in a fresh run, where those threads take no CPU from them) instead
of waiting for those threads until the run's wall limit.

``ticks(n)`` counts down from ``n``; the mutant counts up (``n -= 1`` -> ``n += 1``) and never
reaches 0.  The suite runs ``ticks`` in two worker threads and joins them, as jmespath 1.0.1's
``test_thread_safety_of_cache`` does with its parser: on the mutant the join outlives the
per-test limit, the test fails as ``timeout``, and the two threads go on counting.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from suitebench.suite.execute.runspec import Engine, SuiteLimits
from suitebench.suite.records import RunStatus

from ..conftest import score_in_store, write_python_instance

TICKS = '''\
"""Count the steps down to zero."""


def ticks(n):
    count = 0
    while n != 0:
        n -= 1
        count += 1
    return count
'''
TESTS = {
    "test_ticks.py": (
        "import threading\n\nfrom ticks import ticks\n\n\n"
        "def test_ticks_in_threads():\n"
        "    results = []\n"
        "    workers = [threading.Thread(target=lambda: results.append(ticks(1000)))\n"
        "               for _ in range(2)]\n"
        "    for w in workers:\n        w.start()\n"
        "    for w in workers:\n        w.join()\n"
        "    assert results == [1000, 1000]\n\n\n"
        "def test_one():\n    assert ticks(1) == 1\n\n\n"
        "def test_zero():\n    assert ticks(0) == 0\n"
    )
}
WALL = 240.0  # the run's wall limit: a run held by the threads would end only here (far above
# what the runs take on a loaded machine, so that only a held run comes near it)


@pytest.mark.parametrize("engine", [Engine.PLAIN, Engine.BATCHED])
def test_a_mutants_endless_threads_do_not_hold_its_run(engine: Engine, tmp_path: Path) -> None:
    toml = write_python_instance(
        tmp_path / "ticks",
        name="ticks",
        source={"ticks/__init__.py": TICKS},
        tests=TESTS,
        spec="# ticks\n\n## Ticks\nCount down.\n",
        mutants=[("up", "ticks/__init__.py", "n -= 1", "n += 1")],
    )
    limits = SuiteLimits(per_test=3.0, per_program=WALL, timeout_constant=1.0)
    started = time.monotonic()
    result = score_in_store(toml, tmp_path, engine=engine, limits=limits, all_tests=True)
    elapsed = time.monotonic() - started
    (up,) = result.mutants
    assert up.status == "timeout"
    assert up.outcomes["tests/test_ticks.py::test_ticks_in_threads"] == "timeout"
    # The run ended after the threads' test: the tests after it ran in a fresh run, where no
    # thread took the CPU from them -- test_one hung on the CPU by itself (1 -> 2 -> 3 ...),
    # a timeout counted without running it again, and test_zero passes.
    assert "timed out and left 2 thread(s) it started running" in up.message, up.message
    assert "the tests after it ran in a fresh run" in up.message
    assert up.outcomes["tests/test_ticks.py::test_one"] == "timeout"
    assert "s of CPU time" in up.kill_messages["tests/test_ticks.py::test_one"]
    assert up.outcomes["tests/test_ticks.py::test_zero"] == "passed"
    assert up.run_status is RunStatus.OK
    assert result.harness_errors == []
    # every run (the mutant's, and each timeout's confirmation alone) ended by itself once
    # pytest was done, none by the wall limit
    assert up.wall_time < WALL / 2, up.wall_time
    assert elapsed < WALL, elapsed
